"""The Summary sheet: the headline per model and SKU at the summary point, the option its Choice block
ranks first (by formula) with its costs, ETTR and run length, the runner-up as built, and the
checkpoint size and overhead-by-tier tables with their charts."""

from __future__ import annotations

import math

from openpyxl.chart import BarChart, Reference
from openpyxl.formatting.rule import FormulaRule

from ...answer.types import JOIN, NONE, WITH, option_label
from ...model import display
from ...model.expr import TERA
from ...read.strategies import BACKGROUND, BASELINE, COMPARED
from ...read.units import BOOL_EXCEL, BYTES_EXCEL
from .assumptions import Assumed
from .book import BOLD, OVER_FILL, PCT, SECONDS_PER_MINUTE, TITLE, USD, Context, Sheet, show_axes
from .choice import Block, Choices
from .scenarios import Table

SUMMARY_HEAD = [
    "model",
    "recipe",
    "sku",
    "checkpoint",
    "sync: tier with engine (at build)",
    "overhead",
    "meets",
    "async: tier with engine (at build)",
    "overhead",
    "meets",
    "recommended",
    "bought",
    "storage $/month",
    "lost GPU $/month",
    "total $ over the run",
    "rests on assumed prices",
    "runner-up at build (extra over the run)",
    "ETTR",
    "run (days)",
]


SUMMARY_WIDTHS = {
    1: 20,
    2: 18,
    3: 18,
    4: 13,
    5: 24,
    6: 11,
    7: 8,
    8: 24,
    9: 11,
    10: 8,
    11: 26,
    12: 12,
    13: 15,
    14: 15,
    15: 16,
    16: 36,
    17: 30,
    18: 9,
    19: 11,
}


SUMMARY_WORDS = (
    ". The recommended option is chosen by formula (Choice sheet): of the options meeting the target, "
    "feasible, durable and priced, the least cost over the run. Edit a price and it follows. The "
    "per-strategy tiers and the runner-up were chosen when the workbook was built."
)


def write_summary(
    sh: Sheet, ctx: Context, assumed: Assumed, table: Table, choices: Choices
) -> None:
    """The headline per model and SKU, then the size and tier tables and their charts."""
    lines = [
        _summary_line(sh, ctx, table, line, pick, block, chosen)
        for line, pick, block, chosen in zip(
            ctx.summary.to_dict("records"), ctx.picks(), choices.blocks, choices.chosen
        )
    ]
    sh.layout(_summary_widths(ctx, lines), "A7")
    sh.append([sh.text("ckptreport — checkpoint plan", font=TITLE)])
    sh.append(
        [
            sh.text(
                f"ckptreport {ctx.meta['ckptreport_version']}, built {ctx.meta['build_time']}, "
                f"input hash {ctx.meta['input_hash'][:16]}"
            )
        ]
    )
    sh.append(
        [
            sh.text("Target overhead"),
            sh.cell("=target_overhead_pct", fmt=PCT, result=ctx.value(None, "target_overhead_pct")),
            sh.text("(edit on Assumptions; every figure follows)"),
        ]
    )
    sh.append(
        [
            sh.cell(
                f'="At "&{_point_words(ctx, assumed)}&"{SUMMARY_WORDS}"',
                result=f"At {_point_text(ctx)}{SUMMARY_WORDS}",
            )
        ]
    )
    sh.append([])
    sh.header(SUMMARY_HEAD)
    first = sh.row + 1
    for cells in lines:
        sh.append(cells)
    last = sh.row
    for col in ("F", "I") if last >= first else ():
        sh.ws.conditional_formatting.add(
            f"{col}{first}:{col}{last}",
            FormulaRule(formula=[f"{col}{first}>target_overhead_pct"], fill=OVER_FILL),
        )
    sh.append([])
    comp_first = _component_table(sh, ctx, table)
    tier_first = _tier_table(sh, ctx, assumed, table)
    _charts_summary(sh, comp_first, tier_first, sh.row + 2)


