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
import queue
import re
import sys
import threading
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape

import numpy as np
import pandas as pd

_ILLEGAL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]|_(?=x[0-9A-Fa-f]{4}_)")
_SURROGATE = re.compile("[\ud800-\udfff]")
ROWS_PER_CHUNK = 512
LEVEL = 2  # deflate level: 2 writes the Scenarios XML 3x faster than 6, for a file about 25% larger


def text_xml(value: str) -> str:
    """Cell text as SpreadsheetML holds it: XML-escaped; characters XML cannot hold written as the
    format's ``_xHHHH_`` escapes (and a literal ``_xHHHH_`` protected the same way)."""
    value = _SURROGATE.sub("\ufffd", value)
    value = _ILLEGAL.sub(lambda m: f"_x{ord(m.group()):04X}_", value)
    return escape(value)


def inline_string(ref: str, style: int, value: str) -> str:
    space = ' xml:space="preserve"' if value != value.strip() else ""
    return f'<c r="{ref}"{_s(style)} t="inlineStr"><is><t{space}>{text_xml(value)}</t></is></c>'


_NONE = object()


class Formula(str):
    """A cell's formula (without '='), as opposed to text that only looks like one; ``value``, when
    given, is its result, stored as the cell's cached value."""

    def __new__(cls, text: str, value=_NONE):
        formula = super().__new__(cls, text)
        formula.value = value
        return formula

    @property
    def has_value(self) -> bool:
        return self.value is not _NONE


def row_xml(number: int, cells: Iterable[tuple[str, int, object]]) -> str:
    """One ``<row>`` of cells given as (column letter, style id, content): text (always text, an
    inline string), a number, a ``Formula``, or None for an empty cell."""
    out = [f'<row r="{number}">']
    for letter, style, value in cells:
        if value is None:
            continue
        ref = f"{letter}{number}"
        if isinstance(value, Formula):
            attr, v = cached(value.value) if value.has_value else ("", "")
            out.append(f'<c r="{ref}"{_s(style)}{attr}><f>{escape(value)}</f>{v}</c>')
        elif isinstance(value, str):
            out.append(inline_string(ref, style, value))
        elif isinstance(value, (bool, np.bool_)):
            out.append(f'<c r="{ref}"{_s(style)} t="b"><v>{int(value)}</v></c>')
        else:
            out.append(f'<c r="{ref}"{_s(style)}><v>{float(value)!r}</v></c>')
    out.append("</row>")
    return "".join(out)


def _s(style: int) -> str:
    return f' s="{style}"' if style else ""


@dataclass(frozen=True)
class Column:
    """One column of streamed rows: text per row, a formula per row, or a formula template whose
    row number is filled in (``parts`` joined by the row number), written as one shared formula.
    ``values``, when given, are the formula's results (the evaluator's), stored as each cell's cached
    value so that a reader that does not calculate (pandas, a preview, Power Query) sees them:
    numbers, booleans, text, or NaN for ``#N/A``; infinity must already be the sheet's stand-in."""

    letter: str
    style: int = 0
    text: np.ndarray | None = None  # the text of each row
    numbers: np.ndarray | None = None  # a number in each row (a key)
    formulas: np.ndarray | None = (
        None  # the formula of each row, without '=' (one result per formula)
    )
    parts: tuple[str, ...] | None = None  # a template split where the row number goes
    values: np.ndarray | None = None  # the cached result of each row's formula


def cached(value) -> tuple[str, str]:
    """A formula's cached result: the cell's type attribute and its ``<v>`` element. Numbers in the
    shortest form that reads back exactly, booleans as 1/0, text as a string result, NaN (or None)
    as the error #N/A."""
    if isinstance(value, str):
        return ' t="str"', f"<v>{text_xml(value)}</v>"
    if isinstance(value, (bool, np.bool_)):
        return ' t="b"', f"<v>{int(value)}</v>"
    if value is None or value != value:
        return ' t="e"', "<v>#N/A</v>"
    if isinstance(value, (int, np.integer)):
        return "", f"<v>{int(value)}</v>"
    return "", f"<v>{float(value)!r}</v>"


