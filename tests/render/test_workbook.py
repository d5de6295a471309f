"""The workbook as finance uses it, checked in a real spreadsheet application.

LibreOffice (headless) recalculates every formula on load — its OOXMLRecalcMode is set to 'always'
in a throwaway profile — and saves; the recalculated cells must equal the engine's values. Then
inputs are changed in the saved workbook, as finance would, and the recalculated figures must
equal what the engine computes from YAML with the same change. `soffice` exits 0 even when a
conversion fails, so every call checks that its output exists.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
import xlsxcells

from ckptreport.answer.types import option_label
from ckptreport.answer.uncertainty.robustness import sensitivity
from ckptreport.build import build
from ckptreport.model.evaluate import compute
from ckptreport.read.units import INF_AT
from ckptreport.render.workbook.scenarios import scenario_columns

from conftest import GNUMERIC, SOFFICE, gnumeric, libreoffice, recalculated
from spreadsheets import assert_cells_equal_engine, formulas_carry_what_it_computes, scenario_cells

# Skipped only outside CI (make test installs LibreOffice where it can); in CI a missing soffice fails.
pytestmark = pytest.mark.skipif(
    SOFFICE is None and not os.environ.get("CI"),
    reason="LibreOffice (soffice) is not installed: run `make system-deps`",
)


@pytest.fixture(scope="module")
def built(small_build):
    """The shared small build (conftest): its Result and its workbook, read and never changed."""
    return small_build.result, small_build.out / "ckptreport.xlsx"


@pytest.fixture(scope="module")
def recalc(small_recalc) -> Path:
    return small_recalc


def test_every_formula_cell_equals_the_engine(built, recalc):
    """LibreOffice recalculates every cell of Scenarios; each equals the engine (rel 1e-9)."""
    result, _ = built
    frame = result.frame.astype({c: object for c in result.frame.select_dtypes("category").columns})
    compared = assert_cells_equal_engine(scenario_cells(recalc), frame)
    assert compared == len(frame) * len(scenario_columns(frame)) > 50_000
    assert {
        "restore_s",
        "restore_tier_s",
        "host_restore_pct",
        "coordination_s",
        "snapshot_s",
    } <= set(
        scenario_columns(frame)
    )  # restore and the recovery mix are live formulas, recalculated above


def test_cached_values_are_what_a_spreadsheet_computes(built, recalc):
    """Every Scenarios cell carries its value (pandas, previews and Power Query read it without
    calculating): each equals what LibreOffice computes, hidden lookup helpers included."""
    _, xlsx = built
    ours, theirs = scenario_cells(xlsx), scenario_cells(recalc)
    assert list(ours.columns) == list(theirs.columns) and len(ours) == len(theirs) > 0
    compared = 0
    for name in ours.columns:
        for i, (o, t) in enumerate(zip(ours[name].tolist(), theirs[name].tolist())):
            where = f"{name} row {i}: cached {o!r}, LibreOffice {t!r}"
            if isinstance(t, (int, float)) and not isinstance(t, bool) and abs(t) >= INF_AT:
                assert isinstance(o, (int, float)) and abs(o) >= INF_AT and o * t > 0, (
                    where
                )  # both 'unbounded'
            elif isinstance(t, (int, float)) and not isinstance(t, bool):
                assert isinstance(o, (int, float)) and math.isclose(
                    o, t, rel_tol=1e-9, abs_tol=1e-12
                ), where
            else:
                assert o == t, where
            compared += 1
    assert compared == ours.size


def test_every_formula_on_every_sheet_carries_what_a_spreadsheet_computes(built, recalc):
    """Not only Scenarios: every formula cell of every sheet (Summary, Choice, Purchase, Cadence,
    Checks, Cover, Assumptions' derived figures) stores a cached result, and it is what LibreOffice
    computes, so a reader that does not calculate (openpyxl data_only, pandas, a preview) sees the
    engine's numbers and the workbook need not be recalculated on open."""
    _, xlsx = built
    compared = formulas_carry_what_it_computes(xlsx, recalc, "LibreOffice")
    assert set(compared) >= {
        "Summary",
        "Choice",
        "Purchase",
        "Cadence",
        "Checks",
        "Cover",
        "Scenarios",
        "Sensitivity",
    }, compared
    assert compared["Cadence"] > 1000 and compared["Choice"] > 100, compared


@pytest.mark.skipif(
    GNUMERIC is None and not os.environ.get("CI"),
    reason="Gnumeric (ssconvert) is not installed: run `make system-deps`",
)
@pytest.mark.parametrize("which", ["small plan", "shipped defaults"])
def test_gnumeric_and_libreoffice_compute_every_cached_value(which, request, tmp_path):
    """A second spreadsheet engine: Gnumeric (ssconvert --recalc) recalculates every formula of the
    workbook to the value it caches, as LibreOffice does, on the small plan and on the shipped defaults
    (whose BLOOM layout does not divide its GPUs, and whose options sized to land on the target sit on
    its boundary). Each case asks only for its own build (the two can start at once, side by side)."""
    if which == "small plan":
        xlsx = request.getfixturevalue("small_build").out / "ckptreport.xlsx"
        lo = request.getfixturevalue("small_recalc")
    else:
        xlsx = request.getfixturevalue("default_build").out / "ckptreport.xlsx"
        lo = recalculated(xlsx, tmp_path)
    for app, recalc in (("Gnumeric", gnumeric(xlsx, tmp_path / "gnumeric")), ("LibreOffice", lo)):
        compared = formulas_carry_what_it_computes(xlsx, recalc, app)
        assert (
            compared["Scenarios"] > 1000 and compared["Checks"] >= 4 and compared["Choice"] > 100
        ), (app, compared)


def test_cadence_and_summary_cells_equal_the_engine(built, recalc):
    """Every Cadence block (the first written by openpyxl, the others streamed) recomputes waste at
    other intervals from the same definitions; Summary shows the scenario figures it names."""
    result, _ = built
    wb = openpyxl.load_workbook(recalc, data_only=True, read_only=True)
    cad = wb["Cadence"]
    rows = list(cad.iter_rows(values_only=True))
    header = next(r for r in rows if r and r[0] == "interval_s")
    f = result.frame
    blocks = 0
    for i, r in enumerate(rows):
        if not (r and isinstance(r[0], str) and r[0].count(" / ") == 4):
            continue
        model, sku, tier, strategy, engine = [p.strip() for p in r[0].split("/")]
        under = rows[
            i + 1
        ]  # the optimum row: ..., "GPUs", the scenario's GPUs (live), scenario_id, its key
        gpus, key = under[under.index("GPUs") + 1], under[under.index("scenario_id") + 1]
        row = f[
            (f.model == model)
            & (f.sku == sku)
            & (f.tier == tier)
            & (f.strategy == strategy)
            & (f.engine == engine)
            & (f.gpus == gpus)
            & (f.interval_s == 1800)
            & (f.recipe == "adamw-bf16")
        ].iloc[0]
        assert row.name == key
        block = [dict(zip(header, g)) for g in rows[i + 3 : i + 3 + 24]]
        assert [b["interval_s"] for b in block] == [
            60.0 * m
            for m in (
                1,
                2,
                3,
                5,
                7,
                10,
                15,
                20,
                25,
                30,
                40,
                50,
                60,
                75,
                90,
                120,
                150,
                180,
                240,
                300,
                360,
                480,
                600,
                720,
            )
        ]
        for cells in block:
            env = {k: np.array([v]) for k, v in row.items() if k in _inputs()}
            env["interval_s"] = np.array([float(cells["interval_s"])])
            want = compute(env)
            for name in ("stall_s", "overhead_pct", "rework_pct", "waste_pct"):
                engine = want[name][0] / (
                    100 if name.endswith("_pct") else 1
                )  # a cell holds a fraction
                assert math.isclose(cells[name], engine, rel_tol=1e-9), (
                    r[0],
                    name,
                    cells["interval_s"],
                )
        marked = [b for b in block if b["optimum"]]  # the grid point of least waste, by formula
        assert len(marked) >= 1 and all(b["optimum"] == "◀ least waste" for b in marked), r[0]
        assert all(b["waste_pct"] == min(c["waste_pct"] for c in block) for b in marked), r[0]
        blocks += 1
    assert blocks >= 4
    summary = list(wb["Summary"].iter_rows(values_only=True))
    head = next(r for r in summary if r and r[0] == "model")
    line = next(r for r in summary if r and r[0] == "llama3-405b" and r[2] == "dgx-h100")
    at = head.index("sync: tier with engine (at build)")
    tier, engine = line[at].split(
        " with "
    )  # the sync pick names its engine: two sync engines in the plan
    pick = f[
        (f.model == "llama3-405b")
        & (f.sku == "dgx-h100")
        & (f.recipe == "adamw-bf16")
        & (f.gpus == 1024)
        & (f.interval_s == 1800)
        & (f.strategy == "sync")
        & (f.tier == tier)
        & (f.engine == engine)
    ]
    assert len(pick) == 1
    assert math.isclose(line[3], pick.iloc[0]["ckpt_bytes"])
    assert math.isclose(line[at + 1], pick.iloc[0]["overhead_pct"] / 100, rel_tol=1e-9)


def _inputs():
    from ckptreport.read.inputs import INPUTS

    return set(INPUTS)


def _assumption(xlsx: Path, key: str, figure: str) -> str:
    """Where the Assumptions value of (key, figure) is: the blue cell finance types over."""
    return xlsxcells.find(xlsxcells.read(xlsx, only=("Assumptions",))["Assumptions"], key, figure)


def test_changed_assumptions_recompute_like_the_engine(built, small_models, tmp_path):
    """Change a tier's write bandwidth, its purchase price per GB/s, $/GPU-hour and an interval in the
    saved workbook; after LibreOffice recalculates, every Scenarios cell equals the engine run on YAML
    with the same edits, and the Summary's recommended option (chosen by formula) is the one the
    engine now recommends: the dearer superpod-good gives way."""
    result, xlsx = built
    typed = {
        ("tiers.pfs-100", "tier_write_GBps"): 250,
        ("tiers.superpod-good", "capex_usd_per_GBps"): 2_500_000,
        ("skus.dgx-h100", "usd_per_gpu_hour"): 2.5,
        ("plan.intervals", "interval_s[1]"): 2700,
    }
    edited = xlsxcells.typed(
        xlsx,
        tmp_path / "edited" / "ckptreport.xlsx",
        {"Assumptions": {_assumption(xlsx, *where): v for where, v in typed.items()}},
    )

    def sub(name, old, new):
        path = small_models / name
        text = path.read_text()
        assert old in text
        path.write_text(text.replace(old, new, 1))

    sub("storage.yaml", "write: {value: 100 GB/s", "write: {value: 250 GB/s")
    sub(
        "storage.yaml",
        'capex_usd_per_GBps: {value: "$25,000", low: "$8,400", high: "$50,000", driver: '
        "flash-price-per-GBps",
        'capex_usd_per_GBps: {value: "$2,500,000"',
    )  # far outside the range: dropped
    sub("hardware.yaml", "usd_per_gpu_hour: {value: $4.916", "usd_per_gpu_hour: {value: $2.5")
    sub("plan.yaml", "intervals: [10 min, 30 min]", "intervals: [10 min, 45 min]")
    sub("plan.yaml", "interval: 30 min", "interval: 45 min")
    expected_build = build(small_models, tmp_path / "expected", skip=["workbook", "briefs"])
    expected = expected_build.frame
    frame = expected.astype({c: object for c in expected.select_dtypes("category").columns})
    recalc = recalculated(edited, tmp_path)
    cells = scenario_cells(recalc)
    assert_cells_equal_engine(cells, frame)
    changed = cells[(cells.tier == "pfs-100") & (cells.sku == "dgx-h100")]
    assert (changed["interval_s"].isin([600, 2700])).all() and (
        changed["usd_per_gpu_hour"] == 2.5
    ).all()
    book = openpyxl.load_workbook(recalc, data_only=True, read_only=True)
    rows = list(book["Summary"].iter_rows(values_only=True))
    book.close()
    start = next(i for i, r in enumerate(rows) if r and r[0] == "model")
    words = [r[0] for r in rows[:start] if r and isinstance(r[0], str) and r[0].startswith("At ")]
    assert len(words) == 1 and "every 45 min" in words[0], (
        words
    )  # the words follow the edited interval
    col = rows[start].index("recommended")
    shown = {(r[0], r[2]): r[col] for r in rows[start + 1 : start + 1 + len(result.report.summary)]}
    before = {
        (r["model"], r["sku"]): option_label(
            r["option_strategy"], r["option_tier"], r["option_engine"]
        )
        for r in result.report.summary.to_dict("records")
    }
    now = {
        (r["model"], r["sku"]): option_label(
            r["option_strategy"], r["option_tier"], r["option_engine"]
        )
        for r in expected_build.report.summary.to_dict("records")
    }
    assert shown == now and now != before
    assert all("superpod-good" not in v for v in now.values())
    rests = {
        (r[0], r[2]): r[rows[start].index("rests on assumed prices")]
        for r in rows[start + 1 : start + 1 + len(result.report.summary)]
    }
    assert all(v.startswith("capex_usd_per_tb, capex_usd_per_GBps") for v in rests.values()), rests


HOSTILE = ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(1)"]
PATTERNS = [
    "llama?-8b",
    "llama*",
    "big~model",
    "a[1]'s",
    "~*?",
]  # wildcards to MATCH, were names matched


def test_input_strings_stay_literal_text(small_models, tmp_path):
    """Models named like formulas are text in every sheet, before and after LibreOffice opens it, and
    names that a pattern match would read as wildcards (? * ~ [ ] ') find their own inputs: each has
    its own parameter count, and every Scenarios cell equals the engine after recalculation. One
    build and one recalculation for every name."""
    models = small_models / "models.yaml"
    text = models.read_text()
    entry = text[text.index("  llama3-8b:\n") : text.index("  llama3-70b:\n")]
    names = HOSTILE + PATTERNS
    quoted = ["'" + name.replace("'", "''") + "'" for name in names]
    assert "    params: 8,030,261,248\n" in entry
    models.write_text(
        text.replace(
            "models:\n",
            "models:\n"
            + "".join(
                entry.replace("  llama3-8b:\n", f"  {q}:\n", 1).replace(
                    "8,030,261,248", f"{8 + k}B"
                )
                for k, q in enumerate(quoted)
            ),
            1,
        )
    )
    plan = small_models / "plan.yaml"
    plan.write_text(
        plan.read_text()
        .replace("models: [llama3-405b, llama3-8b]", f"models: [llama3-405b, {', '.join(quoted)}]")
        .replace("recipes: [adamw-bf16, adamw-bf16-grads]", "recipes: [adamw-bf16]")
        .replace("skus: [dgx-h100, gh200, dgx-a100]", "skus: [dgx-h100]")
    )
    result = build(small_models, tmp_path / "out", skip=["briefs"])
    xlsx = tmp_path / "out" / "ckptreport.xlsx"
    with zipfile.ZipFile(xlsx) as z:
        formulas = " ".join(
            re.findall(
                r"<f>(.*?)</f>",
                " ".join(
                    z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/")
                ),
            )
        )
    assert "HYPERLINK" not in formulas and "SUM(1)" not in formulas and "+1+1" not in formulas
    book = xlsxcells.read(recalculated(xlsx, tmp_path))
    cells = scenario_cells(tmp_path / "recalc" / "ckptreport.xlsx")
    frame = result.frame.astype({c: object for c in result.frame.select_dtypes("category").columns})
    assert_cells_equal_engine(cells, frame)
    for k, name in enumerate(names):
        assert (cells.loc[cells["model"] == name, "params"] == (8 + k) * 1e9).all(), name
    for name in HOSTILE:
        seen = [c.value for sheet in book.values() for c in sheet.values() if c.value == name]
        assert len(seen) >= 3, name  # Scenarios, Assumptions, Summary at least
        assert (cells["model"] == name).sum() == (result.frame["model"] == name).sum() > 0, name
        assert cells.loc[cells["model"] == name, "params"].notna().all(), (
            name
        )  # its lookups still work


def test_over_the_row_limit_scenarios_keeps_the_best_and_says_so(small_models, tmp_path):
    """Above workbook_rows, Scenarios holds the lowest-waste rows of each group and its header says so;
    the summary's rows are always there; Parquet keeps every row."""
    result = build(small_models, tmp_path / "out", workbook_rows=100, skip=["briefs"])
    wb = openpyxl.load_workbook(tmp_path / "out" / "ckptreport.xlsx", read_only=True)
    rows = list(wb["Scenarios"].iter_rows(values_only=True))
    note = rows[0][0]
    assert re.match(
        rf"Scenarios holds \d+ of {len(result.frame):,} rows \(workbook_rows = 100\)", note
    ), note
    data = rows[2:]
    named = {i for c in result.report.candidates for i in c} | {
        int(i) for p in result.report.purchases for i in p.points.index
    }  # always kept
    assert len(data) <= max(100, len(named)) and named <= {r[0] for r in data}
    assert len(pd.read_parquet(tmp_path / "out" / "scenarios.parquet")) == len(result.frame)
    summary = [
        r
        for r in wb["Summary"].iter_rows(values_only=True)
        if r and r[0] in ("llama3-405b", "llama3-8b")
    ]
    keys = {r[0] for r in data}
    found = [
        re.fullmatch(
            r"=INDEX\(Scenarios!\$[A-Z]+:\$[A-Z]+,MATCH\((\d+),Scenarios!\$A:\$A,0\)\)", str(r[5])
        )
        for r in summary[:4]
    ]
    assert summary and all(found) and {int(m.group(1)) for m in found} <= keys, summary[
        :4
    ]  # found by key


def test_layout_a_finance_reader_expects(built):
    """Sheets in order; inputs blue, formulas black; defined names; a table with filters; frozen
    headers; units in number formats; over-target cells highlighted; landscape, fit to width; charts."""
    _, xlsx = built
    wb = openpyxl.load_workbook(xlsx)
    assert wb.sheetnames == [
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
    ]
    for name in ("target_overhead_pct", "mfu_pct", "restart_s", "retention", "buffers"):
        assert name in wb.defined_names
    assumptions = wb["Assumptions"]
    value = next(r[2] for r in assumptions.iter_rows() if r[1].value == "d2h_gpu_GBps")
    assert value.font.color.rgb.endswith("0000FF")
    scen = wb["Scenarios"]
    assert "Scenarios" in scen.tables and scen.freeze_panes == "G3"
    header = [c.value for c in scen[2]]
    stall = scen.cell(3, header.index("stall_s") + 1)
    color = stall.font.color
    assert stall.data_type == "f" and (
        color is None or color.type == "theme" or not color.rgb.endswith("0000FF")
    )
    assert '" s"' in stall.number_format
    assert "GB/s" in scen.cell(3, header.index("d2h_GBps") + 1).number_format
    assert "%" in scen.cell(3, header.index("overhead_pct") + 1).number_format
    assert "$" in scen.cell(3, header.index("waste_usd") + 1).number_format
    rules = [r for cf in scen.conditional_formatting for r in cf.rules]
    assert any("target_overhead_pct" in f for r in rules for f in r.formula)
    assert (
        scen.page_setup.orientation == "landscape"
        and not scen.sheet_properties.pageSetUpPr.fitToPage
    )
    assert (
        scen.print_title_rows == "$2:$2" and scen.print_title_cols == "$A:$G"
    )  # pages of readable width
    assert wb["Summary"].sheet_properties.pageSetUpPr.fitToPage  # the small sheets: one page wide
    with zipfile.ZipFile(xlsx) as z:
        charts = [n for n in z.namelist() if n.startswith("xl/charts/chart")]
    assert len(charts) >= 3


def test_sources_sheet_cites_every_default_and_the_build(built):
    """Every sourced input appears with its citation; provenance names version, input hash, build time."""
    result, xlsx = built
    wb = openpyxl.load_workbook(xlsx, read_only=True)
    text = "\n".join(
        " ".join(str(c) for c in r if c is not None)
        for r in wb["Sources"].iter_rows(values_only=True)
    )
    assert result.inputs.input_hash in text
    for (section, name, field), prov in result.inputs.prov.items():
        if prov.source:
            assert prov.source in text, (section, name, field)


def test_workbook_pages_render(small_models, tmp_path):
    """LibreOffice prints the workbook to PDF and poppler rasterises the first page (the Cover); no
    printed cell shows '###' (a number wider than its column), and the Summary's names and runner-ups
    print whole (not clipped by the next column). Every page carries its sheet, the input hash and
    its number; Scenarios prints in pages of readable width, each with the header and each row's key
    and system. (Scenarios capped at 60 rows: every page of it is printed.)"""
    result = build(small_models, tmp_path / "out", workbook_rows=60, skip=["briefs"])
    xlsx = tmp_path / "out" / "ckptreport.xlsx"
    pdf = libreoffice(xlsx, tmp_path / "pdf", "pdf")
    if shutil.which("pdftoppm") is None and not os.environ.get("CI"):
        pytest.skip("poppler-utils not installed: run `make system-deps`")
    subprocess.run(
        ["pdftoppm", "-r", "40", "-png", "-f", "1", "-l", "1", str(pdf), str(tmp_path / "page")],
        check=True,
    )
    assert list(tmp_path.glob("page*.png"))
    text = subprocess.run(
        ["pdftotext", "-layout", str(pdf), "-"], check=True, capture_output=True, text=True
    ).stdout
    assert "Scenarios" in text and "###" not in text, [
        ln for ln in text.splitlines() if "###" in ln
    ][:5]
    first = next(p for p in text.split("\f") if "ckptreport: Summary" in p)  # the Summary's page
    summary = result.report.summary.to_dict("records")
    names = {
        r[k]
        for r in summary
        for k in ("model", "recipe", "sku", "sync_tier", "async_tier", "runner_up_tier")
        if isinstance(r.get(k), str)
    }
    names |= {
        f"{r['option_strategy']} to {r['option_tier']}"
        for r in summary
        if isinstance(r.get("option_tier"), str)
    }
    assert names and all(n in first for n in names), [n for n in names if n not in first]
    pages = text.split("\f")[
        :-1
    ]  # every page: its sheet in the header, the input hash and page in the footer
    stamp = f"input hash {result.report.inputs.input_hash[:16]}"
    assert len(pages) > 1 and all(
        stamp in p and f"of {len(pages)}" in p and "ckptreport: " in p for p in pages
    )
    scenario_pages = [
        p for p in pages if "ckptreport: Scenarios" in p
    ]  # in pages of readable width, each
    assert len(scenario_pages) >= 4 and all(
        "scenario_id" in p and "strategy" in p for p in scenario_pages
    )


def test_inputs_are_validated_and_open_formulas_locked(built):
    """Every numeric blue input on Assumptions has a validation (a percentage 0-100%, any other figure
    0 or more) that its own value passes; inputs are unlocked and formulas locked on protected
    sheets (no password); Scenarios stays unprotected so it can be sorted and filtered."""
    _, xlsx = built
    wb = openpyxl.load_workbook(xlsx)
    ws = wb["Assumptions"]
    rules = {}
    for dv in ws.data_validations.dataValidation:
        for rng in dv.sqref.ranges:
            for row in ws[rng.coord] if ":" in rng.coord else [[ws[rng.coord]]]:
                for c in row:
                    assert c.coordinate not in rules, c.coordinate  # one rule a cell
                    rules[c.coordinate] = dv
    blue = [
        r[2]
        for r in ws.iter_rows(min_row=4)
        if r[2].font
        and r[2].font.color is not None
        and r[2].font.color.rgb == "000000FF"
        and isinstance(r[2].value, (int, float))
        and not isinstance(r[2].value, bool)
    ]
    assert len(blue) > 100 and {c.coordinate for c in blue} <= set(rules)
    for c in blue:
        dv = rules[c.coordinate]
        assert not c.protection.locked, c.coordinate
        if dv.operator == "between":
            assert dv.formula2 == "1" and 0 <= c.value <= 1 and ws.cell(c.row, 4).value == "%", (
                c.coordinate,
                c.value,
            )
            assert c.number_format.endswith("%"), (
                c.coordinate
            )  # a fraction shown as a percent: 0.01 is 1.0%
        else:
            assert dv.operator == "greaterThanOrEqual" and c.value >= 0, (c.coordinate, c.value)
    assert {s.title for s in wb if s.protection.sheet} == set(wb.sheetnames) - {"Scenarios"}
    assert not any(s.protection.password for s in wb)
    summary = wb["Summary"]
    formula = next(
        c
        for row in summary.iter_rows()
        for c in row
        if isinstance(c.value, str) and c.value.startswith("=")
    )
    assert formula.protection.locked


def _checks(xlsx: Path) -> tuple[list[tuple[str, object]], str]:
    wb = openpyxl.load_workbook(xlsx, data_only=True, read_only=True)
    rows = list(wb["Checks"].iter_rows(values_only=True))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "check")
    checks = [(r[0], r[1]) for r in rows[start + 1 :] if r and r[0]]
    cover = next(r[1] for r in wb["Cover"].iter_rows(values_only=True) if r and r[0] == "Checks")
    wb.close()
    return checks, cover


