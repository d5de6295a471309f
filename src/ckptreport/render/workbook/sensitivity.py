"""The Sensitivity sheet: the tornado of the headline option as a live table. Per uncertain input its
low and high (blue, editable) and the option's cost over the run, a month, and overhead at each
end, with the swing, largest first. Below, one computation block per input: the columns that depend
on it recomputed (same definitions as Scenarios) with the input at its low and its high, the rest
read from the option's Scenarios row by its key. Edit a low or a high and the table follows. What
each end computes to was found in the compute stage (``report.sweeps``); here it is only the cached
result of each formula."""

from __future__ import annotations

from dataclasses import dataclass

from openpyxl.utils import get_column_letter

from ...answer.types import option_label
from ...model import display
from ...model.columns import COLUMNS
from ...model.expr import Var, render
from .book import BLUE, BOLD, PCT, TITLE, USD, Context, Sheet, dependents_of, result
from .scenarios import KEY, Table

OUTPUTS = ("total_usd", "total_usd_month", "overhead_pct")  # what the table shows at each end
HEAD = [
    "input",
    "where",
    "low",
    "today",
    "high",
    "over the run at low",
    "at high",
    "swing",
    "a month at low",
    "at high",
    "overhead at low",
    "at high",
]
AT = "$E$3"  # the cell holding the option's Scenarios row (by its key): every reference shares it


@dataclass(frozen=True)
class Block:
    """Where one input's row of the table and its computation block are."""

    sweep: object  # uncertainty.Sweep
    row: int  # its row in the table
    low_row: int  # its block's row at the low, and at the high
    high_row: int
    letters: dict[str, str]  # each recomputed column -> its letter in the block

    def end(self, e: int) -> int:
        return self.low_row if e == 0 else self.high_row


def write(sh: Sheet, ctx: Context, table: Table) -> None:
    widest = max(
        (len(_recomputed(sweep)) + 1 for sweep in ctx.report.sweeps), default=0
    )  # a block's columns
    sh.layout({1: 44, 2: 18, **{k: 16 for k in range(3, max(13, widest + 2))}}, "A6")
    sh.append(
        [sh.text("Sensitivity: which assumption moves the headline option's cost", font=TITLE)]
    )
    point, idx = ctx.report.point, ctx.report.headline
    if idx is None or idx not in table:
        sh.append(
            [sh.text("The headline option is not on the Scenarios sheet: no sensitivity table.")]
        )
        return
    option = option_label(*(ctx.frame.at[idx, c] for c in ("strategy", "tier", "engine")))
    sh.append(
        [
            sh.text(
                f"{point.model} on {point.sku}: {option}, the option the summary recommends. Each input that "
                "carries a range is moved alone from its low to its high (blue: edit them), the others held; "
                "the computation blocks below recompute every column that depends on it."
            )
        ]
    )
    sh.append(
        [
            sh.text("scenario"),
            sh.text(KEY),
            sh.cell(idx),
            sh.text("Scenarios row"),
            sh.cell("=" + table.row_of(idx), result=table.rows[idx]),
        ]
    )
    if not ctx.report.sweeps:
        sh.append(
            [
                sh.text(
                    "No input this option reads carries a range: give one a range (low, high) in the models "
                    "files to sweep it."
                )
            ]
        )
        return
    sh.append([])
    sh.header(HEAD)
    first = sh.row + 1
    start = first + len(
        ctx.report.sweeps
    )  # each block: a blank row, its title, its header, low, high
    blocks = []
    for k, sweep in enumerate(ctx.report.sweeps):
        deps = _recomputed(sweep)
        blocks.append(
            Block(
                sweep,
                first + k,
                start + 5 * k + 3,
                start + 5 * k + 4,
                {n: get_column_letter(i + 2) for i, n in enumerate(deps)},
            )
        )
    for b in blocks:
        sh.append(_table_row(sh, ctx, table, idx, b))
    for b in blocks:
        _computation(sh, table, idx, b)


def _recomputed(sweep) -> list[str]:
    """The columns a block recomputes: those that change with the input (or the inputs derived from
    it) and that the outputs need."""
    return dependents_of({sweep.member.input, *(d for d, _ in sweep.member.dependents)}, OUTPUTS)


def _table_row(sh: Sheet, ctx: Context, table: Table, idx: int, b: Block) -> list:
    """An input's low, today's value and high, and each output at both ends (read from its block)."""
    p, member, r = b.sweep.param, b.sweep.member, b.row
    name = member.input
    fmt = display.excel_format(name)
    label = p.label if not p.driver else f"{p.driver}: {member.label}"
    cells = [
        sh.text(label),
        sh.text(f"{member.prov.file}:{member.prov.line}"),
        sh.cell(result(name, member.low), fmt=fmt, font=BLUE),
        table.live(sh, idx, name, fmt),
        sh.cell(result(name, member.high), fmt=fmt, font=BLUE),
    ]
    for column in OUTPUTS:
        shown = PCT if column == "overhead_pct" else USD
        for e in (0, 1):
            ref = (
                f"{b.letters[column]}{b.end(e)}"
                if column in b.letters
                else table.ref(idx, column, AT)
            )
            cells.append(
                sh.cell(f"={ref}", fmt=shown, result=result(column, b.sweep.columns[column][e]))
            )
        if column == "total_usd":
            lo, hi = (float(b.sweep.columns[column][e]) for e in (0, 1))
            cells.append(sh.cell(f"=ABS(G{r}-F{r})", fmt=USD, result=result(column, abs(hi - lo))))
    return cells


def _computation(sh: Sheet, table: Table, idx: int, b: Block) -> None:
    """An input's block: its recomputed columns with the input at its low (the table's C cell) and
    at its high (E); the inputs derived from it in proportion; everything else by reference."""
    p, member = b.sweep.param, b.sweep.member
    moved = {d for d, _ in member.dependents}
    trees = {n: COLUMNS[n].fn(*(Var(q) for q in COLUMNS[n].params)) for n in b.letters}
    sh.append([])
    sh.append(
        [sh.text(f"computation: {p.label}" + (f" ({member.label})" if p.driver else ""), font=BOLD)]
    )
    sh.header(["end", *b.letters])
    for e, (end, cell) in enumerate((("low", f"$C${b.row}"), ("high", f"$E${b.row}"))):
        rr = b.end(e)

        def leaf(n, cell=cell, rr=rr):
            if n in b.letters:
                return f"{b.letters[n]}{rr}"
            if n == member.input:
                return cell
            if n in moved:  # an input derived from the swept one moves in proportion
                return f"({table.ref(idx, n, AT)}*{cell}/{table.ref(idx, member.input, AT)})"
            return table.ref(idx, n, AT)

        sh.append(
            [
                sh.text(end),
                *(
                    sh.cell(
                        "=" + render(trees[n], leaf),
                        fmt=display.excel_format(n),
                        result=result(n, b.sweep.columns[n][e]),
                    )
                    for n in b.letters
                ),
            ]
        )
