"""The purchase for a cluster: how many units of which storage product, for every job it serves.

A cluster (the plan's ``clusters:``) runs jobs over the storage's life, some at the same time. One
storage system serves them all. For each product it may buy (a tier sold in units, a fixed tier as one
unit, or a tier already owned), and each number of units from the fewest to the most sold:

- each job is given the bandwidth the units deliver (``bandwidth``: linear in units, or interpolated
  between the sizes a source published). Jobs whose training overlaps either save at the same time,
  each getting its checkpoint's share of the bandwidth (``together``), or take turns (``staggered``):
  each save then has the whole system, so long as the system's busy share, summed over the jobs
  that overlap, stays within its time. A restore reads while the others write: it gets its share;
- each job then chooses its engine, strategy and cadence as its decision does (``decide``: each
  option at its cheapest cadence, then the one meeting the target at the plan's confidence), and its
  GPU time lost over its run is what the storage does not buy back;
- the storage costs its purchase (units x unit price, and capacity by the TB where a unit holds
  none), then each year support, power and space (and rent, for a rented tier), over its life.

The choice is the product and count that cost least over the storage's life (storage plus the GPU
time lost by every job), with every job meeting its target at the plan's confidence. The runner-up is
the best of another product, with its own purchase price. Counts are searched on a ladder refined
around the best until every count between its neighbours is tried (``COUNTS_DENSE``)."""

from __future__ import annotations

import dataclasses
import math
from typing import NamedTuple

import numpy as np
import pandas as pd

from ..base.errors import InputError, Problem
from ..model.evaluate import compute, scenarios
from ..model.plan import reachable
from ..read.inputs import INPUTS
from ..read.load import plan_file
from ..read.quantity import Q
from ..read.validated import Inputs
from . import decide
from .recommend import columns_of, recommend
from .types import (
    ALONE,
    FIXED,
    HOURS_PER_YEAR,
    SECONDS_PER_YEAR,
    STAGGERED,
    TOGETHER,
    Bought,
    ClusterPurchase,
    JobAt,
    JobSpec,
    Product,
    UnitsAt,
)
from .uncertainty.ranges import parameters

DEFAULT_LIFE_S = 5 * SECONDS_PER_YEAR  # an owned tier that states no life: 5 years (said so)
COUNTS_DENSE = 12  # a span of at most this many counts is tried whole; a wider one on a ladder
COUNTS_FIRST = 10  # the first ladder's steps
LADDER_BATCH = 5  # counts evaluated together, cheapest first
NOT_MOVED = ["restart_share_pct", "replica_share_pct"]  # what the storage bought does not change


# ---- the products ----------------------------------------------------------------------------


def _value(q, default: float = math.nan) -> float:
    return default if q is None else float(q.value)


def products(inputs: Inputs, cluster) -> tuple[list[Product], list[str]]:
    """The products a cluster may buy (durable tiers its SKU reaches; the plan's cluster.tiers where it
    names them), and those that could serve but have no price."""
    sku = inputs.skus[cluster.sku]
    names = cluster.tiers or inputs.plan.tiers or list(inputs.tiers)
    out, unpriced = [], []
    for name in names:
        t = inputs.tiers[name]
        durable = INPUTS["tier_durable"].value(t, name)
        if t.kind == "local_nvme" or not float(durable) or not reachable(sku, t):
            continue
        p = product(name, t)
        (out if p.priced else unpriced).append(p if p.priced else name)
    return out, unpriced


def product(name: str, t) -> Product:
    """A tier as a product: its unit (or itself as one fixed unit), price per unit and running costs."""
    u = t.unit
    per_GBps = _value(t.capex_usd_per_GBps, 0.0)
    per_tb = _value(t.capex_usd_per_tb)
    if u is not None:
        price = _value(u.price)
        basis = "stated"
        if math.isnan(price) and (per_GBps > 0 or not math.isnan(per_tb)):
            price, basis = u.write.value / 1e9 * per_GBps, "derived"
        lo, hi = int(u.min.value), int(u.max.value)
        cap = _value(u.capacity)
        power, ru, per_nodes = (
            _value(u.power_W, 0.0),
            _value(u.rack_units, 0.0),
            _value(u.per_nodes),
        )
        unit_name = u.name
    else:
        write = INPUTS["tier_write_GBps"].value(t, name)
        price = float(write) * per_GBps if per_GBps > 0 and math.isfinite(float(write)) else 0.0
        priced = per_GBps > 0 or not math.isnan(per_tb) or t.usd_per_tb_month is not None
        price, basis = (price, "derived") if priced else (math.nan, "none")
        lo = hi = 1
        cap, power, ru, per_nodes, unit_name = math.nan, 0.0, 0.0, math.nan, FIXED
    owned = int(_value(t.owned, 0.0))
    if owned:
        price, basis = 0.0, "owned"
    return Product(
        tier=name,
        unit_name=unit_name,
        lo=lo,
        hi=hi,
        owned=owned,
        unit_price_usd=price,
        unit_price_basis=basis,
        capacity_per_unit_bytes=cap,
        usd_per_tb=per_tb,
        power_W=power,
        rack_units=ru,
        support_pct=_value(t.support_per_year, 0.0),
        support_usd_year=_value(t.support_usd_per_year, 0.0),
        life_s=_value(t.life, DEFAULT_LIFE_S),
        per_nodes=per_nodes,
    )