def test_checks_pass_and_catch_an_inconsistent_edit(built, recalc, tmp_path):
    """On the build every check is TRUE and the Cover says all pass. Type a negative input and
    overwrite a Scenarios stall with a number (as a careless edit would): after LibreOffice
    recalculates, exactly those checks turn FALSE and the Cover says so."""
    checks, cover = _checks(recalc)
    assert len(checks) >= 5 and all(ok in (True, 1) and ok is not None for _, ok in checks), checks
    assert cover == f"{len(checks)} of {len(checks)} checks pass"
    _, xlsx = built
    header = xlsxcells.rows(xlsxcells.read(xlsx, only=("Scenarios",))["Scenarios"], min_row=2)[0]
    edited = xlsxcells.typed(
        xlsx,
        tmp_path / "edited.xlsx",
        {
            "Assumptions": {_assumption(xlsx, "tiers.pfs-100", "tier_write_GBps"): -5},
            "Scenarios": {f"{xlsxcells.letters(header.index('stall_s') + 1)}10": 12345.0},
        },
    )
    checks, cover = _checks(recalculated(edited, tmp_path))
    failed = {what for what, ok in checks if ok not in (True, 1)}
    assert failed == {
        "Every input on Assumptions is 0 or more",
        "Stall = checkpoint cost + back-pressure + interference, in every scenario",
    }, checks
    assert cover == f"{len(checks) - 2} of {len(checks)} checks pass: see the Checks sheet"


