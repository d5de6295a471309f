"""The compute stage: everything an output shows, computed once, as plain data.

``compute(inputs)`` evaluates the model over the plan and derives from its frame what the renderers
format: the recommendation per model and SKU (one rule, ``recommend``), the summary a planner reads
first, each brief's rows, recommendation, tier comparison and waste curves, and the calibration
table. The terminal summary, the workbook, the PDF briefs and ``manifest.json`` all read this; none
of them evaluates the model or chooses an option of its own."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..base.errors import InputError, Problem
from ..base.workers import InProcess, Local
from ..model.axes import Point
from ..model.evaluate import chunk, scenarios, spans
from ..model.plan import plan_rows, summary_point
from ..read.inputs import ENTITY_COLUMN, INPUTS
from ..read.load import plan_file
from ..read.strategies import COMPARED
from ..read.validated import Inputs
from . import calibration, decide, page
from . import purchase as buying
from .briefs import PURCHASE_COLUMNS, brief, purchase, specs
from .briefs import piece as brief_piece
from .recommend import RANK_BY, assumed_prices, columns_of, headline_rows, recommend
from .sheets import Selection, cadence_grids, concat, lowest_waste, tier_overview, workbook_rows
from .types import BRIEFS, DECISIONS, NEEDS, PAGE, WORKBOOK, Pick, Report
from .uncertainty import tornado
from .uncertainty.ranges import parameters

ROWS_IN_MEMORY = (
    1_000_000  # a plan up to this many rows is one frame; a larger one streams in chunks
)


def streams(rows: int) -> bool:
    """Whether a plan of ``rows`` rows is computed in pieces (above ROWS_IN_MEMORY), not one frame."""
    return rows > ROWS_IN_MEMORY


CHUNK_ROWS = 250_000  # rows per chunk of a streamed plan: about 300 MB of columns at a time


SHOWN = [
    "model",
    "sku",
    "recipe",
    "gpus",
    "interval_s",
    "ckpt_bytes",
    "strategy",
    "tier_family",
    "storage_usd_month",
    "lost_gpu_usd_month",
    "total_usd_month",
    "stall_s",
]  # what a summary line reads


def summary(
    frame: pd.DataFrame, inputs: Inputs, point: Point
) -> tuple[pd.DataFrame, list[list[int]], list]:
    """One line per model x SKU: the checkpoint size; per strategy the option the rule picks with its
    frame index; and the option chosen overall, with its status, runner-up, the assumed prices it
    rests on and the tiers that meet the target but need a price. Also, per line, its candidate rows
    in the order the rule breaks ties (smaller system, then lower overhead), and its purchase curve."""
    rows = headline_rows(frame[SHOWN + [c for c in RANK_BY if c not in SHOWN]], inputs, point)
    out, candidates, curves = [], [], []
    priced = PURCHASE_COLUMNS + [
        "tier_family",
        "sku",
        "tier_durable",
        "meets_target",
        "overhead_pct",
    ]
    for (model, sku), group in rows.groupby(["model", "sku"], observed=True, sort=False):
        first = group.iloc[0]
        line = {
            "model": str(model),
            "sku": str(sku),
            "recipe": str(first["recipe"]),
            "gpus": int(first["gpus"]),
            "interval_s": float(first["interval_s"]),
            "ckpt_bytes": float(first["ckpt_bytes"]),
        }
        cols = columns_of(group)  # each strategy's options are positions in the line's
        strategies = group["strategy"].to_numpy()
        for strategy in inputs.plan.strategies:
            at = np.flatnonzero(strategies == strategy)
            line |= _strategy_pick(strategy, recommend(group, at, cols))
        best = recommend(group, cols=cols)
        line |= _option(best, frame.loc[best.index], inputs)
        out.append(line)
        order = group.sort_values(["tier_bought_GBps", "overhead_pct"], kind="stable").index
        candidates.append([int(i) for i in order])
        curves.append(purchase(frame.loc[group.index, priced], best))
    return pd.DataFrame(out), candidates, curves


def _strategy_pick(strategy: str, pick: Pick | None) -> dict:
    """A summary line's columns of one strategy: its best tier, engine, overhead and row."""
    return {
        f"{strategy}_tier": str(pick.row["tier"]) if pick else None,
        f"{strategy}_engine": str(pick.row["engine"]) if pick else None,
        f"{strategy}_meets": bool(pick.meets) if pick else False,
        f"{strategy}_overhead_pct": float(pick.row["overhead_pct"]) if pick else np.nan,
        f"{strategy}_index": pick.index if pick else None,
    }