def bandwidth(t, units: int) -> tuple[float, float, bool]:
    """A tier's aggregate write and read bandwidth (bytes/s) at ``units`` units, and whether that is
    beyond the largest size a source published. Per unit, the rate is interpolated between the
    published sizes (the unit itself is the first), and beyond the largest keeps the largest's; a
    tier without a unit is its own figures."""
    u = t.unit
    if u is None:
        return math.nan, math.nan, False
    w1 = u.write.value
    r1 = (u.read or u.write).value
    points = {1: (w1, r1)}
    for s in u.sizes:
        n = int(s.units.value)
        points[n] = (s.write.value / n, (s.read.value if s.read else s.write.value * r1 / w1) / n)
    ns = sorted(points)
    w = np.interp(units, ns, [points[n][0] for n in ns])
    r = np.interp(units, ns, [points[n][1] for n in ns])
    return float(units * w), float(units * r), units > max(ns)


# ---- the jobs at a product's counts ----------------------------------------------------------


def spans(inputs: Inputs, jobs: list[JobSpec], rows: dict[str, pd.DataFrame]) -> dict[str, tuple]:
    """Each job's training span, (start, end) in seconds from the storage's first day: its start and
    its compute time (``compute_s``, which no option changes)."""
    starts = {j.name: _value(j.start, 0.0) for j in inputs.plan.jobs}
    out = {}
    for job in jobs:
        r = rows[job.name]
        length = float(r["compute_s"].iloc[0]) if len(r) else 0.0
        out[job.name] = (starts.get(job.name, 0.0), starts.get(job.name, 0.0) + length)
    return out


def overlaps(span: dict[str, tuple]) -> dict[str, tuple[str, ...]]:
    """Per job, the jobs whose training overlaps its own."""
    return {
        a: tuple(b for b, (s2, e2) in span.items() if b != a and s2 < e and s < e2)
        for a, (s, e) in span.items()
    }


def alone(inputs: Inputs, tier: str) -> Inputs:
    """The inputs with the product as the only tier; an owned tier priced at nothing to buy (what it
    costs to run, the purchase adds), so that its options are ranked like a bought one's."""
    t = inputs.tiers[tier]
    if t.owned is not None:
        from ..read.inputs import replaced

        t = replaced(t, "capex_usd_per_tb", Q(0.0, "$0", "usd", "derived", "owned: nothing to buy"))
        if t.life is None:
            t = replaced(t, "life", Q(DEFAULT_LIFE_S, "5 y", "duration", "assumption", "owned"))
    plan = inputs.plan.model_copy(update={"tiers": [tier]})
    return dataclasses.replace(inputs, tiers={**inputs.tiers, tier: t}, plan=plan)


def _tier_rows(inputs: Inputs, job: JobSpec, tier: str) -> pd.DataFrame:
    """The job's options on one tier at the tier's own figures (every engine and strategy)."""
    ji = decide.job_inputs(alone(inputs, tier), job)
    rows, _ = scenarios(ji)
    return _slim(rows.reset_index(drop=True))


