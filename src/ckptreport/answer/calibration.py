"""How well the model predicts published checkpoint measurements, and the fit of its free terms.

Each case restates a published figure with its citation, the checkpointing engine that produced it,
the inputs the source gave, the inputs it did not give (stated as assumptions), and what the model
predicts from them with that engine's shipped terms (models/engines.yaml). A case is

- ``scored``: compared with its tolerance (sizes and rates 1%, times 25%, Daly optima 0.5 min). A
  scored case either took part in its engine's fit (``role="fit"``) or is held out of every fit
  (``role="test"``): the held-out errors are what the model *predicts*, the fit residuals only what
  it can *reproduce*, and each fit case's leave-one-out error (the fit redone without it) what a fit
  on the others predicts of it;
- ``input``: the published figure is itself a default input, so agreement proves only consistency;
- ``lacks``: the model lacks a term the case needs; the case names it (``lacks``) and says why.

The free terms of an engine (``fits`` in the cases file: a writer's bandwidth, how further writers
share a node, coordination per rank, a staging copy's rate) have no published figure of their own.
``fit(engine)`` finds them by least squares on the relative errors of that engine's fit cases, from a
neutral start, on at least twice as many cases as terms; ``bootstrap`` refits on resampled cases for
the range each fitted term carries. The shipped engines carry the values and ranges (``basis:
derived``); the tests refit and compare."""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import yaml

from ..base.safeio import read_regular
from ..model.columns import COLUMNS
from ..model.evaluate import compute
from ..read.inputs import ENGINES, INPUTS, of, trait_values
from ..read.strategies import BASELINE
from .types import Table

# A row's defaults: what each input's declaration says omitting it means (no fixed cost, no per-node
# cap ...), then a DGX-A100-like node for the inputs that have no default, unless a case says otherwise.
NODE = dict(
    model="m",
    recipe="r",
    sku="s",
    tier="t",
    engine="e",
    strategy=BASELINE,
    tier_kind="parallel_fs",
    gpus=8.0,
    interval_s=3600.0,
    params=1e9,
    active_params=1e9,
    tokens=1e12,
    weights_bytes_per_param=2.0,
    master_bytes_per_param=4.0,
    optimizer_bytes_per_param=8.0,
    gpus_per_node=8.0,
    peak_TFLOPS=312.0,
    d2h_gpu_GBps=25.0,
    d2h_node_GBps=200.0,
    host_memory_bytes=1e12,
    storage_nic_GBps=math.inf,
    peer_nic_GBps=math.inf,
    staging_gpu_GBps=25.0,
    usd_per_gpu_hour=1.0,
    gpu_mtbf_s=50677 * 3600.0,
    usd_per_tb_month=0.0,
    target_overhead_pct=1.0,
    mfu_pct=40.0,
    restart_s=600.0,
    retention=1.0,
    buffers=1.0,
)


BASE = {
    **{i.name: i.default for i in INPUTS.values() if i.default is not None},
    **trait_values(NODE["strategy"]),
    **NODE,
    "tier_family": "t",
}


BOOTSTRAP = 200  # resamples of an engine's fit cases behind the range of each fitted term (seed 1)


@dataclass(frozen=True)
class Term:
    """A free term of the model: an engine's input with no published figure of its own, found by the fit."""

    name: str  # the input it sets
    low: float
    high: float
    start: float
    where: str  # the engines.yaml key that carries the fitted value


@functools.cache
def shipped_engines() -> dict[str, dict]:
    """Each shipped engine's inputs, in their columns' units (the terms every case is predicted with)."""
    from ..base.paths import shipped_models
    from ..read.load import load

    inputs = load(shipped_models())
    return {
        name: {i.name: i.value(entity, name) for i in of(ENGINES)}
        for name, entity in inputs.engines.items()
    }


def terms() -> dict[str, Term]:
    """The free terms a fit may set (the cases file's ``terms``)."""
    return {
        name: Term(name, float(t["low"]), float(t["high"]), float(t["start"]), t["where"])
        for name, t in _data()["terms"].items()
    }


