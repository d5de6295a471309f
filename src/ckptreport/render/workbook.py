"""The workbook: a live spreadsheet model of the scenario frame.

Sheets: Summary (headline per model and SKU, charts), Assumptions (every input as a blue cell with its
unit, basis and source; defined names for the plan's globals), Scenarios (the cross product as an
Excel table: input columns refer to their cells in Assumptions, derived columns are formulas printed from the same
column definitions the engine evaluates), Cadence (overhead and waste against interval, optimum
marked, charts), Sources (every citation, and the build's provenance).

What the sheets show was computed in the compute stage (``report.Report``): the summary and its
recommendations, which rows to keep. The inputs' layout follows their declarations (``inputs``), and
every number format comes from the one unit table (``units.COLUMN_UNITS``). Strings from inputs are
always written as text cells, never as formulas. Infinity (an unbounded tier, an unreachable target)
is written as ``units.INF_CELL`` and reads 'unbounded' / 'unreachable'. Only openpyxl's public API is
used.
"""

from __future__ import annotations

import datetime as dt
import math
import re
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Font, PatternFill, Protection
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation
from openpyxl.worksheet.filters import AutoFilter
from openpyxl.worksheet.table import Table, TableColumn, TableStyleInfo

from .. import display, rule
from ..columns import COLUMNS, MONTHS_PER_YEAR, SECONDS_PER_MONTH
from ..expr import INFINITY, SCALES, TERA, Named, Var, render
from ..inputs import INPUTS, MODELS, PLAN, RECIPES, SCENARIO, SKUS, SOURCES, TIERS, of
from ..load import Inputs
from ..provenance import provenance
from ..report import CADENCE_GRID_MIN, Report
from ..units import BOOL_EXCEL, BYTES_EXCEL, COLUMN_UNITS, INF_AT, INF_CELL
from . import sheetxml

# Scenarios columns written as text, not looked up: the plan's axes by name, and the basis of each hop
LITERAL = {i.name for i in INPUTS.values() if i.entity == SCENARIO and i.unit == "label"} | set(SOURCES)
GLOBALS = {i.name for i in of(PLAN)}  # plan-wide inputs: one named cell on Assumptions, no Scenarios column
KEY = "scenario_id"  # Scenarios column A: each row's key, looked up with an exact match
FIRST = 3  # first data row of the Scenarios table (row 1: note, row 2: header)
SHEETS = ("Cover", "Summary", "Assumptions", "Scenarios", "Choice", "Purchase", "Cadence", "Sensitivity", "Sources",
          "Checks")
ENTITY_KINDS = ((MODELS, "model"), (RECIPES, "recipe"), (SKUS, "sku"), (TIERS, "tier"))
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
CONSTANTS = (*SCALES, SECONDS_PER_MINUTE, SECONDS_PER_MONTH, MONTHS_PER_YEAR, Named(INF_CELL, INFINITY), INFINITE_FROM)
CONSTANT_WORDS = {
    "BYTES_PER_GB": "1 GB = 10^9 bytes (GB/s columns are in 10^9 bytes a second)",
    "PER_TERA": "10^12: FLOP/s in a TFLOP/s, bytes in a TB",
    "BYTES_PER_TIB": "1 TiB = 2^40 bytes",
    "SECONDS_PER_HOUR": "3,600 seconds",
    "SECONDS_PER_DAY": "86,400 seconds",
    "PER_THOUSAND": "1,000: request prices are per 1,000 requests",
    "SECONDS_PER_MINUTE": "60 seconds",
    "SECONDS_PER_MONTH": "an average month: 365.25 / 12 days",
    "MONTHS_PER_YEAR": "12: a yearly support charge spread over months",
    INFINITY: "the stand-in for infinity (unbounded, unreachable) in a cell",
    "INFINITE_FROM": "a cell at least this large reads as infinite",
}


def fraction(name: str, v):
    """The value a cell holds for ``name``: a percentage as a fraction (the engine's 3.6 is 0.036,
    shown as 3.60%, as typing ``3.6%`` stores it), anything else as it is."""
    return v / 100 if display.unit_of(name) == "pct" and isinstance(v, (int, float)) else v


def cell_value(v):
    """A number for a cell: infinity as INF_CELL."""
    if isinstance(v, float) and math.isinf(v):
        return math.copysign(INF_CELL, v)
    return v


class Sheet:
    """A write-only sheet with small helpers: text is always text, inputs blue, formats by unit."""

    def __init__(self, wb: Workbook, title: str):
        self.ws = wb.create_sheet(title)
        self.row = 0
        self.values: dict[str, object] = {}  # cell -> the cached result of its formula
        self._pending: dict[int, object] = {}  # id(cell) -> its result, until the cell is placed

    def layout(self, widths: dict[int, float], freeze: str | None = None, landscape: bool = True,
               fit: bool = True) -> Sheet:
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

    def cell(self, value, *, fmt: str | None = None, font=None, fill=None, align=None, text: bool = False,
             result=MISSING):
        """A cell; a formula's ``result`` (what the engine computed: NaN is #N/A) is stored as its
        cached value, so a reader that does not calculate sees it."""
        c = WriteOnlyCell(self.ws, value=value)
        if result is not MISSING:
            self._pending[id(c)] = result
        if text or (isinstance(value, str) and not value.startswith("=")):
            c.data_type = "s"  # set after the value: a string from the inputs stays text, even '=...'
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

    def append(self, cells: list) -> int:
        self.ws.append(cells)
        self.row += 1
        if self._pending:
            for k, c in enumerate(cells):
                if c is not None and id(c) in self._pending:
                    self.values[f"{get_column_letter(k + 1)}{self.row}"] = self._pending.pop(id(c))
        return self.row


@dataclass
class Book:
    report: Report
    meta: dict[str, str]
    input_cell: dict[tuple[str, str, str], str] = field(default_factory=dict)  # (kind, name, input) -> its cell
    global_cell: dict[str, str] = field(default_factory=dict)
    gpus_cell: dict[float, str] = field(default_factory=dict)
    interval_cell: dict[float, str] = field(default_factory=dict)
    letters: dict[str, str] = field(default_factory=dict)  # Scenarios column -> letter
    scenario_row: dict[int, int] = field(default_factory=dict)  # frame index -> sheet row
    notes: list[str] = field(default_factory=list)
    scenario_columns: list = field(default_factory=list)  # (column, what its rows hold) of streamed rows
    choice_rows: list = field(default_factory=list)  # per summary line: (first, last) row of its Choice block
    chosen: list = field(default_factory=list)  # per summary line: the option its Choice block ranks first, or None
    typed: list = field(default_factory=list)  # (row, input, value as its cell holds it) of each Assumptions input
    passing: int = 0  # checks that pass as built
    streams: dict = field(default_factory=dict)  # sheet title -> sheetxml.Stream of rows written into the package
    checks: tuple[int, int] = (0, 0)  # first and last row of the Checks sheet's checks

    @property
    def inputs(self) -> Inputs:
        return self.report.inputs

    @property
    def frame(self) -> pd.DataFrame:
        return self.report.frame

    @property
    def summary(self) -> pd.DataFrame:
        return self.report.summary

    def picks(self) -> list[dict[str, int | None]]:
        """Per summary line: the frame index of the row shown for sync and async."""
        lines = self.summary.to_dict("records")
        return [{s: _index(line.get(f"{s}_index")) for s in ("sync", "async")} for line in lines]


def _index(v) -> int | None:
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else int(v)


# ---- Assumptions ----------------------------------------------------------------------------------