def _option(best: Pick, full: pd.Series, inputs: Inputs) -> dict:
    """A summary line's columns of the option chosen overall, and of its runner-up."""
    row, runner = best.row, best.runner_up
    return {
        "option_tier": str(row["tier"]),
        "option_strategy": str(row["strategy"]),
        "option_engine": str(row["engine"]),
        "option_status": best.status,
        "option_meets": best.meets,
        "option_index": best.index,
        "option_total_usd": float(row["total_usd"]),
        "option_total_usd_month": float(row["total_usd_month"]),
        "option_storage_usd_month": float(row["storage_usd_month"]),
        "option_lost_gpu_usd_month": float(row["lost_gpu_usd_month"]),
        "option_bought_GBps": float(row["tier_bought_GBps"]),
        "option_overhead_pct": float(row["overhead_pct"]),
        "option_stall_s": float(full["stall_s"]),
        "option_required_GBps": float(full["required_write_GBps"]),
        "runner_up_tier": None if runner is None else str(runner["tier"]),
        "runner_up_strategy": None if runner is None else str(runner["strategy"]),
        "runner_up_engine": None if runner is None else str(runner["engine"]),
        "runner_up_extra_usd": best.runner_up_extra_usd,
        "assumed_prices": [name for name, _ in assumed_prices(inputs, full)],
        "needs_price": list(best.unpriced),
    }


DECIDE_HERE_BELOW_ROWS = 500  # a plan of fewer rows decides its jobs in this process


def compute(
    inputs: Inputs,
    sink=None,
    progress=lambda _: None,
    needs: frozenset[str] = frozenset({WORKBOOK, BRIEFS, DECISIONS}),
    workers=None,
) -> Report:
    """Everything the outputs show. ``sink(frame)``, when given, receives every row of the plan
    (one frame, or chunk after chunk for a plan above ROWS_IN_MEMORY rows, whose report then keeps
    only the rows the outputs show: the summary point's, and the workbook's when it ``needs`` them).
    ``needs``: what the chosen outputs read beyond the summary (``NEEDS``); what none of them reads is
    not computed (the jobs' decisions with DECISIONS or any output; no brief's data without BRIEFS;
    without WORKBOOK the workbook's rows are the summary's; the review page's sections and table only
    with PAGE). ``workers`` (``base.workers``) is where the pieces run (a streamed plan's, the
    decisions', many briefs'): this process by default; a local pool or a Dask cluster needs a sink
    that pickles."""
    unknown = set(needs) - NEEDS
    if unknown:
        raise ValueError(f"compute cannot provide {sorted(unknown)}; it provides {sorted(NEEDS)}")
    workbook, briefs, html = WORKBOOK in needs, BRIEFS in needs, PAGE in needs
    workers = workers or InProcess()
    rows, dropped = plan_rows(inputs)
    if rows == 0:
        raise _nothing_left(inputs, dropped)
    point = summary_point(inputs)
    limit = int(inputs.plan.workbook_rows.value)
    selected = None
    if not streams(rows):
        frame, _ = scenarios(inputs)
        if sink is not None:
            sink(frame)
    else:
        selection = Selection(limit, rows, len(inputs.plan.intervals)) if workbook else None
        frame, selected = _stream(inputs, sink, point, selection, rows, progress, workers)
    table, candidates, purchases = summary(frame, inputs, point)
    params = parameters(inputs, point.gpus)  # the summary lines' (all at the point's GPUs)
    by_gpus = functools.cache(lambda gpus: parameters(inputs, gpus))
    # a plan too small to pay for starting a local pool's processes decides here (0.65 s to start
    # them on 2 cores, against some 0.1 s a job); a Dask cluster the caller named is used whatever
    here = isinstance(workers, Local) and rows < DECIDE_HERE_BELOW_ROWS
    decisions, clusters = (
        _decisions(inputs, point, progress, InProcess() if here else workers) if needs else ([], [])
    )
    specs_ = specs(inputs, frame, decisions) if briefs else []
    data = _brief_data(inputs, frame, specs_, by_gpus, progress, workers)
    named = {i for line in candidates for i in line} | {
        int(i) for p in purchases for i in p.points.index
    }
    if workbook:
        keep, note = workbook_rows(frame, named, limit, len(inputs.plan.intervals), rows, selected)
    else:
        keep, note = pd.Index(sorted(named), dtype=np.int64), ""
    headline = headline_option(table, point)
    return Report(
        inputs,
        frame,
        dropped,
        point,
        table,
        data,
        calibration.table(),
        workbook_index=keep,
        workbook_note=note,
        candidates=candidates,
        purchases=purchases,
        assumed=_assumed(inputs, frame, candidates),
        rows=rows,
        params=params,
        headline=headline,
        tier_overview=tier_overview(inputs, frame, point, keep) if workbook else [],
        cadence=_cadence(frame, table) if workbook else {},
        sweeps=tornado.sweeps(frame.loc[[headline]], params)
        if workbook and headline is not None
        else [],
        page=page.page(frame, table, candidates, purchases, params, data, rows, keep)
        if html
        else None,
        decisions=decisions,
        clusters=clusters,
    )


