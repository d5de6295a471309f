"""Every cell of an xlsx package read straight from its XML with lxml: each sheet's cells by coordinate,
with the formula, the value stored (cached) with it, and the number format. The tests that compare a
whole workbook with what LibreOffice or Gnumeric saved read hundreds of thousands of cells; openpyxl
builds a cell object per cell (about 13 us each): comparing the small plan's workbook with Gnumeric's
took 10.8 s through openpyxl and 4.0 s here.

Values are typed as openpyxl's ``data_only`` read types them (``test_xlsxcells.py`` holds the two to
each other on a workbook with every kind of cell): a number is an int when its text has no point or
exponent, a shared or inline string its text, a boolean ``True``/``False``, an error its text
(``#N/A``); a formula cell with no stored value is ``None``. Dates stay numbers.
"""

from __future__ import annotations

import posixpath
import re
import zipfile
from dataclasses import dataclass
from pathlib import Path

from cellnames import letters
from lxml import etree
from openpyxl.styles.numbers import BUILTIN_FORMATS

MAIN = "{http://schemas.openxmlformats.org/spreadsheetml/2006/main}"
REL = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}"
PKG = "{http://schemas.openxmlformats.org/package/2006/relationships}"
COORD = re.compile(r"([A-Z]+)([0-9]+)")


@dataclass(slots=True)
class Cell:
    formula: str | None  # '=...' as written; a shared formula's followers name their group
    value: object
    number_format: str


def _column(name: str, _cache: dict[str, int] = {}) -> int:  # noqa: B006 (a memo)
    if name not in _cache:
        n = 0
        for ch in name:
            n = n * 26 + ord(ch) - 64
        _cache[name] = n
    return _cache[name]


def _number(text: str):
    return float(text) if ("." in text or "E" in text or "e" in text) else int(text)


def _text(node) -> str:
    """A string item's text: its runs' <t>, not the phonetic runs (<rPh>)."""
    return "".join(t.text or "" for t in node.iter(f"{MAIN}t") if t.getparent().tag != f"{MAIN}rPh")


def _sheet_paths(z: zipfile.ZipFile) -> dict[str, str]:
    book = etree.fromstring(z.read("xl/workbook.xml"))
    rels = etree.fromstring(z.read("xl/_rels/workbook.xml.rels"))
    target = {r.get("Id"): r.get("Target") for r in rels.iter(f"{PKG}Relationship")}
    out = {}
    for sheet in book.iter(f"{MAIN}sheet"):
        t = target[sheet.get(f"{REL}id")]
        out[sheet.get("name")] = t.lstrip("/") if t.startswith("/") else posixpath.join("xl", t)
    return out


def _formats(z: zipfile.ZipFile) -> list[str]:
    if "xl/styles.xml" not in z.namelist():
        return ["General"]
    styles = etree.fromstring(z.read("xl/styles.xml"))
    custom = {int(n.get("numFmtId")): n.get("formatCode") for n in styles.iter(f"{MAIN}numFmt")}
    xfs = styles.find(f"{MAIN}cellXfs")
    ids = [int(x.get("numFmtId", 0)) for x in (xfs if xfs is not None else [])]
    return [custom.get(i, BUILTIN_FORMATS.get(i, "General")) for i in ids] or ["General"]


def _strings(z: zipfile.ZipFile) -> list[str]:
    if "xl/sharedStrings.xml" not in z.namelist():
        return []
    return [_text(si) for si in etree.fromstring(z.read("xl/sharedStrings.xml")).iter(f"{MAIN}si")]


def _cells(xml: bytes, strings: list[str], formats: list[str]) -> dict[str, Cell]:
    out: dict[str, Cell] = {}
    f_tag, v_tag, is_tag = f"{MAIN}f", f"{MAIN}v", f"{MAIN}is"
    for node in etree.fromstring(xml, etree.XMLParser(huge_tree=True)).iter(f"{MAIN}c"):
        ref = node.get("r")
        assert ref, (
            "a cell without its reference (r): not read here"
        )  # Excel, LibreOffice, Gnumeric write it
        formula = value = None
        kind = node.get("t")
        for child in node:
            if child.tag == f_tag:
                formula = "=" + (child.text or f"(shared formula {child.get('si')})")
            elif child.tag == v_tag and child.text is not None:
                text = child.text
                if kind == "s":
                    value = strings[int(text)]
                elif kind == "b":
                    value = bool(int(text))
                elif kind in ("e", "str", "d"):
                    value = text
                else:
                    value = _number(text)
            elif child.tag == is_tag and kind == "inlineStr":
                value = _text(child)
        style = int(node.get("s", 0))
        out[ref] = Cell(formula, value, formats[style] if style < len(formats) else "General")
    return out