def fits() -> dict[str, list[str]]:
    """Per engine, the terms its fit finds (the cases file's ``fits``)."""
    return {engine: list(names) for engine, names in _data()["fits"].items()}


def _arrays(rows: list[dict]) -> dict[str, np.ndarray]:
    """The engine's input columns for rows of figures: each row is BASE, its strategy's traits, then
    its own inputs."""
    full = [{**BASE, **trait_values(r.get("strategy", BASE["strategy"])), **r} for r in rows]
    missing = sorted(set(INPUTS) - set(full[0]))
    if missing:  # an input declared without a default needs a figure here
        raise KeyError(f"calibration.NODE has no figure for {', '.join(missing)}")
    return {
        k: np.array(
            [r[k] for r in full],
            dtype=bool
            if INPUTS[k].unit == "bool"
            else (object if INPUTS[k].unit == "label" else float),
        )
        for k in full[0]
    }


def predict_many(rows: list[dict], wanted: tuple[str, ...] | None = None) -> list[dict]:
    """The model's columns for several rows at once (each BASE with its own inputs); ``wanted``:
    only these columns and what they read (a fit evaluates its cases' columns many times)."""
    out = compute(_arrays(rows), wanted)
    return [
        {k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in out.items()}
        for i in range(len(rows))
    ]


def predict(engine: str, **inputs) -> dict:
    """The model's columns for one row: BASE, the engine's shipped terms, then the given inputs."""
    return predict_many([{**shipped_engines()[engine], "engine": engine, **inputs}])[0]


@dataclass
class Case:
    id: str
    engine: str  # the checkpointing engine that produced the figure (its shipped terms predict it)
    source: str
    quantity: str
    unit: str  # bytes, s, pct, min, h, GBps
    published: float
    predicted: float
    kind: str  # size, time, async, restore, rate, goodput, optimum, range
    status: str = "scored"  # scored, input, lacks
    tolerance: float | None = None  # relative for size/time/rate, absolute minutes for optimum
    assumptions: list[str] = field(default_factory=list)
    note: str = ""
    low: float | None = None  # for a published range
    role: str = "test"  # scored cases: fit (the fit used it) or test (held out of the fit)
    lacks: str = ""  # status lacks: the term the model lacks
    document: str = ""  # the publication it comes from (cases of one never predict each other)

    @property
    def within(self) -> bool | None:
        """Whether the prediction is within the tolerance of its kind (a case that lacks a term, or
        whose figure is an input, is held to the tolerance a scored case of its kind has); None for
        a case it cannot judge."""
        if self.kind == "range":
            return self.low <= self.predicted <= self.published
        tolerance = self.tolerance if self.tolerance is not None else TOLERANCE.get(self.kind)
        return None if tolerance is None or self.error is None else abs(self.error) <= tolerance

    @property
    def error(self) -> float | None:
        if self.kind == "range":
            return None
        if self.kind == "optimum":
            return self.predicted - self.published
        return (self.predicted - self.published) / self.published

    @property
    def verdict(self) -> str:
        if self.status != "scored":
            return self.status
        if self.kind == "range":
            return "pass" if self.low <= self.predicted <= self.published else "FAIL"
        ok = abs(self.error) <= self.tolerance
        return "pass" if ok else "FAIL"

    def shown_error(self) -> str:
        if self.error is None:
            return "in range" if self.low <= self.predicted <= self.published else "out of range"
        return f"{self.error:+.2f} min" if self.kind == "optimum" else f"{self.error:+.1%}"

    def shown_tolerance(self) -> str:
        if self.status != "scored":
            return "-"
        if self.kind == "range":
            return "within range"
        return f"±{self.tolerance:g} min" if self.kind == "optimum" else f"±{self.tolerance:.0%}"


CASES_FILE = Path(__file__).with_name("calibration_cases.yaml")  # the cases, as data

