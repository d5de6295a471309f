"""Drive LibreOffice Calc as a person would, through its own API (UNO), and report what it computed.

Run by the system Python that LibreOffice's ``python3-uno`` belongs to (not the project's venv):

    /usr/bin/python3 tests/lo_uno.py SCRIPT.json

SCRIPT is a JSON object:

- ``file``: the workbook to open; ``profile``: a throwaway LibreOffice profile directory;
- ``recalc_on_load``: ``"never"`` (default: cached values stay until ``calculateAll``) or ``"always"``;
- ``actions``: done in order, each an object with ``op``:
  - ``sort`` ``sheet``, ``header_row`` (1-based), ``keys``: ``[[header name, ascending], ...]``: the
    table below the header row, sorted as Data > Sort does (up to three keys, like the dialog);
  - ``filter`` ``sheet``, ``header_row``, ``column`` (header name), ``value``: Data > AutoFilter showing
    only the rows whose column equals value (the other rows are hidden, not removed);
  - ``insert_rows`` ``sheet``, ``row`` (1-based: the new rows go above it), ``count``: Sheet > Insert
    Rows (the sheet is unprotected first, as its no-password protection allows);
  - ``type`` ``cell`` (``Sheet!A1``), ``text``: what a person types into the cell, parsed as Calc
    parses typing (``1%`` is the number 0.01, ``=A1`` a formula);
  - ``recalc``: Data > Calculate > Recalculate Hard (``calculateAll``);
  - ``read`` ``sheets``, ``as``: the sheets' used areas now, as values (formula results) with the
    addresses of error cells, kept under ``reads[as]``.

Prints one JSON object: ``seconds`` per step (``start``, ``load``, each action) and ``reads``
(``{as: {"sheet": {"values": rows, "errors": ["A1", ...]}}}``). LibreOffice is started headless
for this script alone and stopped at the end, whatever happens.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import uno  # noqa: F401  (python3-uno: sets up the bridge)
from cellnames import letters
from com.sun.star.beans import PropertyValue
from com.sun.star.connection import NoConnectException
from com.sun.star.sheet import FormulaResult
from com.sun.star.table import TableSortField

RECALC_MODE = {"always": 0, "never": 1}


def prop(name, value):
    p = PropertyValue()
    p.Name, p.Value = name, value
    return p


def profile_with(profile: Path, recalc: str) -> None:
    (profile / "user").mkdir(parents=True, exist_ok=True)
    (
        profile / "user" / "registrymodifications.xcu"
    ).write_text(f"""<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse">