def _prov_cells(sh: Sheet, prov) -> list:
    """basis, source, from, date, region."""
    if prov is None:
        return [sh.text("input"), sh.text(""), sh.text(""), sh.text(""), sh.text("")]
    where = f"{prov.file}:{prov.line}" if prov.line else prov.file
    return [sh.text(prov.basis), sh.text(prov.source or ""), sh.text(where), sh.text(prov.date or ""),
            sh.text(prov.region or "")]


def _value_cell(sh: Sheet, name: str, v):
    if isinstance(v, float) and math.isnan(v):
        return sh.cell("=NA()", font=BLUE, result=math.nan)  # unknown: #N/A, never 0
    if isinstance(v, str):
        return sh.text(v, font=BLUE)
    if display.unit_of(name) == "bool":
        return sh.cell(bool(v), font=BLUE)
    return sh.cell(_result(name, v), fmt=display.plain_format(name), font=BLUE)


def _derived_cell(sh: Sheet, inp, row_of: dict[str, int], value):
    """An omitted key derived from others of its entity (active_params = params): a formula on their
    cells, so editing them moves it too. Black (not an input) but open: type a figure over it to
    set it apart."""
    formula = re.sub(r"\{(\w+)\}", lambda m: f"$C${row_of[m.group(1)]}", inp.derived_formula)
    cell = sh.cell("=" + formula, fmt=display.plain_format(inp.name), result=_result(inp.name, value))
    cell.protection = UNLOCKED
    return cell


def write_assumptions(sh: Sheet, book: Book) -> None:
    sh.layout({1: 24, 2: 26, 3: 18, 4: 9, 5: 16, 6: 90, 7: 30, 8: 10, 9: 14, 10: 12, 11: 14, 12: 20}, "A4")
    sh.append([sh.text("Assumptions", font=TITLE)])
    sh.append([sh.text("Blue cells are inputs: change one and every dependent figure recomputes. "
                       "Values are in the units beside them; the source says where each comes from.")])
    sh.append([])
    header = ["key", "figure", "value", "unit", "basis", "source", "from", "date", "region", "spec",
              "measured / spec", "check"]
    inputs, plan = book.inputs, book.inputs.plan
    sh.append([sh.text("Plan", font=BOLD)])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in header])
    plan_entity = inputs.entity(PLAN, PLAN)
    for inp in of(PLAN):
        row = sh.append([sh.text("plan"), sh.text(inp.name), _value_cell(sh, inp.name, inp.value(plan_entity)),
                         sh.text(display.unit(inp.name).short), *_prov_cells(sh, provenance(inputs, inp, {}))])
        book.global_cell[inp.name] = f"Assumptions!$C${row}"
        book.typed.append((row, inp.name, _result(inp.name, inp.value(plan_entity))))
    for i, q in enumerate(plan.gpus):
        row = sh.append([sh.text("plan.gpus"), sh.text(f"gpus[{i}]"),
                         sh.cell(q.value, fmt=display.plain_format("gpus"), font=BLUE),
                         sh.text("GPUs"), sh.text("input"), sh.text("the plan's cluster sizes"), sh.text("plan.yaml"),
                         sh.text(""), sh.text("")])
        book.gpus_cell[q.value] = f"Assumptions!$C${row}"
        book.typed.append((row, "gpus", q.value))
    for i, q in enumerate(plan.intervals):
        row = sh.append([sh.text("plan.intervals"), sh.text(f"interval_s[{i}]"),
                         sh.cell(q.value, fmt=display.plain_format("interval_s"), font=BLUE), sh.text("s"),
                         sh.text("input"), sh.text(f"the plan's cadences ({q.text})"), sh.text("plan.yaml"),
                         sh.text(""), sh.text("")])
        book.interval_cell[q.value] = f"Assumptions!$C${row}"
        book.typed.append((row, "interval_s", q.value))
    for constant in CONSTANTS:  # what formulas name instead of typing 1E+9, 3600 or 1E+290
        row = sh.append([sh.text("constant"), sh.text(constant.name), sh.cell(float(constant)),
                         sh.text(""), sh.text("definition"), sh.text(CONSTANT_WORDS[constant.name])])
        sh.ws.parent.defined_names[constant.name] = DefinedName(constant.name, attr_text=f"Assumptions!$C${row}")
    for kind, column in ENTITY_KINDS:
        for name in book.frame[column].cat.categories:
            name = str(name)
            sh.append([])
            sh.append([sh.text(f"{kind}.", font=BOLD), sh.text(name, font=BOLD)])
            sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in header])
            entity = inputs.entity(kind, name)
            row_of = {inp.name: sh.row + 1 + k for k, inp in enumerate(of(kind))}  # one row each, in order
            for k, inp in enumerate(of(kind)):
                m = inputs.measured.get((kind, name, inp.key))
                extra = [] if m is None else [
                    sh.cell(m.spec / inp.scale if m.spec else "n/a", fmt=display.plain_format(inp.name)),
                    sh.cell(m.ratio, fmt="0%") if m.ratio else sh.text("n/a"),
                    sh.text(m.flag or "ok", fill=OVER_FILL if m.flag else None)]
                derived = m is None and inp.derived_formula and inp.derived(entity) is not None
                value = (_derived_cell(sh, inp, row_of, inp.value(entity, name)) if derived
                         else _value_cell(sh, inp.name, inp.value(entity, name)))
                row = sh.append([sh.text(f"{kind}.{name}"), sh.text(inp.name), value,
                                 sh.text(display.unit(inp.name).short),
                                 *_prov_cells(sh, provenance(inputs, inp, {kind: name})), *extra])
                book.input_cell[(kind, name, inp.name)] = f"Assumptions!$C${row}"
                book.typed.append((row, inp.name, _result(inp.name, inp.value(entity, name))))
    for name, ref in book.global_cell.items():
        sh.ws.parent.defined_names[name] = DefinedName(name, attr_text=ref)
    _validate(sh, book.typed)


def _validate(sh: Sheet, typed: list[tuple[int, str, object]]) -> None:
    """Data validation on the numeric input cells (column C of ``typed``'s rows): a percentage from 0
    to 100% (a fraction from 0 to 1), any other figure non-negative (infinity is 1E+290, a valid entry); typing a wrong one is
    refused with a message naming what is allowed."""
    rules = {
        "pct": DataValidation(type="decimal", operator="between", formula1="0", formula2="1", allow_blank=True,
                              showErrorMessage=True, errorTitle="A percentage",
                              error="Type a percentage from 0% to 100%, with its % sign: 1% or 2.5%."),
        "number": DataValidation(type="decimal", operator="greaterThanOrEqual", formula1="0", allow_blank=True,
                                 showErrorMessage=True, errorTitle="A non-negative figure",
                                 error="Type a figure of 0 or more, in the unit beside it."),
    }
    for row, name, _ in typed:
        unit = display.unit_of(name)
        if unit not in ("label", "bool"):
            rules["pct" if unit == "pct" else "number"].add(f"C{row}")
    for rule in rules.values():
        if rule.sqref:
            sh.ws.data_validations.append(rule)


# ---- Scenarios ------------------------------------------------------------------------------------

def _scenario_formulas(book: Book) -> dict[str, str]:
    """A formula template per derived Scenarios column, with '{r}' where the row number goes. A plan
    global is its defined name (one cell on Assumptions, not a column copying it into every row); an
    entity's input is a reference to its own Assumptions cell (``_input_refs``)."""
    out: dict[str, str] = {}
    for name, col in COLUMNS.items():
        tree = col.fn(*(Var(p) for p in col.params))
        out[name] = "=" + render(tree, lambda n: n if n in GLOBALS else f"{book.letters[n]}{{r}}")
    return out


