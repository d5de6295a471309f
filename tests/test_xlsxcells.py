"""The fast cell reader the workbook tests use (xlsxcells) reads what openpyxl reads: on the shared
build's workbook (inline strings, shared formulas, booleans, errors, the TRUE/FALSE format) and on
LibreOffice's recalculation of it (shared strings, its own styles), every cell's value, and every
formula cell's number format, equals openpyxl's."""

from __future__ import annotations

import datetime
import io
import zipfile

import openpyxl
import pytest
import xlsxcells

SCENARIO_ROWS = 300  # openpyxl reads a cell in about 13 us: the Scenarios sheet's first rows only


def _openpyxl_cells(path, formulas: bool):
    wb = openpyxl.load_workbook(path, read_only=True, data_only=not formulas)
    out = {}
    for name in wb.sheetnames:
        limit = SCENARIO_ROWS if name == "Scenarios" else None
        out[name] = {
            c.coordinate: c
            for row in wb[name].iter_rows(max_row=limit)
            for c in row
            if getattr(c, "coordinate", None) and c.value is not None
        }
    wb.close()
    return out


def _same(ours, theirs, where):
    if isinstance(theirs, datetime.datetime):  # openpyxl reads a date-formatted number as a date
        return
    if isinstance(theirs, float) or isinstance(ours, float):
        assert ours == pytest.approx(theirs, rel=1e-15), where
    else:
        assert ours == theirs and type(ours) is type(theirs), where


@pytest.mark.parametrize("which", ["ours", "LibreOffice's"])
def test_every_cell_reads_as_openpyxl_reads_it(which, small_build, small_recalc):
    path = small_build.out / "ckptreport.xlsx" if which == "ours" else small_recalc
    cells = xlsxcells.read(path)
    values, formulas = _openpyxl_cells(path, False), _openpyxl_cells(path, True)
    assert list(cells) == list(values)
    kinds, compared = set(), 0
    for name, theirs in values.items():
        for ref, cell in theirs.items():
            _same(cells[name][ref].value, cell.value, f"{name}!{ref}")
            kinds.add(type(cell.value).__name__)
            compared += 1
        for ref, cell in formulas[name].items():
            is_formula = cell.data_type == "f"
            assert (cells[name][ref].formula is not None) == is_formula, f"{name}!{ref}"
            if is_formula:
                assert cells[name][ref].number_format == cell.number_format, f"{name}!{ref}"
    # empty cells openpyxl does not show are empty here too
    for name, ours in cells.items():
        limit = SCENARIO_ROWS if name == "Scenarios" else None
        for ref, cell in ours.items():
            row = int("".join(ch for ch in ref if ch.isdigit()))
            if (limit is None or row <= limit) and ref not in values[name]:
                assert cell.value is None or cell.value == "", f"{name}!{ref}: {cell.value!r}"
    assert {"int", "float", "str", "bool"} <= kinds and compared > 50_000, (kinds, compared)


def test_a_cell_without_its_reference_is_refused_not_misread(small_build):
    with zipfile.ZipFile(small_build.out / "ckptreport.xlsx") as z:
        members = {n: z.read(n) for n in z.namelist()}
    sheet = next(n for n in members if n.startswith("xl/worksheets/sheet"))
    members[sheet] = members[sheet].replace(b'<c r="A1"', b"<c", 1)
    assert b'<c r="A1"' not in members[sheet]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)
    buffer.seek(0)
    with pytest.raises(AssertionError, match="without its reference"):
        xlsxcells.read(buffer)
