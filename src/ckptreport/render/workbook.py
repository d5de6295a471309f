"""The workbook: a live spreadsheet model of the scenario frame.

Sheets: Summary (headline per model and SKU, charts), Assumptions (every input as a blue cell with its
unit, basis and source; defined names for the plan's globals), Scenarios (the cross product as an
Excel table: input columns look up Assumptions, derived columns are formulas printed from the same
column definitions the engine evaluates), Cadence (overhead and waste against interval, optimum
marked, charts), Sources (every citation, and the build's provenance).

Strings from inputs are always written as text cells, never as formulas. Infinity (an unbounded
tier, an unreachable target) is written as 1E+300 and displayed as 'unbounded' / 'unreachable'.
"""

from __future__ import annotations

import datetime as dt
import math
import os
import re
import warnings
import zipfile
from dataclasses import dataclass, field

import pandas as pd
from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.chart import BarChart, Reference, ScatterChart, Series
from openpyxl.formatting.rule import FormulaRule
from openpyxl.styles import Font, PatternFill
from openpyxl.utils import get_column_letter
from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.table import Table, TableColumn, TableStyleInfo

from ..columns import COLUMNS, INPUTS, SOURCE_COLUMNS
from ..engine import global_inputs, model_inputs, recipe_inputs, sku_inputs, tier_inputs
from ..expr import Var, render
from ..load import Inputs, input_provenance
from ..summary import summary as summary_table

BIG = 1e290  # stands for infinity in an input cell (x 1e9 for bytes/s must not overflow)
FIRST = 3  # first data row of the Scenarios table (row 1: note, row 2: header)
ENTITY_KINDS = (("models", "model"), ("recipes", "recipe"), ("skus", "sku"), ("tiers", "tier"))
ENTITY_COLUMNS = {
    "models": ("params", "active_params", "tokens", "sharding", "tp", "pp", "layers", "hidden", "vocab"),
    "recipes": ("weights_bytes_per_param", "master_bytes_per_param", "optimizer_bytes_per_param",
                "grads_bytes_per_param"),
    "skus": ("gpus_per_node", "peak_TFLOPS", "d2h_gpu_GBps", "d2h_node_GBps", "host_memory_bytes",
             "storage_nic_GBps", "nvme_write_GBps", "nvme_capacity_bytes", "usd_per_gpu_hour", "gpu_mtbf_s"),
    "tiers": ("tier_kind", "tier_write_GBps", "tier_node_write_GBps", "usd_per_tb_month"),
}
GLOBALS = ("target_overhead_pct", "mfu_pct", "restart_s", "retention", "buffers", "writer_GBps", "sync_fixed_s",
           "async_fixed_s", "tiered_fixed_s", "async_slowdown_pct")
MEASURED_FIELD = {"d2h_gpu_GBps": "d2h_per_gpu", "d2h_node_GBps": "d2h_per_node", "nvme_write_GBps": "local_nvme.write",
                  "tier_node_write_GBps": "per_node_write", "tier_write_GBps": "write"}
CADENCE_GRID_MIN = (1, 2, 3, 5, 7, 10, 15, 20, 25, 30, 40, 50, 60, 75, 90, 120, 150, 180, 240, 300, 360,
                    480, 600, 720)