def _input_refs(book: Book, frame: pd.DataFrame, name: str, kind: str, column: str) -> np.ndarray:
    """Per row, the absolute reference to the Assumptions cell of the row's entity's input ``name``:
    no lookup by name (nothing is matched as a pattern) and no offset (a row inserted in Assumptions
    moves the reference with the cell); sorting Scenarios moves each reference with its row."""
    names = frame[column].astype(str)
    refs = {entity: book.input_cell[(kind, entity, name)] for entity in names.unique()}
    return names.map(refs).to_numpy(object)


def write_scenarios(sh: Sheet, book: Book) -> None:
    """The header, the first data row (which fixes each column's style) and the table; the rows
    themselves are streamed into the saved package (``sheetxml``), from what this records. Column A
    is ``scenario_id``, each row's key: every other sheet finds a scenario by it, with an exact
    match, so sorting or filtering the table changes nothing computed."""
    frame = book.frame.loc[book.report.workbook_index, scenario_columns(book.frame)]
    all_cols = [KEY, *frame.columns]
    book.letters = {n: get_column_letter(i + 1) for i, n in enumerate(all_cols)}
    widths = {KEY: len(str(frame.index.max())) if len(frame) else 1, **{n: _shown_width(n, frame[n]) for n in frame}}
    sh.layout({i + 1: min(max(len(n), widths[n]) + 2, 44) for i, n in enumerate(all_cols)}, f"G{FIRST}", fit=False)
    sh.ws.print_title_rows = "2:2"  # each printed page repeats the header and each row's key and system
    sh.ws.print_title_cols = f"A:{book.letters['strategy']}"
    sh.ws.page_setup.scale = 55  # small print, but about ten columns beside the repeated ones a page
    formulas = _scenario_formulas(book)
    note = book.report.workbook_note or (
        f"All {len(frame):,} scenarios. Input columns refer to Assumptions (plan-wide inputs are named cells "
        "there); the others are formulas. "
        f"{KEY} is each row's key: sort and filter freely.")
    sh.append([sh.text(note, font=BOLD)])
    sh.append([sh.text(n) for n in all_cols])
    kind_of = {inp.name: (kind, column) for kind, column in ENTITY_KINDS for inp in of(kind)}
    refs = {"gpus": book.gpus_cell, "interval_s": book.interval_cell}
    columns = [(KEY, {"numbers": frame.index.to_numpy(np.int64)})]
    for n in frame.columns:
        if n in LITERAL:
            columns.append((n, {"text": frame[n].astype(str).to_numpy()}))
        elif n in refs:
            columns.append((n, {"formulas": frame[n].map(refs[n]).to_numpy(object), "values": _cached(n, frame[n])}))
        elif n in kind_of:
            columns.append((n, {"formulas": _input_refs(book, frame, n, *kind_of[n]), "values": _cached(n, frame[n])}))
        else:
            columns.append((n, {"parts": tuple(formulas[n].removeprefix("=").split("{r}")),
                                "values": _cached(n, frame[n])}))
    book.scenario_columns = columns
    book.scenario_row = {idx: FIRST + i for i, idx in enumerate(frame.index)}
    first = []
    for n, what in columns:  # the first row, through openpyxl: it registers each column's style
        if "text" in what:
            first.append(sh.text(what["text"][0]) if len(frame) else None)
        elif "numbers" in what:
            first.append(sh.cell(int(what["numbers"][0]), fmt="0") if len(frame) else None)
        else:
            formula = "=" + (what["formulas"][0] if "formulas" in what else str(FIRST).join(what["parts"]))
            first.append(sh.cell(formula, fmt=display.excel_format(n)))  # its row is streamed over, values and all
    sh.append(first)
    last = FIRST + len(frame) - 1
    ref = f"A2:{get_column_letter(len(all_cols))}{max(last, FIRST)}"
    table = Table(displayName="Scenarios", ref=ref,
                  tableColumns=[TableColumn(id=i + 1, name=n) for i, n in enumerate(all_cols)])
    table.tableStyleInfo = TableStyleInfo(name="TableStyleLight9", showRowStripes=True)
    table.autoFilter = AutoFilter(ref=ref)  # the filter buttons on the header
    with warnings.catch_warnings():  # openpyxl warns in write-only mode even when the columns are given
        warnings.filterwarnings("ignore", "In write-only mode you must add table columns manually")
        sh.ws.add_table(table)
    over = book.letters["overhead_pct"]
    sh.ws.conditional_formatting.add(f"{over}{FIRST}:{over}{last}",
                                     FormulaRule(formula=[f"{over}{FIRST}>target_overhead_pct"], fill=OVER_FILL))
    meets = book.letters["meets_target"]
    sh.ws.conditional_formatting.add(f"{meets}{FIRST}:{meets}{last}",
                                     FormulaRule(formula=[f"NOT({meets}{FIRST})"], fill=OVER_FILL))


def scenario_columns(frame: pd.DataFrame) -> list[str]:
    """The frame's columns the Scenarios sheet holds: all but the plan globals (named cells)."""
    return [n for n in frame.columns if n not in GLOBALS]


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
    words = max((len(w) for w in re.findall(r'\[>=1E\+280\]"([^"]*)"', fmt)), default=0) if len(finite) < len(values) else 0
    if not len(finite):
        return max(words, 1)
    top = float(finite.max())
    section = fmt.split(";")[-1] if ",," not in fmt else "#,##0.00"  # scaled to TB, GB, MB: at most 999.99
    decimals = len(re.search(r"\.(0*)", section).group(1)) if "." in section else 0
    unit = max((len(u) for u in re.findall(r'"([^"]*)"', section)), default=0)
    unit += section.endswith("%")  # a percentage: the engine's whole percents, shown with a % sign
    digits = len(f"{min(top, 999.99) if ',,' in fmt else top:,.{decimals}f}")
    if section.endswith("%") and "[<" in fmt:  # small percentages show more decimals: 0.000020%, 0.0069%
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


def _scenario_rows(book: Book, styles: dict[str, int], advance=lambda n: None):
    """The Scenarios rows as SpreadsheetML, each column with the style openpyxl gave its first cell;
    ``advance(k)`` after each chunk of k rows."""
    columns = []
    for n, what in book.scenario_columns:
        letter = book.letters[n]
        columns.append(sheetxml.Column(letter, styles.get(letter, 0), **what))
    n = len(book.scenario_row)
    return sheetxml.rows_xml(columns, FIRST, n, advance)


# ---- Summary --------------------------------------------------------------------------------------

def _ref(book: Book, idx: int | None, column: str, row: str | None = None) -> str | None:
    """``column`` of scenario ``idx``, found by its key with an exact match (a number: nothing is read as
    a pattern), so sorting or filtering Scenarios changes nothing. ``row``: a cell already holding
    that match (``_row_of``), when many references share it."""
    if idx is None or idx not in book.scenario_row:
        return None
    if column in GLOBALS:
        return column  # a plan global: its defined name on Assumptions
    letter = book.letters[column]
    return f"INDEX(Scenarios!${letter}:${letter},{row or _row_of(book, idx)})"


def _row_of(book: Book, idx: int) -> str:
    """The formula giving the sheet row of scenario ``idx`` in Scenarios, however it is sorted."""
    key = book.letters[KEY]
    return f"MATCH({idx},Scenarios!${key}:${key},0)"


