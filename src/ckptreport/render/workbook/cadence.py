"""The Cadence sheet: per summary pick (sync and async), a block recomputing the interval-dependent
columns over a grid of intervals (the same definitions as Scenarios), the least waste marked, and a
chart per model. The first block goes through openpyxl (it registers each cell's style); the
others, the same shape, are streamed into the package with the first block's styles."""

from __future__ import annotations

from openpyxl.chart import Reference, ScatterChart, Series
from openpyxl.utils import get_column_letter

from ...model import display
from ...model.columns import COLUMNS
from ...model.expr import Var, render
from ...read.strategies import COMPARED
from .. import sheetxml
from .book import (
    BLUE,
    BOLD,
    HEADER_FILL,
    PCT,
    SECONDS_PER_MINUTE,
    TITLE,
    Context,
    Sheet,
    dependents_of,
    result,
    show_axes,
)
from .scenarios import KEY, Table

MIN_FMT = '0.0" min"'
SEC_FMT = '#,##0" s"'


def interval_dependents() -> list[str]:
    """Columns that change with the interval and that waste depends on, in evaluation order."""
    return dependents_of({"interval_s"}, {"overhead_pct", "waste_pct"})


def write(sh: Sheet, ctx: Context, table: Table) -> sheetxml.Stream | None:
    """The blocks and charts; returns the stream of the blocks after the first (None: one or none)."""
    dependents = interval_dependents()
    cols = ["interval_s", "interval (min)", *dependents, "optimum"]
    sh.layout({i + 1: max(15, len(c) + 3) for i, c in enumerate(cols)}, "A3")  # no clipped header
    sh.append([sh.text("Cadence: overhead and waste against the checkpoint interval", font=TITLE)])
    sh.append(
        [
            sh.text(
                "Each block recomputes the interval-dependent columns (same definitions as Scenarios) "
                "for one scenario over a grid of intervals. Blue intervals are editable."
            )
        ]
    )
    letter = {n: get_column_letter(i + 1) for i, n in enumerate(cols)}
    trees = {n: COLUMNS[n].fn(*(Var(p) for p in COLUMNS[n].params)) for n in dependents}
    charts: dict[str, list] = {}
    blocks = []
    start = sh.row + 1  # each block: a blank row, its title, the optimum, the header, the grid
    for pick in ctx.picks():
        for strategy in COMPARED:
            idx = pick[strategy]
            if idx is None or idx not in table:
                continue
            rows = _block(ctx, table, idx, strategy, start, cols, letter, trees)
            blocks.append(rows)
            model, sku = ctx.frame.at[idx, "model"], ctx.frame.at[idx, "sku"]
            charts.setdefault(f"{model}|{sku}", []).append(
                (strategy, start + 4, start + len(rows) - 1, start + 2)
            )
            start += len(rows)
    stream = None
    if blocks:
        styles = {
            "title": {"font": BOLD},
            "header": {"font": BOLD, "fill": HEADER_FILL},
            "interval": {"fmt": SEC_FMT, "font": BLUE},
            "min": {"fmt": MIN_FMT},
            "pct": {"fmt": PCT},
            "count": {"fmt": "#,##0"},
            **{n: {"fmt": display.excel_format(n)} for n in dependents},
        }
        for row in blocks[0]:  # through openpyxl: the styles
            sh.append([_spec_cell(sh, v, styles.get(k, {})) for k, v in row])
        first_block = sh.row - len(blocks[0]) + 1
        letters = [letter[n] for n in cols]
        stream = sheetxml.Stream(
            sh.row + 1,
            lambda styles_of: _rows(blocks[1:], first_block, sh.row + 1, letters, styles_of),
        )
    _charts(sh, charts, letter)
    return stream


def _spec_cell(sh: Sheet, value, style: dict):
    """An openpyxl cell for a streamed cell's content: a Formula, text (always text), a number."""
    if isinstance(value, sheetxml.Formula):
        return sh.cell("=" + value, **style, **({"result": value.value} if value.has_value else {}))
    if isinstance(value, str):
        return sh.text(value, **style)
    return sh.cell(value, **style)


