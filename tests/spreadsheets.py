"""Reading a workbook back as a spreadsheet application left it: the Scenarios table's cached values,
compared with the engine's frame, and every formula cell's cached result against what LibreOffice or
Gnumeric computed (shared by the workbook's tests and the test that adds a strategy)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import xlsxcells

from ckptreport.model import display
from ckptreport.read.units import BOOL_EXCEL, INF_AT
from ckptreport.render.workbook.scenarios import scenario_columns


def scenario_cells(xlsx: Path) -> pd.DataFrame:
    """The Scenarios table as LibreOffice computed it (cached values)."""
    table = xlsxcells.rows(xlsxcells.read(xlsx, only=("Scenarios",))["Scenarios"], min_row=2)
    return pd.DataFrame(table[1:], columns=table[0])


def _cell(name, i, g, w) -> str:  # what a failed comparison says (built only when one fails)
    return f"{name} row {i}: workbook {g!r}, engine {w!r}"


def _formula(name, ref, o, app, t_value) -> str:
    return f"{name}!{ref} {o.formula[:80]}: cached {o.value!r}, {app} {t_value!r}"


def assert_cells_equal_engine(cells: pd.DataFrame, frame: pd.DataFrame) -> int:
    """Every column of the frame equals the recalculated cells, row by row (a percentage as a
    fraction: the engine's 3.6 is the cell's 0.036); returns cells compared. The plan's globals are
    named cells on Assumptions, not Scenarios columns."""
    assert len(cells) == len(frame)
    assert [c for c in cells.columns if c != "scenario_id"] == scenario_columns(frame)
    compared = 0
    for name in scenario_columns(frame):
        got, want = cells[name].tolist(), frame[name].tolist()
        if display.unit_of(name) == "pct":
            want = [w / 100 for w in want]
        for i, (g, w) in enumerate(zip(got, want)):
            if isinstance(w, (bool, np.bool_)):
                # TRUE/FALSE; LibreOffice re-saves a TRUE/FALSE-formatted result as 1/0, the same in a spreadsheet
                assert g in (True, False) and bool(g) is bool(w), _cell(name, i, g, w)
            elif isinstance(w, str):
                assert g == w, _cell(name, i, g, w)
            elif math.isnan(w):
                assert g is None or str(g).startswith("#N/A"), _cell(
                    name, i, g, w
                )  # an unknown price stays unknown
            elif math.isinf(w):
                assert isinstance(g, (int, float)) and g >= 1e280, _cell(name, i, g, w)
            else:
                assert isinstance(g, (int, float)) and math.isclose(
                    g, w, rel_tol=1e-9, abs_tol=1e-12
                ), _cell(name, i, g, w)
            compared += 1
    return compared


def formulas_carry_what_it_computes(xlsx: Path, recalc: Path, app: str) -> dict[str, int]:
    """Every formula cell of every sheet of ``xlsx`` stores a cached result, and it is what ``app``
    computed in ``recalc`` (numbers to 1e-9; at or beyond the infinity cell, both infinite); returns the
    formula cells compared per sheet."""
    ours, theirs = xlsxcells.read(xlsx), xlsxcells.read(recalc)
    compared = {}
    for name, cells in ours.items():
        their = theirs[name]
        for ref, o in cells.items():
            if o.formula is None:
                continue
            t = their.get(ref)
            t_value = None if t is None else t.value
            assert o.value is not None or t_value in (None, ""), _formula(
                name, ref, o, app, t_value
            )  # a result is stored
            if isinstance(o.value, bool):  # reads TRUE before any recalculation, not a bare 1
                assert o.number_format == BOOL_EXCEL, _formula(name, ref, o, app, t_value)
            if (
                isinstance(t_value, (int, float))
                and not isinstance(t_value, bool)
                and abs(t_value) >= INF_AT
            ):
                assert isinstance(o.value, (int, float)) and abs(o.value) >= INF_AT, _formula(
                    name, ref, o, app, t_value
                )
            elif (
                isinstance(t_value, (int, float))
                and not isinstance(t_value, bool)
                and not isinstance(o.value, bool)
            ):  # a spreadsheet stores 12500.0 as the integer 12500
                assert isinstance(o.value, (int, float)) and math.isclose(
                    o.value, t_value, rel_tol=1e-9, abs_tol=1e-12
                ), _formula(name, ref, o, app, t_value)
            elif isinstance(o.value, bool) and isinstance(t_value, (int, float)):
                assert bool(t_value) is o.value, _formula(
                    name, ref, o, app, t_value
                )  # a TRUE re-saved as 1
            else:
                assert (o.value or "") == (t_value or ""), _formula(name, ref, o, app, t_value)
            compared[name] = compared.get(name, 0) + 1
    return compared