CHOICE_COLUMNS = ("tier", "strategy", "choice_usd", "tier_bought_GBps", "storage_usd_month", "lost_gpu_usd_month",
                  "total_usd", "overhead_pct")


def write_choice(sh: Sheet, book: Book) -> None:
    """Per summary line, its options, each a live reference to its Scenarios row: the Summary picks the
    least `choice_usd` among them by formula, so an edited price or $/GPU-hour changes the choice."""
    widths = (22, 10, 20, 12, 16, 16, 18, 12, 40)  # C: "not recommendable"
    sh.layout({k + 1: max(w, len(h) + 3) for k, (w, h) in enumerate(zip(widths, (*CHOICE_COLUMNS, "assumed prices")))},
              "A3")  # bold headers need a little more than their letters
    sh.append([sh.text("Choice: the options of each summary line, as the recommendation ranks them", font=TITLE)])
    sh.append([sh.text("choice_usd is an option's cost over the run (storage + GPU time lost) when it meets the "
                       "target, is feasible, durable and priced; unbounded otherwise. The Summary names the least; "
                       "rows are in the order ties are broken (smaller system, then lower overhead).")])
    tiers, strategies = book.frame["tier"], book.frame["strategy"]
    formats = {c: display.excel_format(c) for c in CHOICE_COLUMNS}
    for line, rows in zip(book.summary.to_dict("records"), book.report.candidates):
        sh.append([])
        title = sh.row + 1
        first, last = title + 2, title + 1 + len(rows)
        rank = f"$C${first}:$C${last}"
        usd = [_value(book, idx, "choice_usd") for idx in rows]
        best = min(usd, default=INF_CELL)
        chosen = 0 if best >= INF_AT else usd.index(best) + 1
        book.chosen.append(rows[chosen - 1] if chosen else None)
        sh.append([sh.text(f"{line['model']} / {line['sku']}", font=BOLD), sh.text("chosen:"),
                   sh.cell(f"=IF(MIN({rank})>={INFINITE_FROM.name},0,MATCH(MIN({rank}),{rank},0))", fmt="0",
                           result=chosen)])
        sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in (*CHOICE_COLUMNS, "assumed prices")])
        for idx in rows:
            sh.append([sh.text(str(tiers[idx])), sh.text(str(strategies[idx]))] + [
                _live(sh, book, idx, c, formats[c]) for c in CHOICE_COLUMNS[2:]]
                + [sh.text(", ".join(book.report.assumed.get(idx, [])) or "none")])
        book.choice_rows.append((title, first, last))


def _chosen(block: tuple[int, int, int], column: str) -> str:
    """`column` of the option a Choice block ranks first (its position: the block's 'chosen' cell,
    0 when none may be chosen)."""
    title, first, last = block
    letter = "ABCDEFGHI"[(*CHOICE_COLUMNS, "assumed prices").index(column)]
    return f"INDEX(Choice!${letter}${first}:${letter}${last},Choice!$C${title})"


def write_purchase(sh: Sheet, book: Book) -> None:
    """Per summary line, the purchase curve of its recommended option: monthly cost against the
    bandwidth bought over the steps a buyer chooses between, every figure a live reference."""
    head = ("tier", "strategy", "bought", "storage $/month", "lost GPU $/month", "total $/month", "optimum")
    sh.layout({k + 1: max(w, len(h) + 3) for k, (w, h) in enumerate(zip((22, 10, 14, 16, 16, 16, 12), head))}, "A3")
    sh.append([sh.text("Purchase: what each step of bandwidth costs, and what it saves", font=TITLE)])
    sh.append([sh.text("Per summary line, the steps a buyer chooses between (the recommended tier's family, or the "
                       "priced durable tiers of the SKU): storage rises with the bandwidth bought, lost GPU time "
                       "falls; the optimum is the step the recommendation ranks first.")])
    for line, curve in zip(book.summary.to_dict("records"), book.report.purchases):
        points = curve.points[curve.points["strategy"] == line["option_strategy"]]
        if points.empty:
            continue
        sh.append([])
        sh.append([sh.text(f"{line['model']} / {line['sku']}: {curve.what}, {line['option_strategy']}", font=BOLD)])
        sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in head])
        first, last = sh.row + 1, sh.row + len(points)
        ranks = ",".join(_ref(book, int(i), "choice_usd") for i in points.index)
        usd = {int(i): _value(book, int(i), "choice_usd") for i in points.index}
        least = min(usd.values())
        optimum = {i for i, v in usd.items() if v == least < INF_AT}  # ties: each is marked
        for idx, row in points.iterrows():
            idx = int(idx)
            mark = (f'=IF(AND({_ref(book, idx, "choice_usd")}<{INFINITE_FROM.name},'
                    f'{_ref(book, idx, "choice_usd")}=MIN({ranks})),"◀ optimum","")')
            sh.append([sh.text(str(row["tier"])), sh.text(str(row["strategy"])),
                       _live(sh, book, idx, "tier_bought_GBps", display.excel_format("tier_bought_GBps")),
                       _live(sh, book, idx, "storage_usd_month", USD),
                       _live(sh, book, idx, "lost_gpu_usd_month", USD),
                       _live(sh, book, idx, "total_usd_month", USD),
                       sh.cell(mark, result="◀ optimum" if idx in optimum else "")])
        del first, last


