"""The recommendation as formulas: the Choice sheet (per summary line, its options, live) and the
Purchase sheet (what each step of bandwidth costs and saves); the Summary (``summary``) names the
option each Choice block ranks first. ``Choices`` says where each Choice block is and what it ranks
first as built."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ...model import display
from ...read.units import INF_AT, INF_CELL
from ..cluster import bought as bought_label
from ..cluster import facts as cluster_facts
from .book import BLUE, BOLD, INFINITE_FROM, PCT, TITLE, USD, Context, Sheet
from .scenarios import Table

SCHEDULE_YEARS = (
    10  # rows of the schedule at least: a life edited up to this many years still adds up
)
HOURS_PER_YEAR = 8766.0

CHOICE_COLUMNS = (
    "tier",
    "strategy",
    "engine",
    "choice_usd",
    "tier_bought_GBps",
    "storage_usd_month",
    "lost_gpu_usd_month",
    "total_usd",
    "overhead_pct",
    "ettr_pct",
    "run_days",
)


CHOICE_HEAD = (*CHOICE_COLUMNS, "assumed prices")


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Block:
    """One summary line's block on the Choice sheet: its title row (whose C cell holds the position
    of the option chosen, 0 when none may be), and its first and last option rows."""

    title: int
    first: int
    last: int

    def chosen(self, column: str) -> str:
        """A formula for ``column`` of the option this block ranks first."""
        letter = LETTERS[CHOICE_HEAD.index(column)]
        return f"INDEX(Choice!${letter}${self.first}:${letter}${self.last},Choice!$C${self.title})"

    @property
    def none(self) -> str:
        """A formula: true when no option of the block may be chosen."""
        return f"Choice!$C${self.title}=0"


@dataclass(frozen=True)
class Choices:
    """Per summary line, its Choice block and the option it ranks first as built (None: none)."""

    blocks: list[Block]
    chosen: list[int | None]


def write_choice(sh: Sheet, ctx: Context, table: Table) -> Choices:
    """Per summary line, its options, each a live reference to its Scenarios row: the Summary picks the
    least `choice_usd` among them by formula, so an edited price or $/GPU-hour changes the choice."""
    widths = (22, 10, 20, 20, 12, 16, 16, 18, 12, 10, 10, 40)  # D: "not recommendable"
    sh.layout(
        {k + 1: max(w, len(h) + 3) for k, (w, h) in enumerate(zip(widths, CHOICE_HEAD))}, "A3"
    )  # bold headers need a little more than their letters
    sh.append(
        [
            sh.text(
                "Choice: the options of each summary line, as the recommendation ranks them",
                font=TITLE,
            )
        ]
    )
    sh.append(
        [
            sh.text(
                "choice_usd is an option's cost over the run (storage + GPU time lost) when it meets the "
                "target, is feasible, durable and priced; unbounded otherwise. The Summary names the least; "
                "rows are in the order ties are broken (smaller system, then lower overhead)."
            )
        ]
    )
    tiers, strategies, engines = ctx.frame["tier"], ctx.frame["strategy"], ctx.frame["engine"]
    formats = {c: display.excel_format(c) for c in CHOICE_COLUMNS}
    blocks, picked = [], []
    for line, rows in zip(ctx.summary.to_dict("records"), ctx.report.candidates):
        sh.append([])
        title = sh.row + 1
        block = Block(title, title + 2, title + 1 + len(rows))
        usd_col = LETTERS[CHOICE_HEAD.index("choice_usd")]
        rank = f"${usd_col}${block.first}:${usd_col}${block.last}"
        usd = [ctx.value(idx, "choice_usd") for idx in rows]
        best = min(usd, default=INF_CELL)
        chosen = 0 if best >= INF_AT else usd.index(best) + 1
        picked.append(rows[chosen - 1] if chosen else None)
        sh.append(
            [
                sh.text(f"{line['model']} / {line['sku']}", font=BOLD),
                sh.text("chosen:"),
                sh.cell(
                    f"=IF(MIN({rank})>={INFINITE_FROM.name},0,MATCH(MIN({rank}),{rank},0))",
                    fmt="0",
                    result=chosen,
                ),
            ]
        )
        sh.header(CHOICE_HEAD)
        for idx in rows:
            sh.append(
                [
                    sh.text(str(tiers[idx])),
                    sh.text(str(strategies[idx])),
                    sh.text(str(engines[idx])),
                ]
                + [table.live(sh, idx, c, formats[c]) for c in CHOICE_COLUMNS[3:]]
                + [sh.text(", ".join(ctx.report.assumed.get(idx, [])) or "none")]
            )
        blocks.append(block)
    return Choices(blocks, picked)


def write_purchase(sh: Sheet, ctx: Context, table: Table) -> None:
    """Per summary line, the purchase curve of its recommended option: monthly cost against the
    bandwidth bought over the steps a buyer chooses between, every figure a live reference."""
    head = (
        "tier",
        "strategy",
        "engine",
        "bought",
        "storage $/month",
        "lost GPU $/month",
        "total $/month",
        "optimum",
    )
    sh.layout(
        {
            k + 1: max(w, len(h) + 3)
            for k, (w, h) in enumerate(zip((46, 16, 20, 16, 16, 16, 16, 12), head))
        },
        "A3",
    )
    sh.append(
        [sh.text("Purchase: what each step of bandwidth costs, and what it saves", font=TITLE)]
    )
    sh.append(
        [
            sh.text(
                "Per summary line, the steps a buyer chooses between (the recommended tier's family, or the "
                "priced durable tiers of the SKU): storage rises with the bandwidth bought, lost GPU time "
                "falls; the optimum is the step the recommendation ranks first."
            )
        ]
    )
    for cp in getattr(ctx.report, "clusters", []):  # the clusters' purchases first
        write_cluster(sh, cluster_facts(cp))
    for line, curve in zip(ctx.summary.to_dict("records"), ctx.report.purchases):
        points = curve.points[curve.points["strategy"] == line["option_strategy"]]
        if points.empty:
            continue
        sh.append([])
        sh.append(
            [
                sh.text(
                    f"{line['model']} / {line['sku']}: {curve.what}, {line['option_strategy']}",
                    font=BOLD,
                )
            ]
        )
        sh.header(head)
        ranks = ",".join(table.ref(int(i), "choice_usd") for i in points.index)
        usd = {int(i): ctx.value(int(i), "choice_usd") for i in points.index}
        least = min(usd.values())
        optimum = {i for i, v in usd.items() if v == least < INF_AT}  # ties: each is marked
        for idx, row in points.iterrows():
            idx = int(idx)
            mark = (
                f"=IF(AND({table.ref(idx, 'choice_usd')}<{INFINITE_FROM.name},"
                f'{table.ref(idx, "choice_usd")}=MIN({ranks})),"◀ optimum","")'
            )
            sh.append(
                [
                    sh.text(str(row["tier"])),
                    sh.text(str(row["strategy"])),
                    sh.text(str(row["engine"])),
                    table.live(
                        sh, idx, "tier_bought_GBps", display.excel_format("tier_bought_GBps")
                    ),
                    table.live(sh, idx, "storage_usd_month", USD),
                    table.live(sh, idx, "lost_gpu_usd_month", USD),
                    table.live(sh, idx, "total_usd_month", USD),
                    sh.cell(mark, result="◀ optimum" if idx in optimum else ""),
                ]
            )


def write_cluster(sh: Sheet, f: dict) -> None:
    """A cluster's purchase as a live model: the units, their price and running costs as inputs
    (blue), the purchase, each year's costs, the schedule over the life and its present value as
    formulas; the GPU time lost and the runner-up as the build took them (values: the search over
    units and the draws are not in the workbook)."""
    c = f["choice"]
    sh.append([])
    if c is None:
        sh.append([sh.text(f"{f['cluster']}: no product meets every job's target", font=BOLD)])
        return
    sh.append(
        [
            sh.text(
                f"{f['cluster']}: {bought_label(c)} for {', '.join(f['jobs'])} (the cluster's "
                "purchase: edit a blue cell and every figure below recomputes)",
                font=BOLD,
            )
        ]
    )
    units, price = float(c["units"]), _unit_price(c, f)
    cap_tb, per_tb = _capacity(c, f)
    support, fixed = f["support_pct"] / 100.0, f["support_usd_year"]
    power, ru = f["power_W"], f["rack_units"]
    kwh, space = f["usd_per_kwh"], f["usd_per_rack_unit_month"]
    life, rate = f["life_years"], f["discount_pct"] / 100.0
    rent = f["rent_usd_year"]
    at: dict[str, str] = {}

    def given(name: str, value: float, fmt: str, note: str) -> None:
        sh.append([sh.text(name), sh.cell(value, fmt=fmt, font=BLUE), sh.text(note)])
        at[name] = f"$B${sh.row}"

    def formula(name: str, text: str, value: float, fmt: str = USD, note: str = "") -> None:
        sh.append([sh.text(name), sh.cell(text, fmt=fmt, result=value), sh.text(note)])
        at[name] = f"$B${sh.row}"

    given("units bought", units, "#,##0", f"{c['unit']} of {c['tier']}")
    given("price per unit", price, USD, f["unit_price_basis"])
    given("capacity bought apart (TB)", cap_tb, "#,##0.000", "the jobs' retained checkpoints")
    given("price per TB", per_tb, USD, "capex_usd_per_tb")
    given("support a year, share of the purchase", support, PCT, "support_per_year")
    given("support a year, fixed", fixed, USD, "an owned tier's support_usd_per_year")
    given("power per unit (W)", power, "#,##0", "unit.power_W")
    given("price per kWh", kwh, '"$"#,##0.000', "clusters.*.usd_per_kwh")
    given("rack units per unit", ru, "#,##0", "unit.rack_units")
    given("price per rack unit a month", space, USD, "clusters.*.usd_per_rack_unit_month")
    given("rent a year", rent, USD, "rented tiers only")
    given("life (years)", life, "0.00", "clusters.*.life, else the tier's life")
    given("discount rate a year", rate, PCT, "clusters.*.discount_rate (an assumption)")
    units_usd = units * price
    cap_usd = cap_tb * per_tb
    buy = units_usd + cap_usd
    formula("purchase of the units", f"={at['units bought']}*{at['price per unit']}", units_usd)
    formula(
        "purchase of the capacity",
        f"={at['capacity bought apart (TB)']}*{at['price per TB']}",
        cap_usd,
    )
    formula(
        "purchase",
        f"={at['purchase of the units']}+{at['purchase of the capacity']}",
        buy,
        note="the purchase price a proposal carries",
    )
    power_usd = units * power * HOURS_PER_YEAR / 1000 * kwh
    space_usd = units * ru * 12 * space
    yearly = buy * support + fixed + power_usd + space_usd + rent
    formula(
        "running a year",
        f"={at['purchase']}*{at['support a year, share of the purchase']}"
        f"+{at['support a year, fixed']}"
        f"+{at['units bought']}*{at['power per unit (W)']}*{HOURS_PER_YEAR:g}/1000*{at['price per kWh']}"
        f"+{at['units bought']}*{at['rack units per unit']}*12*{at['price per rack unit a month']}"
        f"+{at['rent a year']}",
        yearly,
        note="support, power, space and rent",
    )
    sh.header(("year", "purchase", "running", "discount factor", "discounted"))
    first = sh.row + 1
    years = max(SCHEDULE_YEARS, math.ceil(life - 1e-9))
    for y in range(years + 1):
        row = sh.row + 1
        part = 0.0 if y == 0 else max(0.0, min(1.0, life - (y - 1)))
        run = yearly * part
        factor = 1.0 / (1.0 + rate) ** y
        sh.append(
            [
                sh.cell(y, fmt="0"),
                sh.cell(
                    f"=IF(A{row}=0,{at['purchase']},0)", fmt=USD, result=buy if y == 0 else 0.0
                ),
                sh.cell(
                    f"=IF(A{row}=0,0,{at['running a year']}"
                    f"*MAX(0,MIN(1,{at['life (years)']}-(A{row}-1))))",
                    fmt=USD,
                    result=run,
                ),
                sh.cell(f"=1/(1+{at['discount rate a year']})^A{row}", fmt="0.0000", result=factor),
                sh.cell(
                    f"=(B{row}+C{row})*D{row}",
                    fmt=USD,
                    result=((buy if y == 0 else 0.0) + run) * factor,
                ),
            ]
        )
    last = sh.row
    life_usd = buy + yearly * life
    present = sum(
        (
            (buy if y == 0 else 0.0)
            + yearly * (0.0 if y == 0 else max(0.0, min(1.0, life - (y - 1))))
        )
        / (1.0 + rate) ** y
        for y in range(years + 1)
    )
    formula("storage over the life", f"=SUM(B{first}:C{last})", life_usd)
    formula(
        "present value",
        f"=SUM(E{first}:E{last})",
        present,
        note="at the discount rate above",
    )
    sh.append(
        [
            sh.text("GPU time lost by the jobs over their runs"),
            sh.cell(c["gpu_lost_usd"], fmt=USD),
            sh.text("the build's (not live): the jobs' choices on these units"),
        ]
    )
    at["lost"] = f"$B${sh.row}"
    formula(
        "total over the life",
        f"={at['storage over the life']}+{at['lost']}",
        life_usd + c["gpu_lost_usd"],
        note="what the purchase is chosen by",
    )
    sh.append(
        [
            sh.text("of it, what the purchase moves"),
            sh.cell(c["moved_usd"], fmt=USD),
            sh.text("stall, interference, rework, restore (the build's)"),
        ]
    )
    sh.append(
        [
            sh.text("and what it does not move"),
            sh.cell(c["not_moved_usd"], fmt=USD),
            sh.text("restart after a failure: only a recovery engine shortens it (the build's)"),
        ]
    )
    r = f["runner_up"]
    if r is not None:
        sh.append(
            [
                sh.text(f"runner-up: {bought_label(r)}, purchase"),
                sh.cell(r["purchase_usd"], fmt=USD),
                sh.text(
                    f"total over the life {display.value(r['total_usd'], 'usd')} (the build's)"
                ),
            ]
        )


def _unit_price(c: dict, f: dict) -> float:
    return float(f["unit_price_usd"])


def _capacity(c: dict, f: dict) -> tuple[float, float]:
    """The capacity bought apart from the units (TB) and its price per TB (0 and 0 where a unit holds
    its capacity or the tier prices none)."""
    per_tb = f["usd_per_tb"]
    if per_tb is None:
        return 0.0, 0.0
    return c["capacity_bytes"] / 1e12, float(per_tb)
