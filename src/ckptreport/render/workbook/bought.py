"""A cluster's purchase as a live model, at the top of the Purchase sheet: the units, their price and
running costs as inputs (blue); the purchase, each year's costs, the schedule over the life and its
present value as formulas; the GPU time lost and the runner-up as the build took them (values: the
search over units and the draws are not in the workbook). Each figure is found by its label in
column A (the block is not a table to sort)."""

from __future__ import annotations

from ...answer.types import HOURS_PER_YEAR
from ...model import display
from .book import BLUE, BOLD, PCT, USD, Sheet

SCHEDULE_YEARS = 10  # rows of the schedule at least: a life edited up to this many years adds up


class _Block:
    """The block being written: where each labelled figure is (its B cell)."""

    def __init__(self, sh: Sheet):
        self.sh, self.at = sh, {}

    def given(self, name: str, value: float, fmt: str, note: str) -> None:
        self.sh.append(
            [self.sh.text(name), self.sh.cell(value, fmt=fmt, font=BLUE), self.sh.text(note)]
        )
        self.at[name] = f"$B${self.sh.row}"

    def formula(self, name: str, text: str, value: float, note: str = "", fmt: str = USD) -> None:
        sh = self.sh
        sh.append([sh.text(name), sh.cell(text, fmt=fmt, result=value), sh.text(note)])
        self.at[name] = f"$B${sh.row}"

    def value(self, name: str, value: float, note: str) -> None:
        self.sh.append([self.sh.text(name), self.sh.cell(value, fmt=USD), self.sh.text(note)])
        self.at[name] = f"$B${self.sh.row}"


def write_cluster(sh: Sheet, f: dict) -> None:
    """One cluster's purchase block (``render.cluster.facts``' figures)."""
    c = f["choice"]
    sh.append([])
    if c is None:
        sh.append([sh.text(f"{f['cluster']}: no product meets every job's target", font=BOLD)])
        return
    sh.append(
        [
            sh.text(
                f"{f['cluster']}: {c['label']} for {', '.join(f['jobs'])} (the cluster's "
                "purchase: edit a blue cell and every figure below recomputes)",
                font=BOLD,
            )
        ]
    )
    b = _Block(sh)
    _inputs(b, f)
    _purchase(b, f)
    _schedule(b, f)
    _outcome(b, f)


def _inputs(b: _Block, f: dict) -> None:
    c = f["choice"]
    b.given("units bought", float(c["units"]), "#,##0", f"{c['unit']} of {c['tier']}")
    b.given("price per unit", float(f["unit_price_usd"]), USD, f["unit_price_basis"])
    per_tb = f["usd_per_tb"]
    b.given(
        "capacity bought apart (TB)",
        0.0 if per_tb is None else c["capacity_bytes"] / 1e12,
        "#,##0.000",
        "the jobs' retained checkpoints",
    )
    b.given("price per TB", 0.0 if per_tb is None else float(per_tb), USD, "capex_usd_per_tb")
    b.given(
        "support a year, share of the purchase", f["support_pct"] / 100, PCT, "support_per_year"
    )
    b.given(
        "support a year, fixed", f["support_usd_year"], USD, "an owned tier's support_usd_per_year"
    )
    b.given("power per unit (W)", f["power_W"], "#,##0", "unit.power_W")
    b.given("price per kWh", f["usd_per_kwh"], '"$"#,##0.000', "clusters.*.usd_per_kwh")
    b.given("rack units per unit", f["rack_units"], "#,##0", "unit.rack_units")
    b.given(
        "price per rack unit a month",
        f["usd_per_rack_unit_month"],
        USD,
        "clusters.*.usd_per_rack_unit_month",
    )
    b.given("rent a year", c["yearly_usd"]["rent"], USD, "rented tiers only")
    b.given("life (years)", f["life_years"], "0.00", "clusters.*.life, else the tier's life")
    b.given(
        "discount rate a year",
        f["discount_pct"] / 100,
        PCT,
        "clusters.*.discount_rate (an assumption)",
    )