def write_summary(sh: Sheet, book: Book) -> None:
    head = ["model", "recipe", "sku", "checkpoint", "sync: tier", "overhead", "meets", "async: tier", "overhead",
            "meets", "recommended", "bought", "storage $/month", "lost GPU $/month", "total $ over the run",
            "rests on assumed prices", "runner-up at build (extra over the run)"]
    lines = []
    for line, pick, block in zip(book.summary.to_dict("records"), book.picks(), book.choice_rows):
        cells = [sh.text(line["model"]), sh.text(line["recipe"]), sh.text(line["sku"])]
        any_idx = pick["sync"] if pick["sync"] is not None else pick["async"]
        cells.append(_live(sh, book, any_idx, "ckpt_bytes", BYTES_EXCEL))
        for strategy in ("sync", "async"):
            tier = line.get(f"{strategy}_tier")
            label = "n/a" if not isinstance(tier, str) else tier if line.get(f"{strategy}_meets") else \
                f"none (closest: {tier})"
            cells += [sh.text(label), _live(sh, book, pick[strategy], "overhead_pct", PCT),
                      _live(sh, book, pick[strategy], "meets_target", BOOL_EXCEL)]
        none = f"Choice!$C${block[0]}=0"
        chosen = book.chosen[len(lines)]
        words = rule.NONE if chosen is None else rule.label(book.frame.at[chosen, "strategy"],
                                                             book.frame.at[chosen, "tier"])
        cells.append(sh.cell(f'=IF({none},"{rule.NONE}",{_chosen(block, "strategy")}&"{rule.JOIN}"&'
                             f'{_chosen(block, "tier")})', result=words))
        cells.append(sh.cell(f"=IF({none},NA(),{_chosen(block, 'tier_bought_GBps')})",
                             fmt=display.excel_format("tier_bought_GBps"),
                             result=math.nan if chosen is None else _value(book, chosen, "tier_bought_GBps")))
        for column in ("storage_usd_month", "lost_gpu_usd_month", "total_usd"):
            cells.append(sh.cell(f"=IF({none},NA(),{_chosen(block, column)})", fmt=USD,
                                 result=math.nan if chosen is None else _value(book, chosen, column)))
        cells.append(sh.cell(f'=IF({none},"",{_chosen(block, "assumed prices")})',
                             result="" if chosen is None else ", ".join(book.report.assumed.get(chosen, [])) or "none"))
        runner = line.get("runner_up_tier")
        cells.append(sh.text(f"{runner} (+{display.value(line['runner_up_extra_usd'], 'usd')})"
                             if isinstance(runner, str) else "none"))
        lines.append(cells)
    widths = {1: 20, 2: 18, 3: 18, 4: 13, 5: 16, 6: 11, 7: 8, 8: 16, 9: 11, 10: 8, 11: 26, 12: 12, 13: 15,
              14: 15, 15: 16, 16: 36, 17: 30}
    texts = {k: [c.value for cells in lines for c in cells[k - 1:k] if isinstance(c.value, str)
                 and not c.value.startswith("=")] + [head[k - 1] + " "] for k in widths}  # its names and bold header
    texts[11] += [rule.label(r["option_strategy"], r["option_tier"]) for r in book.summary.to_dict("records")
                  if isinstance(r.get("option_tier"), str)]  # what the recommendation formula shows, as built
    texts[16] += [", ".join(v) for v in book.report.assumed.values()]  # the assumed prices it may list
    sh.layout({k: min(max([w, *(len(t) + 2 for t in texts[k])]), 60) for k, w in widths.items()}, "A7")
    sh.append([sh.text("ckptreport — checkpoint plan", font=TITLE)])
    sh.append([sh.text(f"ckptreport {book.meta['ckptreport_version']}, built {book.meta['build_time']}, "
                       f"input hash {book.meta['input_hash'][:16]}")])
    sh.append([sh.text("Target overhead"),
               sh.cell("=target_overhead_pct", fmt=PCT, result=_value(book, None, "target_overhead_pct")),
               sh.text("(edit on Assumptions; every figure follows)")])
    sh.append([sh.cell(f'="At "&{_point_words(book)}&"{SUMMARY_WORDS}"', result=f"At {_point_text(book)}{SUMMARY_WORDS}")])
    sh.append([])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in head])
    first = sh.row + 1
    for cells in lines:
        sh.append(cells)
    last = sh.row
    for col in ("F", "I") if last >= first else ():
        sh.ws.conditional_formatting.add(f"{col}{first}:{col}{last}",
                                         FormulaRule(formula=[f"{col}{first}>target_overhead_pct"], fill=OVER_FILL))
    sh.append([])
    comp_first = _component_table(sh, book)
    tier_first = _tier_table(sh, book)
    _charts_summary(sh, comp_first, tier_first, sh.row + 2)


SUMMARY_WORDS = (". The recommended option is chosen by formula (Choice sheet): of the options meeting the target, "
                 "feasible, durable and priced, the least cost over the run. Edit a price and it follows. The "
                 "per-strategy tiers and the runner-up were chosen when the workbook was built.")


def _point_text(book: Book) -> str:
    """What ``_point_words`` shows as built: '1,024 GPUs, every 30 min'."""
    point = book.report.point
    return f"{point.gpus:,.0f} GPUs, every {round(point.interval_s / 60, 2):g} min"


def _point_words(book: Book) -> str:
    """A formula's words for the summary point, '1,024 GPUs, every 30 min', read from the plan's
    cells on Assumptions: edit the GPU count or the interval there and the words follow."""
    point = book.report.point
    return (f'TEXT({book.gpus_cell[point.gpus]},"#,##0")&" GPUs, every "&'
            f'ROUND({book.interval_cell[point.interval_s]}/SECONDS_PER_MINUTE,2)&" min"')  # no '30.' as Excel's "0.##"


def _result(name: str, v):
    """What a cell showing ``name`` holds for the engine's value ``v``: a percentage as a fraction,
    infinity as INF_CELL, numpy scalars as Python's (NaN: #N/A)."""
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, float, np.integer, np.floating)):
        return cell_value(fraction(name, float(v)))
    return v


def _value(book: Book, idx: int | None, column: str):
    """The engine's value of ``column`` in scenario ``idx``, as its cell holds it."""
    if column in GLOBALS:
        column_value = book.frame.at[book.frame.index[0], column]
    else:
        column_value = book.frame.at[idx, column]
    return _result(column, column_value)


def _live(sh: Sheet, book: Book, idx: int | None, column: str, fmt: str | None):
    """A live reference to ``column`` of scenario ``idx`` (by its key), its value cached."""
    ref = _ref(book, idx, column)
    return sh.cell(f"={ref}", fmt=fmt, result=_value(book, idx, column)) if ref else sh.text("n/a")


def _component_table(sh: Sheet, book: Book) -> tuple[int, int]:
    sh.append([sh.text("Checkpoint size by component (TB)", font=BOLD)])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in ("model", "weights", "master", "optimizer", "grads")])
    first = sh.row + 1
    seen = set()
    for line, pick in zip(book.summary.to_dict("records"), book.picks()):
        idx = pick["sync"] if pick["sync"] is not None else pick["async"]
        if line["model"] in seen or idx is None:
            continue
        seen.add(line["model"])
        sh.append([sh.text(line["model"])] + [
            sh.cell(f"={_ref(book, idx, c)}/{TERA.name}", fmt='0.00" TB"', result=_value(book, idx, c) / TERA)
            for c in ("weights_bytes", "master_bytes", "optimizer_bytes", "grads_bytes")])
    sh.append([])
    return first, sh.row - 1


def _tier_table(sh: Sheet, book: Book) -> tuple[int, int]:
    point = book.report.point
    sh.append([sh.text(f"Overhead by tier: {point.model} on {point.sku}", font=BOLD)])
    sh.append([sh.cell(f'="at "&{_point_words(book)}', result=f"at {_point_text(book)}")])  # the numbers follow the plan
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in ("tier", "sync overhead", "async overhead")])
    first = sh.row + 1
    for tier, by_strategy in book.report.tier_overview:
        sh.append([sh.text(tier)] + [_live(sh, book, by_strategy.get(s), "overhead_pct", PCT)
                                     for s in ("sync", "async")])
    return first, sh.row


def _charts_summary(sh: Sheet, comp: tuple[int, int], tiers: tuple[int, int], below: int) -> None:
    """Both charts side by side under the tables, within the printed width."""
    ws = sh.ws
    size = BarChart()
    size.type, size.grouping, size.overlap = "col", "stacked", 100
    size.title = "Checkpoint size by component"
    size.y_axis.title = "TB"
    size.add_data(Reference(ws, min_col=2, max_col=5, min_row=comp[0] - 1, max_row=comp[1]), titles_from_data=True)
    size.set_categories(Reference(ws, min_col=1, min_row=comp[0], max_row=comp[1]))
    size.width, size.height = 15, 9
    _show_axes(size)
    ws.add_chart(size, f"A{below}")
    bar = BarChart()
    bar.type = "bar"
    bar.title = "Overhead by tier (% of training time)"
    bar.x_axis.title = None
    bar.add_data(Reference(ws, min_col=2, max_col=3, min_row=tiers[0] - 1, max_row=tiers[1]), titles_from_data=True)
    bar.set_categories(Reference(ws, min_col=1, min_row=tiers[0], max_row=tiers[1]))
    bar.width, bar.height = 15, 9
    _show_axes(bar)
    ws.add_chart(bar, f"F{below}")


def _show_axes(chart) -> None:
    chart.x_axis.delete = False  # openpyxl >= 3.1 hides axes unless told
    chart.y_axis.delete = False


# ---- Cadence --------------------------------------------------------------------------------------

def _interval_dependents() -> list[str]:
    """Columns that change with the interval and that waste depends on, in evaluation order."""
    return _dependents_of({"interval_s"}, {"overhead_pct", "waste_pct"})


