"""Which rows the plan has: its axes, the combinations that can exist (and why the others are left
out), the summary point, and the plan's size against its limit. numpy only: ``validate`` counts the
rows without pandas, and the evaluator builds its cross product from these."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from ..base.errors import InputError, Problem
from ..read.inputs import INPUTS
from ..read.strategies import STRATEGIES, listed
from .axes import Dropped, Point
from .columns import COLUMNS

if TYPE_CHECKING:
    from ..read.validated import Inputs
    from ..read.yamlfile import Marks


def dimensions(inputs: Inputs) -> dict[str, list]:
    """The plan's axes, in the order the cross product nests them."""
    plan = inputs.plan
    models = plan.models or list(inputs.models)
    return {
        "model": models,
        "recipe": plan.recipes or [None],  # None: each model's own recipe
        "sku": plan.skus or list(inputs.skus),
        "tier": plan.tiers or list(inputs.tiers),
        "engine": plan.engines or list(inputs.engines),
        "strategy": list(plan.strategies),
        "gpus": [q.value for q in plan.gpus],
        "interval_s": [q.value for q in plan.intervals],
    }


def summary_point(inputs: Inputs) -> Point:
    plan, s = inputs.plan, inputs.plan.summary
    dims = dimensions(inputs)
    return Point(
        gpus=(s.gpus if s else plan.gpus[0]).value,
        interval_s=(s.interval if s else plan.intervals[0]).value,
        model=s.model if s and s.model in dims["model"] else dims["model"][0],
        sku=s.sku if s and s.sku in dims["sku"] else dims["sku"][0],
    )


def headline_recipe(inputs: Inputs, model: str) -> str:
    """The recipe a model's headline uses: its own, unless the plan crosses other recipes only."""
    own = inputs.models[model].recipe
    listed = inputs.plan.recipes
    return own if not listed or own in listed else listed[0]


def reachable(sku, tier) -> bool:
    """Whether a SKU's nodes can write to a tier: the tier serves the SKU's site, or every site."""
    site = sku.site or INPUTS["site"].default
    return "any" in tier.sites or site in tier.sites


def runs(engine, strategy: str, listed_by_some: bool = False) -> bool:
    """Whether an engine runs a strategy: it implements it (lists it); or, when no engine of the plan
    lists a layered strategy (``listed_by_some`` False: a models directory from before engines named
    them), the strategy is built on one it implements (peer replication and differences on its async
    snapshot, a just-in-time save on its sync save)."""
    if strategy in engine.strategies:
        return True
    built_on = STRATEGIES[strategy].built_on
    return not listed_by_some and built_on is not None and built_on in engine.strategies


def combinations(inputs: Inputs, dims) -> tuple[np.ndarray, list[tuple[str, np.ndarray]]]:
    """Which SKU x tier x engine x strategy combinations exist (the others cannot: a tier of another
    site, a strategy the engine does not implement, a strategy that lands on NVMe (tiered) without a
    remote tier to drain to, NVMe the SKU lacks), and each rule's mask of the rest."""
    skus = [inputs.skus[s] for s in dims["sku"]]
    tiers = [inputs.tiers[t] for t in dims["tier"]]
    shape = (len(skus), len(tiers), len(dims["engine"]), len(dims["strategy"]))
    reach = np.array([[reachable(s, t) for t in tiers] for s in skus], dtype=bool).reshape(
        shape[:2]
    )
    has_nvme = np.array([s.local_nvme is not None for s in skus], dtype=bool)[:, None, None, None]
    local = np.array([t.kind == "local_nvme" for t in tiers], dtype=bool)[None, :, None, None]
    listed_by_some = {
        s: any(s in inputs.engines[e].strategies for e in dims["engine"]) for s in dims["strategy"]
    }
    implements = np.array(
        [
            [runs(inputs.engines[e], s, listed_by_some[s]) for s in dims["strategy"]]
            for e in dims["engine"]
        ],
        dtype=bool,
    ).reshape(shape[2:])[None, None, :, :]
    tiered = np.array([STRATEGIES[s].lands_on_nvme for s in dims["strategy"]], dtype=bool)[
        None, None, None, :
    ]
    landing = listed(
        tuple(s for s in dims["strategy"] if STRATEGIES[s].lands_on_nvme)
        or ("a strategy that lands on NVMe",)
    )
    rules = [
        (
            "the tier does not serve the SKU's site (tiers.*.sites, skus.*.site)",
            np.broadcast_to(~reach[:, :, None, None], shape),
        ),
        (
            "the engine does not implement the strategy (engines.*.strategies; a layered one no engine of "
            "the plan lists runs on the engines of the one it is built on)",
            np.broadcast_to(~implements, shape),
        ),
        (
            f"{landing} needs a remote tier to drain to (the tier is node-local NVMe)",
            np.broadcast_to(tiered & local, shape),
        ),
        (
            f"the SKU has no local NVMe ({landing} strategy or local_nvme tier)",
            np.broadcast_to(~has_nvme & (tiered | local), shape),
        ),
    ]
    keep = np.ones(shape, dtype=bool)
    out = []
    for reason, mask in rules:
        out.append((reason, mask & keep))
        keep &= ~mask
    return keep, out


