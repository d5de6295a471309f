"""The Jobs sheet: the decision for each job at its scale, as the build took it (the option, its
cadence, the purchase, ETTR and what takes the rest, the chance of meeting the target, the runner-up
and the cheaper option's risk). Its figures are values, not formulas: each option was chosen over
draws of the uncertain inputs and a search over intervals the workbook does not hold, so the sheet
says it is not live (rebuild after an edit); the Scenarios sheet's ETTR and share columns are live."""

from __future__ import annotations

import math

from ...model import display
from ..decision import SHARES, facts, sentences
from .book import BOLD, PCT, TITLE, USD, Context, Sheet, cell_value

NOT_LIVE = (
    "Not live: these figures are values the build computed (each option at the cadence that meets the "
    "target with the plan's confidence, over draws of every uncertain input). Edit an assumption and "
    "rebuild to move them; the Scenarios sheet recomputes every row's ETTR and shares by formula."
)

MINUTES = '#,##0.0" min"'
DAYS = '#,##0.0" d"'
GBPS = display.excel_format("tier_bought_GBps")

COLUMNS = [
    ("job", None),
    ("model", None),
    ("sku", None),
    ("GPUs", "#,##0"),
    ("recommended", None),
    ("strategy", None),
    ("tier", None),
    ("engine", None),
    ("interval", MINUTES),
    ("durable every", MINUTES),
    ("bought", GBPS),
    ("least that meets the target", GBPS),
    ("purchase $", USD),
    ("support $/year", USD),
    ("storage $/month", USD),
    ("run", DAYS),
    ("run outlives the storage", None),
    ("ETTR", PCT),
    *((f"lost: {label}", PCT) for label in SHARES.values()),
    ("overhead", PCT),
    ("meets the target in (of draws)", PCT),
    ("confidence asked", PCT),
    ("total $ over the run", USD),
    ("runner-up", None),
    ("runner-up extra $", USD),
    ("cheapest at the base figures", None),
    ("its chance of meeting the target", PCT),
    ("impossible figure", None),
]


def _n(v, scale: float = 1.0):
    return math.nan if v is None else cell_value(v / scale)


def _line(sh: Sheet, f: dict) -> list:
    p, r, c = f["pick"], f["runner_up"], f["cheapest"]
    values = [
        f["job"],
        f["model"],
        f["sku"],
        f["gpus"],
        p["option"],
        p["strategy"],
        p["tier"],
        p["engine"],
        _n(p["interval_s"], 60),
        _n(p["durable_interval_s"], 60),
        _n(p["bought_GBps"]),
        _n(p["required_GBps"]),
        _n(p["purchase_usd"]),
        _n(p["support_usd_year"]),
        _n(p["storage_usd_month"]),
        _n(p["run_days"]),
        "yes" if p["run_outlives_storage"] else "no",
        _n(p["ettr_pct"], 100),
        *(_n(p["shares_pct"][k], 100) for k in SHARES),
        _n(p["overhead_pct"], 100),
        _n(p["p_meets_pct"], 100),
        _n(f["confidence_pct"], 100),
        _n(p["total_usd"]),
        "none" if r is None else r["option"],
        math.nan if r is None else _n(r["extra_usd"]),
        "the pick" if c is None else c["option"],
        _n(p["p_meets_pct"] if c is None else c["p_meets_pct"], 100),
        p["implausible"],
    ]
    return [
        sh.text(v) if isinstance(v, str) else sh.cell(v, fmt=fmt)
        for v, (_, fmt) in zip(values, COLUMNS)
    ]


def write(sh: Sheet, ctx: Context) -> None:
    """One line per job, then each job's sentences (as the terminal, the brief and the page say them)."""
    sh.layout({1: 16, 2: 16, 3: 14, 5: 44, **{k: 14 for k in range(6, len(COLUMNS) + 1)}}, "B5")
    sh.append([sh.text("The decision, for each job at its scale", font=TITLE)])
    sh.append([sh.text(NOT_LIVE)])
    sh.append([])
    sh.header([name for name, _ in COLUMNS])
    all_facts = [facts(d) for d in ctx.report.decisions]
    for f in all_facts:
        sh.append(_line(sh, f))
    if not all_facts:
        sh.append([sh.text("The plan declares no job and has no model: nothing to decide.")])
    for f in all_facts:
        sh.append([])
        sh.append([sh.text(f["job"], font=BOLD)])
        for line in sentences(f):
            sh.append([sh.text(line)])
        if f["source"]:
            sh.append([sh.text(f"The job's scale: {f['source']}")])
