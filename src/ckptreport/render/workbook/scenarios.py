"""The Scenarios sheet: the cross product as an Excel table, keyed by ``scenario_id``. Input columns
refer to their cells on Assumptions, derived columns are formulas printed from the same column
definitions the evaluator computes. Openpyxl writes the header, the first row (which fixes each
column's style) and the table; the rows themselves are streamed into the saved package
(``sheetxml``). ``Table`` is the anchor every other sheet finds a scenario by."""

from __future__ import annotations

import re
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd
from openpyxl.formatting.rule import FormulaRule
from openpyxl.utils import get_column_letter
from openpyxl.worksheet.filters import AutoFilter
from openpyxl.worksheet.table import Table as ExcelTable
from openpyxl.worksheet.table import TableColumn, TableStyleInfo

from ...model import display
from ...model.columns import COLUMNS
from ...model.expr import Var, render
from ...read.inputs import of
from ...read.units import INF_AT, INF_CELL
from .. import sheetxml
from .assumptions import Assumed
from .book import BOLD, ENTITY_KINDS, GLOBALS, LITERAL, OVER_FILL, Context, Sheet

KEY = "scenario_id"  # Scenarios column A: each row's key, looked up with an exact match
FIRST = 3  # first data row of the Scenarios table (row 1: note, row 2: header)


@dataclass(frozen=True)
class Table:
    """Where the Scenarios sheet put things: each column's letter, each scenario's sheet row, and
    what the streamed rows hold. Other sheets refer to a scenario's column through ``ref`` (by its
    key, with an exact match), so sorting or filtering the table changes nothing they compute."""

    ctx: Context
    letters: dict[str, str]  # Scenarios column -> letter
    rows: dict[int, int]  # frame index -> sheet row, as built
    columns: list[tuple[str, dict]]  # (column, what its rows hold) of the streamed rows

    def __contains__(self, idx) -> bool:
        return idx in self.rows

    def ref(self, idx: int | None, column: str, row: str | None = None) -> str | None:
        """``column`` of scenario ``idx``, found by its key with an exact match (a number: nothing is
        read as a pattern). ``row``: a cell already holding that match (``row_of``), when many
        references share it. A plan global is its defined name on Assumptions."""
        if idx is None or idx not in self.rows:
            return None
        if column in GLOBALS:
            return column
        letter = self.letters[column]
        return f"INDEX(Scenarios!${letter}:${letter},{row or self.row_of(idx)})"

    def row_of(self, idx: int) -> str:
        """The formula giving the sheet row of scenario ``idx`` in Scenarios, however it is sorted."""
        key = self.letters[KEY]
        return f"MATCH({idx},Scenarios!${key}:${key},0)"

    def live(self, sh: Sheet, idx: int | None, column: str, fmt: str | None):
        """A live reference to ``column`` of scenario ``idx`` (by its key), its value cached."""
        ref = self.ref(idx, column)
        return (
            sh.cell(f"={ref}", fmt=fmt, result=self.ctx.value(idx, column))
            if ref
            else sh.text("n/a")
        )

    def column(self, name: str) -> str:
        """Every row of column ``name``: the range a check sums over."""
        last = FIRST + max(len(self.rows), 1) - 1
        return f"Scenarios!${self.letters[name]}${FIRST}:${self.letters[name]}${last}"


def scenario_columns(frame: pd.DataFrame) -> list[str]:
    """The frame's columns the Scenarios sheet holds: all but the plan globals (named cells)."""
    return [n for n in frame.columns if n not in GLOBALS]