MIN_FMT = '0.0" min"'
SEC_FMT = '#,##0" s"'


def write_cadence(sh: Sheet, book: Book) -> None:
    """Per summary pick (sync and async), a block: the interval-dependent columns recomputed over a
    grid of intervals. The first block goes through openpyxl (it registers each cell's style); the
    others, the same shape, are streamed into the package with the first block's styles."""
    dependents = _interval_dependents()
    cols = ["interval_s", "interval (min)", *dependents, "optimum"]
    sh.layout({i + 1: max(15, len(c) + 3) for i, c in enumerate(cols)}, "A3")  # no clipped header
    sh.append([sh.text("Cadence: overhead and waste against the checkpoint interval", font=TITLE)])
    sh.append([sh.text("Each block recomputes the interval-dependent columns (same definitions as Scenarios) "
                       "for one scenario over a grid of intervals. Blue intervals are editable.")])
    letter = {n: get_column_letter(i + 1) for i, n in enumerate(cols)}
    letters = [letter[n] for n in cols]
    trees = {n: COLUMNS[n].fn(*(Var(p) for p in COLUMNS[n].params)) for n in dependents}
    formats = {n: display.excel_format(n) for n in dependents}
    charts: dict[str, list] = {}
    blocks = []
    start = sh.row + 1  # each block: a blank row, its title, the optimum, the header, the grid
    for pick in book.picks():
        for strategy in ("sync", "async"):
            idx = pick[strategy]
            if idx is None or idx not in book.scenario_row:
                continue
            rows = _cadence_block(book, idx, strategy, start, cols, letter, trees)
            blocks.append(rows)
            model, sku = book.frame.at[idx, "model"], book.frame.at[idx, "sku"]
            charts.setdefault(f"{model}|{sku}", []).append((strategy, start + 4, start + len(rows) - 1, start + 2))
            start += len(rows)
    if blocks:
        styles = {"title": {"font": BOLD}, "header": {"font": BOLD, "fill": HEADER_FILL}, "interval": {
            "fmt": SEC_FMT, "font": BLUE}, "min": {"fmt": MIN_FMT}, "pct": {"fmt": PCT}, "count": {"fmt": "#,##0"}, **{
            n: {"fmt": f} for n, f in formats.items()}}
        for row in blocks[0]:  # through openpyxl: the styles
            sh.append([_spec_cell(sh, v, styles.get(k, {})) for k, v in row])
        first_block = sh.row - len(blocks[0]) + 1
        book.streams["Cadence"] = sheetxml.Stream(sh.row + 1, lambda styles_of: _cadence_rows(
            blocks[1:], first_block, sh.row + 1, letters, styles_of))
    _charts_cadence(sh, charts, letter)


def _spec_cell(sh: Sheet, value, style: dict):
    """An openpyxl cell for a streamed cell's content: a Formula, text (always text), a number."""
    if isinstance(value, sheetxml.Formula):
        return sh.cell("=" + value, **style, **({"result": value.value} if value.has_value else {}))
    if isinstance(value, str):
        return sh.text(value, **style)
    return sh.cell(value, **style)


def _cadence_block(book: Book, idx: int, strategy: str, start: int, cols: list[str], letter: dict[str, str],
                   trees: dict) -> list[list[tuple[str, object]]]:
    """One block's rows from ``start``, each cell as (style key, content): text, a number, a Formula
    (with its result: the engine's columns evaluated at each grid interval)."""
    F = sheetxml.Formula
    row = book.frame.loc[idx, ["model", "sku", "tier"]]
    opt_row, first = start + 2, start + 4
    key = [("", "GPUs"), ("count", None), ("", KEY), ("", idx), ("", "Scenarios row"),
           ("", F(_row_of(book, idx), book.scenario_row[idx]))]
    at = f"${get_column_letter(4 + len(key))}${opt_row}"  # that last cell: the scenario's row, by key (sort-safe)
    key[1] = ("count", F(_ref(book, idx, "gpus", at), _value(book, idx, "gpus")))  # live: follows the plan's cell
    rows: list[list[tuple[str, object]]] = [
        [],
        [("title", f"{row['model']} / {row['sku']} / {row['tier']} / {strategy}")],
        [("", "optimal interval"), ("min", F(f"{_ref(book, idx, 'optimal_interval_s', at)}/SECONDS_PER_MINUTE",
                                             _value(book, idx, "optimal_interval_s") / SECONDS_PER_MINUTE)),
         ("", "waste there"), ("pct", F(f"{_ref(book, idx, 'optimal_waste_pct', at)}",
                                        _value(book, idx, "optimal_waste_pct"))), *key],
        [("header", c) for c in cols],
    ]
    grid = book.report.cadence[idx]  # the engine's columns at each grid interval
    results = {n: [_result(n, v) for v in grid[n]] for n in trees}
    least = min(results["waste_pct"])

    def leaf(n):  # this block's template: its own columns by row, the scenario's by reference
        return f"{letter[n]}\0" if n in letter else _ref(book, idx, n, at)

    templates = {n: render(tree, leaf) for n, tree in trees.items()}  # rendered once per block
    waste, last = letter["waste_pct"], first + len(CADENCE_GRID_MIN) - 1
    for k, minutes in enumerate(CADENCE_GRID_MIN):
        r = first + k
        rows.append([("interval", minutes * 60.0), ("min", F(f"A{r}/SECONDS_PER_MINUTE", float(minutes))),
                     *((n, F(t.replace("\0", str(r)), results[n][k])) for n, t in templates.items()),
                     ("", F(f'IF({waste}{r}=MIN(${waste}${first}:${waste}${last}),"◀ least waste","")',
                            "◀ least waste" if results["waste_pct"][k] == least else ""))])
    return rows


def _cadence_rows(blocks: list, first_block: int, start: int, letters: list[str], styles_of):
    """The later blocks as sheet XML, each row styled as the first block's row in its place."""
    styles = [styles_of(first_block + k) for k in range(len(blocks[0]))] if blocks else []
    number = start
    for rows in blocks:
        out = []
        for k, row in enumerate(rows):
            if row:
                out.append(sheetxml.row_xml(number, ((letter, styles[k].get(letter, 0), v)
                                                     for letter, (_, v) in zip(letters, row))))
            number += 1
        yield "".join(out).encode()


def _charts_cadence(sh: Sheet, charts: dict, letter: dict[str, str]) -> None:
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
        _show_axes(chart)
        for strategy, first, last, opt_row in blocks:
            xs = Reference(ws, min_col=2, min_row=first, max_row=last)
            ys = Reference(ws, min_col=waste_col, min_row=first, max_row=last)
            series = Series(ys, xs, title=f"{strategy} waste")
            chart.series.append(series)
            point = Series(Reference(ws, min_col=4, min_row=opt_row), Reference(ws, min_col=2, min_row=opt_row),
                           title=f"{strategy} optimum")
            point.marker.symbol = "diamond"
            point.marker.size = 9
            point.graphicalProperties.line.noFill = True
            chart.series.append(point)
        chart.width, chart.height = 16, 8
        ws.add_chart(chart, f"{get_column_letter(len(letter) + 2)}{anchor}")
        anchor += 17


# ---- Sensitivity ----------------------------------------------------------------------------------

SENSITIVITY_OUT = ("total_usd", "total_usd_month", "overhead_pct")


def _dependents_of(inputs: set[str], outputs) -> list[str]:
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


