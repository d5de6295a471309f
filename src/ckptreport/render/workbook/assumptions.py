"""The Assumptions sheet: every input as a blue cell with its unit, basis and source (measured
figures beside their spec), the plan's globals and constants as defined names. ``Assumed`` says
where each input's cell is: Scenarios refers to them, Summary reads the plan's points, Checks the
typed values."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from openpyxl.workbook.defined_name import DefinedName
from openpyxl.worksheet.datavalidation import DataValidation

from ...model import display
from ...model.columns import MONTHS_PER_YEAR, SECONDS_PER_MONTH, WITHIN_TARGET
from ...model.expr import INFINITY, SCALES, Named
from ...read.inputs import PLAN, of
from ...read.provenance import provenance
from ...read.units import INF_CELL
from .book import (
    BLUE,
    BOLD,
    ENTITY_KINDS,
    INFINITE_FROM,
    OVER_FILL,
    SECONDS_PER_MINUTE,
    TITLE,
    UNLOCKED,
    Context,
    Sheet,
    result,
)

CONSTANTS = (
    *SCALES,
    SECONDS_PER_MINUTE,
    SECONDS_PER_MONTH,
    MONTHS_PER_YEAR,
    WITHIN_TARGET,
    Named(INF_CELL, INFINITY),
    INFINITE_FROM,
)
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
    "WITHIN_TARGET": "1 + 10^-9: an overhead meets its target to a billionth of it (the last bits of arithmetic)",
    INFINITY: "the stand-in for infinity (unbounded, unreachable) in a cell",
    "INFINITE_FROM": "a cell at least this large reads as infinite",
}
HEADER = [
    "key",
    "figure",
    "value",
    "unit",
    "basis",
    "source",
    "from",
    "date",
    "region",
    "spec",
    "measured / spec",
    "check",
]


@dataclass
class Assumed:
    """Where the Assumptions sheet put each input: absolute references other sheets use."""

    input_cell: dict[tuple[str, str, str], str] = field(
        default_factory=dict
    )  # (kind, name, input) -> its cell
    global_cell: dict[str, str] = field(
        default_factory=dict
    )  # plan input -> its cell (also a defined name)
    gpus_cell: dict[float, str] = field(
        default_factory=dict
    )  # each of the plan's GPU counts -> its cell
    interval_cell: dict[float, str] = field(
        default_factory=dict
    )  # each of the plan's intervals -> its cell
    typed: list[tuple[int, str, object]] = field(
        default_factory=list
    )  # (row, input, value as its cell holds it)


def write(sh: Sheet, ctx: Context) -> Assumed:
    sh.layout(
        {1: 24, 2: 26, 3: 18, 4: 9, 5: 16, 6: 90, 7: 30, 8: 10, 9: 14, 10: 12, 11: 14, 12: 20}, "A4"
    )
    sh.append([sh.text("Assumptions", font=TITLE)])
    sh.append(
        [
            sh.text(
                "Blue cells are inputs: change one and every dependent figure recomputes. "
                "Values are in the units beside them; the source says where each comes from."
            )
        ]
    )
    sh.append([])
    assumed = Assumed()
    _plan(sh, ctx, assumed)
    for constant in CONSTANTS:  # what formulas name instead of typing 1E+9, 3600 or 1E+290
        row = sh.append(
            [
                sh.text("constant"),
                sh.text(constant.name),
                sh.cell(float(constant)),
                sh.text(""),
                sh.text("definition"),
                sh.text(CONSTANT_WORDS[constant.name]),
            ]
        )
        sh.ws.parent.defined_names[constant.name] = DefinedName(
            constant.name, attr_text=f"Assumptions!$C${row}"
        )
    for kind, column in ENTITY_KINDS:
        for name in ctx.frame[column].cat.categories:
            _entity(sh, ctx, assumed, kind, str(name))
    for name, ref in assumed.global_cell.items():
        sh.ws.parent.defined_names[name] = DefinedName(name, attr_text=ref)
    _validate(sh, assumed.typed)
    return assumed


def _plan(sh: Sheet, ctx: Context, assumed: Assumed) -> None:
    """The plan's inputs (each a defined name), then its GPU counts and intervals."""
    inputs, plan = ctx.inputs, ctx.inputs.plan
    sh.append([sh.text("Plan", font=BOLD)])
    sh.header(HEADER)
    plan_entity = inputs.entity(PLAN, PLAN)
    for inp in of(PLAN):
        row = sh.append(
            [
                sh.text("plan"),
                sh.text(inp.name),
                _value_cell(sh, inp.name, inp.value(plan_entity)),
                sh.text(display.unit(inp.name).short),
                *_prov_cells(sh, provenance(inputs, inp, {})),
            ]
        )
        assumed.global_cell[inp.name] = f"Assumptions!$C${row}"
        assumed.typed.append((row, inp.name, result(inp.name, inp.value(plan_entity))))
    for i, q in enumerate(plan.gpus):
        row = sh.append(
            [
                sh.text("plan.gpus"),
                sh.text(f"gpus[{i}]"),
                sh.cell(q.value, fmt=display.plain_format("gpus"), font=BLUE),
                sh.text("GPUs"),
                sh.text("input"),
                sh.text("the plan's cluster sizes"),
                sh.text("plan.yaml"),
                sh.text(""),
                sh.text(""),
            ]
        )
        assumed.gpus_cell[q.value] = f"Assumptions!$C${row}"
        assumed.typed.append((row, "gpus", q.value))
    for i, q in enumerate(plan.intervals):
        row = sh.append(
            [
                sh.text("plan.intervals"),
                sh.text(f"interval_s[{i}]"),
                sh.cell(q.value, fmt=display.plain_format("interval_s"), font=BLUE),
                sh.text("s"),
                sh.text("input"),
                sh.text(f"the plan's cadences ({q.text})"),
                sh.text("plan.yaml"),
                sh.text(""),
                sh.text(""),
            ]
        )
        assumed.interval_cell[q.value] = f"Assumptions!$C${row}"
        assumed.typed.append((row, "interval_s", q.value))