BYTES_FMT = '[>=1000000000000]#,##0.00,,,," TB";[>=1000000000]#,##0.00,,," GB";#,##0.00,," MB"'
FORMATS = {
    "bytes": BYTES_FMT,
    "s": '[<1]0.000" s";#,##0.0" s"',
    "GBps": '[>=1E+280]"unbounded";#,##0.00" GB/s"',
    "pct": '0.000"%"',
    "usd": '"$"#,##0',
    "days": '#,##0.0" d"',
    "count": "#,##0",
    "B/param": '0" B/param"',
    "TFLOPS": '#,##0.0" TFLOPS"',
}
COLUMN_FORMATS = {
    "required_write_GBps": '[>=1E+280]"unreachable";#,##0.00" GB/s"',
    "required_node_write_GBps": '[>=1E+280]"unreachable";#,##0.00" GB/s"',
    "usd_per_gpu_hour": '"$"0.000',
    "usd_per_tb_month": '"$"#,##0.00',
    "storage_usd_month": '"$"#,##0.00',
    "interval_s": '#,##0" s"',
    "gpu_mtbf_s": '#,##0" s"',
    "cluster_mtbf_s": '#,##0" s"',
    "tier_share_GBps": '[>=1E+280]"unbounded";#,##0.000" GB/s"',
}
PLAIN_FORMATS = {  # Assumptions: the unit stands in its own column
    "bytes": "#,##0", "s": "#,##0.0##", "GBps": '[>=1E+280]"unbounded";#,##0.00##', "pct": "0.0##",
    "usd": "#,##0.00##", "count": "#,##0", "B/param": "0.##", "TFLOPS": "#,##0.0",
}
UNIT_WORDS = {"bytes": "bytes", "s": "s", "GBps": "GB/s", "pct": "%", "usd": "$", "days": "days",
              "count": "", "B/param": "B/param", "TFLOPS": "TFLOP/s", "label": "", "bool": ""}

BLUE = Font(color="0000FF")
BOLD = Font(bold=True)
TITLE = Font(bold=True, size=14)
HEADER_FILL = PatternFill("solid", fgColor="DDEBF7")
OVER_FILL = PatternFill("solid", fgColor="F8CBAD")


def unit(name: str) -> str:
    return COLUMNS[name].unit if name in COLUMNS else INPUTS[name].unit if name in INPUTS else "label"


def number_format(name: str) -> str | None:
    return COLUMN_FORMATS.get(name) or FORMATS.get(unit(name))


def cell_value(v):
    """A number for a cell: infinity as BIG."""
    if isinstance(v, float) and math.isinf(v):
        return BIG if v > 0 else -BIG
    return v


class Sheet:
    """A write-only sheet with small helpers: text is always text, inputs blue, formats by unit."""

    def __init__(self, wb: Workbook, title: str, widths: dict[int, float], freeze: str | None = None,
                 landscape: bool = True):
        """Write-only sheets write their layout first: widths, panes and page setup are set here."""
        self.ws = wb.create_sheet(title)
        self.row = 0
        for col, w in widths.items():
            self.ws.column_dimensions[get_column_letter(col)].width = w
        if freeze:
            self.ws.freeze_panes = freeze
        if landscape:
            self.ws.page_setup.orientation = "landscape"
            self.ws.page_setup.fitToWidth = 1
            self.ws.page_setup.fitToHeight = 0
            self.ws.sheet_properties.pageSetUpPr.fitToPage = True

    def cell(self, value, *, fmt: str | None = None, font=None, fill=None, align=None, text: bool = False):
        c = WriteOnlyCell(self.ws, value=value)
        if text or (isinstance(value, str) and not value.startswith("=")):
            c.data_type = "s"  # set after the value: a string from the inputs stays text, even '=...'

        if fmt:
            c.number_format = fmt
        if font:
            c.font = font
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
        return self.row



class Rows:
    """Streams the rows of a large sheet through one reusable cell per column.

    openpyxl's write-only writer serialises each cell as soon as it is yielded, so a styled cell
    per column can be refilled for every row; this skips the per-cell type sniffing and style
    lookups that make a 100,000-row sheet slow. Each value comes with its type: 'n' number, 'f'
    formula, 's' text (so a string from the inputs is never a formula), 'b' boolean. Cells built
    with ``Sheet.cell`` (headers, notes) pass through unchanged.
    """

    def __init__(self, sheet: Sheet, formats: list[str | None], fonts: list | None = None):
        self.protos = []
        for i, fmt in enumerate(formats):
            proto = WriteOnlyCell(sheet.ws)
            if fmt:
                proto.number_format = fmt
            if fonts and fonts[i]:
                proto.font = fonts[i]
            self.protos.append(proto)
        sheet.ws._values_to_row = self._cells

    def _cells(self, values, row_idx):
        for col_idx, item in enumerate(values, 1):
            if item is None:
                continue
            if isinstance(item, tuple):
                cell = self.protos[col_idx - 1]
                cell._value, cell.data_type = item
            else:
                cell = item
            cell.row, cell.column = row_idx, col_idx
            yield cell