def write(sh: Sheet, ctx: Context, assumed: Assumed) -> Table:
    """The header, the first data row and the table; returns where everything went."""
    frame = ctx.frame.loc[ctx.report.workbook_index, scenario_columns(ctx.frame)]
    all_cols = [KEY, *frame.columns]
    letters = {n: get_column_letter(i + 1) for i, n in enumerate(all_cols)}
    widths = {
        KEY: len(str(frame.index.max())) if len(frame) else 1,
        **{n: _shown_width(n, frame[n]) for n in frame},
    }
    sh.layout(
        {i + 1: min(max(len(n), widths[n]) + 2, 44) for i, n in enumerate(all_cols)},
        f"G{FIRST}",
        fit=False,
    )
    sh.ws.print_title_rows = (
        "2:2"  # each printed page repeats the header and each row's key and system
    )
    sh.ws.print_title_cols = f"A:{letters['strategy']}"
    sh.ws.page_setup.scale = (
        55  # small print, but about ten columns beside the repeated ones a page
    )
    note = ctx.report.workbook_note or (
        f"All {len(frame):,} scenarios. Input columns refer to Assumptions (plan-wide inputs are named cells "
        "there); the others are formulas. "
        f"{KEY} is each row's key: sort and filter freely."
    )
    sh.append([sh.text(note, font=BOLD)])
    sh.append([sh.text(n) for n in all_cols])
    table = Table(
        ctx,
        letters,
        {idx: FIRST + i for i, idx in enumerate(frame.index)},
        _streamed(frame, assumed, _formulas(letters)),
    )
    sh.append(_first_row(sh, table, len(frame)))
    _excel_table(sh, table, len(all_cols), FIRST + len(frame) - 1)
    return table


def _streamed(
    frame: pd.DataFrame, assumed: Assumed, formulas: dict[str, str]
) -> list[tuple[str, dict]]:
    """What each column's rows hold: the key as numbers, names as text, inputs as references to
    their Assumptions cells, derived columns as the parts of their formula around the row number;
    each with the evaluator's values as the cells' cached results."""
    kind_of = {inp.name: (kind, column) for kind, column in ENTITY_KINDS for inp in of(kind)}
    refs = {"gpus": assumed.gpus_cell, "interval_s": assumed.interval_cell}
    columns = [(KEY, {"numbers": frame.index.to_numpy(np.int64)})]
    for n in frame.columns:
        if n in LITERAL:
            columns.append((n, {"text": frame[n].astype(str).to_numpy()}))
        elif n in refs:
            columns.append(
                (
                    n,
                    {
                        "formulas": frame[n].map(refs[n]).to_numpy(object),
                        "values": _cached(n, frame[n]),
                    },
                )
            )
        elif n in kind_of:
            columns.append(
                (
                    n,
                    {
                        "formulas": _input_refs(assumed, frame, n, *kind_of[n]),
                        "values": _cached(n, frame[n]),
                    },
                )
            )
        else:
            columns.append(
                (
                    n,
                    {
                        "parts": tuple(formulas[n].removeprefix("=").split("{r}")),
                        "values": _cached(n, frame[n]),
                    },
                )
            )
    return columns


def _first_row(sh: Sheet, table: Table, rows: int) -> list:
    """The first row through openpyxl: it registers each column's style (the row is streamed over,
    values and all)."""
    first = []
    for n, what in table.columns:
        if "text" in what:
            first.append(sh.text(what["text"][0]) if rows else None)
        elif "numbers" in what:
            first.append(sh.cell(int(what["numbers"][0]), fmt="0") if rows else None)
        else:
            formula = "=" + (
                what["formulas"][0] if "formulas" in what else str(FIRST).join(what["parts"])
            )
            first.append(sh.cell(formula, fmt=display.excel_format(n)))
    return first


def _excel_table(sh: Sheet, table: Table, width: int, last: int) -> None:
    """The Excel table over the rows (its filter buttons on the header), and the overhead and
    target columns shaded where they miss the target."""
    ref = f"A2:{get_column_letter(width)}{max(last, FIRST)}"
    excel = ExcelTable(
        displayName="Scenarios",
        ref=ref,
        tableColumns=[TableColumn(id=i + 1, name=n) for i, n in enumerate(table.letters)],
    )
    excel.tableStyleInfo = TableStyleInfo(name="TableStyleLight9", showRowStripes=True)
    excel.autoFilter = AutoFilter(ref=ref)
    with (
        warnings.catch_warnings()
    ):  # openpyxl warns in write-only mode even when the columns are given
        warnings.filterwarnings("ignore", "In write-only mode you must add table columns manually")
        sh.ws.add_table(excel)
    over = table.letters["overhead_pct"]
    sh.ws.conditional_formatting.add(
        f"{over}{FIRST}:{over}{last}",
        FormulaRule(formula=[f"{over}{FIRST}>target_overhead_pct"], fill=OVER_FILL),
    )
    meets = table.letters["meets_target"]
    sh.ws.conditional_formatting.add(
        f"{meets}{FIRST}:{meets}{last}",
        FormulaRule(formula=[f"NOT({meets}{FIRST})"], fill=OVER_FILL),
    )