def test_the_sensitivity_sheet_is_a_tornado_ranked_as_the_terminal(built):
    """The Sensitivity table lists the inputs by their swing in the cost over the run, largest first,
    as `ckptreport sensitivity` does for the same option; each swing is the engine's."""

    result, xlsx = built
    wb = openpyxl.load_workbook(xlsx, read_only=True, data_only=True)
    rows = list(wb["Sensitivity"].iter_rows(values_only=True))
    wb.close()
    header = next(i for i, r in enumerate(rows) if r and r[0] == "input")
    table = [r for r in rows[header + 1 :] if r and r[0]]
    table = table[
        : next((i for i, r in enumerate(table) if str(r[0]).startswith("computation")), len(table))
    ]
    report = result.report
    line = int(
        report.summary.index[
            (report.summary["model"] == report.point.model)
            & (report.summary["sku"] == report.point.sku)
        ][0]
    )
    read = {s.param.label: s for s in report.sweeps}  # the inputs the headline option itself reads
    assert len(table) == len(read) > 1
    assert [r[7] for r in table] == sorted((r[7] for r in table), reverse=True)
    for sheet_row in table:
        label = sheet_row[0].split(": ", 1)[-1] if sheet_row[0] not in read else sheet_row[0]
        sweep = read.get(sheet_row[0]) or next(s for s in report.sweeps if s.member.label == label)
        assert sheet_row[7] == pytest.approx(sweep.swing, rel=1e-9)
    # the terminal's tornado moves every input the line's options read (other engines' too) and re-picks;
    # where it keeps the headline option at both ends, its swing is the sheet's
    terminal = sensitivity(report, report.params, line).swings
    held = [w for w in terminal if not w.flips and w.param.label in read]
    assert held
    for w in held:
        assert w.swing("total_usd") == pytest.approx(read[w.param.label].swing, rel=1e-9)
    assert {w.param.label for w in terminal} >= set(read)