def F(formula: str) -> tuple[str, str]:
    return (formula, "f")


def N(value: float) -> tuple[float, str]:
    return (cell_value(float(value)), "n")


def S(value: str) -> tuple[str, str]:
    return (str(value), "s")


@dataclass
class Book:
    inputs: Inputs
    frame: pd.DataFrame
    meta: dict[str, str]
    entity_row: dict[tuple[str, str], int] = field(default_factory=dict)  # (kind, name) -> first row
    global_cell: dict[str, str] = field(default_factory=dict)
    gpus_cell: dict[float, str] = field(default_factory=dict)
    interval_cell: dict[float, str] = field(default_factory=dict)
    letters: dict[str, str] = field(default_factory=dict)  # Scenarios column -> letter
    scenario_row: dict[int, int] = field(default_factory=dict)  # frame index -> sheet row
    notes: list[str] = field(default_factory=list)
    summary: pd.DataFrame = field(init=False)  # the headline table, computed once
    picks: list[dict[str, int | None]] = field(init=False)  # per summary line: frame index per strategy

    def __post_init__(self):
        self.summary = summary_table(self.frame, self.inputs)
        self.picks = _summary_picks(self.frame, self.summary)


# ---- Assumptions ----------------------------------------------------------------------------------

def _dims(inputs: Inputs, frame: pd.DataFrame) -> dict[str, list[str]]:
    return {kind: list(frame[col].cat.categories) for kind, col in ENTITY_KINDS}


def _entity_values(inputs: Inputs, kind: str, name: str) -> dict:
    entity = inputs.section(kind)[name]
    return {"models": model_inputs, "recipes": recipe_inputs, "skus": sku_inputs, "tiers": tier_inputs}[kind](entity)


def _prov_cells(sh: Sheet, prov) -> list:
    if prov is None:
        return [sh.text("input"), sh.text(""), sh.text("")]
    where = f"{prov.file}:{prov.line}" if prov.line else prov.file
    return [sh.text(prov.basis), sh.text(prov.source or ""), sh.text(where)]


