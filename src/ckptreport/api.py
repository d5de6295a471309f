"""The Python API, for notebooks and scripts: the same stages as the command line, returning pandas
objects. Nothing here writes a file except ``build``.

    import ckptreport.api as ck

    inputs = ck.load("models")                 # validated inputs; ck.load() is the shipped set
    frame = ck.scenarios(inputs)               # one row per scenario, every column of the README
    table = ck.recommendations(inputs)         # per model x SKU at the summary point: what to buy
    best = ck.recommend(frame, model="llama3-405b", sku="dgx-h100", gpus=1024, interval="30 min")
    steps = ck.explain(inputs, "llama3-405b", "dgx-h100", "pfs-100", gpus=1024, interval="30 min")
    ck.columns()                               # what every column means, its unit and section

Bad input raises ``ckptreport.api.InputError``: its ``problems`` name file, line and key, and
``str(error)`` reads as the command line prints it. Quantities given here (``interval="30 min"``)
take the units the models files take.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from .base.errors import InputError
from .read import units
from .read.strategies import BASELINE
from .read.validated import Inputs

__all__ = [
    "Explanation",
    "InputError",
    "Inputs",
    "build",
    "columns",
    "explain",
    "inputs_table",
    "load",
    "monte_carlo",
    "recommend",
    "recommendations",
    "sample_plan",
    "scenarios",
    "sensitivity",
    "stop_workers",
]


def load(models: str | Path | None = None, measured: list[str | Path] | None = None) -> Inputs:
    """Read and validate a models directory (default: ./models if present, else the shipped set).
    ``measured`` names measured files or directories (``ckptreport probe`` / ``import``) whose
    figures replace the spec sheet's, as ``build --measured`` does."""
    from .base.paths import resolve_models
    from .build import load_inputs

    return load_inputs(resolve_models(models), measured_paths=list(measured or []))


def scenarios(inputs: Inputs) -> pd.DataFrame:
    """Every scenario of the plan, one row each: the input columns, the derived columns and the
    basis of each bandwidth (README: Outputs). Text columns are categoricals. A plan of more than
    a million rows is refused: stream it with ``build`` to Parquet and read that."""
    from .answer.report import ROWS_IN_MEMORY
    from .model.evaluate import scenarios as frame_of
    from .model.plan import plan_rows

    rows, _ = plan_rows(inputs)
    if rows > ROWS_IN_MEMORY:
        raise InputError(
            f"the plan has {rows:,} scenarios, more than {ROWS_IN_MEMORY:,} in one frame: run "
            "build(...) and read scenarios.parquet (pandas.read_parquet, with filters)"
        )
    return frame_of(inputs)[0]


def recommendations(inputs: Inputs) -> pd.DataFrame:
    """The terminal summary as a frame: per model x SKU at the plan's summary cluster size and
    cadence, the best tier per strategy and the option recommended overall (``option_*``: tier,
    strategy, status, overhead, stall, bandwidth needed and bought, monthly and total cost), the
    runner-up and what it costs extra, and the assumed prices it rests on."""
    from .answer.report import compute

    table = compute(inputs, needs=frozenset()).summary
    return table.drop(columns=[c for c in table.columns if c.endswith("_index")])


def recommend(frame: pd.DataFrame, **where) -> pd.Series:
    """The option the rule picks among the rows of ``frame`` matching ``where`` (column=value;
    ``interval`` takes a duration such as "30 min"): the chosen row, with ``status``
    ('recommended', 'needs a price' or 'closest'), ``runner_up_tier``, ``runner_up_strategy`` and
    ``runner_up_extra_usd`` (what the runner-up costs over the run beyond it) added."""
    from .answer.recommend import recommend as pick

    if "interval" in where:
        where["interval_s"] = _seconds(where.pop("interval"))
    unknown = [k for k in where if k not in frame.columns]
    if unknown:
        raise InputError(f"no column {', '.join(map(repr, unknown))} in the frame")
    mask = pd.Series(True, index=frame.index)
    for key, value in where.items():
        mask &= frame[key] == value
    chosen = pick(frame[mask])
    if chosen is None:
        shown = ", ".join(f"{k}={v!r}" for k, v in where.items())
        raise InputError(f"no scenario matches {shown}")
    runner = chosen.runner_up
    extra = {
        "status": chosen.status,
        "runner_up_tier": None if runner is None else str(runner["tier"]),
        "runner_up_strategy": None if runner is None else str(runner["strategy"]),
        "runner_up_extra_usd": chosen.runner_up_extra_usd,
    }
    return pd.concat([chosen.row.astype(object), pd.Series(extra, dtype=object)])


def _seconds(interval: str | float) -> float:
    if isinstance(interval, (int, float)) and not isinstance(interval, bool):
        return float(interval)
    try:
        return units.parse(str(interval), "duration")
    except units.UnitError as e:
        raise InputError(f"interval: {e}") from None


