"""The compute stage: everything an output shows, computed once, as plain data.

``compute(inputs)`` runs the engine over the plan and derives from its frame what the renderers
format: the recommendation per model and SKU (one rule, ``recommend``), the summary a planner reads
first, each brief's rows, recommendation, tier comparison and waste curves, and the calibration
table. The terminal summary, the workbook, the PDF briefs and ``manifest.json`` all read this; none
of them runs the engine or chooses an option of its own.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from . import calibration, page, rule, uncertainty
from .engine import chunks, curve, scenarios
from .engine import compute as compute_columns
from .errors import InputError, Problem
from .explain import explain_row
from .inputs import ENTITY_COLUMN, INPUTS
from .load import Inputs, shown_path
from .plan import Dropped, Point, headline_recipe, plan_rows, summary_point
from .provenance import provenance
from .quantity import Q
from .strategies import BACKGROUND, BASELINE, COMPARED, layered

CURVE_MIN = np.geomspace(1, 720, 60)  # the waste curve of a brief: 1 min to 12 h
ROWS_IN_MEMORY = 1_000_000  # a plan up to this many rows is one frame; a larger one streams in chunks
CHUNK_ROWS = 250_000  # rows per chunk of a streamed plan: about 300 MB of columns at a time


# ---- the one rule that picks an option -----------------------------------------------------------

@dataclass(frozen=True)
class Pick:
    """The option chosen among candidate rows and why: ``status`` is ``recommended`` (it meets the
    target, is feasible, durable and priced, at the least cost), ``needs a price`` (options meet the
    target but none has a price: never ranked, named in ``unpriced``) or ``closest`` (nothing meets
    the target: the lowest overhead). The runner-up is the best recommendable option on another tier
    (the other storage a buyer would weigh)."""

    index: int  # the row's label in the frame it was chosen from
    row: pd.Series
    status: str
    runner_up: pd.Series | None
    unpriced: tuple[str, ...] = ()  # tiers that meet the target but have no price
    other_engine: pd.Series | None = None  # the best recommendable option of another engine

    @property
    def meets(self) -> bool:
        return self.status == rule.RECOMMENDED

    @property
    def label(self) -> str:
        """How the option reads: 'async to superpod-good'."""
        return rule.label(self.row["strategy"], self.row["tier"], self.row["engine"])

    @property
    def option(self) -> dict[str, str]:
        return {"sku": str(self.row["sku"]), "tier": str(self.row["tier"]), "strategy": str(self.row["strategy"]),
                "engine": str(self.row["engine"])}

    @property
    def other_engine_extra_usd(self) -> float | None:
        """What the best option of another engine costs over the run beyond the recommended one."""
        if self.other_engine is None or not self.meets:
            return None
        return float(self.other_engine["total_usd"] - self.row["total_usd"])

    @property
    def runner_up_extra_usd(self) -> float | None:
        """What the runner-up costs over the run beyond the recommended option."""
        if self.runner_up is None or not self.meets:
            return None
        return float(self.runner_up["total_usd"] - self.row["total_usd"])


RANK_BY = ["tier", "engine", "tier_kind", *rule.COLUMNS.values()]  # the columns recommend reads


def ranked(rows: pd.DataFrame) -> tuple[pd.Index, str]:
    """Candidate options (their labels in ``rows``), best first, and the status of the first, by the
    one rule (``rule.rank``)."""
    order, count, status = rule.rank(*rule.of({c: rows[c].to_numpy() for c in rule.COLUMNS.values()}))
    return rows.index[order[:count]], rule.STATUSES[int(status)]


def recommend(rows: pd.DataFrame) -> Pick | None:
    """The option chosen among ``rows`` (see ``ranked``); None when there are no rows."""
    if rows.empty:
        return None
    order, status = ranked(rows)
    best = rows.loc[order[0]]
    runner = other = None
    if status == rule.RECOMMENDED:
        elsewhere = order[rows.loc[order, "tier"].to_numpy() != best["tier"]]
        runner = rows.loc[elsewhere[0]] if len(elsewhere) else None
        engines = order[rows.loc[order, "engine"].to_numpy() != best["engine"]]
        other = rows.loc[engines[0]] if len(engines) else None
    waiting = rows[rows["tier_durable"].to_numpy(bool) & rows["meets_target"].to_numpy(bool)
                   & rows["total_usd"].isna().to_numpy()]
    return Pick(int(order[0]), best, status, runner, tuple(dict.fromkeys(str(t) for t in waiting["tier"])), other)


def assumed_prices(inputs: Inputs, row) -> list[tuple[str, str]]:
    """The prices an option rests on whose basis is an assumption: (input, value as shown)."""
    from . import display

    names = {section: row[column] for section, column in ENTITY_COLUMN.items()}
    out = []
    for inp in INPUTS.values():
        if inp.price:
            prov = provenance(inputs, inp, names)
            if prov is not None and prov.basis == "assumption":
                out.append((inp.name, display.of(inp.name, row[inp.name])))
    return out


# ---- the summary --------------------------------------------------------------------------------

def headline_rows(frame: pd.DataFrame, inputs: Inputs, point: Point) -> pd.DataFrame:
    """Rows at the summary's cluster size and cadence, each model at its headline recipe."""
    rows = frame[(frame["gpus"] == point.gpus) & (frame["interval_s"] == point.interval_s)]
    recipe = rows["model"].map({m: headline_recipe(inputs, m) for m in frame["model"].cat.categories})
    return rows[rows["recipe"].astype(str) == recipe.astype(str)]