def _block(
    ctx: Context,
    table: Table,
    idx: int,
    strategy: str,
    start: int,
    cols: list[str],
    letter: dict[str, str],
    trees: dict,
) -> list[list[tuple[str, object]]]:
    """One block's rows from ``start``, each cell as (style key, content): text, a number, a Formula
    (with its result: the model's columns evaluated at each grid interval)."""
    F = sheetxml.Formula
    row = ctx.frame.loc[idx, ["model", "sku", "tier", "engine"]]
    opt_row, first = start + 2, start + 4
    key = [
        ("", "GPUs"),
        ("count", None),
        ("", KEY),
        ("", idx),
        ("", "Scenarios row"),
        ("", F(table.row_of(idx), table.rows[idx])),
    ]
    at = f"${get_column_letter(4 + len(key))}${opt_row}"  # that last cell: the scenario's row, by key (sort-safe)
    key[1] = (
        "count",
        F(table.ref(idx, "gpus", at), ctx.value(idx, "gpus")),
    )  # live: follows the plan's cell
    optimum = F(
        f"{table.ref(idx, 'optimal_interval_s', at)}/SECONDS_PER_MINUTE",
        ctx.value(idx, "optimal_interval_s") / SECONDS_PER_MINUTE,
    )
    waste_there = F(
        f"{table.ref(idx, 'optimal_waste_pct', at)}", ctx.value(idx, "optimal_waste_pct")
    )
    title = f"{row['model']} / {row['sku']} / {row['tier']} / {strategy} / {row['engine']}"
    rows: list[list[tuple[str, object]]] = [
        [],
        [("title", title)],
        [
            ("", "optimal interval"),
            ("min", optimum),
            ("", "waste there"),
            ("pct", waste_there),
            *key,
        ],
        [("header", c) for c in cols],
    ]
    return rows + _grid(ctx, table, idx, first, letter, trees, at)


def _grid(
    ctx: Context, table: Table, idx: int, first: int, letter: dict[str, str], trees: dict, at: str
) -> list[list[tuple[str, object]]]:
    """A block's grid: a row per interval, every interval-dependent column a formula on its row and on
    the scenario's own cells, its cached result what the evaluator computed there; the least waste marked."""
    F = sheetxml.Formula
    grid = ctx.report.cadence[idx]  # the model's columns at each interval of the grid
    results = {n: [result(n, v) for v in grid[n]] for n in trees}
    least = min(results["waste_pct"])

    def leaf(n):  # this block's template: its own columns by row, the scenario's by reference
        return f"{letter[n]}\0" if n in letter else table.ref(idx, n, at)

    templates = {n: render(tree, leaf) for n, tree in trees.items()}  # rendered once per block
    waste, last = letter["waste_pct"], first + len(grid["interval_s"]) - 1
    rows = []
    for k, seconds in enumerate(grid["interval_s"]):
        r = first + k
        marked = F(
            f'IF({waste}{r}=MIN(${waste}${first}:${waste}${last}),"◀ least waste","")',
            "◀ least waste" if results["waste_pct"][k] == least else "",
        )
        rows.append(
            [
                ("interval", float(seconds)),
                ("min", F(f"A{r}/SECONDS_PER_MINUTE", float(seconds) / 60.0)),
                *((n, F(t.replace("\0", str(r)), results[n][k])) for n, t in templates.items()),
                ("", marked),
            ]
        )
    return rows


def _rows(blocks: list, first_block: int, start: int, letters: list[str], styles_of):
    """The later blocks as sheet XML, each row styled as the first block's row in its place."""
    styles = [styles_of(first_block + k) for k in range(len(blocks[0]))] if blocks else []
    number = start
    for rows in blocks:
        out = []
        for k, row in enumerate(rows):
            if row:
                out.append(
                    sheetxml.row_xml(
                        number,
                        (
                            (letter, styles[k].get(letter, 0), v)
                            for letter, (_, v) in zip(letters, row)
                        ),
                    )
                )
            number += 1
        yield "".join(out).encode()


def _charts(sh: Sheet, charts: dict, letter: dict[str, str]) -> None:
    """Waste against interval per model (its first SKU), sync and async with their optima."""
    ws = sh.ws
    waste_col = ord(letter["waste_pct"]) - 64
    seen_models = set()
    anchor = 3
    for key, blocks in charts.items():
        model = key.split("|")[0]
        if model in seen_models:
            continue
        seen_models.add(model)
        chart = ScatterChart()
        chart.title = "Waste against interval: " + key.replace("|", " on ")
        chart.style = 13
        chart.x_axis.title = "interval (min, log scale)"
        chart.y_axis.title = "waste (% of training)"
        chart.x_axis.scaling.logBase = 10
        chart.x_axis.scaling.min = 1
        show_axes(chart)
        for strategy, first, last, opt_row in blocks:
            xs = Reference(ws, min_col=2, min_row=first, max_row=last)
            ys = Reference(ws, min_col=waste_col, min_row=first, max_row=last)
            chart.series.append(Series(ys, xs, title=f"{strategy} waste"))
            point = Series(
                Reference(ws, min_col=4, min_row=opt_row),
                Reference(ws, min_col=2, min_row=opt_row),
                title=f"{strategy} optimum",
            )
            point.marker.symbol = "diamond"
            point.marker.size = 9
            point.graphicalProperties.line.noFill = True
            chart.series.append(point)
        chart.width, chart.height = 16, 8
        ws.add_chart(chart, f"{get_column_letter(len(letter) + 2)}{anchor}")
        anchor += 17