def _summary_line(
    sh: Sheet, ctx: Context, table: Table, line: dict, pick: dict, block: Block, chosen: int | None
) -> list:
    """One model x SKU: its best tier and overhead per strategy (as built), the option its Choice
    block ranks first (by formula) with its costs, and the runner-up."""
    cells = [sh.text(line["model"]), sh.text(line["recipe"]), sh.text(line["sku"])]
    any_idx = pick[BASELINE] if pick[BASELINE] is not None else pick[BACKGROUND]
    cells.append(table.live(sh, any_idx, "ckpt_bytes", BYTES_EXCEL))
    for strategy in COMPARED:
        tier = line.get(f"{strategy}_tier")
        option = f"{tier}{WITH}{line.get(f'{strategy}_engine')}"
        label = (
            "n/a"
            if not isinstance(tier, str)
            else option
            if line.get(f"{strategy}_meets")
            else f"none (closest: {option})"
        )
        cells += [
            sh.text(label),
            table.live(sh, pick[strategy], "overhead_pct", PCT),
            table.live(sh, pick[strategy], "meets_target", BOOL_EXCEL),
        ]
    words = (
        NONE
        if chosen is None
        else option_label(*(ctx.frame.at[chosen, c] for c in ("strategy", "tier", "engine")))
    )
    cells.append(
        sh.cell(
            f'=IF({block.none},"{NONE}",{block.chosen("strategy")}&"{JOIN}"&'
            f'{block.chosen("tier")}&"{WITH}"&{block.chosen("engine")})',
            result=words,
        )
    )
    cells.append(
        sh.cell(
            f"=IF({block.none},NA(),{block.chosen('tier_bought_GBps')})",
            fmt=display.excel_format("tier_bought_GBps"),
            result=math.nan if chosen is None else ctx.value(chosen, "tier_bought_GBps"),
        )
    )
    for column in ("storage_usd_month", "lost_gpu_usd_month", "total_usd"):
        cells.append(
            sh.cell(
                f"=IF({block.none},NA(),{block.chosen(column)})",
                fmt=USD,
                result=math.nan if chosen is None else ctx.value(chosen, column),
            )
        )
    cells.append(
        sh.cell(
            f'=IF({block.none},"",{block.chosen("assumed prices")})',
            result=""
            if chosen is None
            else ", ".join(ctx.report.assumed.get(chosen, [])) or "none",
        )
    )
    runner = line.get("runner_up_tier")
    cells.append(
        sh.text(
            f"{runner} (+{display.value(line['runner_up_extra_usd'], 'usd')})"
            if isinstance(runner, str)
            else "none"
        )
    )
    for column, fmt in (("ettr_pct", PCT), ("run_days", '#,##0.0" d"')):
        cells.append(
            sh.cell(
                f"=IF({block.none},NA(),{block.chosen(column)})",
                fmt=fmt,
                result=math.nan if chosen is None else ctx.value(chosen, column),
            )
        )
    return cells


def _summary_widths(ctx: Context, lines: list[list]) -> dict[int, float]:
    """Each column as wide as its names, its bold header, what the recommendation formula shows as
    built and the assumed prices it may list (at most 60)."""
    texts = {
        k: [
            c.value
            for cells in lines
            for c in cells[k - 1 : k]
            if isinstance(c.value, str) and not c.value.startswith("=")
        ]
        + [SUMMARY_HEAD[k - 1] + " "]
        for k in SUMMARY_WIDTHS
    }
    texts[11] += [
        option_label(r["option_strategy"], r["option_tier"], r["option_engine"])
        for r in ctx.summary.to_dict("records")
        if isinstance(r.get("option_tier"), str)
    ]
    texts[16] += [", ".join(v) for v in ctx.report.assumed.values()]
    return {
        k: min(max([w, *(len(t) + 2 for t in texts[k])]), 60) for k, w in SUMMARY_WIDTHS.items()
    }


def _point_text(ctx: Context) -> str:
    """What ``_point_words`` shows as built: '1,024 GPUs, every 30 min'."""
    point = ctx.report.point
    return f"{point.gpus:,.0f} GPUs, every {round(point.interval_s / 60, 2):g} min"