def summary(frame: pd.DataFrame, inputs: Inputs, point: Point) -> tuple[pd.DataFrame, list[list[int]], list]:
    """One line per model x SKU: the checkpoint size; per strategy the option the rule picks with its
    frame index; and the option chosen overall, with its status, runner-up, the assumed prices it
    rests on and the tiers that meet the target but need a price. Also, per line, its candidate rows
    in the order the rule breaks ties (smaller system, then lower overhead), and its purchase curve."""
    shown = ["model", "sku", "recipe", "gpus", "interval_s", "ckpt_bytes", "strategy", "tier_family", "storage_usd_month",
             "lost_gpu_usd_month", "total_usd_month", "stall_s"]
    rows = headline_rows(frame[shown + [c for c in RANK_BY if c not in shown]], inputs, point)
    out, candidates, curves = [], [], []
    for (model, sku), group in rows.groupby(["model", "sku"], observed=True, sort=False):
        first = group.iloc[0]
        line = {"model": str(model), "sku": str(sku), "recipe": str(first["recipe"]), "gpus": int(first["gpus"]),
                "interval_s": float(first["interval_s"]), "ckpt_bytes": float(first["ckpt_bytes"])}
        for strategy in inputs.plan.strategies:
            pick = recommend(group[group["strategy"] == strategy])
            line[f"{strategy}_tier"] = str(pick.row["tier"]) if pick else None
            line[f"{strategy}_engine"] = str(pick.row["engine"]) if pick else None
            line[f"{strategy}_meets"] = bool(pick.meets) if pick else False
            line[f"{strategy}_overhead_pct"] = float(pick.row["overhead_pct"]) if pick else np.nan
            line[f"{strategy}_index"] = pick.index if pick else None
        best = recommend(group)
        full = frame.loc[best.index]
        line.update({"option_tier": str(best.row["tier"]), "option_strategy": str(best.row["strategy"]),
                     "option_engine": str(best.row["engine"]),
                     "option_status": best.status, "option_meets": best.meets, "option_index": best.index,
                     "option_total_usd": float(best.row["total_usd"]),
                     "option_total_usd_month": float(best.row["total_usd_month"]),
                     "option_storage_usd_month": float(best.row["storage_usd_month"]),
                     "option_lost_gpu_usd_month": float(best.row["lost_gpu_usd_month"]),
                     "option_bought_GBps": float(best.row["tier_bought_GBps"]),
                     "option_overhead_pct": float(best.row["overhead_pct"]),
                     "option_stall_s": float(full["stall_s"]),
                     "option_required_GBps": float(full["required_write_GBps"]),
                     "runner_up_tier": None if best.runner_up is None else str(best.runner_up["tier"]),
                     "runner_up_strategy": None if best.runner_up is None else str(best.runner_up["strategy"]),
                     "runner_up_engine": None if best.runner_up is None else str(best.runner_up["engine"]),
                     "runner_up_extra_usd": best.runner_up_extra_usd,
                     "assumed_prices": [name for name, _ in assumed_prices(inputs, full)],
                     "needs_price": list(best.unpriced)})
        out.append(line)
        candidates.append([int(i) for i in group.sort_values(["tier_bought_GBps", "overhead_pct"],
                                                              kind="stable").index])
        curves.append(purchase(frame.loc[group.index, PURCHASE_COLUMNS + ["tier_family", "sku", "tier_durable",
                                                                          "meets_target", "overhead_pct"]], best))
    return pd.DataFrame(out), candidates, curves