@pytest.fixture(scope="module")
def layered_build(tmp_path_factory):
    """The small plan with every strategy, the layered ones included (peer_memory, differential, jit)."""
    from ckptreport.base.paths import shipped_models

    from conftest import SMALL_PLAN

    root = tmp_path_factory.mktemp("layered")
    shutil.copytree(shipped_models(), root / "models")
    plan = SMALL_PLAN.replace(
        "strategies: [sync, async, tiered]",
        "strategies: [sync, async, tiered, peer_memory, differential, jit]",
    )
    assert plan != SMALL_PLAN
    (root / "models" / "plan.yaml").write_text(
        plan + "host_recoverable: 75%\nnode_loss: 17%\npeer_replicas: 1\n"
        "durable_every: 6\nfull_every: 4\ndiff_fraction: 25%\n"
        "jit_overhead: 0.1%\nbatch_tokens: 16M\n"
    )
    result = build(root / "models", root / "out", skip=["briefs", "page"])
    return result, root / "out" / "ckptreport.xlsx"


@pytest.mark.skipif(
    (GNUMERIC is None or SOFFICE is None) and not os.environ.get("CI"),
    reason="Gnumeric and LibreOffice are needed: run `make system-deps`",
)
def test_the_layered_strategies_recalculate_to_the_engine_in_both_spreadsheets(
    layered_build, tmp_path
):
    """peer_memory, differential and jit rows are live formulas too: LibreOffice recalculates every
    Scenarios cell to the engine, and both LibreOffice and Gnumeric every formula to its cached value."""
    result, xlsx = layered_build
    assert {"peer_memory", "differential", "jit"} <= set(result.frame["strategy"].astype(str))
    lo = recalculated(xlsx, tmp_path)
    frame = result.frame.astype({c: object for c in result.frame.select_dtypes("category").columns})
    shown = scenario_cells(lo)
    assert {"peer_memory", "differential", "jit"} <= set(shown["strategy"])
    assert assert_cells_equal_engine(shown, frame) > 50_000
    for app, recalc in (("Gnumeric", gnumeric(xlsx, tmp_path / "gnumeric")), ("LibreOffice", lo)):
        compared = formulas_carry_what_it_computes(xlsx, recalc, app)
        assert compared["Scenarios"] > 1000, (app, compared)