def write_assumptions(wb: Workbook, book: Book) -> None:
    sh = Sheet(wb, "Assumptions", {1: 24, 2: 26, 3: 18, 4: 9, 5: 16, 6: 90, 7: 30, 8: 12, 9: 14, 10: 20}, "A4")
    sh.append([sh.text("Assumptions", font=TITLE)])
    sh.append([sh.text("Blue cells are inputs: change one and every dependent figure recomputes. "
                       "Values are in the units beside them; the source says where each comes from.")])
    sh.append([])
    header = ["key", "figure", "value", "unit", "basis", "source", "from", "spec", "measured / spec", "check"]
    inputs, plan = book.inputs, book.inputs.plan
    sh.append([sh.text("Plan", font=BOLD)])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in header])
    globals_ = global_inputs(plan)
    for name in GLOBALS:
        prov = input_provenance(inputs, name)
        row = sh.append([sh.text("plan"), sh.text(name), sh.cell(cell_value(globals_[name]), fmt=PLAIN_FORMATS[unit(name)],
                                                                  font=BLUE),
                         sh.text(UNIT_WORDS[unit(name)]), *_prov_cells(sh, prov)])
        book.global_cell[name] = f"Assumptions!$C${row}"
    for i, q in enumerate(plan.gpus):
        row = sh.append([sh.text("plan.gpus"), sh.text(f"gpus[{i}]"), sh.cell(q.value, fmt=PLAIN_FORMATS["count"], font=BLUE),
                         sh.text("GPUs"), sh.text("input"), sh.text("the plan's cluster sizes"), sh.text("plan.yaml")])
        book.gpus_cell[q.value] = f"Assumptions!$C${row}"
    for i, q in enumerate(plan.intervals):
        row = sh.append([sh.text("plan.intervals"), sh.text(f"interval_s[{i}]"),
                         sh.cell(q.value, fmt=PLAIN_FORMATS["s"], font=BLUE), sh.text("s"), sh.text("input"),
                         sh.text(f"the plan's cadences ({q.text})"), sh.text("plan.yaml")])
        book.interval_cell[q.value] = f"Assumptions!$C${row}"
    dims = _dims(inputs, book.frame)
    for kind, _ in ENTITY_KINDS:
        for name in dims[kind]:
            sh.append([])
            sh.append([sh.text(f"{kind}.", font=BOLD), sh.text(name, font=BOLD)])
            sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in header])
            values = _entity_values(inputs, kind, name)
            who = {kind[:-1] if kind != "recipes" else "recipe": name}
            for k, col in enumerate(ENTITY_COLUMNS[kind]):
                v = values[col]
                if isinstance(v, float) and math.isnan(v):
                    value = sh.cell("=NA()", font=BLUE)  # unknown: #N/A, never 0
                elif isinstance(v, str):
                    value = sh.text(v, font=BLUE)
                else:
                    value = sh.cell(cell_value(v), fmt=PLAIN_FORMATS.get(unit(col)), font=BLUE)
                prov = input_provenance(inputs, col, **who) if col not in _RECIPE_COLUMNS or kind == "recipes" \
                    else None
                m = book.inputs.measured.get((kind, name, MEASURED_FIELD.get(col, "")))
                extra = [] if m is None else [
                    sh.cell(m.spec / 1e9 if m.spec else "n/a", fmt=PLAIN_FORMATS["GBps"]),
                    sh.cell(m.ratio, fmt="0%") if m.ratio else sh.text("n/a"),
                    sh.text(m.flag or "ok", fill=OVER_FILL if m.flag else None)]
                row = sh.append([sh.text(f"{kind}.{name}"), sh.text(col), value, sh.text(UNIT_WORDS[unit(col)]),
                                 *_prov_cells(sh, prov), *extra])
                if k == 0:
                    book.entity_row[(kind, name)] = row
    for name, ref in book.global_cell.items():
        wb.defined_names[name] = DefinedName(name, attr_text=ref)


_RECIPE_COLUMNS = set(ENTITY_COLUMNS["recipes"])


# ---- Scenarios ------------------------------------------------------------------------------------

