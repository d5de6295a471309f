"""The decision a buyer faces, for each job at its real scale.

Each option (tier, engine, strategy) runs at its own best cadence: the interval that minimises its
cost over the run (storage, and the GPU time lost) among those that meet the overhead target, solved
continuously, not on the plan's grid: a log grid from a minute to a day, then twice a finer grid
around its best. Where no interval meets the target, the cheapest (the option is then no candidate).
Every option is then drawn with every uncertain input it reads (``uncertainty.robustness``: the same
draws the brief shows), its purchase held as it was decided (a tier bought by the TiB keeps the size
the base figures bought), and the share of the draws in which it meets the target is its chance of
meeting it. The pick is the cheapest option, by the one rule, that meets the target with the plan's
confidence; when none does, the cheapest that meets it at the base figures, and the decision says so.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from ..model.axes import Point
from ..model.columns import WITHIN_TARGET
from ..model.evaluate import compute, scenarios
from ..model.plan import headline_recipe
from ..read.inputs import INPUTS
from ..read.quantity import Q
from ..read.validated import Inputs
from .recommend import recommend
from .types import Decision, JobSpec, Param
from .uncertainty.evaluator import CELLS, Evaluator
from .uncertainty.ranges import parameters
from .uncertainty.robustness import BRIEF_SAMPLES, draws, robustness

GRID_S = np.geomspace(60.0, 86_400.0, 97)  # the first search: a minute to a day, 7.9% apart
REFINE = 32  # each finer search: this many steps between the neighbours of the best so far
ROUNDS = 2  # finer searches (the last is 0.02% apart)


def jobs(inputs: Inputs, point: Point) -> list[JobSpec]:
    """The plan's jobs; where it names none, each of its models on the summary's SKU and GPUs."""
    declared = [
        JobSpec(
            j.name,
            j.model,
            j.sku,
            int(j.gpus.value),
            j.recipe or inputs.models[j.model].recipe,
            None if j.tokens is None else j.tokens.value,
            j.title,
            j.source,
        )
        for j in inputs.plan.jobs
    ]
    if declared:
        return declared
    models = inputs.plan.models or list(inputs.models)
    return [
        JobSpec(m, m, point.sku, int(point.gpus), headline_recipe(inputs, m), declared=False)
        for m in models
    ]


def job_inputs(inputs: Inputs, job: JobSpec, gpus: int | None = None) -> Inputs:
    """The inputs narrowed to the job (its model, recipe, SKU and GPUs, every tier, engine and strategy
    of the plan), with the job's tokens where it gives them."""
    models = inputs.models
    if job.tokens is not None:
        model = models[job.model]
        models = {
            **models,
            job.model: model.model_copy(
                update={"tokens": Q(job.tokens, f"{job.tokens:g}", "count")}
            ),
        }
    g = job.gpus if gpus is None else gpus
    plan = inputs.plan.model_copy(
        update={
            "models": [job.model],
            "recipes": [job.recipe],
            "skus": [job.sku],
            "gpus": [Q(float(g), str(g), "count")],
            "intervals": [Q(1800.0, "30 min", "duration")],
        }
    )
    return dataclasses.replace(inputs, models=models, plan=plan)


def _objective(cols: dict[str, np.ndarray]) -> np.ndarray:
    """What a cadence is chosen by: the cost over the run (an unpriced tier's: the GPU time lost), among
    the intervals that meet the target; the others are infinitely dear."""
    cost = np.where(np.isnan(cols["total_usd"]), cols["waste_usd"], cols["total_usd"])
    return np.where(cols["meets_target"], cost, np.inf), cost


OBJECTIVE = ["total_usd", "waste_usd", "meets_target"]  # what a cadence is chosen by


def _at(inputs: dict[str, np.ndarray], intervals: np.ndarray) -> dict[str, np.ndarray]:
    """The objective's columns of every row (``inputs``: their input columns) at each of its
    candidate intervals (rows x k)."""
    n, k = intervals.shape
    env = {name: np.repeat(column, k) for name, column in inputs.items()}
    env["interval_s"] = intervals.reshape(-1)
    out = compute(env, OBJECTIVE)
    return {name: np.asarray(out[name]).reshape(n, k) for name in OBJECTIVE}