def _at_counts(rows: pd.DataFrame, t, counts: list[int], shares: list[float]) -> pd.DataFrame:
    """The options tiled over (count, share): the tier's bandwidth as ``counts`` units deliver it, a
    share of it for this job (the read too: a restore reads while the others write)."""
    if not len(rows):
        return rows
    blocks = []
    for n in counts:
        w, r, _ = bandwidth(t, n)
        for s in shares:
            b = rows.copy()
            if not math.isnan(w):
                b["tier_write_GBps"] = w * s / 1e9
                b["tier_read_GBps"] = r * s / 1e9
            elif s != 1.0:
                write = b["tier_write_GBps"].to_numpy(float)
                read = b["tier_read_GBps"].to_numpy(float)
                b["tier_write_GBps"] = write * s
                b["tier_read_GBps"] = np.where(np.isnan(read), write, read) * s
            b["_units"] = n
            b["_share"] = s
            blocks.append(b)
    return pd.concat(blocks, ignore_index=True)


SHOWN = [  # the computed columns a job's choice is read by: the rule, the purchase and its outputs
    "meets_target",
    "recommendable",
    "total_usd",
    "waste_usd",
    "tier_bought_GBps",
    "overhead_pct",
    "target_overhead_pct",
    "ettr_pct",
    "tier_s",
    "durable_every_saves",
    "capacity_needed_bytes",
    "storage_usd_month",
    "run_days",
    "compute_s",
    *NOT_MOVED,
    *decide.PINNED,
]


def _slim(rows: pd.DataFrame) -> pd.DataFrame:
    """The options' inputs and labels alone: what a judgement reads (every column is computed from
    them; carrying the other 200 through tiling and rounds was most of the cost)."""
    keep = [c for c in rows.columns if c in INPUTS or c in LABELS]
    return rows[keep]


LABELS = {
    "model",
    "sku",
    "tier",
    "engine",
    "strategy",
    "recipe",
    "gpus",
    "interval_s",
    "ckpt_bytes",
}


def _at(rows: pd.DataFrame, intervals: np.ndarray) -> pd.DataFrame:
    """The options at ``intervals``: their inputs, and the columns the purchase reads (``SHOWN``)."""
    env = {n: rows[n].to_numpy() for n in INPUTS if n in rows}
    env["interval_s"] = np.asarray(intervals, dtype=float)
    cols = compute(env, SHOWN)
    return rows.assign(interval_s=env["interval_s"], **{n: np.asarray(cols[n]) for n in SHOWN})


def _judge(rows: pd.DataFrame, params, confidence: float) -> pd.DataFrame:
    """The options as a decision judges them: each at its cheapest cadence, then at the cadence that
    meets the target at the confidence, with its chance of meeting it (``decide``'s procedure, over
    the columns the purchase reads)."""
    if not len(rows):
        return rows
    cheapest = _at(rows, decide.best_intervals(rows))
    robust = _at(rows, decide.robust_intervals(cheapest, params, confidence))
    return robust.assign(p_meets_pct=decide.chance(robust, params))


def _picks(judged: pd.DataFrame, confidence: float) -> dict[tuple[int, float], pd.Series | None]:
    """Per (count, share), the job's choice: among its options meeting the target at the confidence
    (durable, feasible), the least GPU time lost; None where none does."""
    out: dict[tuple[int, float], pd.Series | None] = {}
    if not len(judged):
        return out
    sure = judged["recommendable"].to_numpy(bool) & (
        judged["p_meets_pct"].to_numpy(float) >= confidence - 1e-9
    )
    rows = judged.assign(recommendable=sure)
    cols = columns_of(rows)
    keys = pd.MultiIndex.from_arrays(
        [judged["_units"].to_numpy(int), judged["_share"].to_numpy(float)]
    )
    for key, at in pd.Series(np.arange(len(rows))).groupby(keys.to_flat_index()).groups.items():
        at = np.sort(np.asarray(at))
        if not sure[at].any():
            out[tuple(key)] = None
            continue
        pick = recommend(rows, at, cols)
        out[tuple(key)] = pick.row if pick is not None and pick.meets else None
    return out


# ---- the cost of a point ----------------------------------------------------------------------


def _busy(row: pd.Series) -> float:
    """The share of the time a job's durable saves keep the storage busy (its write to the tier over
    the time between two durable saves)."""
    every = float(row["durable_every_saves"])
    return float(row["tier_s"]) / (float(row["interval_s"]) * every)


def _yearly(prod: Product, n: int, purchase: float, prices, rent: float = 0.0) -> dict:
    """What ``n`` units cost a year to run, by part: support (a share of the purchase, and an owned
    tier's own figure), power and space at the cluster's prices, and rent."""
    kwh, ru_month = prices
    return {
        "support": purchase * prod.support_pct + prod.support_usd_year,
        "power": n * prod.power_W * HOURS_PER_YEAR / 1000 * kwh,
        "space": n * prod.rack_units * 12 * ru_month,
        "rent": rent,
    }