def _keep_rows(book: Book, limit: int) -> pd.DataFrame:
    """All rows if they fit; else the lowest-waste intervals of each group, always with the summary rows."""
    frame = book.frame
    if len(frame) <= limit:
        return frame
    keys = ["model", "recipe", "sku", "tier", "strategy", "gpus"]
    groups = frame.groupby(keys, observed=True, sort=False).ngroups
    per_group = max(1, limit // max(groups, 1))
    rank = frame.groupby(keys, observed=True, sort=False)["waste_pct"].rank(method="first")
    keep = rank <= per_group
    must = frame.index.isin(_summary_index(book))
    if (keep | must).sum() > limit:  # more groups than rows: the lowest waste overall
        best = frame[keep & ~must].sort_values("waste_pct", kind="stable").head(max(limit - must.sum(), 0))
        keep = frame.index.isin(best.index)
    kept = frame[keep | must]
    book.notes.append(
        f"Scenarios holds {len(kept):,} of {len(frame):,} rows (workbook_rows = {limit:,}): the "
        f"{per_group} lowest-waste interval(s) of each model x recipe x SKU x tier x strategy x GPU count, "
        "and the summary's rows. Every row is in scenarios.parquet.")
    return kept


def _summary_index(book: Book) -> list[int]:
    return [i for picks in book.picks for i in picks.values() if i is not None]


def _scenario_formulas(book: Book, helper: dict[str, str]) -> dict[str, str]:
    """A formula template per Scenarios column, with '{r}' where the row number goes."""
    out: dict[str, str] = {}
    for kind, _ in ENTITY_KINDS:
        for k, col in enumerate(ENTITY_COLUMNS[kind]):
            out[col] = f"=INDEX(Assumptions!$C:$C,{helper[kind]}{{r}}+{k})"
    for name in GLOBALS:
        out[name] = f"={name}"
    for name, col in COLUMNS.items():
        tree = col.fn(*(Var(p) for p in col.params))
        out[name] = "=" + render(tree, lambda n: f"{book.letters[n]}{{r}}")
    return out


def write_scenarios(wb: Workbook, book: Book, limit: int) -> None:
    frame = _keep_rows(book, limit)
    names = list(book.frame.columns)
    helpers = {kind: f"{kind[:-1]}_at" for kind, _ in ENTITY_KINDS}
    all_cols = names + list(helpers.values())
    book.letters = {n: get_column_letter(i + 1) for i, n in enumerate(all_cols)}
    sh = Sheet(wb, "Scenarios", {i + 1: max(10, min(24, len(n) + 3)) for i, n in enumerate(all_cols)},
               f"F{FIRST}")
    for h in helpers.values():
        sh.ws.column_dimensions[book.letters[h]].hidden = True
    helper_letter = {kind: book.letters[h] for kind, h in helpers.items()}
    formulas = _scenario_formulas(book, helper_letter)
    note = book.notes[-1] if len(frame) < len(book.frame) else (
        f"All {len(frame):,} scenarios. Input columns look up Assumptions; the others are formulas.")
    sh.append([sh.text(note, font=BOLD)])
    sh.append([sh.text(n) for n in all_cols])
    text_cols = {"model", "recipe", "sku", "tier", "strategy"} | set(SOURCE_COLUMNS)
    column_of = dict(ENTITY_KINDS)
    Rows(sh, [None if n in text_cols else number_format(n) for n in all_cols])
    templates = []
    for n in names:
        if n in text_cols or n in ("gpus", "interval_s"):
            templates.append(None)
        else:
            templates.append(formulas[n].split("{r}"))
    for kind in helpers:
        templates.append(f'=MATCH("{kind}."&{book.letters[column_of[kind]]}{{r}},Assumptions!$A:$A,0)'.split("{r}"))
    cols = {n: frame[n].to_numpy() for n in names}
    text = {n: cols[n].astype(str) for n in names if n in text_cols}
    gpus_ref = {k: "=" + v for k, v in book.gpus_cell.items()}
    interval_ref = {k: "=" + v for k, v in book.interval_cell.items()}
    for i, idx in enumerate(frame.index):
        r = FIRST + i
        rs = str(r)
        book.scenario_row[idx] = r
        row = []
        for j, n in enumerate(names):
            if n in text:
                row.append((text[n][i], "s"))
            elif n == "gpus":
                row.append((gpus_ref[float(cols[n][i])], "f"))
            elif n == "interval_s":
                row.append((interval_ref[float(cols[n][i])], "f"))
            else:
                row.append((rs.join(templates[j]), "f"))
        for t in templates[len(names):]:
            row.append((rs.join(t), "f"))
        sh.append(row)
    last = FIRST + len(frame) - 1
    ref = f"A2:{get_column_letter(len(all_cols))}{max(last, FIRST)}"
    table = Table(displayName="Scenarios", ref=ref,
                  tableColumns=[TableColumn(id=i + 1, name=n) for i, n in enumerate(all_cols)])
    table.tableStyleInfo = TableStyleInfo(name="TableStyleLight9", showRowStripes=True)
    with warnings.catch_warnings():  # openpyxl warns in write-only mode even when the columns are given
        warnings.filterwarnings("ignore", "In write-only mode you must add table columns manually")
        sh.ws.add_table(table)
    over = book.letters["overhead_pct"]
    sh.ws.conditional_formatting.add(f"{over}{FIRST}:{over}{last}",
                                     FormulaRule(formula=[f"{over}{FIRST}>target_overhead_pct"], fill=OVER_FILL))
    meets = book.letters["meets_target"]
    sh.ws.conditional_formatting.add(f"{meets}{FIRST}:{meets}{last}",
                                     FormulaRule(formula=[f"NOT({meets}{FIRST})"], fill=OVER_FILL))



# ---- Summary --------------------------------------------------------------------------------------

def _summary_picks(f: pd.DataFrame, table: pd.DataFrame) -> list[dict[str, int | None]]:
    """Per summary line: the frame index of the row shown for each strategy."""
    picks = []
    for _, line in table.iterrows():
        base = ((f["model"] == line["model"]) & (f["sku"] == line["sku"]) & (f["recipe"] == line["recipe"])
                & (f["gpus"] == line["gpus"]) & (f["interval_s"] == line["interval_s"]))
        out: dict[str, int | None] = {}
        for strategy in ("sync", "async"):
            tier = line.get(f"{strategy}_tier")
            tier = tier if isinstance(tier, str) else line.get(f"{strategy}_closest_tier")
            hit = f.index[base & (f["strategy"] == strategy) & (f["tier"] == tier)] if isinstance(tier, str) else []
            out[strategy] = int(hit[0]) if len(hit) else None
        picks.append(out)
    return picks


def _ref(book: Book, idx: int | None, column: str, absolute: bool = True) -> str | None:
    if idx is None or idx not in book.scenario_row:
        return None
    r = book.scenario_row[idx]
    return f"Scenarios!${book.letters[column]}${r}" if absolute else f"Scenarios!{book.letters[column]}{r}"


def write_summary(wb: Workbook, book: Book) -> None:
    sh = Sheet(wb, "Summary", {1: 20, 2: 18, 3: 18, 4: 13, 5: 16, 6: 11, 7: 8, 8: 16, 9: 11, 10: 8, 11: 15,
                               12: 15}, "A7")
    plan = book.inputs.plan
    s = plan.summary
    gpus = (s.gpus if s else plan.gpus[0]).value
    interval = (s.interval if s else plan.intervals[0]).value
    sh.append([sh.text("ckptreport — checkpoint plan", font=TITLE)])
    sh.append([sh.text(f"ckptreport {book.meta['ckptreport_version']}, built {book.meta['build_time']}, "
                       f"input hash {book.meta['input_hash'][:16]}")])
    sh.append([sh.text("Target overhead"), sh.cell("=target_overhead_pct", fmt=FORMATS["pct"]),
               sh.text("(edit on Assumptions; every figure follows)")])
    sh.append([sh.text(f"At {gpus:,.0f} GPUs, every {interval / 60:g} min. The tier is the cheapest durable one "
                       "that met the target when the workbook was built; its figures are live.")])
    sh.append([])
    head = ["model", "recipe", "sku", "checkpoint", "sync: tier", "overhead", "meets", "async: tier", "overhead",
            "meets", "run $ (async)", "sync stalls $"]
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in head])
    table, picks = book.summary, book.picks
    first = sh.row + 1
    for (_, line), pick in zip(table.iterrows(), picks):
        cells = [sh.text(str(line["model"])), sh.text(str(line["recipe"])), sh.text(str(line["sku"]))]
        any_idx = pick["sync"] if pick["sync"] is not None else pick["async"]
        cells.append(_live(sh, _ref(book, any_idx, "ckpt_bytes"), BYTES_FMT))
        for strategy in ("sync", "async"):
            tier = line.get(f"{strategy}_tier")
            label = tier if isinstance(tier, str) else f"none (closest: {line.get(f'{strategy}_closest_tier')})"
            cells += [sh.text(label), _live(sh, _ref(book, pick[strategy], "overhead_pct"), FORMATS["pct"]),
                      _live(sh, _ref(book, pick[strategy], "meets_target"), None)]
        cells.append(_live(sh, _ref(book, pick["async"], "run_usd"), FORMATS["usd"]))
        cells.append(_live(sh, _ref(book, pick["sync"], "overhead_usd"), FORMATS["usd"]))
        sh.append(cells)
    last = sh.row
    for col in ("F", "I") if last >= first else ():
        sh.ws.conditional_formatting.add(f"{col}{first}:{col}{last}",
                                         FormulaRule(formula=[f"{col}{first}>target_overhead_pct"], fill=OVER_FILL))
    sh.append([])
    comp_first = _component_table(sh, book, table, picks)
    tier_first = _tier_table(sh, book)
    _charts_summary(sh, comp_first, tier_first, sh.row + 2)


