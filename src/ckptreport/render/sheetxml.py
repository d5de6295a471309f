"""The Scenarios sheet's rows, streamed straight into the saved workbook as SpreadsheetML.

openpyxl writes the workbook: styles, every other sheet, and the Scenarios sheet's header, its first
data row (which fixes each column's style), table, panes and conditional formats. This module then
rewrites the package once: it replaces that sheet's rows from the first data row on with rows
streamed from per-column templates, and gives every member a fixed time (same inputs, same bytes).

Why own this piece: through openpyxl's public API, each styled cell is an object whose value is
type-checked and whose style is looked up as it is written; 23,328 rows x 107 columns take about a
minute that way, and a few seconds as text templates. It writes only what ECMA-376 Part 1 §18.3
defines for a worksheet's rows (``sheetData``, ``row``, ``c`` with ``s``, ``t="inlineStr"``, ``is``,
``t``, ``f``), as openpyxl itself writes them; tests read the result back with openpyxl and
recalculate it in LibreOffice.
"""

from __future__ import annotations

import datetime as dt
import posixpath
import re
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np

_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|_(?=x[0-9A-Fa-f]{4}_)")
_SURROGATE = re.compile("[\ud800-\udfff]")
ROWS_PER_CHUNK = 512


def text_xml(value: str) -> str:
    """Cell text as SpreadsheetML holds it: XML-escaped; characters XML cannot hold written as the
    format's ``_xHHHH_`` escapes (and a literal ``_xHHHH_`` protected the same way)."""
    value = _SURROGATE.sub("\ufffd", value)
    value = _ILLEGAL.sub(lambda m: f"_x{ord(m.group()):04X}_", value)
    return escape(value)


def inline_string(ref: str, style: int, value: str) -> str:
    space = ' xml:space="preserve"' if value != value.strip() else ""
    return f'<c r="{ref}"{_s(style)} t="inlineStr"><is><t{space}>{text_xml(value)}</t></is></c>'


def _s(style: int) -> str:
    return f' s="{style}"' if style else ""


@dataclass(frozen=True)
class Column:
    """One column of streamed rows: text per row, a formula per row, or a formula template whose
    row number is filled in (``parts`` joined by the row number)."""

    letter: str
    style: int = 0
    text: np.ndarray | None = None  # the text of each row
    formulas: np.ndarray | None = None  # the formula of each row, without '='
    parts: tuple[str, ...] | None = None  # a template split where the row number goes


def rows_xml(columns: list[Column], first_row: int, n: int) -> Iterator[bytes]:
    """The ``<row>`` elements of rows first_row .. first_row + n - 1, in chunks of bytes."""
    cells = []  # per column: a function of (row index, row number) -> the cell's XML
    for col in columns:
        head = f'<c r="{col.letter}'
        if col.text is not None:
            cats, codes = np.unique(col.text, return_inverse=True)
            done = [f'{_s(col.style)} t="inlineStr"><is><t'
                    + (' xml:space="preserve"' if str(c) != str(c).strip() else "") + f">{text_xml(str(c))}</t></is></c>"
                    for c in cats]
            cells.append(lambda i, r, head=head, done=done, codes=codes: f'{head}{r}"{done[codes[i]]}')
        elif col.formulas is not None:
            cats, codes = np.unique(col.formulas, return_inverse=True)
            done = [f"{_s(col.style)}><f>{escape(str(c))}</f></c>" for c in cats]
            cells.append(lambda i, r, head=head, done=done, codes=codes: f'{head}{r}"{done[codes[i]]}')
        else:
            parts = [escape(p) for p in col.parts]
            open_ = f"{_s(col.style)}><f>"
            cells.append(lambda i, r, head=head, parts=parts, open_=open_: f'{head}{r}"{open_}{r.join(parts)}</f></c>')
    for start in range(0, n, ROWS_PER_CHUNK):
        out = []
        for i in range(start, min(start + ROWS_PER_CHUNK, n)):
            r = str(first_row + i)
            out.append(f'<row r="{r}">' + "".join(cell(i, r) for cell in cells) + "</row>")
        yield "".join(out).encode()


def sheet_member(package: zipfile.ZipFile, title: str) -> str:
    """The package member holding the worksheet named ``title`` (workbook.xml -> its relationship)."""
    workbook = package.read("xl/workbook.xml").decode()
    rels = package.read("xl/_rels/workbook.xml.rels").decode()
    sheet = re.search(rf'<sheet\b[^>]*\bname="{re.escape(escape(title, {chr(34): "&quot;"}))}"[^>]*>', workbook)
    rid = re.search(r'\br:id="([^"]+)"', sheet.group()).group(1)
    rel = next(m for m in re.finditer(r"<Relationship\b[^>]*>", rels) if f'Id="{rid}"' in m.group())
    target = re.search(r'\bTarget="([^"]+)"', rel.group()).group(1)
    return target.lstrip("/") if target.startswith("/") else posixpath.normpath(posixpath.join("xl", target))


def row_styles(sheet: str, row: int) -> dict[str, int]:
    """Column letter -> the style id of each cell openpyxl wrote in ``row``."""
    found = re.search(rf'<row r="{row}"[^>]*>(.*?)</row>', sheet, re.S)
    out = {}
    for cell in re.finditer(r'<c r="([A-Z]+)\d+"([^>]*)>', found.group(1)):
        style = re.search(r'\bs="(\d+)"', cell.group(2))
        out[cell.group(1)] = int(style.group(1)) if style else 0
    return out


def rewrite(path: Path, when: dt.datetime, title: str, first_row: int,
            body: Callable[[dict[str, int]], Iterable[bytes]] | None) -> None:
    """Rewrite the package at ``path``: the sheet ``title`` gets the rows ``body(styles)`` yields in
    place of the rows openpyxl wrote from ``first_row`` on (``styles``: what openpyxl gave each column
    in that row); every member gets the time ``when`` and the document properties its dates."""
    stamp = max(when, dt.datetime(1980, 1, 1, tzinfo=dt.UTC))
    iso = stamp.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        target = sheet_member(src, title) if body is not None else None
        for info in src.infolist():
            data = src.read(info)
            member = zipfile.ZipInfo(info.filename, date_time=stamp.timetuple()[:6])
            member.compress_type = zipfile.ZIP_DEFLATED
            if info.filename == "docProps/core.xml":
                data = re.sub(rb"(<dcterms:(created|modified)[^>]*>)[^<]*", lambda m: m.group(1) + iso, data)
            if info.filename != target:
                out.writestr(member, data)
                continue
            text = data.decode()
            start = text.index(f'<row r="{first_row}"')
            end = text.index("</sheetData>")
            styles = row_styles(text, first_row)
            with out.open(member, "w", force_zip64=True) as dst:
                dst.write(text[:start].encode())
                for chunk in body(styles):
                    dst.write(chunk)
                dst.write(text[end:].encode())
    tmp.replace(path)