<value>{RECALC_MODE[recalc]}</value></prop></item>
</oor:items>
""")


def start(profile: Path):
    soffice = shutil.which("soffice") or shutil.which("libreoffice")
    pipe = f"ckptreport_{os.getpid()}"
    proc = subprocess.Popen(
        [
            soffice,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--invisible",
            "--norestore",
            "--nologo",
            "--nodefault",
            f"--accept=pipe,name={pipe};urp;StarOffice.ComponentContext",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    local = uno.getComponentContext()
    resolver = local.ServiceManager.createInstanceWithContext(
        "com.sun.star.bridge.UnoUrlResolver", local
    )
    deadline = time.monotonic() + 120
    while True:
        try:
            ctx = resolver.resolve(f"uno:pipe,name={pipe};urp;StarOffice.ComponentContext")
            break
        except NoConnectException:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"LibreOffice did not start (exit {proc.poll()})") from None
            time.sleep(0.2)
    desktop = ctx.ServiceManager.createInstanceWithContext("com.sun.star.frame.Desktop", ctx)
    return proc, desktop


def header_columns(sheet, header_row: int) -> dict[str, int]:
    cursor = sheet.createCursor()
    cursor.gotoEndOfUsedArea(False)
    last_col = cursor.RangeAddress.EndColumn
    row = sheet.getCellRangeByPosition(0, header_row - 1, last_col, header_row - 1).DataArray[0]
    return {str(v): i for i, v in enumerate(row) if v != ""}


def table(sheet, header_row: int):
    """The table's range from its header row to the used area's end."""
    cursor = sheet.createCursor()
    cursor.gotoEndOfUsedArea(False)
    end = cursor.RangeAddress
    return sheet.getCellRangeByPosition(0, header_row - 1, end.EndColumn, end.EndRow)


def sort(doc, a):
    sheet = doc.Sheets.getByName(a["sheet"])
    cols = header_columns(sheet, a["header_row"])
    fields = []
    for name, ascending in a["keys"]:
        f = TableSortField()
        f.Field, f.IsAscending, f.IsCaseSensitive = cols[name], bool(ascending), False
        fields.append(f)
    rng = table(sheet, a["header_row"])
    desc = rng.createSortDescriptor()
    for p in desc:
        if p.Name == "SortFields":
            p.Value = uno.Any("[]com.sun.star.table.TableSortField", tuple(fields))
        elif p.Name == "ContainsHeader":
            p.Value = True
        elif p.Name == "BindFormatsToContent":
            p.Value = True
    rng.sort(desc)


def autofilter(doc, a):
    from com.sun.star.sheet import TableFilterField
    from com.sun.star.sheet.FilterOperator import EQUAL

    sheet = doc.Sheets.getByName(a["sheet"])
    cols = header_columns(sheet, a["header_row"])
    rng = table(sheet, a["header_row"])
    desc = rng.createFilterDescriptor(True)
    field = TableFilterField()
    field.Field, field.Operator = cols[a["column"]], EQUAL
    if isinstance(a["value"], str):
        field.IsNumeric, field.StringValue = False, a["value"]
    else:
        field.IsNumeric, field.NumericValue = True, float(a["value"])
    desc.ContainsHeader = True
    desc.FilterFields = (field,)
    rng.filter(desc)


def insert_rows(doc, a):
    sheet = doc.Sheets.getByName(a["sheet"])
    if sheet.isProtected():
        sheet.unprotect("")
    sheet.Rows.insertByIndex(a["row"] - 1, a.get("count", 1))


def type_into(doc, a):
    name, addr = a["cell"].split("!")
    sheet = doc.Sheets.getByName(name)
    # setFormula parses its text exactly as typed input: numbers, percents, dates, '=' formulas
    sheet.getCellRangeByName(addr).setFormula(a["text"])


def read_sheet(sheet) -> dict:
    cursor = sheet.createCursor()
    cursor.gotoEndOfUsedArea(False)
    end = cursor.RangeAddress
    values = [
        list(r) for r in sheet.getCellRangeByPosition(0, 0, end.EndColumn, end.EndRow).DataArray
    ]
    errors = []
    found = sheet.queryFormulaCells(FormulaResult.ERROR)
    for ra in found.RangeAddresses:  # named here as Calc names them ($Sheet.$A$1): one call a range
        for r in range(ra.StartRow, ra.EndRow + 1):
            for c in range(ra.StartColumn, ra.EndColumn + 1):
                errors.append(f"${sheet.Name}.${letters(c + 1)}${r + 1}")
    return {"values": values, "errors": errors}


ACTIONS = {
    "sort": sort,
    "filter": autofilter,
    "insert_rows": insert_rows,
    "type": type_into,
    "recalc": lambda doc, a: doc.calculateAll(),
}


def run(script: dict) -> dict:
    profile = Path(script.get("profile") or tempfile.mkdtemp(prefix="lo-profile-"))
    profile_with(profile, script.get("recalc_on_load", "never"))
    seconds = {}
    t = time.perf_counter()
    proc, desktop = start(profile)
    seconds["start"] = time.perf_counter() - t
    try:
        t = time.perf_counter()
        url = Path(script["file"]).resolve().as_uri()
        doc = desktop.loadComponentFromURL(url, "_blank", 0, (prop("Hidden", True),))
        if doc is None:
            raise SystemExit(f"LibreOffice could not open {script['file']}")
        seconds["load"] = time.perf_counter() - t
        out = {"reads": {}}
        for i, a in enumerate(script.get("actions", [])):
            t = time.perf_counter()
            if a["op"] == "read":
                out["reads"][a["as"]] = {
                    n: read_sheet(doc.Sheets.getByName(n)) for n in a["sheets"]
                }
            else:
                ACTIONS[a["op"]](doc, a)
            seconds[f"{i}:{a['op']}"] = time.perf_counter() - t
        doc.close(True)
        out["seconds"] = seconds
        return out
    finally:
        try:
            desktop.terminate()
        except Exception:  # noqa: BLE001  (the bridge dies with the process: that is the point)
            pass
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


if __name__ == "__main__":
    json.dump(run(json.loads(Path(sys.argv[1]).read_text())), sys.stdout)