def _live(sh: Sheet, ref: str | None, fmt: str | None):
    return sh.cell(f"={ref}", fmt=fmt) if ref else sh.text("n/a")


def _component_table(sh: Sheet, book: Book, table, picks) -> tuple[int, int]:
    sh.append([sh.text("Checkpoint size by component (TB)", font=BOLD)])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in ("model", "weights", "master", "optimizer", "grads")])
    first = sh.row + 1
    seen = set()
    for (_, line), pick in zip(table.iterrows(), picks):
        idx = pick["sync"] if pick["sync"] is not None else pick["async"]
        if line["model"] in seen or idx is None:
            continue
        seen.add(line["model"])
        sh.append([sh.text(str(line["model"]))] + [
            sh.cell(f"={_ref(book, idx, c)}/1E+12", fmt='0.00" TB"')
            for c in ("weights_bytes", "master_bytes", "optimizer_bytes", "grads_bytes")])
    sh.append([])
    return first, sh.row - 1


def _tier_table(sh: Sheet, book: Book) -> tuple[int, int]:
    plan, f = book.inputs.plan, book.frame
    s = plan.summary
    model = (s.model if s and s.model else None) or str(f["model"].cat.categories[0])
    sku = (s.sku if s and s.sku else None) or str(f["sku"].cat.categories[0])
    gpus = (s.gpus if s else plan.gpus[0]).value
    interval = (s.interval if s else plan.intervals[0]).value
    recipe = book.inputs.models[model].recipe
    if recipe not in set(f["recipe"].cat.categories):
        recipe = str(f["recipe"].cat.categories[0])
    sh.append([sh.text(f"Overhead by tier: {model} on {gpus:,.0f} GPUs of {sku}, every {interval / 60:g} min",
                       font=BOLD)])
    sh.append([sh.text(h, font=BOLD, fill=HEADER_FILL) for h in ("tier", "sync overhead", "async overhead")])
    first = sh.row + 1
    base = ((f["model"] == model) & (f["sku"] == sku) & (f["recipe"] == recipe) & (f["gpus"] == gpus)
            & (f["interval_s"] == interval))
    for tier in f["tier"].cat.categories:
        cells = [sh.text(str(tier))]
        for strategy in ("sync", "async"):
            hit = f.index[base & (f["tier"] == tier) & (f["strategy"] == strategy)]
            idx = int(hit[0]) if len(hit) and int(hit[0]) in book.scenario_row else None
            cells.append(_live(sh, _ref(book, idx, "overhead_pct"), FORMATS["pct"]))
        sh.append(cells)
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
    out: list[str] = []
    changed = {"interval_s"}
    for name, col in COLUMNS.items():
        if changed & set(col.params):
            changed.add(name)
    needed = {"overhead_pct", "waste_pct"}
    for name in reversed(list(COLUMNS)):
        if name in needed:
            needed |= {p for p in COLUMNS[name].params if p in changed}
    out = [n for n in COLUMNS if n in needed and n in changed]
    return out