TOLERANCE = {  # a scored case's tolerance by kind, which the cases file repeats per case
    "size": 0.01,
    "rate": 0.01,
    "time": 0.25,
    "async": 0.25,
    "restore": 0.25,
    "optimum": 0.5,
    "goodput": 0.10,
}
TIMED = ("time", "async", "restore")  # the kinds whose errors are the time predictions


@functools.cache
def _data() -> dict:
    """The cases file: its texts, named rows and cases (read once per process)."""
    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml: the same data, 14x sooner
    return yaml.load(read_regular(CASES_FILE, CASES_FILE.name), Loader=loader)  # noqa: S506


def _number(v):
    """A figure of the cases file: YAML reads 1.5e9 as text, so text that is a number is one."""
    if isinstance(v, str):
        try:
            return float(v)
        except ValueError:
            return v
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else v


def _row(spec: dict, rows: dict) -> dict:
    """A case's inputs: its named ``base`` row (itself perhaps extending another), then its own."""
    spec = dict(spec)
    base = spec.pop("base", None)
    return {**(_row(rows[base], rows) if base else {}), **{k: _number(v) for k, v in spec.items()}}


def fit_cases(engine: str) -> list[tuple[str, str, float, dict, str]]:
    """The cases an engine's fit uses: (id, quantity, published, the row's inputs, the column compared)."""
    data = _data()
    return [
        (c["id"], c["quantity"], _number(c["published"]), _row(c["row"], data["rows"]), c["column"])
        for c in data["cases"]
        if c.get("role") == "fit" and c["engine"] == engine
    ]


def fit_documents(engine: str) -> dict[str, str]:
    """Per fit case of an engine, the publication it comes from."""
    return {
        c["id"]: document(c)
        for c in _data()["cases"]
        if c.get("role") == "fit" and c["engine"] == engine
    }


class _Residuals:
    """A fit's residuals (log of predicted / published per case) at trial terms. The cases' input
    columns are built once; each trial puts its terms into them, except where a case gives the term
    itself. ``steps`` is scipy's map for a finite-difference Jacobian: its one-term steps evaluated
    in one compute (the same numbers, element by element, as a compute per step), then handed to
    scipy's wrapper of ``__call__`` in order."""

    def __init__(self, chosen: list, bounds: list, shipped: dict, published: np.ndarray):
        self.bounds, self.published, self.m = bounds, published, len(chosen)
        self.wanted = tuple(sorted({c[4] for c in chosen}))
        self.base = _arrays([{**shipped, **c[3]} for c in chosen])
        self.own = {t.name: np.array([t.name in c[3] for c in chosen]) for t in bounds}
        self.which = [(c[4], i) for i, c in enumerate(chosen)]
        self.tiled: dict[int, tuple[dict, dict]] = {}  # the columns and masks repeated k times
        self.ready: dict[bytes, np.ndarray] = {}  # residuals computed ahead, by their terms' bytes

    def at(self, xs: np.ndarray) -> np.ndarray:
        """The residuals at each row of ``xs`` (trial terms), all in one compute."""
        k, m = len(xs), self.m
        if k not in self.tiled:
            self.tiled[k] = (
                {name: np.tile(column, k) for name, column in self.base.items()},
                {name: np.tile(given, k) for name, given in self.own.items()},
            )
        columns, own = self.tiled[k]
        values = dict(columns)
        for j, t in enumerate(self.bounds):
            values[t.name] = np.where(own[t.name], columns[t.name], np.repeat(xs[:, j], m))
        out = compute(values, self.wanted)
        got = np.array([[out[c][r * m + i] for c, i in self.which] for r in range(k)], dtype=float)
        return np.log(got / self.published)

    def __call__(self, x: np.ndarray) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        hit = self.ready.get(x.tobytes())
        return hit if hit is not None else self.at(x[None, :])[0]

    def steps(self, fun, xs):
        xs = [np.asarray(x, dtype=float) for x in xs]
        self.ready.update(zip((x.tobytes() for x in xs), self.at(np.stack(xs))))
        try:
            return [fun(x) for x in xs]
        finally:
            self.ready.clear()


