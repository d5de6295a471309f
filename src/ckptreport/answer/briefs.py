"""Each brief's data: which briefs the plan has (one per model, one per ``briefs:`` entry), their rows,
the recommendation, the tier and SKU comparisons, the waste curves, the purchase curve and how sure
the recommendation is."""

from __future__ import annotations

import dataclasses
import re

import numpy as np
import pandas as pd

from ..base.errors import InputError, Problem
from ..model.evaluate import curve, scenarios
from ..read.load import plan_file
from ..read.quantity import Q
from ..read.strategies import BACKGROUND, BASELINE, COMPARED, STRATEGIES, layered
from ..read.validated import Inputs
from .explain import explain_row
from .recommend import assumed_prices, recommend
from .types import BriefData, Decision, Pick, Purchase, Spec, TierLine
from .uncertainty.ranges import parameters
from .uncertainty.robustness import robustness

CURVE_MIN = np.geomspace(1, 720, 60)  # the waste curve of a brief: 1 min to 12 h


PURCHASE_COLUMNS = [
    "tier",
    "strategy",
    "engine",
    "tier_bought_GBps",
    "storage_usd_month",
    "lost_gpu_usd_month",
    "total_usd_month",
    "total_usd",
    "choice_usd",
    "recommendable",
]


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"


def specs(inputs: Inputs, frame: pd.DataFrame, decisions: list[Decision]) -> list[Spec]:
    """One brief per job (its decision, at its scale), plus the plan's ``briefs:``."""
    plan = inputs.plan
    tiers = tuple(str(t) for t in frame["tier"].cat.categories)
    taken = {b.name for b in plan.briefs}
    out, used = [], set()
    for d in decisions:
        job = d.job
        name = _slug(job.name)
        while name in used or name in taken:
            name += "-1"
        used.add(name)
        out.append(
            Spec(
                name,
                job.model,
                (job.sku,),
                tiers,
                job.gpus,
                float(d.pick.row["interval_s"]),
                job.recipe,
                job.title,
                decision=d,
            )
        )
    for b in plan.briefs:
        out.append(
            Spec(
                b.name,
                b.model,
                tuple(b.skus),
                tuple(b.tiers),
                int(b.gpus.value),
                b.interval.value,
                b.recipe or inputs.models[b.model].recipe,
                b.title,
            )
        )
    return out