def _distinct(values: np.ndarray) -> tuple[np.ndarray, list]:
    """Codes into the distinct values (NaN one of them): each distinct cell is printed once. A few
    values (a Cadence block's rows) are printed each: factorizing costs more than it saves."""
    if len(values) <= 16:
        return np.arange(len(values)), np.asarray(values).tolist()
    codes, uniques = pd.factorize(values, use_na_sentinel=False)
    return codes, np.asarray(
        uniques
    ).tolist()  # Python scalars: repr(np.float64(x)) is not a number


def rows_xml(
    columns: list[Column], first_row: int, n: int, advance=lambda k: None
) -> Iterator[bytes]:
    """The ``<row>`` elements of rows first_row .. first_row + n - 1, in chunks of bytes.

    A template column is one shared formula (ECMA-376 §18.3.1.40): its first cell holds the formula
    and the range it covers; every other cell says only which shared formula it follows. So apart
    from its row number a cell depends only on its value, and a row is the row number joining the
    printed cells (each cell's text ends with the next cell's ``<c r="LETTER``): no cell is
    formatted more than once per distinct value in a chunk. Work goes a chunk of rows at a time, so
    memory stays flat with the row count; ``advance(k)`` is called as each chunk of k rows is done."""
    if n <= 0:
        return
    last = first_row + n - 1
    shared = {col.letter: k for k, col in enumerate(c for c in columns if c.parts is not None)}
    ends = [f'<c r="{col.letter}' for col in columns[1:]] + ['</row><row r="']
    opening = f'"><c r="{columns[0].letter}'
    for start in range(0, n, ROWS_PER_CHUNK):
        stop = min(start + ROWS_PER_CHUNK, n)
        tails = []  # per column: for each row of the chunk, its printed cell and the next one's opening
        for col, end in zip(columns, ends):
            style = _s(col.style)
            if col.text is not None:
                codes, uniques = _distinct(col.text[start:stop])
                printed = [
                    f'"{style} t="inlineStr"><is><t'
                    + (' xml:space="preserve"' if str(v) != str(v).strip() else "")
                    + f">{text_xml(str(v))}</t></is></c>{end}"
                    for v in uniques
                ]
            elif col.numbers is not None:
                codes, uniques = _distinct(col.numbers[start:stop])
                printed = [f'"{style}><v>{v!r}</v></c>{end}' for v in uniques]
            elif (
                col.formulas is not None
            ):  # a formula per row, the same formula giving the same result
                codes, uniques = _distinct(col.formulas[start:stop])
                first = np.unique(codes, return_index=True)[1]  # each distinct formula's first row
                printed = []
                for f, at in zip(uniques, first.tolist()):
                    attr, cell = (
                        cached(col.values[start + at]) if col.values is not None else ("", "")
                    )
                    printed.append(f'"{style}{attr}><f>{escape(str(f))}</f>{cell}</c>{end}')
            else:
                follow = f'<f t="shared" si="{shared[col.letter]}"/>'
                if col.values is None:
                    codes, uniques = np.zeros(stop - start, dtype=np.intp), [None]
                    printed = [f'"{style}>{follow}</c>{end}']
                else:
                    values = col.values[start:stop]
                    codes, uniques = _distinct(values)
                    if values.dtype.kind == "f":  # the common case, without a test per value
                        printed = [
                            f'"{style}>{follow}<v>{v!r}</v></c>{end}'
                            if v == v
                            else f'"{style} t="e">{follow}<v>#N/A</v></c>{end}'
                            for v in uniques
                        ]
                    else:
                        printed = []
                        for v in uniques:
                            attr, cell = cached(v)
                            printed.append(f'"{style}{attr}>{follow}{cell}</c>{end}')
            tails.append(np.array(printed, dtype=object)[codes])
        numbers = [str(first_row + i) for i in range(start, stop)]
        rows = [
            r + r.join(cells) for r, cells in zip(numbers, zip([opening] * len(numbers), *tails))
        ]
        if start == 0:  # the first row again, with each shared formula's master cell
            rows[0] = f"{first_row}{opening}" + "".join(
                _cell_text(col, shared, first_row, last, end) for col, end in zip(columns, ends)
            )
        yield ('<row r="' + "".join(rows)).removesuffix('<row r="').encode()
        advance(stop - start)