@functools.cache
def _steps_at_once() -> bool:
    """Whether this SciPy's least_squares hands its finite-difference steps to a map (``workers``,
    SciPy 1.16 on), which ``fit`` uses to evaluate them together."""
    import inspect

    from scipy.optimize import least_squares

    return "workers" in inspect.signature(least_squares).parameters


def fit(engine: str, start: dict | None = None, cases_: list | None = None) -> dict:
    """Least squares on an engine's fit cases' relative errors (log of predicted / published) over its
    free terms, within their bounds, from a neutral start (or ``start``). ``cases_``: other cases
    (a leave-one-out or a bootstrap sample). Returns the values, each case's residual, the cases."""
    from scipy.optimize import least_squares

    chosen = fit_cases(engine) if cases_ is None else cases_
    bounds = [terms()[n] for n in fits()[engine]]
    published = np.array([c[2] for c in chosen])
    shipped = {**shipped_engines()[engine], "engine": engine}

    residuals = _Residuals(chosen, bounds, shipped, published)
    x0 = [(start or {}).get(t.name, t.start) for t in bounds]
    result = least_squares(
        residuals,
        x0,
        bounds=([t.low for t in bounds], [t.high for t in bounds]),
        x_scale="jac",
        xtol=1e-12,
        ftol=1e-12,
        gtol=1e-12,
        **({"workers": residuals.steps} if _steps_at_once() else {}),
    )
    return {
        "engine": engine,
        "values": {t.name: float(v) for t, v in zip(bounds, result.x)},
        "residuals": {c[0]: float(math.expm1(r)) for c, r in zip(chosen, result.fun)},
        "cases": [c[0] for c in chosen],
        "terms": len(bounds),
        "converged": bool(result.success),
        # whether the cases pin every term: the Jacobian of the residuals has full rank (a term no case
        # moves, or two that only move together, leave the fit free to put them anywhere)
        "determined": bool(
            np.linalg.matrix_rank(
                result.jac / np.maximum(np.abs(result.jac).max(axis=0), 1e-300), tol=1e-6
            )
            == len(bounds)
        ),
    }


def leave_one_out(engine: str) -> dict[str, float]:
    """Per fit case, its relative error predicted by the fit on the engine's other cases."""
    chosen = fit_cases(engine)
    out = {}
    for k, case in enumerate(chosen):
        values = fit(engine, cases_=chosen[:k] + chosen[k + 1 :])["values"]
        got = predict_many(
            [{**shipped_engines()[engine], "engine": engine, **values, **case[3]}], (case[4],)
        )[0][case[4]]
        out[case[0]] = float(got / case[2] - 1)
    return out


@functools.cache
def leave_one_source_out(engine: str) -> dict[str, float | None]:
    """Per fit case, its relative error predicted by the fit on the engine's cases from other
    publications (none where those do not pin every free term: nothing else predicts it)."""
    chosen, docs = fit_cases(engine), fit_documents(engine)
    need = len(fits()[engine])
    refits: dict[str, dict | None] = {}  # one refit per publication left out
    out: dict[str, float | None] = {}
    for case in chosen:
        doc = docs[case[0]]
        if doc not in refits:
            others = [c for c in chosen if docs[c[0]] != doc]
            refit = fit(engine, cases_=others) if len(others) >= need else None
            refits[doc] = refit if refit is not None and refit["determined"] else None
        refit = refits[doc]
        if refit is None:
            out[case[0]] = None
            continue
        row = {**shipped_engines()[engine], "engine": engine, **refit["values"], **case[3]}
        out[case[0]] = float(predict_many([row], (case[4],))[0][case[4]] / case[2] - 1)
    return out


def bootstrap(engine: str, draws: int = BOOTSTRAP, seed: int = 1) -> dict[str, tuple[float, float]]:
    """P10 and P90 of each fitted term over fits on resampled cases (with replacement, seeded)."""
    chosen = fit_cases(engine)
    rng = np.random.default_rng(seed)
    values: dict[str, list[float]] = {n: [] for n in fits()[engine]}
    for _ in range(draws):
        sample = [chosen[i] for i in rng.integers(0, len(chosen), len(chosen))]
        for name, v in fit(engine, cases_=sample)["values"].items():
            values[name].append(v)
    return {n: (float(np.quantile(v, 0.1)), float(np.quantile(v, 0.9))) for n, v in values.items()}


