"""The workbook used as finance uses it, inside LibreOffice Calc itself: sorted and filtered with
Data > Sort and AutoFilter, a row inserted in Assumptions, a percentage typed with its % sign, then
Data > Calculate > Recalculate Hard. Calc is driven through its own API (``lo_uno.py``, run by the
system Python that has LibreOffice's ``python3-uno``), so these are Calc's own sort, filter and row
insertion, not an imitation of them.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pytest

from ckptreport.build import build
from ckptreport.model import display
from ckptreport.render.workbook.scenarios import scenario_columns

from conftest import REPO, SOFFICE, lo_profile

UNO_PYTHON = "/usr/bin/python3"
HAVE_UNO = (
    SOFFICE is not None
    and Path(UNO_PYTHON).exists()
    and subprocess.run([UNO_PYTHON, "-c", "import uno"], capture_output=True).returncode == 0
)
# Skipped only outside CI (make test installs LibreOffice and python3-uno); in CI a missing one fails.
pytestmark = pytest.mark.skipif(
    not HAVE_UNO and not os.environ.get("CI"),
    reason="LibreOffice or python3-uno is not installed: run `make system-deps`",
)

LIVE = ("Summary", "Choice", "Purchase", "Cadence", "Sensitivity", "Checks", "Cover")


def calc(xlsx: Path, actions: list[dict], tmp_path: Path) -> dict:
    """Open a copy of ``xlsx`` in LibreOffice Calc, do ``actions``, return what the driver reports
    (a copy: Calc writes its lock file beside what it opens, and the shared build's workbook is read
    by other tests, and opened by other Calcs, meanwhile)."""
    opened = tmp_path / "opened" / xlsx.name
    opened.parent.mkdir(exist_ok=True)
    shutil.copyfile(xlsx, opened)
    script = tmp_path / "script.json"
    script.write_text(
        json.dumps({"file": str(opened), "profile": str(lo_profile("uno")), "actions": actions})
    )
    done = subprocess.run(
        [UNO_PYTHON, str(REPO / "tests" / "lo_uno.py"), str(script)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def figures(read: dict, skip_rows_of: str = "Scenarios row") -> dict[tuple[str, int, int], object]:
    """Every non-empty cell of the read sheets, by (sheet, row, column); not the cells that say where a
    scenario's row now is (Cadence's 'Scenarios row': they follow a sort by design)."""
    out = {}
    for name, sheet in read.items():
        for r, row in enumerate(sheet["values"]):
            for c, v in enumerate(row):
                if v != "" and not (c and row[c - 1] == skip_rows_of):
                    out[(name, r + 1, c + 1)] = v
    return out


def differences(before: dict, after: dict) -> list:
    def same(a, b):
        return a == b or (
            isinstance(a, float) and isinstance(b, float) and math.isclose(a, b, rel_tol=1e-12)
        )

    return [(k, v, after.get(k)) for k, v in before.items() if not same(v, after.get(k))] + [
        (k, None, v) for k, v in after.items() if k not in before
    ]


def scenarios_by_key(sheet: dict) -> dict[int, dict[str, object]]:
    header = sheet["values"][1]
    return {int(row[0]): dict(zip(header, row)) for row in sheet["values"][2:] if row[0] != ""}


@pytest.fixture(scope="module")
def workbook(small_build) -> Path:
    return small_build.out / "ckptreport.xlsx"


def test_sort_and_filter_in_calc_change_nothing_computed(small_build, workbook, tmp_path):
    """Data > Sort on Scenarios by overhead (descending), tier and GPUs, then an AutoFilter showing
    only async rows, each followed by a hard recalculation: every figure on Summary, Choice, Purchase,
    Cadence, Checks and Cover is what it was, no cell turns to an error, and every Scenarios row
    still holds its own scenario's figures (by its key), now in another order."""
    head = {"op": "read", "sheets": [*LIVE, "Scenarios"]}
    got = calc(
        workbook,
        [
            {"op": "recalc"},
            {**head, "as": "before"},
            {
                "op": "sort",
                "sheet": "Scenarios",
                "header_row": 2,
                "keys": [["overhead_pct", False], ["tier", True], ["gpus", True]],
            },
            {"op": "recalc"},
            {**head, "as": "sorted"},
            {
                "op": "filter",
                "sheet": "Scenarios",
                "header_row": 2,
                "column": "strategy",
                "value": "async",
            },
            {"op": "recalc"},
            {**head, "as": "filtered"},
        ],
        tmp_path,
    )
    reads = got["reads"]
    before_keys = [r[0] for r in reads["before"]["Scenarios"]["values"][2:]]
    sorted_rows = reads["sorted"]["Scenarios"]["values"]
    header = sorted_rows[1]
    over = [r[header.index("overhead_pct")] for r in sorted_rows[2:]]
    assert [r[0] for r in sorted_rows[2:]] != before_keys and over == sorted(over, reverse=True)
    live = {k: {n: s for n, s in v.items() if n != "Scenarios"} for k, v in reads.items()}
    before = figures(live["before"])
    assert len(before) > 500
    for state in ("sorted", "filtered"):
        assert not differences(before, figures(live[state]))[:10], state
        assert {n: s["errors"] for n, s in live[state].items()} == {
            n: s["errors"] for n, s in live["before"].items()
        }, state  # only the unpriced #N/A, as before
        assert scenarios_by_key(reads[state]["Scenarios"]) == scenarios_by_key(
            reads["before"]["Scenarios"]
        ), state
    # and the rows are the engine's, by key: sorting moved whole rows
    frame = small_build.result.frame
    rows = scenarios_by_key(reads["filtered"]["Scenarios"])
    for key in list(rows)[:: max(len(rows) // 50, 1)]:
        for name in ("ckpt_bytes", "stall_s", "overhead_pct", "total_usd"):
            want = frame.at[key, name] / (100 if display.unit_of(name) == "pct" else 1)
            if math.isnan(want):
                assert rows[key][name] is None, (
                    key,
                    name,
                )  # an unpriced tier: #N/A, as the engine's NaN
            else:
                assert math.isclose(rows[key][name], want, rel_tol=1e-9), (key, name)


def test_inserting_a_row_in_assumptions_changes_nothing_computed(workbook, tmp_path):
    """Sheet > Insert Rows in the middle of Assumptions (inside an entity's block) and at its top:
    every Scenarios cell and every figure elsewhere is what it was (the same unpriced #N/A, no new
    error); no reference pointed at a row number that the insertion moved."""
    sheets = [*LIVE, "Scenarios"]
    got = calc(
        workbook,
        [
            {"op": "recalc"},
            {"op": "read", "sheets": sheets, "as": "before"},
            {"op": "insert_rows", "sheet": "Assumptions", "row": 60, "count": 2},
            {"op": "insert_rows", "sheet": "Assumptions", "row": 5, "count": 1},
            {"op": "recalc"},
            {"op": "read", "sheets": [*sheets, "Assumptions"], "as": "after"},
        ],
        tmp_path,
    )
    before, after = got["reads"]["before"], got["reads"]["after"]
    assert after["Assumptions"]["values"][4] == [""] * len(
        after["Assumptions"]["values"][4]
    )  # the new row
    assert not differences(figures(before), figures({n: after[n] for n in sheets}))[:10]
    assert {n: after[n]["errors"] for n in LIVE} == {n: before[n]["errors"] for n in LIVE}


def assumption_rows(xlsx: Path) -> dict[tuple[str, str], int]:
    """(key, figure) -> its row on Assumptions."""
    wb = openpyxl.load_workbook(xlsx, read_only=True)
    rows = {
        (r[0], r[1]): i + 1
        for i, r in enumerate(wb["Assumptions"].iter_rows(values_only=True))
        if len(r) > 1 and r[0] and r[1]
    }
    wb.close()
    return rows


def test_typing_a_percent_and_a_size_equals_the_yaml(small_build, workbook, tmp_path):
    """Type '2.5%' over the target overhead and '35%' over MFU on Assumptions, as finance would, and a
    new parameter count for llama3-8b: Calc stores 0.025 and 0.35; the 8B model's active_params (a
    dense model: derived from params, a formula) follows its params; after recalculating, every
    Scenarios cell equals the engine run on YAML with target_overhead 2.5%, mfu 35% and params 9B."""
    rows = assumption_rows(workbook)
    target, mfu = rows[("plan", "target_overhead_pct")], rows[("plan", "mfu_pct")]
    params, active = (
        rows[("models.llama3-8b", "params")],
        rows[("models.llama3-8b", "active_params")],
    )
    got = calc(
        workbook,
        [
            {"op": "type", "cell": f"Assumptions!C{target}", "text": "2.5%"},
            {"op": "type", "cell": f"Assumptions!C{mfu}", "text": "35%"},
            {"op": "type", "cell": f"Assumptions!C{params}", "text": "9000000000"},
            {"op": "recalc"},
            {"op": "read", "sheets": ["Scenarios", "Assumptions", "Checks"], "as": "typed"},
        ],
        tmp_path,
    )
    typed = got["reads"]["typed"]
    assumptions = typed["Assumptions"]["values"]
    assert assumptions[target - 1][2] == pytest.approx(0.025, rel=1e-12)
    assert assumptions[mfu - 1][2] == pytest.approx(0.35, rel=1e-12)
    assert assumptions[active - 1][2] == 9e9  # the derived figure followed
    assert all(
        r[1] == 1.0 for r in typed["Checks"]["values"][3:] if r[0]
    )  # in range: every check TRUE
    models = tmp_path / "models"  # the shared build's models, edited as the typing was
    shutil.copytree(small_build.models, models)
    plan = (models / "plan.yaml").read_text()
    (models / "plan.yaml").write_text(
        plan.replace("target_overhead: 1%", "target_overhead: 2.5%").replace("mfu: 40%", "mfu: 35%")
    )
    text = (models / "models.yaml").read_text()
    assert "    params: 8,030,261,248\n" in text or "8,030,261,248" in text
    (models / "models.yaml").write_text(text.replace("8,030,261,248", "9,000,000,000", 1))
    frame = build(models, tmp_path / "expected", skip=["workbook", "briefs"]).frame
    cells = scenarios_by_key(typed["Scenarios"])
    assert set(cells) <= set(frame.index) and len(cells) > 100
    for key, row in cells.items():
        for name in scenario_columns(frame):
            want, got_ = frame.at[key, name], row[name]
            if isinstance(want, str) or not isinstance(got_, float):
                continue
            want = float(want) / (100 if display.unit_of(name) == "pct" else 1)
            if math.isinf(want) or math.isnan(want):
                continue
            assert math.isclose(got_, want, rel_tol=1e-9, abs_tol=1e-12), (key, name, got_, want)


def test_the_sensitivity_table_follows_an_edited_range(small_build, workbook, tmp_path):
    """Type a new low over dgx-h100's GPU-hour on the Sensitivity sheet, as finance would: after a
    hard recalculation the headline option's cost at that end is what the engine computes with the
    GPU-hour written as that value in the YAML, and the swing follows."""
    wb = openpyxl.load_workbook(workbook, read_only=True)
    rows = list(wb["Sensitivity"].iter_rows(values_only=True))
    wb.close()
    key = rows[2][2]  # the headline option's scenario key
    row = next(i + 1 for i, r in enumerate(rows) if r and r[0] == "skus.dgx-h100.usd_per_gpu_hour")
    got = calc(
        workbook,
        [
            {"op": "type", "cell": f"Sensitivity!C{row}", "text": "2.5"},
            {"op": "recalc"},
            {"op": "read", "sheets": ["Sensitivity"], "as": "edited"},
        ],
        tmp_path,
    )
    edited = got["reads"]["edited"]["Sensitivity"]["values"][row - 1]
    assert edited[2] == 2.5
    models = tmp_path / "models"
    shutil.copytree(small_build.models, models)
    hardware = (models / "hardware.yaml").read_text()
    old = "usd_per_gpu_hour: {value: $4.916, low: $1.85, high: $6.155,"
    assert old in hardware
    (models / "hardware.yaml").write_text(
        hardware.replace(old, "usd_per_gpu_hour: {value: $2.50,", 1)
    )
    frame = build(models, tmp_path / "expected", skip=["workbook", "briefs"]).frame
    at_low = frame.at[key, "total_usd"]
    assert math.isclose(edited[5], at_low, rel_tol=1e-9), (edited[5], at_low)
    assert math.isclose(edited[7], abs(edited[6] - edited[5]), rel_tol=1e-12)
    assert math.isclose(edited[10], frame.at[key, "overhead_pct"] / 100, rel_tol=1e-9)