def _cell_text(col: Column, shared: dict[str, int], first_row: int, last: int, end: str) -> str:
    """One cell of the first row, after its ``<c r="LETTER``: the row number, style, value."""
    style = _s(col.style)
    r = str(first_row)
    if col.text is not None:
        v = str(col.text[0])
        space = ' xml:space="preserve"' if v != v.strip() else ""
        return f'{r}"{style} t="inlineStr"><is><t{space}>{text_xml(v)}</t></is></c>{end}'
    if col.numbers is not None:
        return f'{r}"{style}><v>{np.asarray(col.numbers[:1]).tolist()[0]!r}</v></c>{end}'
    attr, cell = cached(col.values[0]) if col.values is not None else ("", "")
    if col.formulas is not None:
        return f'{r}"{style}{attr}><f>{escape(str(col.formulas[0]))}</f>{cell}</c>{end}'
    master = escape(r.join(col.parts))
    return (
        f'{r}"{style}{attr}><f t="shared" ref="{col.letter}{first_row}:{col.letter}{last}" '
        f'si="{shared[col.letter]}">{master}</f>{cell}</c>{end}'
    )


def sheet_member(package: zipfile.ZipFile, title: str) -> str:
    """The package member holding the worksheet named ``title`` (workbook.xml -> its relationship)."""
    workbook = package.read("xl/workbook.xml").decode()
    rels = package.read("xl/_rels/workbook.xml.rels").decode()
    sheet = re.search(
        rf'<sheet\b[^>]*\bname="{re.escape(escape(title, {chr(34): "&quot;"}))}"[^>]*>', workbook
    )
    rid = re.search(r'\br:id="([^"]+)"', sheet.group()).group(1)
    rel = next(m for m in re.finditer(r"<Relationship\b[^>]*>", rels) if f'Id="{rid}"' in m.group())
    target = re.search(r'\bTarget="([^"]+)"', rel.group()).group(1)
    return (
        target.lstrip("/")
        if target.startswith("/")
        else posixpath.normpath(posixpath.join("xl", target))
    )


def row_styles(sheet: str, row: int) -> dict[str, int]:
    """Column letter -> the style id of each cell openpyxl wrote in ``row``."""
    found = re.search(rf'<row r="{row}"([^>]*?)(/?)>', sheet)
    if found is None or found.group(2):  # no such row, or an empty one
        return {}
    body = sheet[found.end() : sheet.index("</row>", found.end())]
    out = {}
    for cell in re.finditer(r'<c r="([A-Z]+)\d+"([^>]*)>', body):
        style = re.search(r'\bs="(\d+)"', cell.group(2))
        out[cell.group(1)] = int(style.group(1)) if style else 0
    return out


@dataclass(frozen=True)
class Stream:
    """Rows streamed into a sheet: they replace what openpyxl wrote from ``first_row`` on (or go
    after its last row). ``body(styles)`` yields them as bytes; ``styles(row)`` gives, per column
    letter, the style id openpyxl gave each cell of a row it wrote."""

    first_row: int
    body: Callable[[Callable[[int], dict[str, int]]], Iterable[bytes]]


_TYPE = re.compile(r' t="[^"]*"')
_FORMULA_CELL = re.compile(r'<c r="([A-Z]+[0-9]+)"([^>]*)><f>(.*?)</f><v\s*/?>(?:</v>)?</c>')