def write_sensitivity(sh: Sheet, book: Book) -> None:
    """The tornado of the headline option as a live table: per uncertain input its low and high
    (blue, editable) and the option's cost over the run, a month, and overhead at each end, with the
    swing. Below, one computation block per input: the columns that depend on it recomputed (same
    definitions as Scenarios) with the input at its low and its high, the rest read from the
    option's Scenarios row by its key. Edit a low or a high and the table follows."""
    from .. import uncertainty

    head = ["input", "where", "low", "today", "high", "over the run at low", "at high", "swing",
            "a month at low", "at high", "overhead at low", "at high"]
    sh.layout({1: 44, 2: 18, **{k: 16 for k in range(3, 13)}}, "A6")
    sh.append([sh.text("Sensitivity: which assumption moves the headline option's cost", font=TITLE)])
    point = book.report.point
    table = book.summary
    lines = table.index[(table["model"] == point.model) & (table["sku"] == point.sku)]
    idx = _index(table.at[lines[0], "option_index"]) if len(lines) else None
    if idx is None or idx not in book.scenario_row:
        sh.append([sh.text("The headline option is not on the Scenarios sheet: no sensitivity table.")])
        return
    row = book.frame.loc[[idx]]
    params = book.report.params
    ev = uncertainty.Evaluator(row, params)
    touched = [j for j in range(len(params)) if ev.touches(j)]
    option = rule.label(row["strategy"].iat[0], row["tier"].iat[0])
    sh.append([sh.text(f"{point.model} on {point.sku}: {option}, the option the summary recommends. Each input that "
                       "carries a range is moved alone from its low to its high (blue: edit them), the others held; "
                       "the computation blocks below recompute every column that depends on it.")])
    at = "$E$3"
    sh.append([sh.text("scenario"), sh.text(KEY), sh.cell(idx), sh.text("Scenarios row"),
               sh.cell("=" + _row_of(book, idx), result=book.scenario_row[idx])])
    if not touched:
        sh.append([sh.text("No input this option reads carries a range: give one a range (low, high) in the models "
                           "files to sweep it.")])
        return
    sh.append([])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in head])
    first = sh.row + 1
    base = uncertainty.base_values(params)[0]
    plans = []
    for j in touched:
        p = params[j]
        member = next(m for m, mask in zip(p.members, ev.masks[j]) if mask.any())
        values = np.repeat(base[None, :], 2, axis=0)
        values[:, j] = [p.low, p.high]
        deps = _dependents_of({member.input, *(d for d, _ in member.dependents)}, SENSITIVITY_OUT)
        cols = ev.run(values)
        plans.append({"p": p, "member": member, "low": member.low, "high": member.high, "deps": deps, "cols": cols,
                      "swing": abs(float(cols["total_usd"][1, 0] - cols["total_usd"][0, 0])),
                      "letter": {n: get_column_letter(i + 2) for i, n in enumerate(deps)}})
    # a tornado: the largest swing in the cost over the run first, as the terminal and the brief rank it
    plans.sort(key=lambda b: (-b["swing"] if math.isfinite(b["swing"]) else math.inf, b["p"].label))
    start = first + len(plans)  # each block: a blank row, its title, its header, low, high
    for k, b in enumerate(plans):
        b.update(row=first + k, low_row=start + 5 * k + 3, high_row=start + 5 * k + 4)
    for b in plans:  # the table, its outputs read from the blocks below
        name, member, r = b["member"].input, b["member"], b["row"]
        fmt = display.excel_format(name)
        label = b["p"].label if not b["p"].driver else f"{b['p'].driver}: {member.label}"
        cells = [sh.text(label), sh.text(f"{member.prov.file}:{member.prov.line}"),
                 sh.cell(_result(name, b["low"]), fmt=fmt, font=BLUE), _live(sh, book, idx, name, fmt),
                 sh.cell(_result(name, b["high"]), fmt=fmt, font=BLUE)]
        for column in SENSITIVITY_OUT:
            shown = PCT if column == "overhead_pct" else USD
            for e in (0, 1):
                ref = (f"{b['letter'][column]}{b['low_row' if e == 0 else 'high_row']}" if column in b["letter"]
                       else _ref(book, idx, column, at))
                cells.append(sh.cell(f"={ref}", fmt=shown, result=_result(column, b["cols"][column][e, 0])))
            if column == "total_usd":
                lo, hi = (float(b["cols"][column][e, 0]) for e in (0, 1))
                cells.append(sh.cell(f"=ABS(G{r}-F{r})", fmt=USD, result=_result(column, abs(hi - lo))))
        sh.append(cells)
    for b in plans:
        p, member, deps, letter = b["p"], b["member"], b["deps"], b["letter"]
        moved = {d for d, _ in member.dependents}
        trees = {n: COLUMNS[n].fn(*(Var(q) for q in COLUMNS[n].params)) for n in deps}
        sh.append([])
        sh.append([sh.text(f"computation: {p.label}" + (f" ({member.label})" if p.driver else ""), font=BOLD)])
        sh.append([sh.text("end", font=BOLD, fill=HEADER_FILL),
                   *(sh.text(n, font=BOLD, fill=HEADER_FILL) for n in deps)])
        for e, (end, cell, rr) in enumerate((("low", f"$C${b['row']}", b["low_row"]),
                                             ("high", f"$E${b['row']}", b["high_row"]))):
            def leaf(n, cell=cell, rr=rr):
                if n in letter:
                    return f"{letter[n]}{rr}"
                if n == member.input:
                    return cell
                if n in moved:  # an input derived from the swept one moves in proportion
                    return f"({_ref(book, idx, n, at)}*{cell}/{_ref(book, idx, member.input, at)})"
                return _ref(book, idx, n, at)

            sh.append([sh.text(end), *(sh.cell("=" + render(trees[n], leaf), fmt=display.excel_format(n),
                                               result=_result(n, b["cols"][n][e, 0])) for n in deps)])


# ---- Sources --------------------------------------------------------------------------------------

def write_sources(sh: Sheet, book: Book) -> None:
    sh.layout({1: 40, 2: 11, 3: 110, 4: 30}, "A8")
    sh.append([sh.text("Sources and provenance", font=TITLE)])
    for k, v in (("tool", f"ckptreport {book.meta['ckptreport_version']}"), ("input hash", book.meta["input_hash"]),
                 ("built", book.meta["build_time"] + " (SOURCE_DATE_EPOCH when set)"),
                 ("scenarios", f"{book.report.rows:,} rows; all in scenarios.parquet")):
        sh.append([sh.text(k, font=BOLD), sh.text(v)])
    for note in book.notes:
        sh.append([sh.text("note", font=BOLD), sh.text(note)])
    sh.append([])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in ("figure", "basis", "source", "from")])
    for (section, name, fld), prov in sorted(book.inputs.prov.items()):
        where = f"{prov.file}:{prov.line}" if prov.line else prov.file
        sh.append([sh.text(f"{section}.{name}.{fld}" if section != "plan" else f"plan.{fld}"), sh.text(prov.basis),
                   sh.text(prov.source or "(no source given)"), sh.text(where)])
    for name, recipe in book.inputs.recipes.items():
        place = book.inputs.places[(RECIPES, name)]
        sh.append([sh.text(f"recipes.{name}"), sh.text("spec" if recipe.source else "input"),
                   sh.text(recipe.source or "(no source given)"), sh.text(f"{place.file}:{place.line}")])


# ---- Checks and Cover -----------------------------------------------------------------------------

SIZE_PARTS = ["weights_bytes", "master_bytes", "optimizer_bytes", "grads_bytes", "consolidated_bytes", "other_bytes"]
STALL_PARTS = ["checkpoint_cost_s", "backpressure_s", "interference_s"]


