"""What every sheet writer shares: the ``Sheet`` (write-only cells that keep text as text and cache
each formula's result), the styles, the ``Context`` a writer reads (the report and the build's
meta), how an engine value is held by a cell, and the column graph the recomputing blocks walk."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from openpyxl.cell import WriteOnlyCell
from openpyxl.styles import Font, PatternFill, Protection
from openpyxl.utils import get_column_letter

from ...model import display
from ...model.columns import COLUMNS
from ...model.expr import Named
from ...read.inputs import ENTITY_COLUMN, INPUTS, PLAN, SCENARIO, SOURCES, of
from ...read.strategies import COMPARED
from ...read.units import COLUMN_UNITS, INF_AT, INF_CELL

if TYPE_CHECKING:
    import pandas as pd
    from openpyxl import Workbook

    from ...answer.types import Report
    from ...read.validated import Inputs

# Scenarios columns written as text, not looked up: the plan's axes by name, and the basis of each hop
LITERAL = {i.name for i in INPUTS.values() if i.entity == SCENARIO and i.unit == "label"} | set(
    SOURCES
)
GLOBALS = {
    i.name for i in of(PLAN)
}  # plan-wide inputs: one named cell on Assumptions, no Scenarios column
ENTITY_KINDS = tuple(ENTITY_COLUMN.items())  # (section, frame column) of each kind of entity
PCT = COLUMN_UNITS["pct"].excel
USD = COLUMN_UNITS["usd"].excel_format()

BLUE = Font(color="0000FF")
BOLD = Font(bold=True)
TITLE = Font(bold=True, size=14)
HEADER_FILL = PatternFill("solid", fgColor="DDEBF7")
OVER_FILL = PatternFill("solid", fgColor="F8CBAD")
UNLOCKED = Protection(locked=False)
MISSING = object()  # a formula cell given no result
INFINITE_FROM = Named(INF_AT, "INFINITE_FROM")
SECONDS_PER_MINUTE = Named(60.0, "SECONDS_PER_MINUTE")


def fraction(name: str, v):
    """The value a cell holds for ``name``: a percentage as a fraction (the evaluator's 3.6 is 0.036,
    shown as 3.60%, as typing ``3.6%`` stores it), anything else as it is."""
    return v / 100 if display.unit_of(name) == "pct" and isinstance(v, (int, float)) else v


def cell_value(v):
    """A number for a cell: infinity as INF_CELL."""
    if isinstance(v, float) and math.isinf(v):
        return math.copysign(INF_CELL, v)
    return v


def result(name: str, v):
    """What a cell showing ``name`` holds for the evaluator's value ``v``: a percentage as a fraction,
    infinity as INF_CELL, numpy scalars as Python's (NaN: #N/A)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return cell_value(fraction(name, float(v)))
    return v


def index(v) -> int | None:
    """A frame label from the summary table (None or NaN: no row)."""
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


class Sheet:
    """A write-only sheet with small helpers: text is always text, inputs blue, formats by unit."""

    def __init__(self, wb: Workbook, title: str):
        self.ws = wb.create_sheet(title)
        self.row = 0
        self.values: dict[str, object] = {}  # cell -> the cached result of its formula
        self._pending: dict[int, object] = {}  # id(cell) -> its result, until the cell is placed

    def layout(
        self,
        widths: dict[int, float],
        freeze: str | None = None,
        landscape: bool = True,
        fit: bool = True,
    ) -> Sheet:
        """Write-only sheets write their layout first: widths, panes and page setup, before any row.
        Pages are landscape, as wide as the sheet (``fit``) or in columns of a readable size."""
        for col, w in widths.items():
            self.ws.column_dimensions[get_column_letter(col)].width = w
        if freeze:
            self.ws.freeze_panes = freeze
        if landscape:
            self.ws.page_setup.orientation = "landscape"
        if fit:
            self.ws.page_setup.fitToWidth = 1
            self.ws.page_setup.fitToHeight = 0
            self.ws.sheet_properties.pageSetUpPr.fitToPage = True
        return self

    def print_marks(self, meta: dict[str, str]) -> None:
        """Every printed page says what it is and where it came from: the sheet and the tool in the
        header; the input hash and the page in the footer (no input text: '&' codes stay ours)."""
        self.ws.oddHeader.left.text = "ckptreport: &A"
        self.ws.oddHeader.right.text = f"built {meta['build_time']}"
        self.ws.oddFooter.left.text = f"input hash {meta['input_hash'][:16]}"
        self.ws.oddFooter.right.text = "page &P of &N"

    def cell(
        self,
        value,
        *,
        fmt: str | None = None,
        font=None,
        fill=None,
        align=None,
        text: bool = False,
        result=MISSING,
    ):
        """A cell; a formula's ``result`` (what the evaluator computed: NaN is #N/A) is stored as its
        cached value, so a reader that does not calculate sees it."""
        c = WriteOnlyCell(self.ws, value=value)
        if result is not MISSING:
            self._pending[id(c)] = result
        if text or (isinstance(value, str) and not value.startswith("=")):
            c.data_type = (
                "s"  # set after the value: a string from the inputs stays text, even '=...'
            )
        if fmt:
            c.number_format = fmt
        if font:
            c.font = font
            if font is BLUE:  # an input: the one kind of cell a protected sheet lets you edit
                c.protection = UNLOCKED
        if fill:
            c.fill = fill
        if align:
            c.alignment = align
        return c

    def text(self, value: str, **kw):
        return self.cell(value, text=True, **kw)

    def header(self, names) -> int:
        """A bold header row on the header fill."""
        return self.append([self.text(h, font=BOLD, fill=HEADER_FILL) for h in names])

    def append(self, cells: list) -> int:
        self.ws.append(cells)
        self.row += 1
        if self._pending:
            for k, c in enumerate(cells):
                if c is not None and id(c) in self._pending:
                    self.values[f"{get_column_letter(k + 1)}{self.row}"] = self._pending.pop(id(c))
        return self.row


@dataclass(frozen=True)
class Context:
    """What every writer reads: the computed report and the build's meta (version, hash, time)."""

    report: Report
    meta: dict[str, str]

    @property
    def inputs(self) -> Inputs:
        return self.report.inputs

    @property
    def frame(self) -> pd.DataFrame:
        return self.report.frame

    @property
    def summary(self) -> pd.DataFrame:
        return self.report.summary

    def value(self, idx: int | None, column: str):
        """The evaluator's value of ``column`` in scenario ``idx``, as its cell holds it."""
        if column in GLOBALS:
            return result(column, self.frame.at[self.frame.index[0], column])
        return result(column, self.frame.at[idx, column])

    def picks(self) -> list[dict[str, int | None]]:
        """Per summary line: the frame index of the row shown for each compared strategy (sync, async)."""
        lines = self.summary.to_dict("records")
        return [{s: index(line.get(f"{s}_index")) for s in COMPARED} for line in lines]


def show_axes(chart) -> None:
    chart.x_axis.delete = False  # openpyxl >= 3.1 hides axes unless told
    chart.y_axis.delete = False


def dependents_of(inputs: set[str], outputs) -> list[str]:
    """The columns that change with ``inputs`` and that ``outputs`` need, in evaluation order: what a
    block recomputing ``outputs`` at other values of ``inputs`` must hold (the rest it reads)."""
    changed = set(inputs)
    for name, col in COLUMNS.items():
        if changed & set(col.params):
            changed.add(name)
    needed = set(outputs)
    for name in reversed(list(COLUMNS)):
        if name in needed:
            needed |= {p for p in COLUMNS[name].params if p in changed}
    return [n for n in COLUMNS if n in needed and n in changed]