# ---- briefs -------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    """What one brief compares: a model on candidate SKUs and tiers, at one cluster size and cadence."""

    name: str
    model: str
    skus: tuple[str, ...]
    tiers: tuple[str, ...]
    gpus: int
    interval_s: float
    recipe: str
    title: str | None = None
    in_plan: bool = False  # a model's brief: its rows are in the build's frame


@dataclass(frozen=True)
class TierLine:
    """One candidate tier on the recommended SKU: its rows of the compared strategies (``strategies.COMPARED``:
    sync, async), None where left out."""

    tier: str
    sync: pd.Series | None
    asyn: pd.Series | None
    recommended: bool


PURCHASE_COLUMNS = ["tier", "strategy", "engine", "tier_bought_GBps", "storage_usd_month", "lost_gpu_usd_month",
                    "total_usd_month", "total_usd", "choice_usd", "recommendable"]


@dataclass(frozen=True)
class Purchase:
    """The purchase curve: monthly cost against the bandwidth bought, over the steps a buyer chooses
    between (the recommended tier's family, or every priced durable tier of its SKU), for the
    recommended strategy and for sync; the optimum and what the next step up costs and saves."""

    what: str  # 'the superpod family' or 'the priced tiers of aws-p5'
    points: pd.DataFrame  # PURCHASE_COLUMNS, by strategy then bandwidth; index: frame labels
    optimum: int | None  # the frame label of the recommendable point the rule ranks first (the pick's strategy)
    next_step: pd.Series | None  # the point after the optimum, one step more bandwidth


@dataclass(frozen=True)
class BriefData:
    spec: Spec
    rows: pd.DataFrame  # the brief's scenarios, every strategy of the plan
    pick: Pick  # the recommendation
    tiers: list[TierLine]
    skus: list[tuple[str, Pick]]  # the best option on each candidate SKU
    curves: dict[str, tuple[np.ndarray, np.ndarray]]  # strategy -> (interval_s, waste_pct) on the pick's SKU/tier
    explanation: dict  # every input of the pick with its provenance (explain.explain_row)
    purchase: Purchase
    assumed: list[tuple[str, str]]  # the assumed prices the recommendation rests on: (input, value)
    robust: object = None  # uncertainty.Robustness: tornado, break-even values, Monte Carlo band
    curve_rows: dict = field(default_factory=dict)  # strategy -> the row its waste curve is of (its best engine)
    strategies: list = field(default_factory=list)  # (strategy, Pick) on the pick's SKU, when a layered one is planned


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.") or "model"


def specs(inputs: Inputs, frame: pd.DataFrame, point: Point) -> list[Spec]:
    """One brief per model of the plan (on the summary's SKU, every tier), plus the plan's ``briefs:``."""
    plan = inputs.plan
    tiers = tuple(str(t) for t in frame["tier"].cat.categories)
    taken = {b.name for b in plan.briefs}
    out, used = [], set()
    for model in frame["model"].cat.categories:
        name = _slug(str(model))
        while name in used or name in taken:
            name += "-1"
        used.add(name)
        out.append(Spec(name, str(model), (point.sku,), tiers, int(point.gpus), point.interval_s,
                        headline_recipe(inputs, str(model)), in_plan=True))
    for b in plan.briefs:
        out.append(Spec(b.name, b.model, tuple(b.skus), tuple(b.tiers), int(b.gpus.value), b.interval.value,
                        b.recipe or inputs.models[b.model].recipe, b.title))
    return out