def _purchase(b: _Block, f: dict) -> None:
    """The purchase and the running costs a year, as formulas of the inputs (the running costs
    carrying the tool's figures: ``yearly_usd``)."""
    at, c = b.at, f["choice"]
    units_usd = float(c["units"]) * float(f["unit_price_usd"])
    buy = c["purchase_usd"]
    cap_usd = buy - units_usd  # the capacity bought apart (0 where a unit holds it)
    b.formula("purchase of the units", f"={at['units bought']}*{at['price per unit']}", units_usd)
    b.formula(
        "purchase of the capacity",
        f"={at['capacity bought apart (TB)']}*{at['price per TB']}",
        cap_usd,
    )
    b.formula(
        "purchase",
        f"={at['purchase of the units']}+{at['purchase of the capacity']}",
        buy,
        "the purchase price a proposal carries",
    )
    parts = c["yearly_usd"]
    b.formula(
        "support a year",
        f"={at['purchase']}*{at['support a year, share of the purchase']}+{at['support a year, fixed']}",
        parts["support"],
    )
    b.formula(
        "power a year",
        f"={at['units bought']}*{at['power per unit (W)']}*{HOURS_PER_YEAR:g}/1000*{at['price per kWh']}",
        parts["power"],
    )
    b.formula(
        "space a year",
        f"={at['units bought']}*{at['rack units per unit']}*12*{at['price per rack unit a month']}",
        parts["space"],
    )
    b.formula(
        "running a year",
        f"={at['support a year']}+{at['power a year']}+{at['space a year']}+{at['rent a year']}",
        c["running_usd_year"],
        "support, power, space and rent",
    )


def _schedule(b: _Block, f: dict) -> None:
    """The year-by-year schedule (rows for at least SCHEDULE_YEARS, so an edited life adds up), the
    storage over the life and the present value; each cell carries the tool's figure (``schedule``:
    a year past the life costs nothing)."""
    sh, at, c, rows = b.sh, b.at, f["choice"], f["schedule"]
    parts = ("support", "power", "space", "rent")
    sh.header(("year", "purchase", *parts, "discount factor", "discounted"))
    first = sh.row + 1
    for y in range(max(SCHEDULE_YEARS, len(rows) - 1) + 1):
        row = sh.row + 1
        r = rows[y] if y < len(rows) else None
        factor = r["factor"] if r else (1 + f["discount_pct"] / 100) ** -y
        share = f"MAX(0,MIN(1,{at['life (years)']}-(A{row}-1)))"
        sh.append(
            [
                sh.cell(y, fmt="0"),
                sh.cell(
                    f"=IF(A{row}=0,{at['purchase']},0)",
                    fmt=USD,
                    result=r["purchase_usd"] if r else 0.0,
                ),
                *(
                    sh.cell(
                        f"=IF(A{row}=0,0,{at[part + ' a year']}*{share})",
                        fmt=USD,
                        result=r[f"{part}_usd"] if r else 0.0,
                    )
                    for part in parts
                ),
                sh.cell(f"=1/(1+{at['discount rate a year']})^A{row}", fmt="0.0000", result=factor),
                sh.cell(
                    f"=SUM(B{row}:F{row})*G{row}", fmt=USD, result=r["present_usd"] if r else 0.0
                ),
            ]
        )
    last = sh.row
    b.formula("storage over the life", f"=SUM(B{first}:F{last})", c["storage_life_usd"])
    b.formula(
        "present value",
        f"=SUM(H{first}:H{last})",
        f["present_value_usd"],
        "at the discount rate above",
    )


def _outcome(b: _Block, f: dict) -> None:
    """The GPU time lost (the build's), the total the purchase is chosen by, what it moves and what
    not, and the runner-up's purchase price."""
    c, at = f["choice"], b.at
    b.value(
        "GPU time lost by the jobs over their runs",
        c["gpu_lost_usd"],
        "the build's (not live): the jobs' choices on these units",
    )
    b.formula(
        "total over the life",
        f"={at['storage over the life']}+{at['GPU time lost by the jobs over their runs']}",
        c["total_usd"],
        "what the purchase is chosen by",
    )
    b.value(
        "of it, what the purchase moves",
        c["moved_usd"],
        "stall, interference, rework, restore (the build's)",
    )
    b.value(
        "and what it does not move",
        c["not_moved_usd"],
        "restart after a failure: only a recovery engine shortens it (the build's)",
    )
    r = f["runner_up"]
    if r is not None:
        b.value(
            f"runner-up: {r['label']}, purchase",
            r["purchase_usd"],
            f"total over the life {display.value(r['total_usd'], 'usd')} (the build's)",
        )