def _point(
    prod: Product, t, n: int, mode: str, jobs_at: list[JobAt], life_s: float, prices
) -> UnitsAt:
    w, r, beyond = bandwidth(t, n)
    rows = [j.row for j in jobs_at if j.row is not None]
    feasible = len(rows) == len(jobs_at)
    if math.isnan(w):  # a fixed tier: its own figures
        w = float(rows[0]["tier_write_GBps"]) * 1e9 if rows else math.nan
        r = w
    need = sum(float(x["capacity_needed_bytes"]) for x in rows)
    held = n * prod.capacity_per_unit_bytes
    if not math.isnan(held) and need > held:
        feasible = False
    capacity = need if math.isnan(held) else held
    purchase = 0.0 if prod.owned else n * prod.unit_price_usd
    if (
        not prod.owned
        and math.isnan(prod.capacity_per_unit_bytes)
        and not math.isnan(prod.usd_per_tb)
    ):
        purchase += need / 1e12 * prod.usd_per_tb
    rent = sum(float(x["storage_usd_month"]) for x in rows if _rented(x)) * 12
    parts = _yearly(prod, n, purchase, prices, rent)
    running = sum(parts.values())
    lost = sum(float(x["waste_usd"]) for x in rows)
    idle = [100.0 - float(x["ettr_pct"]) for x in rows]
    kept = sum(
        float(x["waste_usd"]) * sum(float(x[c]) for c in NOT_MOVED) / d if d > 0 else 0.0
        for x, d in zip(rows, idle)
    )
    return UnitsAt(
        tier=prod.tier,
        units=n,
        mode=mode,
        write_GBps=w / 1e9,
        read_GBps=r / 1e9,
        beyond_published=beyond,
        purchase_usd=purchase,
        running_usd_year=running,
        capacity_bytes=capacity,
        storage_life_usd=purchase + running * life_s / SECONDS_PER_YEAR,
        gpu_lost_usd=lost,
        moved_usd=lost - kept,
        not_moved_usd=kept,
        feasible=feasible,
        jobs=tuple(jobs_at),
        unit_name=prod.unit_name,
        yearly_usd=parts,
    )


def _rented(row: pd.Series) -> bool:
    return not math.isnan(float(row["usd_per_tb_month"]))


# ---- the search -------------------------------------------------------------------------------