def read(xlsx: Path, only: tuple[str, ...] | None = None) -> dict[str, dict[str, Cell]]:
    """Each sheet's cells by coordinate (sheets in the workbook's order; ``only``: these sheets). A
    sheet is read once per test process while its file is unchanged (the same path, size and time):
    a test comparing one workbook with two spreadsheets' recalculations reads it once, and a test
    that reads the Scenarios sheet and then every sheet parses Scenarios once. Do not change what it
    returns."""
    if not isinstance(xlsx, (str, Path)):
        return _read(xlsx, only)
    stat = Path(xlsx).stat()
    key = (str(Path(xlsx).resolve()), stat.st_size, stat.st_mtime_ns)
    book = _BOOKS.pop(key, None) or _Book(key[0])
    _BOOKS[key] = book  # the most recently used last
    while len(_BOOKS) > 4:
        _BOOKS.pop(next(iter(_BOOKS)))
    return book.sheets(only)


class _Book:
    """A file's sheets, each parsed on first use."""

    def __init__(self, path: str):
        self.path = path
        with zipfile.ZipFile(path) as z:
            self.strings, self.formats, self.paths = _strings(z), _formats(z), _sheet_paths(z)
        self.parsed: dict[str, dict[str, Cell]] = {}

    def sheets(self, only) -> dict[str, dict[str, Cell]]:
        wanted = [n for n in self.paths if only is None or n in only]
        missing = [n for n in wanted if n not in self.parsed]
        if missing:
            with zipfile.ZipFile(self.path) as z:
                for name in missing:
                    self.parsed[name] = _cells(z.read(self.paths[name]), self.strings, self.formats)
        return {name: self.parsed[name] for name in wanted}


_BOOKS: dict[tuple, _Book] = {}  # by (path, size, time): the last 4 files read


def _read(xlsx, only):
    with zipfile.ZipFile(xlsx) as z:
        strings, formats = _strings(z), _formats(z)
        return {
            name: _cells(z.read(path), strings, formats)
            for name, path in _sheet_paths(z).items()
            if only is None or name in only
        }


def rows(cells: dict[str, Cell], min_row: int = 1) -> list[tuple]:
    """A sheet's values as rows from ``min_row`` to its last, column A to its last (``None`` where a
    cell is absent), as openpyxl's ``iter_rows(values_only=True)`` gives them."""
    if not cells:
        return []
    at = []
    for ref, c in cells.items():
        name, digits = COORD.fullmatch(ref).groups()
        at.append((int(digits), _column(name), c.value))
    last_row = max(a[0] for a in at)
    last_column = max(a[1] for a in at)
    grid = [[None] * last_column for _ in range(min_row, last_row + 1)]
    for r, col, value in at:
        if r >= min_row:
            grid[r - min_row][col - 1] = value
    return [tuple(r) for r in grid]


def typed(xlsx: Path, dest: Path, edits: dict[str, dict[str, object]]) -> Path:
    """A copy of ``xlsx`` at ``dest`` with values typed over cells, as a person types a number or a
    text over a cell (its formula, if any, gone; its style kept): ``edits`` is per sheet name, per
    coordinate, the value. Every other part of the package is copied byte for byte; the cached
    values that depend on the cells are left as they were, for a spreadsheet to recalculate."""
    with zipfile.ZipFile(xlsx) as z:
        paths = _sheet_paths(z)
        members = [(info, z.read(info.filename)) for info in z.infolist()]
    patched = {paths[sheet]: (sheet, cells) for sheet, cells in edits.items()}
    dest.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(dest, "w") as out:
        for info, data in members:
            if info.filename in patched:
                sheet, cells = patched.pop(info.filename)
                data = _typed_sheet(data, sheet, dict(cells))
            out.writestr(info, data)
    return dest


def _typed_sheet(xml: bytes, sheet: str, cells: dict[str, object]) -> bytes:
    root = etree.fromstring(xml, etree.XMLParser(huge_tree=True))
    for node in root.iter(f"{MAIN}c"):
        ref = node.get("r")
        if ref not in cells:
            continue
        value = cells.pop(ref)
        for child in list(node):
            node.remove(child)
        node.attrib.pop("t", None)
        if isinstance(value, str):
            node.set("t", "inlineStr")
            etree.SubElement(etree.SubElement(node, f"{MAIN}is"), f"{MAIN}t").text = value
        else:
            etree.SubElement(node, f"{MAIN}v").text = (
                repr(float(value)) if isinstance(value, float) else str(value)
            )
    assert not cells, f"{sheet} has no cells {sorted(cells)} to type over"
    return etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)


def find(cells: dict[str, Cell], *wanted) -> str:
    """The coordinate of the cell to the right of the cells holding ``wanted``, in one row, from
    column A (Assumptions: the key, the figure, then its value)."""
    by_row: dict[int, dict[int, object]] = {}
    for ref, c in cells.items():
        col, row = COORD.fullmatch(ref).groups()
        by_row.setdefault(int(row), {})[_column(col)] = c.value
    for row, values in sorted(by_row.items()):
        if all(values.get(i + 1) == w for i, w in enumerate(wanted)):
            return f"{letters(len(wanted) + 1)}{row}"
    raise AssertionError(f"no row starts {wanted}")
