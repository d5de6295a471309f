"""The workbook: a live spreadsheet model of the scenario frame, eleven sheets.

- Cover: what it answers, how to use it, how many checks pass (``cover``)
- Jobs: the decision for each job at its scale, as the build took it (values, marked not live) (``jobs``)
- Summary: the headline per model and SKU, the option chosen by formula, size and tier charts (``summary``)
- Assumptions: every input as a blue cell with its unit, basis and source; the plan's globals and the
  constants as defined names (``assumptions``)
- Scenarios: the cross product as an Excel table keyed by ``scenario_id``; input columns refer to their
  cells on Assumptions, derived columns are formulas printed from the column definitions (``scenarios``)
- Choice: each summary line's options, live, in the order the rule breaks ties (``choice``)
- Purchase: each cluster's purchase as a live model (``bought``), then what each step of bandwidth
  costs and saves (``choice``)
- Cadence: overhead and waste recomputed over a grid of intervals (``cadence``)
- Sensitivity: the headline option's tornado, each end recomputed by formula (``sensitivity``)
- Sources: every citation and the build's provenance (``cover``)
- Checks: consistency checks, live (``cover``)

Each writer takes the anchors it refers to and returns its own (``Assumed``, ``Table``, ``Choices``,
``Checked``): ``write`` calls them in the one order their data allows. What the sheets show was
computed in the compute stage (``answer.types.Report``); strings from inputs are always text cells, never
formulas; infinity is ``units.INF_CELL`` and reads 'unbounded' / 'unreachable'. Only openpyxl's
public API is used; the long sheets' rows are streamed into the saved package (``render.sheetxml``).
"""

from __future__ import annotations

import datetime as dt
import zipfile
from pathlib import Path
from typing import TYPE_CHECKING

from openpyxl import Workbook
from openpyxl.writer.excel import ExcelWriter

from .. import sheetxml
from . import assumptions, cadence, choice, cover, jobs, scenarios, sensitivity, summary
from .book import Context, Sheet

if TYPE_CHECKING:
    from ...answer.types import Report

SHEETS = (
    "Cover",
    "Jobs",
    "Summary",
    "Assumptions",
    "Scenarios",
    "Choice",
    "Purchase",
    "Cadence",
    "Sensitivity",
    "Sources",
    "Checks",
)  # in the order they are shown


def write(
    path,
    report: Report,
    meta: dict[str, str],
    when: dt.datetime | None = None,
    progress=lambda _: None,
) -> list[str]:
    """Write the workbook to ``path``; returns notes (e.g. rows left out of Scenarios). ``progress``
    counts the Scenarios rows as they are written (the long part)."""
    from ...base.progress import task

    ctx = Context(report, meta)
    notes = [report.workbook_note] if report.workbook_note else []
    wb = Workbook(write_only=True)
    sheets = {title: Sheet(wb, title) for title in SHEETS}
    assumed = assumptions.write(sheets["Assumptions"], ctx)
    table = scenarios.write(sheets["Scenarios"], ctx, assumed)
    choices = choice.write_choice(sheets["Choice"], ctx, table)
    choice.write_purchase(sheets["Purchase"], ctx, table)
    summary.write_summary(sheets["Summary"], ctx, assumed, table, choices)
    jobs.write(sheets["Jobs"], ctx)
    streams = {"Cadence": cadence.write(sheets["Cadence"], ctx, table)}
    sensitivity.write(sheets["Sensitivity"], ctx, table)
    cover.write_sources(sheets["Sources"], ctx, notes)
    checked = cover.write_checks(sheets["Checks"], ctx, assumed, table)
    cover.write_cover(sheets["Cover"], ctx, checked)
    for title, sheet in sheets.items():
        sheet.print_marks(meta)
        if (
            title != "Scenarios"
        ):  # formulas locked, inputs (blue) open; no password. Scenarios stays sortable
            protect = sheet.ws.protection
            protect.sheet, protect.formatColumns, protect.formatRows = True, False, False
    wb.calculation.fullCalcOnLoad = (
        False  # every formula carries its result: nothing to recalculate on open
    )
    # stored, not deflated: the rewrite below reads every member back and deflates it once
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        ExcelWriter(wb, archive).save()
    with task(progress, "workbook rows", len(table.rows)) as advance:
        streams["Scenarios"] = sheetxml.Stream(
            scenarios.FIRST,
            lambda styles_of: scenarios.rows(table, styles_of(scenarios.FIRST), advance),
        )
        sheetxml.rewrite(
            Path(path),
            when or dt.datetime(1980, 1, 1, tzinfo=dt.UTC),
            {title: s for title, s in streams.items() if s is not None},
            {title: sheet.values for title, sheet in sheets.items() if sheet.values},
        )
    return notes