def write_cadence(wb: Workbook, book: Book) -> None:
    dependents = _interval_dependents()
    cols = ["interval_s", "interval (min)", *dependents, "optimum"]
    sh = Sheet(wb, "Cadence", {i + 1: 15 for i in range(len(cols))}, "A3")
    sh.append([sh.text("Cadence: overhead and waste against the checkpoint interval", font=TITLE)])
    sh.append([sh.text("Each block recomputes the interval-dependent columns (same definitions as Scenarios) "
                       "for one scenario over a grid of intervals. Blue intervals are editable.")])
    letter = {n: get_column_letter(i + 1) for i, n in enumerate(cols)}
    charts: dict[str, list] = {}
    for pick in book.picks:
        for strategy in ("sync", "async"):
            idx = pick[strategy]
            if idx is None or idx not in book.scenario_row:
                continue
            row = book.frame.loc[idx]
            sh.append([])
            sh.append([sh.text(f"{row['model']} / {row['sku']} / {row['tier']} / {strategy} / "
                               f"{int(row['gpus']):,} GPUs", font=BOLD)])
            opt_row = sh.append([sh.text("optimal interval"),
                                 sh.cell(f"={_ref(book, idx, 'optimal_interval_s')}/60", fmt='0.0" min"'),
                                 sh.text("waste there"),
                                 sh.cell(f"={_ref(book, idx, 'optimal_waste_pct')}", fmt=FORMATS["pct"])])
            sh.append([sh.text(c, font=BOLD, fill=HEADER_FILL) for c in cols])
            first = sh.row + 1
            for k, minutes in enumerate(CADENCE_GRID_MIN):
                r = first + k
                nxt = f"A{r + 1}" if k + 1 < len(CADENCE_GRID_MIN) else "1E+300"

                def leaf(n, r=r):
                    return f"{letter[n]}{r}" if n in letter else _ref(book, idx, n)

                cells = [sh.cell(minutes * 60.0, fmt='#,##0" s"', font=BLUE),
                         sh.cell(f"=A{r}/60", fmt='0.0" min"')]
                for n in dependents:
                    tree = COLUMNS[n].fn(*(Var(p) for p in COLUMNS[n].params))
                    cells.append(sh.cell("=" + render(tree, leaf), fmt=number_format(n)))
                cells.append(sh.cell(f'=IF(AND(A{r}<=$B${opt_row}*60,{nxt}>$B${opt_row}*60),"◀ optimum",'
                                     f'"")'))
                sh.append(cells)
            charts.setdefault(f"{row['model']}|{row['sku']}", []).append(
                (strategy, first, sh.row, opt_row))
    _charts_cadence(sh, charts, letter)


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