def _nothing_left(inputs: Inputs, dropped) -> InputError:
    why = "; ".join(f"{d.rows:,} because {d.reason}" for d in dropped)
    return InputError(
        Problem(
            plan_file(inputs),
            0,
            0,
            "",
            f"every combination of the plan was left out ({why}); widen the plan",
        )
    )


BRIEFS_HERE = (
    8  # up to this many briefs, their data is computed here: the frame is not worth sending
)


def _brief_data(inputs: Inputs, frame, specs_, by_gpus, progress, workers) -> list:
    """Each brief's data (its tornado, break-evens and Monte Carlo band: a tenth of a second or more
    each), saying how far it is as it goes; on ``workers`` when there are more than BRIEFS_HERE."""
    from ..base.progress import task

    out = []
    with task(progress, "brief data", len(specs_)) as advance:
        if len(specs_) > BRIEFS_HERE:
            for data in workers.map(brief_piece, (inputs, frame), specs_):
                out.append(data)
                advance(1)
            return out
        for spec in specs_:
            out.append(brief(inputs, frame, spec, by_gpus(spec.gpus)))
            advance(1)
    return out


def _piece(shared, task):
    """One piece of the decisions, for a worker: a job's decision or pick (``decide.piece``), one
    storage product of a cluster's purchase (``purchase.piece``, tasks tagged 'buy'), or a job's
    decision on what its cluster buys (``purchase.decision_piece``, tagged 'on')."""
    inputs, todo, at = shared  # at: each cluster's purchase.Setting
    if task[0] == "buy":
        return buying.piece((inputs, at), task[1:])
    if task[0] == "on":
        return buying.decision_piece((inputs, todo), task[1:])
    return decide.piece((inputs, todo), task)


def _decisions(inputs: Inputs, point: Point, progress, workers) -> tuple[list, list]:
    """The decision for each job of the plan (``decide``) at its scale, and its pick at each of the
    plan's other cluster sizes; and each cluster's purchase (``purchase``), its products a piece
    each: every one a piece of its own, run on ``workers``. A job that runs on a cluster is then
    decided on what its cluster buys (``purchase.decision``), again a piece each."""
    from ..base.progress import task

    todo = decide.jobs(inputs, point)
    tasks = [(k, None) for k in range(len(todo))]
    tasks += [(k, g) for k, job in enumerate(todo) for g in decide.scales(inputs, job)]
    at = buying.settings(inputs, todo)  # refused here, before any piece runs
    bought = [("buy", *t) for t in buying.tasks(inputs, at)]
    shared = (inputs, todo, at)
    done: dict[tuple, object] = {}
    with task(progress, "decisions", len(tasks) + len(bought)) as advance:
        for key, result in zip(tasks + bought, workers.map(_piece, shared, tasks + bought)):
            done[key] = result
            advance(1, todo[key[0]].name if key[1] is None else None)
    clusters = [
        buying.assemble(
            inputs, inputs.plan.clusters[k], setting, {t[2]: done[t] for t in bought if t[1] == k}
        )
        for k, setting in at.items()
    ]
    on = [
        ("on", cp, k)
        for cp in clusters
        if cp.choice is not None
        for k, job in enumerate(todo)
        if job.name in cp.jobs
    ]
    if on:
        with task(progress, "decisions on the purchase", len(on)) as advance:
            for (_, _, k), result in zip(on, workers.map(_piece, shared, on)):
                done[(k, None)] = result
                advance(1, todo[k].name)
    out = []
    for k, job in enumerate(todo):
        own = done[(k, None)]
        picks = {g: done[(k, g)] for kk, g in tasks if kk == k and g is not None}
        out.append(dataclasses.replace(own, scale=decide.assembled(job, own.pick, picks)))
    return out, clusters