def _entity(sh: Sheet, ctx: Context, assumed: Assumed, kind: str, name: str) -> None:
    """One model, recipe, SKU or tier: a block with a row per input (measured ones beside their spec)."""
    inputs = ctx.inputs
    sh.append([])
    sh.append([sh.text(f"{kind}.", font=BOLD), sh.text(name, font=BOLD)])
    sh.header(HEADER)
    entity = inputs.entity(kind, name)
    row_of = {inp.name: sh.row + 1 + k for k, inp in enumerate(of(kind))}  # one row each, in order
    for inp in of(kind):
        m = inputs.measured.get((kind, name, inp.key))
        extra = (
            []
            if m is None
            else [
                sh.cell(
                    m.spec / inp.scale if m.spec else "n/a", fmt=display.plain_format(inp.name)
                ),
                sh.cell(m.ratio, fmt="0%") if m.ratio else sh.text("n/a"),
                sh.text(m.flag or "ok", fill=OVER_FILL if m.flag else None),
            ]
        )
        derived = m is None and inp.derived_formula and inp.derived(entity) is not None
        value = (
            _derived_cell(sh, inp, row_of, inp.value(entity, name))
            if derived
            else _value_cell(sh, inp.name, inp.value(entity, name))
        )
        row = sh.append(
            [
                sh.text(f"{kind}.{name}"),
                sh.text(inp.name),
                value,
                sh.text(display.unit(inp.name).short),
                *_prov_cells(sh, provenance(inputs, inp, {kind: name})),
                *extra,
            ]
        )
        assumed.input_cell[(kind, name, inp.name)] = f"Assumptions!$C${row}"
        assumed.typed.append((row, inp.name, result(inp.name, inp.value(entity, name))))


def _prov_cells(sh: Sheet, prov) -> list:
    """basis, source, from, date, region."""
    if prov is None:
        return [sh.text("input"), sh.text(""), sh.text(""), sh.text(""), sh.text("")]
    where = f"{prov.file}:{prov.line}" if prov.line else prov.file
    return [
        sh.text(prov.basis),
        sh.text(prov.source or ""),
        sh.text(where),
        sh.text(prov.date or ""),
        sh.text(prov.region or ""),
    ]


def _value_cell(sh: Sheet, name: str, v):
    if isinstance(v, float) and math.isnan(v):
        return sh.cell("=NA()", font=BLUE, result=math.nan)  # unknown: #N/A, never 0
    if isinstance(v, str):
        return sh.text(v, font=BLUE)
    if display.unit_of(name) == "bool":
        return sh.cell(bool(v), font=BLUE)
    return sh.cell(result(name, v), fmt=display.plain_format(name), font=BLUE)


def _derived_cell(sh: Sheet, inp, row_of: dict[str, int], value):
    """An omitted key derived from others of its entity (active_params = params): a formula on their
    cells, so editing them moves it too. Black (not an input) but open: type a figure over it to
    set it apart."""
    formula = re.sub(r"\{(\w+)\}", lambda m: f"$C${row_of[m.group(1)]}", inp.derived_formula)
    cell = sh.cell(
        "=" + formula, fmt=display.plain_format(inp.name), result=result(inp.name, value)
    )
    cell.protection = UNLOCKED
    return cell


def _validate(sh: Sheet, typed: list[tuple[int, str, object]]) -> None:
    """Data validation on the numeric input cells (column C of ``typed``'s rows): a percentage from 0
    to 100% (a fraction from 0 to 1), any other figure non-negative (infinity is 1E+290, a valid
    entry); typing a wrong one is refused with a message naming what is allowed."""
    rules = {
        "pct": DataValidation(
            type="decimal",
            operator="between",
            formula1="0",
            formula2="1",
            allow_blank=True,
            showErrorMessage=True,
            errorTitle="A percentage",
            error="Type a percentage from 0% to 100%, with its % sign: 1% or 2.5%.",
        ),
        "number": DataValidation(
            type="decimal",
            operator="greaterThanOrEqual",
            formula1="0",
            allow_blank=True,
            showErrorMessage=True,
            errorTitle="A non-negative figure",
            error="Type a figure of 0 or more, in the unit beside it.",
        ),
    }
    for row, name, _ in typed:
        unit = display.unit_of(name)
        if unit not in ("label", "bool"):
            rules["pct" if unit == "pct" else "number"].add(f"C{row}")
    for rule in rules.values():
        if rule.sqref:
            sh.ws.data_validations.append(rule)