class _Product:
    """One product's evaluation for a cluster: each job's choice at any count, computed on demand a
    batch of counts at a time (each batch one evaluation of the tiled options)."""

    def __init__(self, inputs: Inputs, prod: Product, setting: Setting, life_s: float):
        self.prod, self.t = prod, inputs.tiers[prod.tier]
        self.jobs, self.overlap = setting.jobs, setting.overlap
        self.confidence, self.prices, self.life_s = setting.confidence, setting.prices, life_s
        jobs, overlap = self.jobs, self.overlap
        # each job's draws, as its decision's
        self.params = {j.name: parameters(inputs, j.gpus) for j in jobs}
        self.base = {j.name: _tier_rows(inputs, j, prod.tier) for j in jobs}
        size = {
            j.name: float(self.base[j.name]["ckpt_bytes"].iloc[0])
            if len(self.base[j.name])
            else 0.0
            for j in jobs
        }
        self.shares = {
            j.name: sorted(
                {1.0, size[j.name] / (size[j.name] + sum(size[k] for k in overlap[j.name]))}
                if overlap[j.name]
                else {1.0}
            )
            for j in jobs
        }
        self.picks: dict[str, dict] = {j.name: {} for j in jobs}
        self.points: dict[int, UnitsAt] = {}

    def evaluate(self, counts: list[int], every_share: bool = False) -> None:
        """Each job's choice at ``counts``: first with the whole system (alone, or taking turns);
        then, only at the counts where the overlapping jobs' saves do not fit one after another,
        at their shares (saving together: never cheaper where taking turns fits, since each job
        then has less bandwidth). ``every_share``: both at every count (for a test)."""
        todo = [n for n in counts if n not in self.points]
        if not todo:
            return
        self._judge_at(todo, lambda shares: [1.0])
        crowded = [
            n
            for n in todo
            if every_share
            or (
                any(self.overlap.values())
                and all(self.picks[j.name].get((n, 1.0)) is not None for j in self.jobs)
                and not self._fits(n)
            )
        ]
        if crowded:
            self._judge_at(crowded, lambda shares: [s for s in shares if s != 1.0])
        for n in todo:
            self.points[n] = self._best_mode(n)

    def _judge_at(self, counts: list[int], which) -> None:
        for j in self.jobs:
            shares = which(self.shares[j.name])
            if not shares:
                continue
            tiled = _at_counts(self.base[j.name], self.t, counts, shares)
            judged = _judge(tiled, self.params[j.name], self.confidence)
            self.picks[j.name].update(_picks(judged, self.confidence))

    def _fits(self, n: int) -> bool:
        """Whether the jobs' saves at ``n`` units, each with the whole system, fit one after another:
        each job's busy share plus those of the jobs that overlap it at most the whole time."""
        rows = {j.name: self.picks[j.name].get((n, 1.0)) for j in self.jobs}
        if any(r is None for r in rows.values()):
            return False
        return all(
            _busy(rows[a]) + sum(_busy(rows[b]) for b in self.overlap[a]) <= 1.0 for a in rows
        )

    def _best_mode(self, n: int) -> UnitsAt:
        """The count's cheaper way of sharing the system: together (each its share) or staggered (each
        the whole system, if the saves of overlapping jobs fit one after another)."""
        alone = not any(self.overlap.values())
        together = [
            JobAt(
                j.name,
                self.picks[j.name].get((n, self.shares[j.name][0])),
                self.shares[j.name][0],
                ALONE if alone else TOGETHER,
            )
            for j in self.jobs
        ]
        out = [self._point(n, ALONE if alone else TOGETHER, together)]
        if not alone and self._fits(n):
            whole = [
                JobAt(j.name, self.picks[j.name].get((n, 1.0)), 1.0, STAGGERED) for j in self.jobs
            ]
            out.append(self._point(n, STAGGERED, whole))
        feasible = [p for p in out if p.feasible]
        return min(feasible or out, key=lambda p: p.total_usd)

    def _point(self, n, mode, jobs_at):
        return _point(self.prod, self.t, n, mode, jobs_at, self.life_s, self.prices)

    def floor_usd(self, n: int) -> float:
        """What ``n`` units cost over the life before any capacity, rent or GPU time: a count whose
        floor is above the best total found cannot be the best."""
        buy = 0.0 if self.prod.owned else n * self.prod.unit_price_usd
        yearly = sum(_yearly(self.prod, n, buy, self.prices).values())
        return buy + yearly * self.life_s / SECONDS_PER_YEAR

    def best(self) -> UnitsAt:
        """The count that costs least over the life with every job meeting its target (where none does,
        the most units), searched on a ladder refined around the best so far; a count whose storage
        alone costs more than the best total found is never evaluated."""
        lo, hi = self.prod.counts.start, self.prod.counts.stop - 1
        counts = _ladder(lo, hi, COUNTS_FIRST)
        while True:
            for k in range(0, len(counts), LADDER_BATCH):  # cheap counts first: they bound the rest
                bound = self._bound()
                batch = [n for n in counts[k : k + LADDER_BATCH] if self.floor_usd(n) < bound]
                self.evaluate(batch)
            best = self._choose()
            tried = sorted(self.points)
            k = tried.index(best.units)
            a, b = tried[max(k - 1, 0)], tried[min(k + 1, len(tried) - 1)]
            if b == best.units:  # the best is the most tried: above it, only counts the bound cut
                b = min(hi, b + 1) if self.floor_usd(b + 1) < self._bound() else b
            gaps = [n for n in range(a, b + 1) if n not in self.points]
            if not gaps:
                return best
            counts = gaps if len(gaps) <= COUNTS_DENSE else _ladder(a, b, COUNTS_FIRST)

    def _bound(self) -> float:
        feasible = [p.total_usd for p in self.points.values() if p.feasible]
        return min(feasible, default=math.inf)

    def _choose(self) -> UnitsAt:
        feasible = [p for p in self.points.values() if p.feasible]
        if feasible:
            return min(feasible, key=lambda p: (p.total_usd, p.units))
        return self.points[max(self.points)]

    def least(self) -> UnitsAt | None:
        """The fewest units that meet every target (searched between the fewest tried infeasible and
        the fewest tried feasible count)."""
        while True:
            tried = sorted(self.points)
            ok = [n for n in tried if self.points[n].feasible]
            if not ok:
                return None
            first = ok[0]
            below = [n for n in tried if n < first]
            a = below[-1] if below else first
            gaps = [n for n in range(a + 1, first) if n not in self.points]
            if not gaps:
                return self.points[first]
            self.evaluate(gaps if len(gaps) <= COUNTS_DENSE else _ladder(a + 1, first - 1))