def fit_report(engine: str) -> dict:
    """calibrate --fit for one engine: the fit from a neutral start, each case's residual and
    leave-one-out error, the bootstrap range of each term, and the values the shipped engine carries
    (computed once per process: hundreds of fits; each caller gets its own copy)."""
    import copy

    return copy.deepcopy(_fit_report(engine))


@functools.cache
def _fit_report(engine: str) -> dict:
    result = fit(engine)
    return {
        **result,
        "leave_one_out": leave_one_out(engine),
        "ranges": bootstrap(engine),
        "shipped": {n: shipped_engines()[engine][n] for n in fits()[engine]},
        "where": {n: terms()[n].where for n in fits()[engine]},
    }


@functools.cache
def cases() -> tuple[Case, ...]:
    """Every case of the cases file, predicted once per process with the fitted terms."""
    data = _data()
    predicted = _predicted(data["cases"], data["rows"])
    return tuple(_case(c, data["texts"], got) for c, got in zip(data["cases"], predicted))


def _predicted(specs: list[dict], rows: dict) -> list[float]:
    """Each case's predicted figure: its column (over its ``per``), every case whose inputs name the
    same figures evaluated at once (a column's formula on given arguments for a ``function`` case)."""
    out: list[float] = [math.nan] * len(specs)
    groups: dict[tuple, list[tuple[int, dict]]] = {}
    for i, c in enumerate(specs):
        if "function" in c:  # a column's formula on given arguments (Daly's optimum)
            out[i] = float(
                COLUMNS[c["function"]].fn(*(np.array([_number(a)]) for a in c["args"]))[0]
            )
            continue
        row = {**shipped_engines()[c["engine"]], "engine": c["engine"], **_row(c["row"], rows)}
        full = {**BASE, **trait_values(row.get("strategy", BASE["strategy"])), **row}
        groups.setdefault(tuple(sorted(full)), []).append((i, row))
    for members in groups.values():
        wanted = tuple(
            sorted({specs[i][k] for i, _ in members for k in ("column", "per") if k in specs[i]})
        )
        got = compute(_arrays([row for _, row in members]), wanted)
        for j, (i, _) in enumerate(members):
            value = got[specs[i]["column"]][j] / (
                got[specs[i]["per"]][j] if "per" in specs[i] else 1
            )
            out[i] = float(value)  # a ratio the source publishes where it has a ``per``
    return out


def document(c: dict) -> str:
    """The publication a case comes from: its source's first named text, or the text that names the
    same publication (the cases file's ``same_source``), else the source itself."""
    import re

    first = re.search(r"\{(\w+)\}", c["source"])
    key = first.group(1) if first else c["source"]
    return _data().get("same_source", {}).get(key, key)


def _case(c: dict, texts: dict, got: float) -> Case:
    low = c.get("low")
    return Case(
        c["id"],
        c["engine"],
        c["source"].format_map(texts),
        c["quantity"],
        c["unit"],
        _number(c["published"]),
        float(got) / c.get("divide", 1),
        c["kind"],
        status=c.get("status", "scored"),
        tolerance=c.get("tolerance"),
        assumptions=[a.format_map(texts) for a in c.get("assumptions", [])],
        note=c.get("note", ""),
        low=None if low is None else _number(low),
        role=c.get("role", "test"),
        lacks=c.get("lacks", ""),
        document=document(c),
    )


def _errors(results, **match) -> list[float]:
    return [
        abs(c.error)
        for c in results
        if c.status == "scored"
        and c.error is not None
        and all(getattr(c, k) in (v if isinstance(v, tuple) else (v,)) for k, v in match.items())
    ]