# ---- Sources --------------------------------------------------------------------------------------

def write_sources(wb: Workbook, book: Book) -> None:
    sh = Sheet(wb, "Sources", {1: 40, 2: 11, 3: 110, 4: 30}, "A8")
    sh.append([sh.text("Sources and provenance", font=TITLE)])
    for k, v in (("tool", f"ckptreport {book.meta['ckptreport_version']}"), ("input hash", book.meta["input_hash"]),
                 ("built", book.meta["build_time"] + " (SOURCE_DATE_EPOCH when set)"),
                 ("scenarios", f"{len(book.frame):,} rows; all in scenarios.parquet")):
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
        sh.append([sh.text(f"recipes.{name}"), sh.text("spec" if recipe.source else "input"),
                   sh.text(recipe.source or "(no source given)"), sh.text("models.yaml")])


# ---- the workbook ---------------------------------------------------------------------------------

def _reproducible(path, when: dt.datetime) -> None:
    """Rewrite the xlsx zip with fixed member times and document dates: same inputs, same bytes."""
    stamp = max(when, dt.datetime(1980, 1, 1, tzinfo=dt.UTC))
    iso = stamp.strftime("%Y-%m-%dT%H:%M:%SZ")
    with zipfile.ZipFile(path) as src:
        members = [(info.filename, src.read(info)) for info in src.infolist()]
    tmp = f"{path}.tmp"
    with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        for name, data in members:
            if name == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*", lambda m: m.group(1) + iso.encode(), data)
            info = zipfile.ZipInfo(name, date_time=stamp.timetuple()[:6])
            info.compress_type = zipfile.ZIP_DEFLATED
            out.writestr(info, data)
    os.replace(tmp, path)


def write(path, inputs: Inputs, frame: pd.DataFrame, meta: dict[str, str],
          when: dt.datetime | None = None) -> list[str]:
    """Write the workbook to ``path``; returns notes (e.g. rows left out of Scenarios)."""
    book = Book(inputs, frame.reset_index(drop=True), meta)
    wb = Workbook(write_only=True)
    write_assumptions(wb, book)  # first: it fixes the cells the others refer to
    limit = int(inputs.plan.workbook_rows.value)
    write_scenarios(wb, book, limit)
    write_summary(wb, book)
    write_cadence(wb, book)
    write_sources(wb, book)
    wb._sheets = [wb[n] for n in ("Summary", "Assumptions", "Scenarios", "Cadence", "Sources")]
    wb.calculation.fullCalcOnLoad = True
    wb.save(path)
    if when is not None:
        _reproducible(path, when)
    return book.notes