def _ladder(lo: int, hi: int, steps: int = COUNTS_DENSE) -> list[int]:
    """Counts from lo to hi: every one where there are few, else about ``steps`` spread evenly on a
    log scale (both ends included)."""
    if hi - lo + 1 <= steps:
        return list(range(lo, hi + 1))
    return sorted({int(round(x)) for x in np.geomspace(lo, hi, steps)} | {lo, hi})


def cluster_jobs(inputs: Inputs, cluster, jobs: list[JobSpec]) -> list[JobSpec]:
    named = {j.name for j in inputs.plan.jobs if j.cluster == cluster.name}
    return [j for j in jobs if j.name in named]


class Setting(NamedTuple):
    """What every product of a cluster is judged with: its jobs, the jobs each overlaps, the plan's
    confidence and the cluster's running prices ($/kWh, $/U-month)."""

    jobs: list[JobSpec]
    overlap: dict[str, tuple[str, ...]]
    confidence: float
    prices: tuple[float, float]


def setting(inputs: Inputs, cluster, jobs: list[JobSpec]) -> Setting:
    """A cluster's ``Setting``; refused (an InputError at the job) where jobs running at once need
    more GPUs than it has."""
    mine = cluster_jobs(inputs, cluster, jobs)
    span = spans(inputs, mine, {j.name: _job_rows(inputs, j) for j in mine})
    _check_gpus(inputs, cluster, mine, span)
    confidence = float(INPUTS["confidence_pct"].value(inputs.plan))
    prices = (_value(cluster.usd_per_kwh, 0.0), _value(cluster.usd_per_rack_unit_month, 0.0))
    return Setting(mine, overlaps(span), confidence, prices)


def settings(inputs: Inputs, jobs: list[JobSpec]) -> dict[int, Setting]:
    """Each cluster of the plan that runs a job, by its position: its ``Setting`` (refused here,
    before any piece runs)."""
    return {
        k: setting(inputs, c, jobs)
        for k, c in enumerate(inputs.plan.clusters)
        if cluster_jobs(inputs, c, jobs)
    }


def _job_rows(inputs: Inputs, job: JobSpec) -> pd.DataFrame:
    rows, _ = scenarios(decide.job_inputs(inputs, job))
    return rows


def evaluator(inputs: Inputs, cluster, jobs: list[JobSpec], tier: str) -> _Product:
    """One product of a cluster, ready to judge its jobs at any count (``_Product.evaluate``)."""
    return _evaluator(inputs, cluster, setting(inputs, cluster, jobs), tier)


def _evaluator(inputs: Inputs, cluster, at: Setting, tier: str) -> _Product:
    prod = product(tier, inputs.tiers[tier])
    return _Product(inputs, prod, at, _value(cluster.life, prod.life_s))


def piece(shared: tuple[Inputs, dict[int, Setting]], task: tuple[int, str]):
    """One product of one cluster, for a worker (``base.workers``): its best count, every count tried,
    the fewest that meet the targets, and the product."""
    inputs, at = shared
    k, tier = task
    ev = _evaluator(inputs, inputs.plan.clusters[k], at[k], tier)
    return ev.best(), ev.points, ev.least(), ev.prod


def tasks(inputs: Inputs, at: dict[int, Setting]) -> list[tuple[int, str]]:
    """The pieces of the plan's purchases: (cluster, product) for each cluster ``at`` holds."""
    return [(k, p.tier) for k in at for p in products(inputs, inputs.plan.clusters[k])[0]]


def purchase(inputs: Inputs, cluster, jobs: list[JobSpec]) -> ClusterPurchase:
    """The purchase for one ``cluster`` (see the module's words), here."""
    k = inputs.plan.clusters.index(cluster)
    at = {k: setting(inputs, cluster, jobs)}
    results = {tier: piece((inputs, at), (k, tier)) for _, tier in tasks(inputs, at)}
    return assemble(inputs, cluster, at[k], results)