def with_values(text: str, values: dict[str, object]) -> str:
    """The sheet XML with each formula cell named in ``values`` given its cached result (openpyxl
    writes formulas with an empty value)."""
    if not values:
        return text

    def put(m: re.Match) -> str:
        ref = m.group(1)
        if ref not in values:
            return m.group(0)
        attr, v = cached(values[ref])
        style = _TYPE.sub("", m.group(2))  # the type is the result's
        return f'<c r="{ref}"{style}{attr}><f>{m.group(3)}</f>{v}</c>'

    return _FORMULA_CELL.sub(put, text)


def rewrite(
    path: Path,
    when: dt.datetime,
    streams: dict[str, Stream],
    values: dict[str, dict[str, object]] | None = None,
) -> None:
    """Rewrite the package at ``path``: each sheet named in ``streams`` gets its streamed rows, and
    the formula cells named in ``values`` (sheet title -> cell -> result) their cached results;
    every member gets the time ``when`` and the document properties its dates."""
    stamp = max(when, dt.datetime(1980, 1, 1, tzinfo=dt.UTC))
    iso = stamp.strftime("%Y-%m-%dT%H:%M:%SZ").encode()
    tmp = path.with_name(path.name + ".tmp")
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as out:
        targets = {sheet_member(src, title): stream for title, stream in streams.items()}
        results = {sheet_member(src, title): cells for title, cells in (values or {}).items()}
        for info in src.infolist():
            data = src.read(info)
            member = _member(info.filename, stamp)
            if info.filename == "docProps/core.xml":
                data = re.sub(
                    rb"(<dcterms:(created|modified)[^>]*>)[^<]*", lambda m: m.group(1) + iso, data
                )
            stream = targets.get(info.filename)
            if info.filename in results:
                data = with_values(data.decode(), results[info.filename]).encode()
            if stream is None:
                out.writestr(member, data)
                continue
            text = data.decode()
            if "<sheetData/>" in text or "<sheetData />" in text:
                text = re.sub(r"<sheetData\s*/>", "<sheetData></sheetData>", text, count=1)
            end = text.index("</sheetData>")
            found = re.search(rf'<row r="{stream.first_row}"[ >/]', text)
            start = found.start() if found else end
            with out.open(member, "w", force_zip64=True) as dst:
                dst.write(text[:start].encode())
                for chunk in ahead(stream.body(lambda row, text=text: row_styles(text, row))):
                    dst.write(
                        chunk
                    )  # deflate releases the GIL: it runs while the next chunk is printed
                dst.write(text[end:].encode())
    tmp.replace(path)


def ahead(chunks: Iterable[bytes], depth: int = 8) -> Iterator[bytes]:
    """``chunks``, produced by a thread of their own up to ``depth`` ahead of the consumer: printing
    rows (Python) overlaps with deflating them (zlib, which releases the GIL), on a second core when
    one is free. The same chunks in the same order; an error in the producer is raised here, and a
    consumer that stops early stops the producer."""
    items: queue.Queue = queue.Queue(maxsize=depth)
    stop = threading.Event()
    done = object()

    def produce() -> None:
        try:
            for chunk in chunks:
                while not stop.is_set():
                    try:
                        items.put((chunk, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            items.put((done, None))
        except BaseException as e:  # noqa: BLE001  (handed to the consumer, raised there)
            items.put((done, e))

    worker = threading.Thread(target=produce, name="sheetxml-rows", daemon=True)
    worker.start()
    try:
        while True:
            chunk, error = items.get()
            if chunk is done:
                if error is not None:
                    raise error
                return
            yield chunk
    finally:
        stop.set()
        worker.join()


def _member(name: str, stamp: dt.datetime) -> zipfile.ZipInfo:
    """A package member with a fixed time, deflated at ``LEVEL`` (the attribute is public from
    Python 3.13 as ``compress_level``; before, zipfile reads ``_compresslevel``)."""
    member = zipfile.ZipInfo(name, date_time=stamp.timetuple()[:6])
    member.compress_type = zipfile.ZIP_DEFLATED
    setattr(member, "compress_level" if sys.version_info >= (3, 13) else "_compresslevel", LEVEL)
    return member