def summary(results: tuple[Case, ...]) -> dict:
    def stats(errors: list[float]) -> dict:
        return {
            "cases": len(errors),
            "median_abs_error": statistics.median(errors) if errors else None,
            "worst_abs_error": max(errors) if errors else None,
        }

    timed = _errors(results, kind=TIMED)
    judged = [c for c in results if c.status in ("scored", "lacks") and c.within is not None]
    every_time = [
        abs(c.error)
        for c in results
        if c.status in ("scored", "lacks") and c.kind in TIMED and c.error is not None
    ]
    return {
        "scored": sum(c.status == "scored" for c in results),
        "passed": sum(c.verdict == "pass" for c in results),
        "failed": sum(c.verdict == "FAIL" for c in results),
        "failed_held_out": sum(c.verdict == "FAIL" and c.role == "test" for c in results),
        "lacks": sum(c.status == "lacks" for c in results),
        "fit_cases": sum(c.role == "fit" for c in results if c.status == "scored"),
        "predicted": len(judged),  # every case the model predicts, misses and 'lacks' included
        "within": sum(bool(c.within) for c in judged),
        "lacks_within": sum(bool(c.within) for c in judged if c.status == "lacks"),
        "every_time": stats(every_time),  # the time predictions of every case, 'lacks' included
        "time_median_abs_error": statistics.median(timed) if timed else None,
        "time_worst_abs_error": max(timed) if timed else None,
        "held_out": {
            "sizes": stats(_errors(results, role="test", kind=("size", "rate"))),
            "times": stats(_errors(results, role="test", kind="time")),
            "async stalls": stats(_errors(results, role="test", kind="async")),
            "restores": stats(_errors(results, role="test", kind="restore")),
            "goodput": stats(_errors(results, role="test", kind="goodput")),
        },
        "fit": {
            "times": stats(_errors(results, role="fit", kind="time")),
            "async stalls": stats(_errors(results, role="fit", kind="async")),
        },
        "held_out_by_engine": {
            e: stats(_held_out(results, e)) for e in sorted({c.engine for c in results})
        },
        "fitted": {e: {n: shipped_engines()[e][n] for n in names} for e, names in fits().items()},
    }


def _held_out(results: tuple[Case, ...], engine: str) -> list[float]:
    """An engine's held-out time errors: its test cases, and each fit case as the fit on the other
    publications predicts it (leave one source out: two rows of one paper never predict each other)."""
    errors = _errors(results, role="test", engine=engine, kind=TIMED)
    if engine in fits():
        loso = leave_one_source_out(engine)
        errors += [
            abs(loso[c.id])
            for c in results
            if c.engine == engine
            and c.role == "fit"
            and c.status == "scored"
            and c.kind in TIMED
            and loso.get(c.id) is not None
        ]
    return errors


def fmt(value: float, unit: str) -> str:
    from ..read import units

    if unit == "bytes":
        return units.fmt(value, "bytes", 4)
    if unit == "s":
        return units.fmt(value, "duration", 3)
    if unit == "pct":
        return f"{value:.3g}%"
    if unit == "min":
        return f"{value:.2f} min"
    if unit == "h":
        return f"{value:.3g} h"
    return f"{value:g}"


def table() -> Table:
    """The calibration table, from every case (computed once per process)."""
    results = cases()
    return Table(rows(results), summary(results))


def rows(results: tuple[Case, ...] | None = None) -> list[dict]:
    """The table `ckptreport calibrate` prints and the briefs carry."""
    results = results if results is not None else cases()
    out = []
    for c in results:
        published = (
            f"{fmt(c.low, c.unit)} - {fmt(c.published, c.unit)}"
            if c.kind == "range"
            else fmt(c.published, c.unit)
        )
        out.append(
            {
                "case": c.id,
                "engine": c.engine,
                "quantity": c.quantity,
                "published": published,
                "predicted": fmt(c.predicted, c.unit),
                "error": c.shown_error(),
                "tolerance": c.shown_tolerance(),
                "verdict": c.verdict,
                "role": c.role if c.status == "scored" else "",
                "lacks": c.lacks,
                "source": c.source,
                "assumptions": c.assumptions,
                "note": c.note,
            }
        )
    return out