def assemble(inputs: Inputs, cluster, at: Setting, results: dict) -> ClusterPurchase:
    """The cluster's answer from its products' pieces (tier -> ``piece``'s): the cheapest meeting
    every target, the runner-up (another product), the chosen product's curve and the fewest units
    that meet."""
    _, unpriced = products(inputs, cluster)
    bests = [results[t][0] for t in results]
    feasible = sorted((p for p in bests if p.feasible), key=lambda p: (p.total_usd, p.tier))
    choice = feasible[0] if feasible else None
    runner = feasible[1] if len(feasible) > 1 else None
    curve, least, ref, chosen = [], None, None, None
    life = _value(cluster.life, DEFAULT_LIFE_S)
    if choice is not None:
        _, points, least, chosen = results[choice.tier]
        curve = [points[n] for n in sorted(points)]
        life = _value(cluster.life, chosen.life_s)
        if not math.isnan(chosen.per_nodes):
            nodes = math.ceil(cluster.gpus.value / inputs.skus[cluster.sku].gpus_per_node.value)
            ref = int(math.ceil(nodes / chosen.per_nodes))
    discount = _value(cluster.discount_rate, 0.0)
    return ClusterPurchase(
        cluster=cluster.name,
        title=cluster.title or cluster.name,
        sku=cluster.sku,
        gpus=int(cluster.gpus.value),
        jobs=tuple(j.name for j in at.jobs),
        overlaps=at.overlap,
        life_s=life,
        discount_pct=100.0 * discount,
        usd_per_kwh=at.prices[0],
        usd_per_rack_unit_month=at.prices[1],
        choice=choice,
        runner_up=runner,
        products=bests,
        unpriced=tuple(unpriced),
        curve=curve,
        least=least,
        reference_units=ref,
        confidence_pct=at.confidence,
        schedule=schedule(choice, life, discount) if choice is not None else [],
        product=chosen,
    )


def schedule(p: UnitsAt, life_s: float, discount: float) -> list[dict]:
    """The choice's cost year by year over the life: the purchase in year 0, then each year's
    running costs (the last year's share where the life is not whole years), each discounted."""
    years = life_s / SECONDS_PER_YEAR
    zero = {f"{k}_usd": 0.0 for k in p.yearly_usd}
    out = [{"year": 0, "purchase_usd": p.purchase_usd, **zero, "running_usd": 0.0, "factor": 1.0}]
    for y in range(1, math.ceil(years - 1e-9) + 1):
        part = min(1.0, years - (y - 1))
        out.append(
            {
                "year": y,
                "purchase_usd": 0.0,
                **{f"{k}_usd": v * part for k, v in p.yearly_usd.items()},
                "running_usd": p.running_usd_year * part,
                "factor": 1.0 / (1.0 + discount) ** y,
            }
        )
    return out


def present_value(rows: list[dict]) -> float:
    return sum((r["purchase_usd"] + r["running_usd"]) * r["factor"] for r in rows)


def _check_gpus(inputs: Inputs, cluster, jobs: list[JobSpec], span: dict[str, tuple]) -> None:
    """Jobs running at the same time fit in the cluster's GPUs: refused at the last job to start."""
    order = sorted(range(len(jobs)), key=lambda k: (span[jobs[k].name][0], k), reverse=True)
    for job in (jobs[k] for k in order):
        start = span[job.name][0]
        running = [j for j in jobs if span[j.name][0] <= start < span[j.name][1]]
        need = sum(j.gpus for j in running)
        if need > cluster.gpus.value:
            i = next(k for k, j in enumerate(inputs.plan.jobs) if j.name == job.name)
            place = inputs.marks.get("plan.yaml")
            line, col = _place(place, ("jobs", i, "gpus"))
            names = ", ".join(j.name for j in running)
            raise InputError(
                Problem(
                    plan_file(inputs),
                    line,
                    col,
                    f"jobs[{i}].gpus",
                    f"jobs {names} run at the same time on cluster '{cluster.name}' and need "
                    f"{need:,} GPUs together; it has {cluster.gpus.value:,.0f} (give a job a later "
                    "start, or the cluster more GPUs)",
                )
            )


def _place(marks, path) -> tuple[int, int]:
    from ..read.load import place

    return (0, 0) if marks is None else place(marks, path)