def brief_rows(inputs: Inputs, frame: pd.DataFrame, spec: Spec) -> pd.DataFrame:
    """The brief's scenarios: a model's brief takes them from the build's frame (the plan holds them);
    a ``briefs:`` entry may name any cluster size, cadence, SKU or tier, so its rows are computed."""
    if spec.in_plan:
        f = frame
        return f[(f["model"] == spec.model) & (f["recipe"] == spec.recipe) & f["sku"].isin(spec.skus)
                 & f["tier"].isin(spec.tiers) & (f["gpus"] == spec.gpus) & (f["interval_s"] == spec.interval_s)]
    narrow = inputs.plan.model_copy(update={
        "models": [spec.model], "skus": list(spec.skus), "tiers": list(spec.tiers), "recipes": [spec.recipe],
        "gpus": [Q(float(spec.gpus), str(spec.gpus), "count")],
        "intervals": [Q(spec.interval_s, f"{spec.interval_s:g} s", "duration")]})
    return scenarios(dataclasses.replace(inputs, plan=narrow))[0]


def brief(inputs: Inputs, frame: pd.DataFrame, spec: Spec, params: list | None = None) -> BriefData:
    """One brief's data; ``params``: the inputs' uncertain figures (``uncertainty.parameters``), when
    the caller has them."""
    rows = brief_rows(inputs, frame, spec)
    if rows.empty:
        place = inputs.places.get(("briefs", spec.name))
        raise InputError(Problem(_plan_file(inputs), place.line if place else 0, place.column if place else 0,
                                 f"{place.source}.name" if place else spec.name,
                                 f"every combination of brief '{spec.name}' is impossible (tiered or a local_nvme "
                                 "tier on a SKU without local NVMe): name a remote tier or a SKU with local NVMe"))
    pick = recommend(rows)
    on_sku = rows[rows["sku"] == pick.row["sku"]]
    tiers = []
    for tier in spec.tiers:
        here = on_sku[on_sku["tier"] == tier]
        if here.empty:
            continue
        by = {s: _best(here[here["strategy"] == s]) for s in COMPARED}  # the best engine of each
        tiers.append(TierLine(tier, by[BASELINE], by[BACKGROUND], tier == pick.row["tier"]))
    skus = [(sku, recommend(rows[rows["sku"] == sku])) for sku in spec.skus if (rows["sku"] == sku).any()]
    curves, curve_rows = {}, {}
    for strategy in COMPARED:
        row = _best(on_sku[(on_sku["tier"] == pick.row["tier"]) & (on_sku["strategy"] == strategy)])
        if row is not None:
            intervals = CURVE_MIN * 60
            curves[strategy] = (intervals, curve(row, intervals)["waste_pct"])
            curve_rows[strategy] = row
    robust = uncertainty.robustness(rows, uncertainty.parameters(inputs, spec.gpus) if params is None else params)
    planned = [s for s in inputs.plan.strategies if (on_sku["strategy"] == s).any()]
    by_strategy = [(s, recommend(on_sku[on_sku["strategy"] == s])) for s in planned] \
        if set(planned) & layered() else []  # the layered strategies compared, each at its best
    return BriefData(spec, rows, pick, tiers, skus, curves, explain_row(inputs, pick.row), purchase(on_sku, pick),
                     assumed_prices(inputs, pick.row), robust, curve_rows, by_strategy)


def _best(rows: pd.DataFrame) -> pd.Series | None:
    """The row the rule picks among ``rows`` (the best engine of one strategy and tier), None when empty."""
    pick = recommend(rows)
    return None if pick is None else pick.row