def _formulas(letters: dict[str, str]) -> dict[str, str]:
    """A formula template per derived Scenarios column, with '{r}' where the row number goes. A plan
    global is its defined name (one cell on Assumptions, not a column copying it into every row); an
    entity's input is a reference to its own Assumptions cell (``_input_refs``)."""
    out: dict[str, str] = {}
    for name, col in COLUMNS.items():
        tree = col.fn(*(Var(p) for p in col.params))
        out[name] = "=" + render(tree, lambda n: n if n in GLOBALS else f"{letters[n]}{{r}}")
    return out


def _input_refs(
    assumed: Assumed, frame: pd.DataFrame, name: str, kind: str, column: str
) -> np.ndarray:
    """Per row, the absolute reference to the Assumptions cell of the row's entity's input ``name``:
    no lookup by name (nothing is matched as a pattern) and no offset (a row inserted in Assumptions
    moves the reference with the cell); sorting Scenarios moves each reference with its row."""
    names = frame[column].astype(str)
    refs = {entity: assumed.input_cell[(kind, entity, name)] for entity in names.unique()}
    return names.map(refs).to_numpy(object)


def _shown_width(name: str, column: pd.Series) -> int:
    """About how many characters the column's widest cell shows in its number format: the digits of
    its largest value (grouped in thousands; scaled to TB/GB/MB where the format scales), decimals
    and unit; infinity as its words; text as it is. A column this wide shows no '###' or clipped name."""
    if column.empty:
        return 1
    if not pd.api.types.is_numeric_dtype(column) or pd.api.types.is_bool_dtype(column):
        return int(column.astype(str).str.len().max())
    fmt = display.excel_format(name) or "General"
    values = column.to_numpy(float)
    finite = np.abs(values[np.isfinite(values) & (np.abs(values) < INF_AT)])
    words = (
        max((len(w) for w in re.findall(r'\[>=1E\+280\]"([^"]*)"', fmt)), default=0)
        if len(finite) < len(values)
        else 0
    )
    if not len(finite):
        return max(words, 1)
    top = float(finite.max())
    section = (
        fmt.split(";")[-1] if ",," not in fmt else "#,##0.00"
    )  # scaled to TB, GB, MB: at most 999.99
    decimals = len(re.search(r"\.(0*)", section).group(1)) if "." in section else 0
    unit = max((len(u) for u in re.findall(r'"([^"]*)"', section)), default=0)
    unit += section.endswith(
        "%"
    )  # a percentage: the evaluator's whole percents, shown with a % sign
    digits = len(f"{min(top, 999.99) if ',,' in fmt else top:,.{decimals}f}")
    if (
        section.endswith("%") and "[<" in fmt
    ):  # small percentages show more decimals: 0.000020%, 0.0069%
        least = float(finite.min())
        digits = max(digits, 8 if least < 0.001 else 6 if least < 0.1 else 0)
    return max(words, digits + unit + 1)


def _cached(name: str, column: pd.Series) -> np.ndarray:
    """A Scenarios column's values as its cells hold them: infinity as INF_CELL, a percentage as a
    fraction, text as text."""
    if isinstance(column.dtype, pd.CategoricalDtype) or column.dtype == object:
        return column.astype(object).to_numpy()
    values = column.to_numpy()
    if display.unit_of(name) == "pct":
        values = values / 100
    if values.dtype.kind == "f" and np.isinf(values).any():
        values = np.where(np.isinf(values), np.copysign(INF_CELL, values), values)
    return values


def rows(table: Table, styles: dict[str, int], advance=lambda n: None):
    """The Scenarios rows as SpreadsheetML, each column with the style openpyxl gave its first cell;
    ``advance(k)`` after each chunk of k rows."""
    columns = [
        sheetxml.Column(table.letters[n], styles.get(table.letters[n], 0), **what)
        for n, what in table.columns
    ]
    return sheetxml.rows_xml(columns, FIRST, len(table.rows), advance)