@dataclass(frozen=True)
class Explanation:
    """One scenario's arithmetic: ``headline`` (the sentence explain prints first), ``inputs`` (a
    frame: name, value, display, unit, basis, file, line, source ...) and ``steps`` (a frame indexed
    by column name: section, doc, formula, substituted, value, display)."""

    scenario: dict
    headline: str
    inputs: pd.DataFrame
    steps: pd.DataFrame

    def __str__(self) -> str:
        return self.headline


def explain(
    inputs: Inputs,
    model: str,
    sku: str,
    tier: str,
    gpus: int,
    interval: str | float,
    strategy: str = BASELINE,
    recipe: str | None = None,
) -> Explanation:
    """The arithmetic of one scenario (it need not be in the plan), as ``ckptreport explain``
    prints it. ``interval`` is a duration ("30 min") or seconds."""
    from .answer.explain import Scenario, explanation

    seconds = _seconds(interval)
    e = explanation(inputs, Scenario(model, sku, tier, int(gpus), seconds, strategy, recipe))
    table = pd.DataFrame(e["inputs"]).astype(
        {"line": "Int64"}
    )  # a scenario's own values have no line
    return Explanation(
        e["scenario"], e["headline"], table, pd.DataFrame(e["steps"]).set_index("name")
    )


def columns() -> pd.DataFrame:
    """Every column of the scenario frame: its unit, its section and what it means (inputs first)."""
    from .model.columns import COLUMNS
    from .read.inputs import INPUTS

    rows = [
        {"name": n, "kind": "input", "unit": i.unit, "section": "inputs", "doc": i.doc}
        for n, i in INPUTS.items()
    ]
    rows += [
        {"name": n, "kind": "column", "unit": c.unit, "section": c.section, "doc": c.doc}
        for n, c in COLUMNS.items()
    ]
    return pd.DataFrame(rows).set_index("name")


def inputs_table(inputs: Inputs) -> pd.DataFrame:
    """Every input value as written, with its file and line: what ``ckptreport diff`` compares."""
    rows = [
        {"file": f, "key": k, "line": line, "value": text}
        for f, keys in inputs.values.items()
        for k, (line, text) in keys.items()
    ]
    return pd.DataFrame(rows, columns=["file", "key", "line", "value"])


def sensitivity(inputs: Inputs, model: str, sku: str):
    """The tornado and break-even values of one summary line (``ckptreport sensitivity``): an
    ``uncertainty.Sensitivity`` with ``.base`` (the recommendation and its metrics), ``.swings``
    (per uncertain input: ``.low`` and ``.high`` ends, ``.flips``) and ``.breaks``."""
    from .answer.report import compute
    from .answer.uncertainty import robustness

    report = compute(inputs, needs=frozenset())
    table = report.summary
    match = table.index[(table["model"] == model) & (table["sku"] == sku)]
    if not len(match):
        raise InputError(f"no summary line for model {model!r} on SKU {sku!r}")
    return robustness.sensitivity(report, report.params, int(match[0]))


def sample_plan(inputs: Inputs, samples: int, seed: int = 1):
    """The Monte Carlo run of ``build --samples`` as independent pieces, for a cluster to map:
    ``plan.chunks()`` lists them, ``answer.uncertainty.montecarlo.evaluate(plan, piece)`` computes one anywhere,
    ``plan.tally()`` adds the results up in any order (``.add(chunk)``, then ``.result()``)."""
    from .answer.report import compute
    from .answer.uncertainty.montecarlo import SamplePlan

    report = compute(inputs, needs=frozenset())
    return SamplePlan.of(report, report.params, samples, seed)


def monte_carlo(inputs: Inputs, samples: int, seed: int = 1):
    """``build --samples`` without writing: per summary line the recommendation's share of the
    draws it wins and P10/P50/P90 of its metrics (``.lines``), here, in this process."""
    plan = sample_plan(inputs, samples, seed)
    tally = plan.tally()
    for piece in plan.chunks():
        tally.add(plan.evaluate(piece))
    return tally.result()


def build(models: str | Path | None = None, out: str | Path = "out", **options):
    """``ckptreport build`` from Python: writes every output into ``out`` at once and returns the
    result (``.frame``, ``.report.summary``, ``.written``). ``options``: skip (the outputs left out:
    workbook, briefs, page), workbook_rows, paper, measured, csv, samples, seed, scheduler (a Dask
    scheduler's address), workers (processes on this machine), progress (a function of one
    message); ``workbook=False``, ``briefs=False`` and ``html=False`` leave one out as before."""
    from .build import build as run

    progress = options.pop("progress", lambda _: None)
    skip = set(options.pop("skip", ()))
    for key, name in (
        ("workbook", "workbook"),
        ("briefs", "briefs"),
        ("html", "page"),
    ):  # the older switches
        if not options.pop(key, True):
            skip.add(name)
    return run(models, out, progress, skip=sorted(skip), **options)


def stop_workers() -> None:
    """Stop the worker processes this process kept after a build (the decisions' pool and the
    briefs' layout pool, one process per core each) and wait for them to exit, freeing their memory.
    A later ``build`` starts them again; they are stopped at exit in any case."""
    from .base import workers

    workers.shutdown()