def test_the_jobs_sheet_holds_each_decision_and_says_it_is_not_live(default_build):
    """The Jobs sheet: one line per job with the manifest's figures (percentages as fractions), said
    to be values the build computed; the Summary's ETTR and run length, and the Scenarios' ETTR and
    shares, are formulas (their recalculation is checked with every formula's above)."""
    import json

    wb = openpyxl.load_workbook(default_build.out / "ckptreport.xlsx", read_only=True)
    rows = list(wb["Jobs"].iter_rows(values_only=True))
    assert rows[1][0].startswith("Not live: these figures are values the build computed")
    head = rows[3]
    manifest = json.loads((default_build.out / "manifest.json").read_text())
    for d, row in zip(manifest["decisions"], rows[4:], strict=False):
        got = dict(zip(head, row))
        p = d["pick"]
        assert (got["job"], got["GPUs"], got["recommended"]) == (d["job"], d["gpus"], p["option"])
        assert got["ETTR"] == pytest.approx(p["ettr_pct"] / 100, rel=1e-12)
        assert got["meets the target in (of draws)"] == pytest.approx(p["p_meets_pct"] / 100)
        assert got["purchase $"] == pytest.approx(p["purchase_usd"])
        assert got["interval"] == pytest.approx(p["interval_s"] / 60)
        lost = sum(v for k, v in got.items() if isinstance(k, str) and k.startswith("lost: "))
        assert got["ETTR"] + lost == pytest.approx(1.0, abs=1e-12)
    formulas = openpyxl.load_workbook(default_build.out / "ckptreport.xlsx", read_only=True)
    summary = list(formulas["Summary"].iter_rows(values_only=True))
    head = next(r for r in summary if r and r[0] == "model")
    line = next(r for r in summary if r and r[0] == "llama3-405b" and r[2] == "dgx-h100")
    for name in ("ETTR", "run (days)"):
        assert str(line[head.index(name)]).startswith("=IF("), name
    scen = formulas["Scenarios"]
    names = next(r for r in scen.iter_rows(max_row=10, values_only=True) if "scenario_id" in r)
    assert {"ettr_pct", "stop_share_pct", "restart_share_pct"} <= set(names), names