def best_intervals(rows: pd.DataFrame) -> np.ndarray:
    """Per option, the interval that minimises its cost over the run among those that meet the target
    (the cheapest where none does), solved on a log grid and refined twice around its best. Options
    apart, a part at a time (at most ``CELLS`` options x grid points): memory bounded whatever their
    number, each option's answer its own."""
    step = max(1, CELLS // len(GRID_S))
    parts = [_best_intervals(rows.iloc[a : a + step]) for a in range(0, len(rows), step)]
    return np.concatenate(parts) if parts else np.empty(0)


def _best_intervals(rows: pd.DataFrame) -> np.ndarray:
    grid = np.broadcast_to(GRID_S, (len(rows), len(GRID_S)))
    inputs = {n: rows[n].to_numpy() for n in INPUTS if n in rows}  # read once for every round
    for _ in range(ROUNDS + 1):
        cols = _at(inputs, grid)
        feasible, cost = _objective(cols)
        best = np.where(
            np.isfinite(feasible).any(axis=1), np.argmin(feasible, axis=1), np.argmin(cost, axis=1)
        )
        at = np.arange(len(rows))
        lo = grid[at, np.maximum(best - 1, 0)]
        hi = grid[at, np.minimum(best + 1, grid.shape[1] - 1)]
        chosen = grid[at, best]
        grid = np.exp(np.linspace(np.log(lo), np.log(hi), REFINE + 1, axis=1))
        grid = np.concatenate(
            [grid, chosen[:, None]], axis=1
        )  # the best so far is always a candidate
    return chosen


def options(inputs: Inputs, job: JobSpec, gpus: int | None = None) -> pd.DataFrame:
    """Every option of the job, each at its own cheapest cadence (every column), indexed from 0."""
    rows, _ = scenarios(job_inputs(inputs, job, gpus))
    if rows.empty:
        return rows
    rows = rows.reset_index(drop=True)
    return at_intervals(rows, best_intervals(rows))


def at_intervals(rows: pd.DataFrame, intervals: np.ndarray) -> pd.DataFrame:
    """The options with every column recomputed at ``intervals`` (one per row)."""
    series = dict(rows.items())  # each column looked up once (a frame's [] is slow, 250 columns)
    env = {n: series[n].to_numpy() for n in INPUTS if n in series}
    env["interval_s"] = np.asarray(intervals, dtype=float)
    cols = compute(env)
    data = {}
    for name, column in series.items():
        if name not in cols:
            data[name] = column.to_numpy()
        elif isinstance(column.dtype, pd.CategoricalDtype):  # a label the interval may change
            data[name] = pd.Categorical(np.asarray(cols[name]).astype(str))
        else:
            data[name] = np.asarray(cols[name]).astype(column.dtype, copy=False)
    return pd.DataFrame(data, index=rows.index)


PINNED = ["sized_per_TiB", "provisioned_bytes", "tier_bought_GBps"]  # what a purchase holds


def pinned(rows: pd.DataFrame) -> pd.DataFrame:
    """The options with their purchase held as decided: a tier bought by the TiB keeps the TiB (and so
    the bandwidth) the base figures bought, whatever a draw would size it to."""
    return rows.assign(**_held({n: rows[n].to_numpy() for n in [*PINNED, *HELD]}))


HELD = ["tier_capacity_bytes", "tier_write_GBps"]  # the inputs a purchase holds


def _held(cols: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    sized = np.asarray(cols["sized_per_TiB"], dtype=bool)
    return {
        "tier_capacity_bytes": np.where(
            sized, cols["provisioned_bytes"], cols["tier_capacity_bytes"]
        ),
        "tier_write_GBps": np.where(sized, cols["tier_bought_GBps"], cols["tier_write_GBps"]),
    }


CHECK = [
    "overhead_pct",
    "target_overhead_pct",
    "host_memory_ok",
    "nvme_ok",
    "capacity_ok",
    "layout_ok",
    "meets_target",
]


def _judged(ev: Evaluator, intervals: np.ndarray, params: list[Param], columns: list[str], kept):
    """The draws of the options at ``intervals``, each purchase held as the base figures size it there
    (``kept``: the params drawn, as for every part of the options)."""
    base = {**ev.base, "interval_s": np.asarray(intervals, dtype=float)}
    held = _held(compute(base, PINNED))
    return draws(
        None,
        params,
        columns=columns,
        ev=ev.moved({"interval_s": base["interval_s"], **held}),
        kept=kept,
    )


def robust_intervals(rows: pd.DataFrame, params: list[Param], confidence_pct: float) -> np.ndarray:
    """Per option, the shortest interval no shorter than its cheapest (``rows``' own) at which it meets
    the target in at least ``confidence_pct`` of the draws: the overhead falls as the interval grows, so
    each round takes the interval to where the draw at the confidence's quantile lands on the target.
    An option that cannot reach it (infeasible in too many draws, or whose stall does not shrink with
    the interval) keeps its cheapest."""
    base = rows["interval_s"].to_numpy(float)
    ev = Evaluator(rows, params)
    out, kept = base.copy(), ev.touching()
    for part in ev.parts(BRIEF_SAMPLES):  # options apart: memory bounded whatever their number
        out[part] = _robust(ev.part(part), base[part], params, confidence_pct / 100, kept)
    return out


def _robust(ev: Evaluator, base: np.ndarray, params: list[Param], c: float, kept) -> np.ndarray:
    """``robust_intervals`` of some options (``ev``'s rows, their cheapest intervals ``base``). An
    option that meets the target keeps its interval, and so meets it in every later round: each
    round judges only the options still short of it (``todo``), as judging all would give them."""
    intervals = base.copy()
    todo = np.arange(len(base))
    for _ in range(6):
        _, cols = _judged(ev.rows(todo), intervals[todo], params, CHECK, kept)
        if cols is None:
            return base  # nothing uncertain touches them: the base figures are what will happen
        met = cols["meets_target"].mean(axis=0) >= c - 1e-12
        if met.all():
            todo = todo[:0]
            break
        feasible = (
            cols["host_memory_ok"] & cols["nvme_ok"] & cols["capacity_ok"] & cols["layout_ok"]
        )
        limit = cols["target_overhead_pct"] * WITHIN_TARGET
        ratio = np.where(feasible, cols["overhead_pct"] / limit, np.inf)
        need = np.quantile(ratio, c, axis=0, method="higher")
        grow = np.where(np.isfinite(need), np.maximum(need, 1.0), 1.0) * 1.0001
        grow = np.where(met, 1.0, grow)  # one that meets it stays: each option is solved on its own
        intervals[todo] = np.minimum(np.maximum(base[todo], intervals[todo] * grow), GRID_S[-1])
        todo = todo[~met]
    reached = np.ones(len(base), dtype=bool)  # every option judged last at its interval met it
    if len(todo):
        _, cols = _judged(ev.rows(todo), intervals[todo], params, ["meets_target"], kept)
        reached[todo] = cols["meets_target"].mean(axis=0) >= c - 1e-12
    return np.where(reached, intervals, base)


def chance(rows: pd.DataFrame, params: list[Param]) -> np.ndarray:
    """Per option, the share of the draws in which it meets the target (its purchase held), in %."""
    ev = Evaluator(pinned(rows), params)
    out, kept = 100.0 * rows["meets_target"].to_numpy(float), ev.touching()
    for part in ev.parts(BRIEF_SAMPLES):  # options apart: memory bounded whatever their number
        _, cols = draws(None, params, columns=["meets_target"], ev=ev.part(part), kept=kept)
        if cols is not None:
            out[part] = 100.0 * np.asarray(cols["meets_target"], dtype=float).mean(axis=0)
    return out


def choose(rows: pd.DataFrame, confidence_pct: float) -> tuple[object, bool]:
    """The pick among options that carry ``p_meets_pct``: the cheapest recommendable one meeting the
    target with the confidence, by the one rule; when none does, the cheapest recommendable one."""
    sure = rows["recommendable"].to_numpy(bool) & (
        rows["p_meets_pct"].to_numpy() >= confidence_pct - 1e-9
    )
    reached = bool(sure.any())
    pick = recommend(rows.assign(recommendable=sure) if reached else rows)
    return dataclasses.replace(pick, row=rows.loc[pick.index]), reached


def robust_options(
    inputs: Inputs,
    job: JobSpec,
    params: list[Param],
    confidence_pct: float,
    gpus: int | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The job's options at their cheapest cadence, and at the cadence that meets the target with the
    confidence (where they can), each with its chance of meeting the target."""
    cheapest = options(inputs, job, gpus)
    if cheapest.empty:
        return cheapest, cheapest
    rows = at_intervals(cheapest, robust_intervals(cheapest, params, confidence_pct))
    return cheapest, rows


def decide(
    inputs: Inputs, job: JobSpec, params: list[Param] | None = None, scale: bool = True
) -> Decision:
    """The decision for ``job`` (see the module's words); ``scale``: also the pick at each of the
    plan's cluster sizes."""
    params = parameters(inputs, job.gpus) if params is None else params
    confidence = float(INPUTS["confidence_pct"].value(inputs.plan))
    cheapest_rows, rows = robust_options(inputs, job, params, confidence)
    if rows.empty:
        raise _impossible(inputs, job)
    robust = robustness(pinned(rows), params)
    meets = (
        np.asarray(robust.meets, dtype=float)
        if robust.meets
        else rows["meets_target"].to_numpy(float)
    )
    rows = pd.concat([rows, pd.DataFrame({"p_meets_pct": 100.0 * meets}, index=rows.index)], axis=1)
    pick, reached = choose(rows, confidence)
    base = recommend(
        cheapest_rows
    )  # the cheapest at the base figures, each option at its cheapest cadence
    cheapest = None
    if base.meets and (
        base.index != pick.index
        or not np.isclose(base.row["interval_s"], rows.at[pick.index, "interval_s"], rtol=1e-6)
    ):  # a cadence that differs only in its last digits is the pick itself
        cheapest = base.row.copy()
        cheapest["p_meets_pct"] = float(chance(cheapest_rows.loc[[base.index]], params)[0])
    return Decision(
        job,
        rows,
        pick,
        confidence,
        reached,
        cheapest,
        robust,
        _scale(inputs, job, params, confidence, pick) if scale else [],
    )


def _scale(inputs: Inputs, job: JobSpec, params: list[Param], confidence: float, own) -> list:
    """The pick at each of the plan's cluster sizes and the job's own (the same procedure, its own
    draws), as (GPUs, the picked option's row)."""
    picks = {g: scale_pick(inputs, job, params, confidence, g) for g in scales(inputs, job)}
    return assembled(job, own, picks)


def scales(inputs: Inputs, job: JobSpec) -> list[int]:
    """The cluster sizes beside the job's own that its decision is shown at: the plan's, from one
    replica of the model up."""
    model = inputs.models[job.model]
    replica = (model.tp.value if model.tp else 1.0) * (model.pp.value if model.pp else 1.0)
    return [
        g
        for g in sorted({int(q.value) for q in inputs.plan.gpus})
        if g != job.gpus and g >= replica
    ]


def scale_pick(inputs: Inputs, job: JobSpec, params: list[Param], confidence: float, gpus: int):
    """The pick of ``job`` at ``gpus`` GPUs (its row), or None where it has no option there."""
    _, rows = robust_options(inputs, job, params, confidence, gpus)
    if rows.empty:
        return None
    rows = rows.assign(p_meets_pct=chance(rows, params))
    return choose(rows, confidence)[0].row


def assembled(job: JobSpec, own, picks: dict[int, pd.Series | None]) -> list:
    """The (GPUs, pick) pairs in order of size, the job's own size its own pick."""
    pairs = [(g, row) for g, row in picks.items() if row is not None] + [(job.gpus, own.row)]
    return sorted(pairs, key=lambda pair: pair[0])


def piece(shared: tuple[Inputs, list[JobSpec]], task: tuple[int, int | None]):
    """One piece of the plan's decisions, for a worker (``base.workers``): job ``k``'s decision
    at its own scale (``gpus`` None), or its pick at ``gpus``."""
    inputs, todo = shared
    k, gpus = task
    job = todo[k]
    if gpus is None:
        return decide(inputs, job, scale=False)
    confidence = float(INPUTS["confidence_pct"].value(inputs.plan))
    return scale_pick(inputs, job, parameters(inputs, job.gpus), confidence, gpus)


def _impossible(inputs: Inputs, job: JobSpec):
    """A job none of whose combinations can exist: an error at the job (or the plan) naming why."""
    from ..base.errors import InputError, Problem
    from ..read.load import plan_file

    place = inputs.places.get(("jobs", job.name)) or inputs.places.get(("plan", "plan"))
    return InputError(
        Problem(
            plan_file(inputs),
            place.line if place else 0,
            place.column if place and place.column else 0,
            f"{place.source}.name" if place and place.source else "jobs",
            f"job '{job.name}' ({job.model} on {job.gpus:,} GPUs of {job.sku}) has no option: every "
            "combination of tier, engine and strategy is impossible (no tier of the plan serves the "
            "SKU's site, or none of its strategies fits the layout); name a tier that serves the "
            "SKU's site, or another SKU",
        )
    )