def too_few_replicas(inputs: Inputs, dims) -> np.ndarray:
    """Per strategy x model x cluster size, whether the job has fewer data-parallel replicas than the
    strategy needs (its min_replicas: jit a second, to save from after a failure), the replicas counted as
    the dp_ranks column counts them."""
    out = np.zeros((len(dims["strategy"]), len(dims["model"]), len(dims["gpus"])), dtype=bool)
    gpus = np.asarray(dims["gpus"], dtype=float)
    for i, name in enumerate(dims["model"]):
        m = inputs.models[name]
        tp, pp = (float(q.value) if q is not None else 1.0 for q in (m.tp, m.pp))
        replicas = COLUMNS["dp_ranks"].fn(gpus, tp, pp)
        for k, s in enumerate(dims["strategy"]):
            out[k, i] = replicas < STRATEGIES[s].min_replicas
    return out


def replicas_needed(strategy: str) -> str:
    """Why rows of a strategy that needs more replicas than a job has are left out."""
    return (
        f"{strategy} needs {STRATEGIES[strategy].replicas_why} (tp x pp of the model fills the job)"
        if STRATEGIES[strategy].min_replicas == 2
        else f"{strategy} needs {STRATEGIES[strategy].min_replicas} data-parallel replicas "
        f"({STRATEGIES[strategy].replicas_why}), more than the job holds"
    )


def plan_rows(inputs: Inputs) -> tuple[int, list[Dropped]]:
    """How many rows the plan's cross product keeps, and what it leaves out, without building it."""
    dims = dimensions(inputs)
    return counted(dims, *combinations(inputs, dims), too_few_replicas(inputs, dims))


def counted(
    dims, keep: np.ndarray, rules: list[tuple[str, np.ndarray]], few: np.ndarray | None = None
) -> tuple[int, list[Dropped]]:
    """The rows ``combinations`` keeps, and what each of its rules leaves out, over every axis; a
    strategy where a model x cluster size has fewer data-parallel replicas than it needs (``few``) is
    left out too."""
    per_cell = (
        len(dims["model"]) * len(dims["recipe"]) * len(dims["gpus"]) * len(dims["interval_s"])
    )
    dropped = [Dropped(reason, int(mask.sum()) * per_cell) for reason, mask in rules if mask.any()]
    rows = int(keep.sum()) * per_cell
    for k, strategy in enumerate(dims["strategy"]):
        if few is None or not few[k].any():
            continue
        lost = (
            int(keep[..., k].sum())
            * int(few[k].sum())
            * len(dims["recipe"])
            * len(dims["interval_s"])
        )
        if lost:
            dropped.append(Dropped(replicas_needed(strategy), lost))
            rows -= lost
    return rows, dropped


def cross_product(
    inputs: Inputs, start: int = 0, stop: int | None = None
) -> tuple[dict[str, np.ndarray], dict[str, list], list[Dropped]]:
    """Index arrays for the plan's combinations (positions ``start`` to ``stop`` of the full product,
    before the ones that cannot exist are removed), and what was left out of the whole plan."""
    dims = dimensions(inputs)
    shape = tuple(len(v) for v in dims.values())
    stop = math.prod(shape) if stop is None else min(stop, math.prod(shape))
    idx = dict(zip(dims, np.unravel_index(np.arange(start, stop, dtype=np.int64), shape)))
    keep, rules = combinations(inputs, dims)
    few = too_few_replicas(inputs, dims)
    mask = keep[idx["sku"], idx["tier"], idx["engine"], idx["strategy"]]
    mask &= ~few[idx["strategy"], idx["model"], idx["gpus"]]
    _, dropped = counted(dims, keep, rules, few)
    return {k: v[mask] for k, v in idx.items()}, dims, dropped


def checked(inputs: Inputs) -> Inputs:
    """``inputs``, once what only the model can check holds: the plan's rows within its max_rows (else an
    InputError at the plan's key)."""
    from ..read.load import plan_file

    check_size(inputs, plan_file(inputs), inputs.marks.get("plan.yaml"))
    return inputs


def check_size(inputs: Inputs, plan_file: str, marks: Marks | None = None) -> None:
    """The plan's rows (the combinations that can exist) against its max_rows."""
    dims = dimensions(inputs)
    product = math.prod(len(v) for v in dims.values())
    rows = plan_rows(inputs)[0]
    limit = inputs.plan.max_rows.value
    if rows > limit:
        parts = " x ".join(f"{len(v)} {k}" for k, v in dims.items())
        less = f", less {product - rows:,} that cannot exist" if product > rows else ""
        line, col = (marks or {}).get(("max_rows",), (marks or {}).get(("gpus",), (1, 1)))
        raise InputError(
            Problem(
                plan_file,
                line,
                col,
                "max_rows",
                f"the plan has {rows:,} rows ({parts} = {product:,}{less}), more than max_rows "
                f"({limit:,.0f}); narrow it by listing fewer models, skus, tiers, engines, gpus, intervals or "
                "strategies in the plan, or raise max_rows",
            )
        )