def write_checks(sh: Sheet, book: Book) -> None:
    """Checks a model reviewer runs: inputs in range, totals that reconcile in every scenario (a formula
    overwritten by a number shows here), the rows all there. Each is TRUE or FALSE, live."""
    sh.layout({1: 70, 2: 10, 3: 80}, "A4")
    sh.append([sh.text("Checks: each TRUE when the model is consistent", font=TITLE)])
    sh.append([sh.text("They recompute with every edit; the Cover shows how many pass.")])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in ("check", "passes", "what a FALSE means")])
    n = len(book.scenario_row)
    last = FIRST + max(n, 1) - 1

    def col(name: str) -> str:
        return f"Scenarios!${book.letters[name]}${FIRST}:${book.letters[name]}${last}"

    def reconcile(total: str, parts: list[str]) -> str:
        diff = "-".join([col(total), *(col(p) for p in parts)])
        return f"=SUMPRODUCT(ABS({diff}))<=1E-9*SUMPRODUCT(ABS({col(total)}))"

    rows = book.frame.loc[list(book.scenario_row)]

    def reconciles(total: str, parts: list[str]) -> bool:  # the same sums, on the engine's values
        diff = rows[total].to_numpy(float) - sum(rows[p].to_numpy(float) for p in parts)
        return bool(np.abs(diff).sum() <= 1e-9 * np.abs(rows[total].to_numpy(float)).sum())

    numbers = [(name, v) for _, name, v in book.typed if isinstance(v, (int, float)) and not isinstance(v, bool)]

    checks = [
        ("Every input on Assumptions is 0 or more", '=COUNTIF(Assumptions!$C:$C,"<0")=0',
         "an input was typed negative: find it with a filter on Assumptions column C", all(not v < 0 for _, v in numbers)),
        ("Every percentage input is at most 100%",
         '=COUNTIFS(Assumptions!$D:$D,"%",Assumptions!$C:$C,">1")=0',
         "a percentage above 100% (type 1.5% for one and a half percent: a bare 1.5 is 150%)",
         all(not v > 1 for name, v in numbers if display.unit_of(name) == "pct")),
        ("Checkpoint size = weights + master + optimizer + gradients, in every scenario",
         reconcile("ckpt_bytes", SIZE_PARTS), "a Scenarios formula was overwritten (sizes), or a column was edited by hand",
         reconciles("ckpt_bytes", SIZE_PARTS)),
        ("Stall = checkpoint cost + back-pressure + interference, in every scenario",
         reconcile("stall_s", STALL_PARTS), "a Scenarios formula was overwritten (times), or a column was edited by hand",
         reconciles("stall_s", STALL_PARTS)),
        (f"Scenarios holds its {n:,} keyed rows", f"=COUNT({col(KEY)})={n}",
         "rows were deleted from (or added to) Scenarios; rebuild to restore them", True),
    ]
    first = sh.row + 1
    for what, formula, means, passes in checks:
        sh.append([sh.text(what), sh.cell(formula, fmt=BOOL_EXCEL, result=passes), sh.text(means)])
    book.checks = (first, sh.row)
    book.passing = sum(passes for *_, passes in checks)


def write_cover(sh: Sheet, book: Book) -> None:
    """What the workbook answers and how to use it, and whether its checks pass."""
    first, last = book.checks
    sh.layout({1: 28, 2: 110}, None, fit=True)
    sh.append([sh.text("Checkpoint plan: what it costs to write training checkpoints, and what storage to buy",
                       font=TITLE)])
    sh.append([sh.text(f"ckptreport {book.meta['ckptreport_version']}, built {book.meta['build_time']}, "
                       f"input hash {book.meta['input_hash'][:16]}")])
    sh.append([])
    passes, count = f"COUNTIF(Checks!$B${first}:$B${last},TRUE)", last - first + 1
    words = f"{book.passing} of {count} checks pass" + ("" if book.passing == count else ": see the Checks sheet")
    sh.append([sh.text("Checks", font=BOLD),
               sh.cell(f'={passes}&" of {count} checks pass"&IF({passes}={count},"",'
                       '": see the Checks sheet")', font=BOLD, result=words)])
    for label, text in (
        ("What it answers", "How big each checkpoint is, how long it takes to write, how much of the run it "
                            "stalls, how often to take one, what that costs, and which storage and bandwidth to buy."),
        ("Start here", "Summary: per model and SKU, the cheapest durable tier meeting the target and the "
                       "recommended option with its costs and runner-up."),
        ("Change an assumption", "Assumptions: blue cells are inputs (validated; the sheets are protected "
                                 "without a password so formulas are not overwritten by mistake). Every figure "
                                 "recomputes."),
        ("Sort and filter", "Scenarios: one row per scenario, keyed by scenario_id; sorting or filtering it "
                            "changes nothing elsewhere."),
        ("Units", "Names carry units: _bytes bytes, _s seconds, _GBps GB/s (1 GB = 1e9 bytes), _pct a percentage "
                  "(stored as a fraction: type 1% or 0.01), _usd US dollars. Infinity reads as words (unbounded, unreachable)."),
        ("Prices", "Each price on Assumptions has a date, a region and a source; a price nobody published is "
                   "#N/A, and a recommendation that rests on an assumed price says so."),
        ("Sources", "Sources: the citation of every figure; Checks: the model's own consistency checks."),
        ("What it leaves out", "See the README, 'How the model works, and what it leaves out'."),
    ):
        sh.append([sh.text(label, font=BOLD), sh.text(text)])


# ---- the workbook ---------------------------------------------------------------------------------

def write(path, report: Report, meta: dict[str, str], when: dt.datetime | None = None,
          progress=lambda _: None) -> list[str]:
    """Write the workbook to ``path``; returns notes (e.g. rows left out of Scenarios). ``progress``
    counts the Scenarios rows as they are written (the long part)."""
    from ..progress import task

    book = Book(report, meta, notes=[report.workbook_note] if report.workbook_note else [])
    wb = Workbook(write_only=True)
    sheets = {title: Sheet(wb, title) for title in SHEETS}  # created in the order they are shown
    write_assumptions(sheets["Assumptions"], book)  # first: it fixes the cells the others refer to
    write_scenarios(sheets["Scenarios"], book)
    write_choice(sheets["Choice"], book)
    write_purchase(sheets["Purchase"], book)
    write_summary(sheets["Summary"], book)
    write_cadence(sheets["Cadence"], book)
    write_sensitivity(sheets["Sensitivity"], book)
    write_sources(sheets["Sources"], book)
    write_checks(sheets["Checks"], book)
    write_cover(sheets["Cover"], book)  # last: it counts the checks
    for title, sheet in sheets.items():
        sheet.print_marks(meta)
        if title != "Scenarios":  # formulas locked, inputs (blue) open; no password. Scenarios stays sortable
            protect = sheet.ws.protection
            protect.sheet, protect.formatColumns, protect.formatRows = True, False, False
    wb.calculation.fullCalcOnLoad = False  # every formula carries its result: nothing to recalculate on open
    wb.save(path)
    with task(progress, "workbook rows", len(book.scenario_row)) as advance:
        book.streams["Scenarios"] = sheetxml.Stream(FIRST, lambda styles_of: _scenario_rows(book, styles_of(FIRST),
                                                                                           advance))
        sheetxml.rewrite(Path(path), when or dt.datetime(1980, 1, 1, tzinfo=dt.UTC), book.streams,
                         {title: sheet.values for title, sheet in sheets.items() if sheet.values})
    return book.notes