def purchase(on_sku: pd.DataFrame, pick: Pick) -> Purchase:
    """The purchase curve around the pick (see ``Purchase``)."""
    strategy = str(pick.row["strategy"])
    family = on_sku[on_sku["tier_family"] == pick.row["tier_family"]]
    if family["tier"].nunique() > 1:
        steps, what = family, f"the {pick.row['tier_family']} family"
    else:
        steps = on_sku[on_sku["tier_durable"].to_numpy(bool) & on_sku["total_usd"].notna().to_numpy()]
        what = f"the priced durable tiers of {pick.row['sku']}"
    sync = recommend(on_sku[on_sku["strategy"].to_numpy() == BASELINE]) if strategy != BASELINE else None
    engine_of = {strategy: pick.row["engine"], **({BASELINE: sync.row["engine"]} if sync is not None else {})}
    keep = steps[np.isin(steps["strategy"].astype(str), list(engine_of))]
    keep = keep[(keep["engine"].astype(str).to_numpy() == keep["strategy"].astype(str).map(engine_of).to_numpy())]
    points = keep[PURCHASE_COLUMNS].sort_values(["strategy", "tier_bought_GBps", "total_usd_month"], kind="stable")
    mine = points[(points["strategy"] == strategy)]
    ok = mine[mine["recommendable"].to_numpy(bool)]
    optimum = int(ok.sort_values(["total_usd", "tier_bought_GBps"], kind="stable").index[0]) if not ok.empty else None
    next_step = None
    if optimum is not None:
        above = mine[mine["tier_bought_GBps"] > mine.loc[optimum, "tier_bought_GBps"]]
        next_step = above.iloc[0] if not above.empty else None
    return Purchase(what, points, optimum, next_step)


# ---- the workbook's rows ------------------------------------------------------------------------

GROUP = ["model", "recipe", "sku", "tier", "engine", "strategy", "gpus"]  # a group: every interval of one system