def _assumed(
    inputs: Inputs, frame: pd.DataFrame, candidates: list[list[int]]
) -> dict[int, list[str]]:
    """Per candidate row of the summary, the assumed prices it rests on."""
    labels = sorted({i for line in candidates for i in line})
    priced = frame.loc[
        labels, [*ENTITY_COLUMN.values(), *(n for n, i in INPUTS.items() if i.price)]
    ]
    return {
        int(i): [
            name for name, _ in assumed_prices(inputs, row)
        ]  # rows as dicts: 50x faster than .loc
        for i, row in zip(priced.index, priced.to_dict("records"))
    }


def _cadence(frame: pd.DataFrame, table: pd.DataFrame) -> dict[int, dict[str, np.ndarray]]:
    """The Cadence sheet's grid of each compared strategy's pick of every summary line."""
    picks = {
        int(v)
        for s in COMPARED
        if f"{s}_index" in table
        for v in table[f"{s}_index"]
        if pd.notna(v)
    }
    return cadence_grids(frame, sorted(picks))


def headline_option(table: pd.DataFrame, point: Point) -> int | None:
    """The frame row of the option the summary recommends for the plan's summary model and SKU."""
    if table.empty:
        return None
    lines = table.index[(table["model"] == point.model) & (table["sku"] == point.sku)]
    v = table.at[lines[0], "option_index"] if len(lines) else None
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v)


@dataclass(frozen=True)
class Piece:
    """What each piece of a streamed plan is computed with, in one picklable object a worker
    process (or a Dask worker) receives once: the inputs, the summary point whose rows are kept,
    the workbook's rows per group (None: no workbook), and the sink each piece's rows go to (a
    picklable one, such as the Parquet parts' writer, where the pieces run in other processes)."""

    inputs: Inputs
    gpus: float
    interval_s: float
    per_group: int | None
    sink: object = None


def piece(shared: Piece, span) -> tuple[int, pd.DataFrame, pd.DataFrame | None]:
    """One piece of a streamed plan: its rows computed and handed to the sink; returned, its row
    count and what the outputs show of it (the summary point's rows, and its lowest-waste rows of
    each group for the workbook, which the main process merges as ``Selection`` merges chunks)."""
    frame = chunk(shared.inputs, span)
    if shared.sink is not None:
        shared.sink(frame)
    at = frame[
        (frame["gpus"] == shared.gpus).to_numpy()
        & (frame["interval_s"] == shared.interval_s).to_numpy()
    ]
    selected = None if shared.per_group is None else lowest_waste(frame, shared.per_group)
    return len(frame), at, selected


def _stream(
    inputs: Inputs, sink, point: Point, selection: Selection | None, rows: int, progress, workers
):
    """A plan too large for one frame, piece by piece (``piece``), on ``workers`` (``base.workers``:
    this process, a local pool, a Dask cluster): each piece's rows go to the sink; what the outputs
    show (the summary point's rows, the workbook's selection) is kept, merged in the plan's order,
    so the result is the same wherever the pieces ran."""
    import time

    from ..base.progress import task

    shared = Piece(
        inputs,
        point.gpus,
        point.interval_s,
        None if selection is None else selection.per_group,
        sink,
    )
    at_point, done, t = [], 0, time.perf_counter()
    with task(
        progress, f"scenarios ({workers.name}, {workers.workers} worker(s))", rows
    ) as advance:
        for n, at, selected in workers.map(piece, shared, spans(inputs, CHUNK_ROWS)):
            at_point.append(at)
            if selection is not None:
                selection.add(selected)
            done += n
            advance(n)
    rate = done / max(time.perf_counter() - t, 1e-9)
    progress(
        f"computed {done:,} of {rows:,} scenarios ({rate / 1e6:.2f} M rows/s; {workers.name}, "
        f"{workers.workers} worker(s))"
    )
    kept = concat(at_point + ([selection.kept] if selection is not None else []))
    kept = kept[~kept.index.duplicated()].sort_index()
    return kept, (selection.kept.index if selection is not None else pd.Index([], dtype=np.int64))
