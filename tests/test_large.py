"""Large plans: above report.ROWS_IN_MEMORY rows the plan streams through the compute stage chunk by
chunk (Parquet and CSV written as it goes, the report keeping only the rows the outputs show), and
gives exactly what one frame gives. Thresholds are lowered here so that the shipped plan streams;
speed and memory at 20M rows are measured by benchmarks/bench_large.py, not here."""

from __future__ import annotations

import dataclasses

import pandas as pd
import pytest

from ckptreport.answer import report as report_mod
from ckptreport.answer.report import compute
from ckptreport.answer.sheets import concat
from ckptreport.build import build
from ckptreport.read.quantity import Q


@pytest.fixture
def narrow(shipped):
    """The shipped plan with a workbook limit that makes the selection matter."""
    plan = shipped.plan.model_copy(update={"workbook_rows": Q(3000.0, "3000", "count")})
    return dataclasses.replace(shipped, plan=plan)


def _same(a: pd.DataFrame, b: pd.DataFrame) -> None:
    assert list(a.columns) == list(b.columns) and list(a.index) == list(b.index)
    for name in a.columns:
        x, y = a[name], b[name]
        if isinstance(x.dtype, pd.CategoricalDtype) or isinstance(y.dtype, pd.CategoricalDtype):
            x, y = x.astype(str), y.astype(str)
        pd.testing.assert_series_equal(x, y, check_names=False, obj=name)


def test_a_streamed_plan_gives_what_one_frame_gives(narrow, monkeypatch):
    whole = compute(narrow)
    monkeypatch.setattr(report_mod, "ROWS_IN_MEMORY", 4000)
    monkeypatch.setattr(report_mod, "CHUNK_ROWS", 1500)
    chunks, said = [], []
    streamed = compute(narrow, sink=chunks.append, progress=said.append)
    assert len(chunks) >= 8 and all(len(c) <= 2 * 1500 for c in chunks)
    _same(concat(chunks), whole.frame)  # every row went to the sink, in order, once
    assert (
        streamed.rows == whole.rows == len(whole.frame)
        and len(streamed.frame) < len(whole.frame) / 2
    )
    assert said[-1].startswith(f"computed {whole.rows:,} of {whole.rows:,} scenarios")
    pd.testing.assert_frame_equal(streamed.summary, whole.summary)
    assert (
        list(streamed.workbook_index) == list(whole.workbook_index)
        and streamed.workbook_note == whole.workbook_note
    )
    assert streamed.candidates == whole.candidates and streamed.tier_overview == whole.tier_overview
    assert [b.pick.option for b in streamed.briefs] == [b.pick.option for b in whole.briefs]
    for a, b in zip(streamed.purchases, whole.purchases):
        _same(a.points, b.points)
    _same(streamed.frame, whole.frame.loc[streamed.frame.index])


def test_a_streamed_build_writes_every_row_and_leaves_the_csv_to_be_asked_for(
    small_models, tmp_path, monkeypatch
):
    """Parquet holds every row; above CSV_MAX_ROWS the CSV is left out with a note unless asked."""
    from ckptreport import build as build_mod

    whole = build(small_models, tmp_path / "whole", skip=["workbook", "briefs"])
    monkeypatch.setattr(report_mod, "ROWS_IN_MEMORY", 300)
    monkeypatch.setattr(report_mod, "CHUNK_ROWS", 200)
    monkeypatch.setattr(build_mod, "CSV_MAX_ROWS", 100)
    left = build(small_models, tmp_path / "left", skip=["workbook", "briefs"])
    assert not (tmp_path / "left" / "scenarios.csv").exists()
    assert any("scenarios.csv left out" in n and "--csv" in n for n in left.notes)
    _same(
        pd.read_parquet(tmp_path / "left" / "scenarios.parquet"), whole.frame.reset_index(drop=True)
    )
    asked = build(small_models, tmp_path / "asked", csv=True, skip=["workbook", "briefs"])
    assert not asked.notes or not any("left out" in n for n in asked.notes)
    assert (tmp_path / "asked" / "scenarios.csv").read_bytes() == (
        tmp_path / "whole" / "scenarios.csv"
    ).read_bytes()
