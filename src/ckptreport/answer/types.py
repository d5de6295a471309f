"""The answer's types: everything the compute stage hands the renderers, as data. How an option and a
status read (``option_label``, ``STATUSES``), the recommendation (``Pick``), each brief's data, how sure
an answer is (``Param``, ``Swing``, ``Robustness``, ``Sampled``), the calibration table, the review
page's sections and the ``Report`` that holds them all. Types only: a renderer that reads them reaches
no module that computes."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..model.axes import Dropped, Point
from ..read.inputs import PLAN
from ..read.validated import Inputs, Prov

if TYPE_CHECKING:  # annotations only: the quick commands (explain, validate) never import pandas
    import pandas as pd

# What an output may need computed beyond the summary (``outputs.Output.needs``, ``answer.report.compute``): the
# workbook's rows, tier overview, cadence grids and sweeps; the briefs' data; the review page's sections
WORKBOOK, BRIEFS, PAGE, DECISIONS = "workbook", "briefs", "page", "decisions"
NEEDS = frozenset({WORKBOOK, BRIEFS, PAGE, DECISIONS})


# ---- how an option and a status read ----------------------------------------------------------

RECOMMENDED, NEEDS_PRICE, CLOSEST = "recommended", "needs a price", "closest"
STATUSES = (RECOMMENDED, NEEDS_PRICE, CLOSEST)  # ``rank``'s status codes, in order
NONE = "none recommendable"  # what a line recommends when no option is recommendable
JOIN = (
    " to "  # an option reads 'async to superpod-good with dcp-async': the strategy, JOIN, the tier,
)
WITH = " with "  # WITH, the engine


def option_label(strategy: object, tier: object, engine: object = None) -> str:
    """How an option reads everywhere: 'async to superpod-good with dcp-async-cached'."""
    return f"{strategy}{JOIN}{tier}" + ("" if engine is None else f"{WITH}{engine}")


# ---- the purchase for a cluster (answer.purchase computes it) -----------------------------------

HOURS_PER_YEAR = 8766.0  # 365.25 days
SECONDS_PER_YEAR = HOURS_PER_YEAR * 3600.0
TOGETHER, STAGGERED, ALONE = "together", "staggered", "alone"  # how overlapping jobs share storage
FIXED = "system"  # the unit of a tier not sold in units: the tier itself, once


@dataclass(frozen=True)
class Product:
    """A storage product a cluster may buy: a tier, what one unit delivers and costs, and the counts
    that can be bought (an owned tier: the units it has)."""

    tier: str
    unit_name: str
    lo: int
    hi: int
    owned: int  # units already held (no purchase); 0: none
    unit_price_usd: float  # NaN: unpriced
    unit_price_basis: str
    capacity_per_unit_bytes: float  # NaN: capacity bought apart by the TB
    usd_per_tb: float  # capacity bought apart (NaN: not priced)
    power_W: float
    rack_units: float
    support_pct: float  # a share of the purchase price a year
    support_usd_year: float  # an owned tier's
    life_s: float
    per_nodes: float  # a reference design's units per node count (NaN: none)

    @property
    def priced(self) -> bool:
        return self.owned > 0 or not math.isnan(self.unit_price_usd)

    @property
    def counts(self) -> range:
        return range(self.owned, self.owned + 1) if self.owned else range(self.lo, self.hi + 1)


@dataclass(frozen=True)
class JobAt:
    """One job's choice on a product at a count: its pick's row (None: nothing meets the target at the
    plan's confidence there), how it shares the system, and its GPU time lost."""

    job: str
    row: pd.Series | None
    share: float
    mode: str

    @property
    def meets(self) -> bool:
        return self.row is not None


@dataclass(frozen=True)
class UnitsAt:
    """A product at a count of units: its storage cost over the life, the GPU time lost by every job,
    whether every job meets its target, and each job's choice."""

    tier: str
    units: int
    mode: str  # together, staggered or alone: how the overlapping jobs' saves share the system
    write_GBps: float
    read_GBps: float
    beyond_published: bool
    purchase_usd: float
    running_usd_year: float
    capacity_bytes: float  # the capacity bought (or held)
    storage_life_usd: float
    gpu_lost_usd: float  # every job's GPU time lost over its run (waste_usd)
    moved_usd: float  # of it, what the storage bought moves (stall, interference, rework, restore)
    not_moved_usd: float  # restart (and a dropped replica's rejoin): no purchase changes it
    feasible: bool
    jobs: tuple[JobAt, ...]
    unit_name: str = "unit"  # what the product's unit is called (a fixed tier: system)
    yearly_usd: dict = field(
        default_factory=dict
    )  # running_usd_year by part: support, power, space, rent

    @property
    def total_usd(self) -> float:
        return self.storage_life_usd + self.gpu_lost_usd

    @property
    def sized(self) -> bool:
        """Whether the product is sold in units (a fixed tier is one 'system')."""
        return self.unit_name != FIXED

    @property
    def label(self) -> str:
        """How the purchase reads: '12 SU of superpod-good'; a fixed tier is its name."""
        return f"{self.units:,} {self.unit_name} of {self.tier}" if self.sized else self.tier


@dataclass(frozen=True)
class ClusterPurchase:
    """The answer for one cluster: the choice, the runner-up (another product), each product's best,
    the curve of the chosen product over its counts, and the year-by-year schedule of the choice."""

    cluster: str
    title: str
    sku: str
    gpus: int
    jobs: tuple[str, ...]
    overlaps: dict[str, tuple[str, ...]]  # job -> the jobs whose training overlaps its own
    life_s: float
    discount_pct: float
    usd_per_kwh: float
    usd_per_rack_unit_month: float
    choice: UnitsAt | None
    runner_up: UnitsAt | None
    products: list[
        UnitsAt
    ]  # each product's best (least cost meeting the targets, else its most units)
    unpriced: tuple[str, ...]  # products that could serve but carry no price: never ranked
    curve: list[UnitsAt]  # the chosen product at every count tried, by count
    least: UnitsAt | None  # the fewest units of the chosen product that meet every target
    reference_units: int | None  # the reference design's units for the cluster (unit.per_nodes)
    confidence_pct: float
    schedule: list[dict] = field(default_factory=list)  # year, purchase, running, discount factor
    product: Product | None = None  # the chosen product: its unit price and running costs

    def payback(self) -> tuple[int, float] | None:
        """(K more units than the least that meets the targets, months they take to pay back) where
        the choice buys more than the least: the extra storage over the GPU time it saves a month."""
        if self.choice is None or self.least is None or self.choice.units <= self.least.units:
            return None
        saved = self.least.gpu_lost_usd - self.choice.gpu_lost_usd
        months = max(_run_months(self.least), 1e-9)
        monthly = saved / months - (self.choice.running_usd_year - self.least.running_usd_year) / 12
        extra = self.choice.purchase_usd - self.least.purchase_usd
        if monthly <= 0:
            return None
        return self.choice.units - self.least.units, extra / monthly


def _run_months(p: UnitsAt) -> float:
    """Months the jobs run (their runs laid end to end where they do not overlap: the longest span)."""
    days = [float(j.row["run_days"]) for j in p.jobs if j.row is not None]
    return max(days, default=0.0) * 86400.0 / (SECONDS_PER_YEAR / 12)


# ---- the recommendation and a brief ----------------------------------------------------------


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
        return self.status == RECOMMENDED

    @property
    def label(self) -> str:
        """How the option reads: 'async to superpod-good'."""
        return option_label(self.row["strategy"], self.row["tier"], self.row["engine"])

    @property
    def option(self) -> dict[str, str]:
        return {
            "sku": str(self.row["sku"]),
            "tier": str(self.row["tier"]),
            "strategy": str(self.row["strategy"]),
            "engine": str(self.row["engine"]),
        }

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
    decision: Decision | None = None  # a job's brief: its options and pick are the decision's


@dataclass(frozen=True)
class JobSpec:
    """A job the cluster runs, at its real scale (the plan's ``jobs:``, else each model at the summary
    point): what the decision answers."""

    name: str
    model: str
    sku: str
    gpus: int
    recipe: str
    tokens: float | None = None  # the job's own, where it gives them (else the model's)
    title: str | None = None
    source: str | None = None
    declared: bool = True  # False: a default job (the plan names none)


@dataclass(frozen=True)
class Bought:
    """What a job's cluster buys, as the job's decision carries it: the storage is the cluster's, not
    the job's own (``purchase.decision``)."""

    cluster: str
    jobs: tuple[str, ...]  # every job the purchase serves
    label: str  # '12 SU of superpod-good'
    purchase_usd: float  # the cluster's purchase price, for all its jobs
    storage_life_usd: float  # purchase, support, power and space over the storage's life
    life_s: float
    share_pct: float  # this job's share of the bandwidth (100: the whole, saves staggered or alone)
    mode: str  # together, staggered or alone
    runner_label: str | None = None  # the cluster's runner-up product
    runner_purchase_usd: float | None = None
    units: int = 0  # units of the product bought (a tier sold in units; 0: a fixed tier)


@dataclass(frozen=True)
class Decision:
    """The decision for one job: every option (tier, engine, strategy) at its own best cadence, the
    interval that minimises its cost over the run subject to the target, solved continuously; how
    likely each is to meet the target over the draws of the uncertain inputs; the pick (the cheapest
    that meets the target with the plan's confidence), the cheapest that meets it at the base figures
    when that is another option, and the answer at each of the plan's cluster sizes."""

    job: JobSpec
    options: pd.DataFrame  # every column of each option at its best cadence, and p_meets_pct
    pick: Pick
    confidence_pct: float
    reached: bool  # whether any recommendable option meets the target with that confidence
    cheapest: (
        pd.Series | None
    )  # the cheapest option meeting the target at the base figures, when not the pick
    robust: Robustness
    scale: list[tuple[int, pd.Series | None]] = field(
        default_factory=list
    )  # (GPUs, the pick there)
    bought: Bought | None = None  # the job runs on a cluster: what it buys for all its jobs

    @property
    def p_meets_pct(self) -> float:
        return float(self.pick.row["p_meets_pct"])


@dataclass(frozen=True)
class TierLine:
    """One candidate tier on the recommended SKU: its rows of the compared strategies (``strategies.COMPARED``:
    sync, async), None where left out."""

    tier: str
    sync: pd.Series | None
    asyn: pd.Series | None
    recommended: bool


@dataclass(frozen=True)
class Purchase:
    """The purchase curve: monthly cost against the bandwidth bought, over the steps a buyer chooses
    between (the recommended tier's family, or every priced durable tier of its SKU), for the
    recommended strategy and for sync; the optimum and what the next step up costs and saves."""

    what: str  # 'the superpod family' or 'the priced tiers of aws-p5'
    points: pd.DataFrame  # PURCHASE_COLUMNS, by strategy then bandwidth; index: frame labels
    optimum: (
        int | None
    )  # the frame label of the recommendable point the rule ranks first (the pick's strategy)
    next_step: pd.Series | None  # the point after the optimum, one step more bandwidth


@dataclass(frozen=True)
class BriefData:
    spec: Spec
    rows: pd.DataFrame  # the brief's scenarios, every strategy of the plan
    pick: Pick  # the recommendation
    tiers: list[TierLine]
    skus: list[tuple[str, Pick]]  # the best option on each candidate SKU
    curves: dict[
        str, tuple[np.ndarray, np.ndarray]
    ]  # strategy -> (interval_s, waste_pct) on the pick's SKU/tier
    explanation: dict  # every input of the pick with its provenance (explain.explain_row)
    purchase: Purchase
    assumed: list[tuple[str, str]]  # the assumed prices the recommendation rests on: (input, value)
    robust: Robustness | None = None  # tornado, break-even values, Monte Carlo band
    curve_rows: dict[str, pd.Series] = field(
        default_factory=dict
    )  # strategy -> the row its waste curve is of
    strategies: list[tuple[str, Pick]] = field(
        default_factory=list
    )  # on the pick's SKU, when a layered one is planned
    ettr_curves: dict[str, tuple] = field(
        default_factory=dict
    )  # strategy -> (engine, GPUs, ETTR at its optimal cadence), from 1,000 to 100,000 GPUs


# ---- how sure an answer is -------------------------------------------------------------------

Z90 = 1.2815515655446004  # the standard normal's 90th percentile: a lognormal's low and high are its P10 and P90


@dataclass(frozen=True)
class Member:
    """One figure a Param sets: ``section.name.key``, the input column it sets, its value and range
    there, and the columns derived from it when they were omitted (each with its value: they move in
    proportion to the figure)."""

    section: str
    name: str
    key: str
    input: str
    value: float
    prov: Prov
    dependents: tuple[tuple[str, float], ...] = ()
    low: float = math.nan
    high: float = math.nan
    low_text: str = ""  # the bounds as written in the models file (none once widened)
    high_text: str = ""
    widened: float = (
        1.0  # the factor its range was widened by (SCALING terms used beyond their data)
    )
    floor: float = (
        -math.inf
    )  # where its key's figures may lie (``Input.bounds``): draws stay inside
    ceiling: float = math.inf

    @property
    def label(self) -> str:
        return (
            f"plan.{self.key}" if self.section == PLAN else f"{self.section}.{self.name}.{self.key}"
        )


@dataclass(frozen=True)
class Param:
    """One uncertain figure (or, with a ``driver``, every figure naming it, moved together): its
    value and range are the first member's, in its column's unit. The others follow it to the same
    place in their own ranges (``follow``): all at their lows, all at their values, all at their
    highs, and in between in proportion (lognormal: in proportion of the logarithms)."""

    members: tuple[Member, ...]
    value: float
    low: float
    high: float
    distribution: str
    driver: str | None = None

    @property
    def first(self) -> Member:
        return self.members[0]

    @property
    def input(self) -> str:
        return self.first.input

    @property
    def prov(self) -> Prov:
        return self.first.prov

    @property
    def name(self) -> str:
        """The driver, or the one figure's section.name.key: a column name in samples.parquet."""
        return self.driver or self.first.label

    @property
    def label(self) -> str:
        if self.driver is None:
            return self.first.label
        return (
            f"{self.driver} ({len(self.members)} figures)" if len(self.members) > 1 else self.driver
        )

    def end_text(self, end: str) -> str:
        """The first figure's low or high as the models file writes it (else in the column's unit)."""
        from ..model import display

        return getattr(self.first, f"{end}_text") or display.of(self.input, getattr(self, end))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws in the column's unit. A triangle or a uniform lies inside its low and high (which
        validation holds inside the key's bounds); a lognormal's tails are cut at the key's bounds
        (``Member.floor``, ``.ceiling``): drawn by its inverse CDF between them, so no draw is a value
        the key refuses (a share above 100%, an MFU above 1)."""
        if self.distribution == "uniform":
            return rng.uniform(self.low, self.high, n)
        if self.distribution == "lognormal":
            from scipy import special  # here: the quick commands never draw

            sigma = math.log(self.high / self.low) / (2 * Z90)
            floor, ceiling = max(self.first.floor, 0.0), self.first.ceiling
            a = special.ndtr(math.log(floor / self.value) / sigma) if floor > 0 else 0.0
            b = special.ndtr(math.log(ceiling / self.value) / sigma) if ceiling < math.inf else 1.0
            if a <= 0.0 and b >= 1.0:
                return self.value * np.exp(sigma * rng.standard_normal(n))
            z = special.ndtri(a + (b - a) * rng.uniform(size=n))
            return np.clip(self.value * np.exp(sigma * z), floor, ceiling)
        return rng.triangular(self.low, self.value, self.high, n)


@dataclass(frozen=True)
class Swing:
    """What one input, swept from low to high with the others held, does to a summary line."""

    param: Param
    low: dict  # at the input's low: the pick (option label) and its metrics
    high: dict
    flips: bool  # the recommendation differs at low or high from the base's

    def swing(self, metric: str) -> float:
        a, b = self.low.get(metric), self.high.get(metric)
        return (
            abs(b - a)
            if a is not None and b is not None and math.isfinite(a) and math.isfinite(b)
            else math.inf
        )


@dataclass(frozen=True)
class Sweep:
    """One uncertain input moved alone to its low and to its high, the others held, for one option
    (a frame row): every column at each end, and the swing of its cost over the run."""

    param: Param
    member: Member  # the figure of the param that the option reads
    columns: dict[str, np.ndarray]  # every column, shape (2,): at the low, at the high
    swing: float  # |total_usd at the high - at the low|


@dataclass(frozen=True)
class BreakEven:
    """The value of one input at which the line's recommendation changes, nearest the base on one
    side (``direction``: 'above' or 'below'), and the option it changes to."""

    param: Param
    direction: str
    value: float
    to: str


@dataclass(frozen=True)
class Sensitivity:
    """One summary line's sensitivity: its options, the base pick, the tornado and the break-evens."""

    line: dict  # model, sku, recipe, gpus, interval_s
    base: dict
    swings: list[Swing]
    breaks: list[BreakEven]


@dataclass
class Sampled:
    """What ``monte_carlo`` found: per summary line, the base recommendation's P10/P50/P90 of each
    metric over the draws, and the share of draws in which each option is the recommendation."""

    samples: int
    seed: int
    params: list[Param]
    lines: list[dict]


@dataclass(frozen=True)
class Robustness:
    """What a brief says about how sure its recommendation is."""

    params: list[Param]
    base: dict
    swings: list[Swing]
    breaks: list[BreakEven]
    samples: int
    seed: int
    wins: dict[str, float]  # option -> share of the draws it is recommended in
    quantiles: dict[str, dict[str, float | None]]  # metric -> p10/p50/p90 of the recommendation's
    meets: tuple[
        float, ...
    ] = ()  # per row of the options: the share of the draws it meets the target in


# ---- calibration and the review page ---------------------------------------------------------


@dataclass(frozen=True)
class Table:
    """What the outputs show of the calibration: a row per case and the summary."""

    rows: list[dict]
    summary: dict


@dataclass(frozen=True)
class Section:
    """One summary line's part of the page."""

    line: int  # its position in the summary
    model: str
    sku: str
    option: int  # the frame row of the option recommended (the summary's option_index)
    tiers: list[
        tuple[str, dict[str, int]]
    ]  # per tier (frame order): strategy -> the frame row of its best engine
    purchase: Purchase
    base: dict  # the tornado's base pick (tornado.tornado)
    swings: list[Swing]  # largest first
    brief: BriefData | None = None  # the model's brief when it is this line (its band, break-evens)
    cadence: tuple | None = None  # the option's (intervals_s, waste_pct): its cadence curve


@dataclass(frozen=True)
class Page:
    sections: list[Section]
    table: (
        pd.DataFrame
    )  # TABLE_COLUMNS of the frame's rows (index: the scenario's row in scenarios.parquet)
    rows: int  # the plan's rows (the table holds them all unless the plan streamed)


# ---- the report ------------------------------------------------------------------------------


@dataclass
class Report:
    """Everything the outputs show. Renderers format it; they compute nothing of their own."""

    inputs: Inputs
    frame: pd.DataFrame
    dropped: list[Dropped]
    point: Point
    summary: pd.DataFrame
    briefs: list[BriefData]
    calibration: Table  # a row per published case, and the summary
    workbook_index: pd.Index | None = None  # the rows the workbook's Scenarios sheet holds
    workbook_note: str = ""  # why some were left out, when they were
    tier_overview: list[tuple[str, dict[str, int]]] = field(
        default_factory=list
    )  # tier -> strategy -> row
    candidates: list[list[int]] = field(
        default_factory=list
    )  # per summary line: its options' rows, tie order
    params: list[Param] = field(
        default_factory=list
    )  # the figures that carry a range (ranges.parameters)
    assumed: dict[int, list[str]] = field(
        default_factory=dict
    )  # frame row -> the assumed prices it rests on
    purchases: list[Purchase] = field(default_factory=list)  # per summary line: its purchase curve
    rows: int = (
        0  # the plan's rows; ``frame`` holds them all up to ROWS_IN_MEMORY, else the ones shown
    )
    cadence: dict[int, dict[str, np.ndarray]] = field(
        default_factory=dict
    )  # summary pick -> its cadence grid (sheets.cadence_grids)
    headline: int | None = (
        None  # the option recommended for the summary's model and SKU (its frame row)
    )
    sweeps: list[Sweep] = field(default_factory=list)  # each input the headline option reads, swept
    page: Page | None = None  # what out/report.html shows beyond the summary (when it is written)
    decisions: list[Decision] = field(default_factory=list)  # per job: the decision, at its scale
    clusters: list = field(
        default_factory=list
    )  # per cluster: its purchase (purchase.ClusterPurchase)

    def __post_init__(self):
        self.rows = self.rows or len(self.frame)