def with_units(inputs: Inputs, tier: str, units: int, share: float = 1.0) -> Inputs:
    """The inputs with a tier sold in units at ``units`` of them (``share`` of their bandwidth): its
    write and read as the purchase sizes them. Refused (an InputError at the tier) where the tier
    declares no unit, or ``units`` is outside the fewest and most it sells."""
    t = inputs.tiers[tier]
    place = inputs.places.get(("tiers", tier))
    if t.unit is None or not t.unit.min.value <= units <= t.unit.max.value:
        why = (
            f"tier '{tier}' is not sold in units (no unit: in storage.yaml)"
            if t.unit is None
            else f"tier '{tier}' sells {t.unit.min.value:,.0f} to {t.unit.max.value:,.0f} "
            f"{t.unit.name}, not {units:,}"
        )
        raise InputError(
            Problem(
                place.file if place else "storage.yaml",
                place.line if place else 0,
                place.column if place and place.column else 0,
                f"{tier}.unit",
                why,
            )
        )
    w, r, _ = bandwidth(t, units)
    how = f"{units:,} {t.unit.name} x the unit's figures (unit: in storage.yaml)" + (
        f", this job's {share:.0%} share" if share < 1 else ""
    )
    return _resized(inputs, tier, w * share, r * share, how)


def _resized(inputs: Inputs, tier: str, write: float, read: float, how: str) -> Inputs:
    """The inputs with a tier's write and read bandwidth (bytes/s) set, derived as ``how`` says."""
    from ..read.inputs import replaced

    t = inputs.tiers[tier]
    for key, value in (("write", write), ("read", read)):
        t = replaced(t, key, Q(value, f"{value / 1e9:,.4g} GB/s", "bandwidth", "derived", how))
    return dataclasses.replace(
        inputs, tiers={**inputs.tiers, tier: t}, prov=_sized_prov(inputs, tier, how)
    )


def _sized_prov(inputs: Inputs, tier: str, how: str) -> dict:
    """The provenance of a tier sized by units: its write and read derived from the unit's figures
    (at the unit's place in storage.yaml), so that every output says where the figure came from."""
    out = dict(inputs.prov)
    unit = inputs.prov.get(("tiers", tier, "unit.write")) or inputs.prov.get(
        ("tiers", tier, "write")
    )
    for key in ("write", "read"):
        old = inputs.prov.get(("tiers", tier, key)) or unit
        if old is not None:
            out[("tiers", tier, key)] = dataclasses.replace(old, basis="derived", source=how)
    return out


def sized_inputs(inputs: Inputs, p: UnitsAt, job: str) -> Inputs:
    """The inputs as the purchase leaves them for one job: the product alone, at the bandwidth its
    units give this job (its share when it saves together with others)."""
    at = next(j for j in p.jobs if j.job == job)
    inputs = alone(inputs, p.tier)
    if inputs.tiers[p.tier].unit is not None:
        return with_units(inputs, p.tier, p.units, at.share)
    if at.share == 1.0:
        return inputs  # a fixed tier, the whole of it: its own figures
    w, r = p.write_GBps * 1e9 * at.share, p.read_GBps * 1e9 * at.share
    return _resized(inputs, p.tier, w, r, f"this job's {at.share:.0%} share of the tier")


def decision(inputs: Inputs, cp: ClusterPurchase, job: JobSpec):
    """The job's decision on what its cluster buys: its options on the chosen product, at the
    bandwidth the units give it (its share where its saves coincide with others'), decided as
    ``decide`` decides; the runner-up is its pick on the cluster's runner-up product (the other
    storage the buyer weighs), added to its options."""
    c, other = cp.choice, cp.runner_up
    at = next(j for j in c.jobs if j.job == job.name)
    bought = Bought(
        cp.cluster,
        cp.jobs,
        c.label,
        c.purchase_usd,
        c.storage_life_usd,
        cp.life_s,
        100.0 * at.share,
        at.mode,
        None if other is None else other.label,
        None if other is None else other.purchase_usd,
        c.units if c.sized else 0,
    )
    d = decide.decide(sized_inputs(inputs, c, job.name), job, scale=False)
    d = dataclasses.replace(d, bought=bought)
    if other is None or not d.pick.meets:
        return d
    rd = decide.decide(sized_inputs(inputs, other, job.name), job, scale=False)
    if not rd.pick.meets:
        return d
    shift = int(d.options.index.max()) + 1  # the runner-up's options, labelled after the pick's
    others = rd.options.set_axis(rd.options.index + shift)
    pick = dataclasses.replace(d.pick, runner_up=others.loc[rd.pick.index + shift])
    return dataclasses.replace(d, options=pd.concat([d.options, others]), pick=pick)


def decision_piece(shared: tuple[Inputs, list[JobSpec]], task: tuple[ClusterPurchase, int]):
    """One job's decision on its cluster's purchase, for a worker (``base.workers``)."""
    inputs, jobs = shared
    cp, k = task
    return decision(inputs, cp, jobs[k])