def _point_words(ctx: Context, assumed: Assumed) -> str:
    """A formula's words for the summary point, '1,024 GPUs, every 30 min', read from the plan's
    cells on Assumptions: edit the GPU count or the interval there and the words follow."""
    point = ctx.report.point
    return (
        f'TEXT({assumed.gpus_cell[point.gpus]},"#,##0")&" GPUs, every "&'
        f'ROUND({assumed.interval_cell[point.interval_s]}/{SECONDS_PER_MINUTE.name},2)&" min"'
    )  # no '30.'


def _component_table(sh: Sheet, ctx: Context, table: Table) -> tuple[int, int]:
    sh.append([sh.text("Checkpoint size by component (TB)", font=BOLD)])
    sh.header(("model", "weights", "master", "optimizer", "grads"))
    first = sh.row + 1
    seen = set()
    for line, pick in zip(ctx.summary.to_dict("records"), ctx.picks()):
        idx = pick[BASELINE] if pick[BASELINE] is not None else pick[BACKGROUND]
        if line["model"] in seen or idx is None:
            continue
        seen.add(line["model"])
        sh.append(
            [sh.text(line["model"])]
            + [
                sh.cell(
                    f"={table.ref(idx, c)}/{TERA.name}",
                    fmt='0.00" TB"',
                    result=ctx.value(idx, c) / TERA,
                )
                for c in ("weights_bytes", "master_bytes", "optimizer_bytes", "grads_bytes")
            ]
        )
    sh.append([])
    return first, sh.row - 1


def _tier_table(sh: Sheet, ctx: Context, assumed: Assumed, table: Table) -> tuple[int, int]:
    point = ctx.report.point
    sh.append([sh.text(f"Overhead by tier: {point.model} on {point.sku}", font=BOLD)])
    sh.append([sh.cell(f'="at "&{_point_words(ctx, assumed)}', result=f"at {_point_text(ctx)}")])
    sh.header(("tier", *(f"{s} overhead" for s in COMPARED), *(f"{s} engine" for s in COMPARED)))
    first = sh.row + 1
    for tier, by_strategy in ctx.report.tier_overview:
        engines = [
            "" if by_strategy.get(s) is None else str(ctx.frame.at[by_strategy[s], "engine"])
            for s in COMPARED
        ]  # the overhead is the engine's: each strategy's best engine on the tier
        sh.append(
            [sh.text(tier)]
            + [table.live(sh, by_strategy.get(s), "overhead_pct", PCT) for s in COMPARED]
            + [sh.text(e) for e in engines]
        )
    return first, sh.row


def _charts_summary(sh: Sheet, comp: tuple[int, int], tiers: tuple[int, int], below: int) -> None:
    """Both charts side by side under the tables, within the printed width."""
    ws = sh.ws
    size = BarChart()
    size.type, size.grouping, size.overlap = "col", "stacked", 100
    size.title = "Checkpoint size by component"
    size.y_axis.title = "TB"
    size.add_data(
        Reference(ws, min_col=2, max_col=5, min_row=comp[0] - 1, max_row=comp[1]),
        titles_from_data=True,
    )
    size.set_categories(Reference(ws, min_col=1, min_row=comp[0], max_row=comp[1]))
    size.width, size.height = 15, 9
    show_axes(size)
    ws.add_chart(size, f"A{below}")
    bar = BarChart()
    bar.type = "bar"
    bar.title = "Overhead by tier (% of training time)"
    bar.x_axis.title = None
    bar.add_data(
        Reference(ws, min_col=2, max_col=3, min_row=tiers[0] - 1, max_row=tiers[1]),
        titles_from_data=True,
    )
    bar.set_categories(Reference(ws, min_col=1, min_row=tiers[0], max_row=tiers[1]))
    bar.width, bar.height = 15, 9
    show_axes(bar)
    ws.add_chart(bar, f"F{below}")