def per_group(limit: int, rows: int, intervals: int) -> int:
    """Rows per group the workbook keeps when not all fit: every group holds one row per interval."""
    return max(1, limit // max(rows // max(intervals, 1), 1))


def workbook_rows(frame: pd.DataFrame, named: set[int], limit: int, intervals: int, rows: int | None = None,
                  selected: pd.Index | None = None) -> tuple[pd.Index, str]:
    """The rows the workbook holds: all if they fit; else the lowest-waste intervals of each group,
    always with the rows the summary names (its candidates and purchase curves). Returns them and a
    note saying what was left out. A streamed plan (``rows`` in all) passes the rows ``selected``
    as it went (``Selection``): the same rows the whole frame would give."""
    rows = len(frame) if rows is None else rows
    if rows <= limit:
        return frame.index, ""
    each = per_group(limit, rows, intervals)
    if selected is None:
        rank = frame.groupby(GROUP, observed=True, sort=False)["waste_pct"].rank(method="first")
        keep = (rank <= each).to_numpy()
    else:
        keep = frame.index.isin(selected)
    must = frame.index.isin(sorted(named))
    whole = int((keep | must).sum())
    if whole > limit:  # more groups than rows: the lowest waste overall
        best = frame[keep & ~must].sort_values("waste_pct", kind="stable").head(max(limit - must.sum(), 0))
        keep = frame.index.isin(best.index)
    kept = frame.index[keep | must]
    what = (f"the {each} lowest-waste interval(s) of each model x recipe x SKU x tier x engine x strategy x GPU count"
            if whole <= limit else
            f"the lowest-waste rows overall (one interval of every group needs workbook_rows = {whole:,})")
    note = (f"Scenarios holds {len(kept):,} of {rows:,} rows (workbook_rows = {limit:,}): {what}, and the "
            "summary's rows. Every row is in scenarios.parquet.")
    return kept, note


class Selection:
    """The workbook's rows of a streamed plan, kept as the chunks go by: per group, the
    ``per_group`` lowest-waste rows so far (ties to the earlier row, as ``rank(method="first")``)."""

    def __init__(self, limit: int, rows: int, intervals: int):
        self.per_group = per_group(limit, rows, intervals)
        self.kept: pd.DataFrame | None = None

    def add(self, chunk: pd.DataFrame) -> None:
        both = chunk if self.kept is None else concat([self.kept, chunk])
        rank = both.groupby(GROUP, observed=True, sort=False)["waste_pct"].rank(method="first")
        self.kept = both[(rank <= self.per_group).to_numpy()]


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Frames of one plan stacked, their text columns kept categorical (each chunk has its own
    categories: they are united)."""
    frames = [f for f in frames if f is not None]
    if len(frames) == 1:
        return frames[0]
    out = {}
    for name in frames[0].columns:
        if isinstance(frames[0][name].dtype, pd.CategoricalDtype):
            every = [list(f[name].cat.categories) for f in frames]  # the plan's axes: the same, in plan order
            cats = every[0] if all(c == every[0] for c in every) else sorted(set().union(*every), key=str)
            out[name] = pd.Categorical(np.concatenate([f[name].astype(object).to_numpy() for f in frames]),
                                       categories=cats)
        else:
            out[name] = np.concatenate([f[name].to_numpy() for f in frames])
    return pd.DataFrame(out, index=np.concatenate([f.index.to_numpy() for f in frames]), copy=False)


def tier_overview(inputs: Inputs, frame: pd.DataFrame, point: Point, kept: pd.Index) -> list:
    """Per tier, the rows (by strategy) of the summary's model and SKU at the summary point: what the
    workbook's overhead-by-tier chart shows (rows the workbook holds only)."""
    rows = headline_rows(frame, inputs, point)
    rows = rows[(rows["model"] == point.model) & (rows["sku"] == point.sku) & rows.index.isin(kept)]
    out = []
    for tier in frame["tier"].cat.categories:
        here = rows[rows["tier"] == tier]
        if not here.empty:  # a tier of another site: not an option for this SKU
            out.append((str(tier), {str(s): int(i) for i, s in zip(here.index, here["strategy"])}))
    return out


# ---- the whole report ---------------------------------------------------------------------------

# The Cadence sheet's intervals (minutes): each summary pick's waste is recomputed over them
CADENCE_GRID_MIN = (1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 40, 50, 60, 75, 90, 120, 150, 180, 240, 300, 360,
                    480, 600, 720)


def cadence_grid(frame: pd.DataFrame, idx: int) -> dict[str, np.ndarray]:
    """Every column of scenario ``idx`` recomputed at each interval of CADENCE_GRID_MIN (the figures
    the Cadence sheet's formulas compute, stored with them as their results)."""
    seconds = np.array([60.0 * m for m in CADENCE_GRID_MIN])
    one = frame.loc[[idx]]  # the scenario's inputs, each in its column's dtype, once per interval
    return compute_columns({n: np.repeat(one[n].to_numpy(), len(seconds)) for n in INPUTS if n in one}
                           | {"interval_s": seconds})


@dataclass
class Report:
    """Everything the outputs show. Renderers format it; they compute nothing of their own."""

    inputs: Inputs
    frame: pd.DataFrame
    dropped: list[Dropped]
    point: Point
    summary: pd.DataFrame
    briefs: list[BriefData]
    calibration: calibration.Table  # a row per published case, and the summary
    workbook_index: pd.Index = None  # the rows the workbook's Scenarios sheet holds
    workbook_note: str = ""  # why some were left out, when they were
    tier_overview: list[tuple[str, dict[str, int]]] = field(default_factory=list)  # tier -> strategy -> row
    candidates: list[list[int]] = field(default_factory=list)  # per summary line: its options' rows, tie order
    params: list = field(default_factory=list)  # uncertainty.parameters: the figures that carry a range
    assumed: dict[int, list[str]] = field(default_factory=dict)  # frame row -> the assumed prices it rests on
    purchases: list = field(default_factory=list)  # per summary line: its purchase curve (Purchase)
    rows: int = 0  # the plan's rows; ``frame`` holds them all up to ROWS_IN_MEMORY, else the ones shown
    cadence: dict[int, dict[str, np.ndarray]] = field(default_factory=dict)  # summary pick -> cadence_grid
    headline: int | None = None  # the option recommended for the summary's model and SKU (its frame row)
    sweeps: list = field(default_factory=list)  # uncertainty.Sweep of each input the headline option reads
    page: object = None  # page.Page: what out/report.html shows beyond the summary (when it is written)

    def __post_init__(self):
        self.rows = self.rows or len(self.frame)


def _plan_file(inputs: Inputs) -> str:
    return shown_path(Path(inputs.root), "plan.yaml")


def compute(inputs: Inputs, sink=None, progress=lambda _: None, workbook: bool = True,
            briefs: bool = True, html: bool = False) -> Report:
    """Everything the outputs show. ``sink(frame)``, when given, receives every row of the plan
    (one frame, or chunk after chunk for a plan above ROWS_IN_MEMORY rows, whose report then keeps
    only the rows the outputs show: the summary point's, and the workbook's when ``workbook``).
    Without ``workbook`` or ``briefs``, what only they show is not computed (no brief's data; the
    workbook's rows are the summary's). With ``html``, the review page's sections and table
    (``page.page``)."""
    rows, dropped = plan_rows(inputs)
    if rows == 0:
        why = "; ".join(f"{d.rows:,} because {d.reason}" for d in dropped)
        raise InputError(Problem(_plan_file(inputs), 0, 0, "",
                                 f"every combination of the plan was left out ({why}); widen the plan"))
    point = summary_point(inputs)
    limit = int(inputs.plan.workbook_rows.value)
    selected = None
    if rows <= ROWS_IN_MEMORY:
        frame, _ = scenarios(inputs)
        if sink is not None:
            sink(frame)
    else:
        frame, selected = _stream(inputs, sink, point, Selection(limit, rows, len(inputs.plan.intervals))
                                  if workbook else None, rows, progress)
    table, candidates, purchases = summary(frame, inputs, point)
    params = uncertainty.parameters(inputs, point.gpus)  # the summary lines' (all at the point's GPUs)
    by_gpus = functools.cache(lambda gpus: uncertainty.parameters(inputs, gpus))
    data = [brief(inputs, frame, spec, by_gpus(spec.gpus)) for spec in specs(inputs, frame, point)] if briefs else []
    named = {i for rows_ in candidates for i in rows_} | {int(i) for p in purchases for i in p.points.index}
    keep, note = (workbook_rows(frame, named, limit, len(inputs.plan.intervals), rows, selected) if workbook
                  else (pd.Index(sorted(named), dtype=np.int64), ""))
    labels = sorted({i for rows_ in candidates for i in rows_})
    priced = frame.loc[labels, [*ENTITY_COLUMN.values(), *(n for n, i in INPUTS.items() if i.price)]]
    assumed = {int(i): [name for name, _ in assumed_prices(inputs, row)]  # rows as dicts: 50x faster than .loc
               for i, row in zip(priced.index, priced.to_dict("records"))}
    overview = tier_overview(inputs, frame, point, keep) if workbook else []
    picks = {int(v) for s in COMPARED if f"{s}_index" in table for v in table[f"{s}_index"] if pd.notna(v)}
    cadence = {idx: cadence_grid(frame, idx) for idx in sorted(picks)} if workbook else {}
    headline = headline_option(table, point)
    sweeps = uncertainty.sweeps(frame.loc[[headline]], params) if workbook and headline is not None else []
    review = page.page(frame, table, candidates, purchases, params, data, rows, keep) if html else None
    return Report(inputs, frame, dropped, point, table, data, calibration.table(), workbook_index=keep,
                  workbook_note=note, tier_overview=overview, candidates=candidates,
                  purchases=purchases, assumed=assumed, rows=rows, cadence=cadence, params=params,
                  headline=headline, sweeps=sweeps, page=review)


def headline_option(table: pd.DataFrame, point: Point) -> int | None:
    """The frame row of the option the summary recommends for the plan's summary model and SKU."""
    if table.empty:
        return None
    lines = table.index[(table["model"] == point.model) & (table["sku"] == point.sku)]
    v = table.at[lines[0], "option_index"] if len(lines) else None
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else int(v)


def _stream(inputs: Inputs, sink, point: Point, selection: Selection | None, rows: int, progress):
    """A plan too large for one frame, chunk by chunk: each goes to the sink; what the outputs show
    (the summary point's rows, the workbook's selection) is kept."""
    import time

    from .progress import task

    at_point, done, t = [], 0, time.perf_counter()
    with task(progress, "scenarios", rows) as advance:
        for chunk in chunks(inputs, CHUNK_ROWS):
            if sink is not None:
                sink(chunk)
            at_point.append(chunk[(chunk["gpus"] == point.gpus).to_numpy()
                                  & (chunk["interval_s"] == point.interval_s).to_numpy()])
            if selection is not None:
                selection.add(chunk)
            done += len(chunk)
            advance(len(chunk))
    rate = done / max(time.perf_counter() - t, 1e-9)
    progress(f"computed {done:,} of {rows:,} scenarios ({rate / 1e6:.2f} M rows/s)")
    kept = concat(at_point + ([selection.kept] if selection is not None else []))
    kept = kept[~kept.index.duplicated()].sort_index()
    return kept, (selection.kept.index if selection is not None else pd.Index([], dtype=np.int64))