def brief_rows(inputs: Inputs, frame: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """The brief's scenarios: a model's brief takes them from the build's frame (the plan holds them);
    a ``briefs:`` entry may name any cluster size, cadence, SKU or tier, so its rows are computed."""
    if spec.in_plan:
        f = frame
        return f[
            (f["model"] == spec.model)
            & (f["recipe"] == spec.recipe)
            & f["sku"].isin(spec.skus)
            & f["tier"].isin(spec.tiers)
            & (f["gpus"] == spec.gpus)
            & (f["interval_s"] == spec.interval_s)
        ]
    narrow = inputs.plan.model_copy(
        update={
            "models": [spec.model],
            "skus": list(spec.skus),
            "tiers": list(spec.tiers),
            "recipes": [spec.recipe],
            "gpus": [Q(float(spec.gpus), str(spec.gpus), "count")],
            "intervals": [Q(spec.interval_s, f"{spec.interval_s:g} s", "duration")],
        }
    )
    return scenarios(dataclasses.replace(inputs, plan=narrow))[0]


def piece(shared: tuple[Inputs, pd.DataFrame], spec: Spec) -> BriefData:
    """One brief's data, for a worker (``base.workers``): ``shared`` is the inputs and the frame."""
    from .uncertainty.ranges import parameters

    inputs, frame = shared
    return brief(inputs, frame, spec, parameters(inputs, spec.gpus))


def brief(inputs: Inputs, frame: pd.DataFrame, spec: Spec, params: list | None = None) -> BriefData:
    """One brief's data; ``params``: the inputs' uncertain figures (``uncertainty.ranges.parameters``), when
    the caller has them."""
    d = spec.decision
    rows = d.options if d is not None else brief_rows(inputs, frame, spec)
    if rows.empty:
        place = inputs.places.get(("briefs", spec.name))
        raise InputError(
            Problem(
                plan_file(inputs),
                place.line if place else 0,
                place.column if place else 0,
                f"{place.source}.name" if place else spec.name,
                f"every combination of brief '{spec.name}' is impossible (tiered or a local_nvme "
                "tier on a SKU without local NVMe): name a remote tier or a SKU with local NVMe",
            )
        )
    pick = d.pick if d is not None else recommend(rows)
    on_sku = rows[rows["sku"] == pick.row["sku"]]
    tiers = []
    for tier in spec.tiers:
        here = on_sku[on_sku["tier"] == tier]
        if here.empty:
            continue
        by = {s: _best(here[here["strategy"] == s]) for s in COMPARED}  # the best engine of each
        tiers.append(TierLine(tier, by[BASELINE], by[BACKGROUND], tier == pick.row["tier"]))
    skus = [
        (sku, recommend(rows[rows["sku"] == sku]))
        for sku in spec.skus
        if (rows["sku"] == sku).any()
    ]
    curves, curve_rows = {}, {}
    for strategy in COMPARED:
        row = _best(on_sku[(on_sku["tier"] == pick.row["tier"]) & (on_sku["strategy"] == strategy)])
        if row is not None:
            intervals = CURVE_MIN * 60
            curves[strategy] = (intervals, curve(row, intervals)["waste_pct"])
            curve_rows[strategy] = row
    robust = (
        d.robust
        if d is not None
        else robustness(rows, parameters(inputs, spec.gpus) if params is None else params)
    )
    planned = [s for s in inputs.plan.strategies if (on_sku["strategy"] == s).any()]
    by_strategy = (
        [(s, recommend(on_sku[on_sku["strategy"] == s])) for s in planned]
        if set(planned) & layered()
        else []
    )  # the layered strategies compared, each at its best
    return BriefData(
        spec,
        rows,
        pick,
        tiers,
        skus,
        curves,
        explain_row(inputs, pick.row),
        purchase(on_sku, pick),
        assumed_prices(inputs, pick.row),
        robust,
        curve_rows,
        by_strategy,
        ettr_curves(pick.row, curve_rows),
    )


# the ETTR curve of a brief: from a thousand GPUs to a hundred thousand
SCALE_GPUS = (1_000, 100_000)


def ettr_curves(pick: pd.Series, curve_rows: dict[str, pd.Series]) -> dict[str, tuple]:
    """The brief's options at GPU counts from SCALE_GPUS[0] to SCALE_GPUS[1] (whole replicas of the
    model's tp x pp, at least two), each at its optimal cadence: strategy -> (engine, GPUs, ETTR). The
    pick's own option; sync and async at their best engine on its tier; and replica_recovery on that
    async engine (built on async, it runs wherever async does): where replica-level recovery pays."""
    from ..model.evaluate import at_scale

    replica = float(pick["tp"]) * float(pick["pp"])
    lo, hi = max(SCALE_GPUS[0], 2 * replica), max(SCALE_GPUS[1], 4 * replica)
    gpus = np.unique(np.maximum(np.round(np.geomspace(lo, hi, 15) / replica), 2) * replica)
    bases = {str(pick["strategy"]): pick, **{s: r for s, r in curve_rows.items()}}
    if "async" in curve_rows and "replica_recovery" in STRATEGIES:
        bases.setdefault("replica_recovery", curve_rows["async"])
    return {
        strategy: (
            str(row["engine"]),
            gpus,
            np.asarray(at_scale(row, gpus, strategy)["optimal_ettr_pct"], dtype=float),
        )
        for strategy, row in bases.items()
    }


def _best(rows: pd.DataFrame) -> pd.Series | None:
    """The row the rule picks among ``rows`` (the best engine of one strategy and tier), None when empty."""
    pick = recommend(rows)
    return None if pick is None else pick.row


def purchase(on_sku: pd.DataFrame, pick: Pick) -> Purchase:
    """The purchase curve around the pick (see ``Purchase``). The rows it keeps are chosen by masks
    over ``on_sku``'s columns and taken once (a frame per step is the costly part)."""
    strategy = str(pick.row["strategy"])
    family = (on_sku["tier_family"] == pick.row["tier_family"]).to_numpy()
    if on_sku["tier"][family].nunique() > 1:
        steps, what = family, f"the {pick.row['tier_family']} family"
    else:
        steps = on_sku["tier_durable"].to_numpy(bool) & on_sku["total_usd"].notna().to_numpy()
        what = f"the priced durable tiers of {pick.row['sku']}"
    strategies = on_sku["strategy"].astype(str)
    sync = (
        recommend(on_sku, np.flatnonzero(strategies.to_numpy() == BASELINE))
        if strategy != BASELINE
        else None
    )
    engine_of = {
        strategy: pick.row["engine"],
        **({BASELINE: sync.row["engine"]} if sync is not None else {}),
    }
    keep = on_sku[
        steps
        & np.isin(strategies.to_numpy(), list(engine_of))
        & (on_sku["engine"].astype(str).to_numpy() == strategies.map(engine_of).to_numpy())
    ]
    points = keep[PURCHASE_COLUMNS].sort_values(
        ["strategy", "tier_bought_GBps", "total_usd_month"], kind="stable"
    )
    mine = points[(points["strategy"] == strategy)]
    ok = mine[mine["recommendable"].to_numpy(bool)]
    optimum = (
        int(ok.sort_values(["total_usd", "tier_bought_GBps"], kind="stable").index[0])
        if not ok.empty
        else None
    )
    next_step = None
    if optimum is not None:
        above = mine[mine["tier_bought_GBps"] > mine.loc[optimum, "tier_bought_GBps"]]
        next_step = above.iloc[0] if not above.empty else None
    return Purchase(what, points, optimum, next_step)
