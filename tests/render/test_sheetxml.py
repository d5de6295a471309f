"""The Scenarios sheet writer (render/sheetxml.py), on its own: what it streams is a worksheet that
openpyxl and LibreOffice read as intended, with shared formulas, cached values of every type, text
that stays text, and chunk boundaries that leave no seam."""

from __future__ import annotations

import csv
import datetime as dt
import io
import math

import numpy as np
import openpyxl
import pytest
from openpyxl import Workbook

from ckptreport.render import sheetxml

from conftest import SOFFICE, libreoffice

WHEN = dt.datetime(2023, 11, 14, tzinfo=dt.UTC)
NAMES = np.array(
    ["a", " padded ", "=1+1", "x\x01y", "<b>&", "_x0041_", "\ud800", "tail"] * 3, dtype=object
)


def _columns(n: int) -> list[sheetxml.Column]:
    rows = np.arange(n, dtype=float)
    return [
        sheetxml.Column("A", text=NAMES[:n]),
        sheetxml.Column("B", formulas=np.array([f"{v}+0" for v in rows]), values=rows),
        sheetxml.Column("C", parts=("B", "*2"), values=rows * 2),
        sheetxml.Column(
            "D", parts=("IF(B", ">3,NA(),B", "/3)"), values=np.where(rows > 3, np.nan, rows / 3)
        ),
        sheetxml.Column("E", parts=("B", ">2"), values=rows > 2),
        sheetxml.Column(
            "F",
            parts=("IF(B", '>2,"big","small")'),
            values=np.where(rows > 2, "big", "small").astype(object),
        ),
        sheetxml.Column(
            "G", parts=("ROW()*1",)
        ),  # no cached value: a reader that calculates fills it
    ]


def _shown(name: str) -> str:
    """What a reader shows of a name: XML cannot hold a lone surrogate, so it becomes U+FFFD."""
    return name.replace("\ud800", "\ufffd")


def _write(path, n: int) -> None:
    wb = Workbook(write_only=True)
    ws = wb.create_sheet("Data")
    ws.append(["name", "b", "c", "d", "e", "f", "g"])
    ws.append(
        ["first", "=0", "=B2*2", "=0", "=FALSE()", '="small"', "=ROW()*1"]
    )  # replaced from row 2 on
    wb.save(path)
    sheetxml.rewrite(
        path,
        WHEN,
        {"Data": sheetxml.Stream(2, lambda styles: sheetxml.rows_xml(_columns(n), 2, n))},
    )


@pytest.mark.parametrize("chunk", [1, 5, 512])
def test_rows_read_back_as_written(tmp_path, monkeypatch, chunk):
    """Formulas (shared ones expanded per row), cached values and text, across chunk boundaries."""
    monkeypatch.setattr(sheetxml, "ROWS_PER_CHUNK", chunk)
    n = 21
    path = tmp_path / "t.xlsx"
    _write(path, n)
    formulas = list(openpyxl.load_workbook(path)["Data"].iter_rows(min_row=2, values_only=True))
    values = list(
        openpyxl.load_workbook(path, data_only=True)["Data"].iter_rows(min_row=2, values_only=True)
    )
    assert len(formulas) == len(values) == n
    for i, (f, v) in enumerate(zip(formulas, values)):
        r = i + 2
        assert (
            f[1] == f"={float(i)}+0" and f[2] == f"=B{r}*2" and f[3] == f"=IF(B{r}>3,NA(),B{r}/3)"
        )
        assert f[4] == f"=B{r}>2" and f[6] == "=ROW()*1"
        if i % 8 not in (
            3,
            5,
        ):  # openpyxl does not decode the format's _xHHHH_ escapes; LibreOffice does (below)
            assert v[0] == _shown(NAMES[i]), (v[0], NAMES[i])
        assert (
            v[1] == i
            and v[2] == 2 * i
            and v[4] is (i > 2)
            and v[5] == ("big" if i > 2 else "small")
        )
        assert (v[3] == "#N/A") if i > 3 else math.isclose(v[3], i / 3)
        assert v[6] is None


def test_the_same_rows_give_the_same_bytes(tmp_path):
    a, b = tmp_path / "a.xlsx", tmp_path / "b.xlsx"
    _write(a, 21)
    _write(b, 21)
    assert a.read_bytes() == b.read_bytes()


def test_no_rows_leaves_a_valid_sheet(tmp_path):
    path = tmp_path / "t.xlsx"
    _write(path, 0)
    assert list(openpyxl.load_workbook(path)["Data"].iter_rows(values_only=True)) == [
        ("name", "b", "c", "d", "e", "f", "g")
    ]


@pytest.mark.skipif(SOFFICE is None, reason="LibreOffice is not installed")
def test_libreoffice_computes_what_was_cached(tmp_path):
    """LibreOffice opens the file without complaint and, recalculating every formula, gets the
    cached values (text cells stay text: '=1+1' is not computed)."""
    path = tmp_path / "t.xlsx"
    _write(path, 21)
    recalc = libreoffice(path, tmp_path / "recalc", "xlsx")
    ours = list(
        openpyxl.load_workbook(path, data_only=True)["Data"].iter_rows(min_row=2, values_only=True)
    )
    theirs = list(
        openpyxl.load_workbook(recalc, data_only=True)["Data"].iter_rows(
            min_row=2, values_only=True
        )
    )
    as_csv = libreoffice(path, tmp_path / "csv", "csv:Text - txt - csv (StarCalc):44,34,76")
    texts = [row[0] for row in csv.reader(io.StringIO(as_csv.read_text(encoding="utf-8")))][1:]
    assert texts == [
        _shown(name) for name in NAMES[:21]
    ]  # the format's escapes decoded, a literal one kept
    for i, (o, t) in enumerate(zip(ours, theirs, strict=True)):
        for a, b in zip(o[1:6], t[1:6]):
            assert a == b or (isinstance(a, float) and math.isclose(a, b)), (i, o, t)
        assert t[6] == i + 2  # computed by LibreOffice where nothing was cached


def test_ahead_gives_the_same_chunks_and_the_producers_errors():
    """Rows printed by a thread ahead of the deflate: every chunk, in order; an error while printing
    reaches the writer; a writer that stops early stops the printing thread (no thread left)."""
    import threading

    assert list(sheetxml.ahead(str(i).encode() for i in range(1000))) == [
        str(i).encode() for i in range(1000)
    ]

    def failing():
        yield b"one"
        raise ValueError("printing failed")

    got = []
    with pytest.raises(ValueError, match="printing failed"):
        for chunk in sheetxml.ahead(failing()):
            got.append(chunk)
    assert got == [b"one"]

    produced = []

    def endless():
        for i in range(10**9):
            produced.append(i)
            yield b"x"

    stream = sheetxml.ahead(endless(), depth=2)
    assert next(stream) == b"x"
    stream.close()  # the writer stopped early: the producer is joined, not left printing
    assert not any(t.name == "sheetxml-rows" for t in threading.enumerate())
    assert len(produced) < 10
