"""The README's "How to add an input", done as it says: its two snippets are put into a copy of the
source, and the new input and column then appear everywhere the README promises (schema and its
errors, the scenario frame, the workbook's Assumptions and Scenarios, explain, the README tables)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

import pytest

from conftest import REPO, SMALL_PLAN

README = (REPO / "README.md").read_text()

CHECK = r'''
import json, sys
from pathlib import Path
import openpyxl
from click.testing import CliRunner
from ckptreport.cli import main
from ckptreport import docs

models, out = Path(sys.argv[1]), Path(sys.argv[2])
run = lambda *a: CliRunner().invoke(main, list(a))
built = run("build", "--models", str(models), "--out", str(out), "--no-briefs", "-q")
import pandas as pd
frame = pd.read_parquet(out / "scenarios.parquet")
pfs = frame[frame["tier"] == "pfs-100"]
other = frame[frame["tier"] == "superpod-good"]
wb = openpyxl.load_workbook(out / "ckptreport.xlsx")
assumptions = [[c.value for c in r] for r in wb["Assumptions"].iter_rows()]
header = [c.value for c in wb["Scenarios"][2]]
first = {h: c.value for h, c in zip(header, wb["Scenarios"][3])}
explained = run("explain", "llama3-8b", "dgx-h100", "pfs-100", "--gpus", "1024", "--interval", "30min",
                "--models", str(models)).output
(models / "storage.yaml").write_text((models / "storage.yaml").read_text().replace("read: {value: 50 GB/s", "read: {value: 50 GB"))
refused = run("validate", "--models", str(models))
print(json.dumps({
    "build_exit": built.exit_code, "build_output": built.output,
    "columns": list(frame.columns),
    "pfs_restore": (pfs["restore_s"] / pfs["ckpt_bytes"]).round(15).unique().tolist(),
    "pfs_read": pfs["tier_read_GBps"].unique().tolist(), "other_restore": other["restore_s"].unique().tolist(),
    "assumptions": [r[:7] for r in assumptions if r[1] == "tier_read_GBps"],
    "scenario_header": "tier_read_GBps" in header and "restore_s" in header,
    "restore_formula": first["restore_s"], "read_formula": first["tier_read_GBps"],
    "explain": explained,
    "docs": docs.columns_markdown() + docs.schema_markdown(),
    "refused_exit": refused.exit_code, "refused": refused.output,
}))
'''


def _snippets() -> tuple[str, str]:
    section = README[README.index("### How to add an input"):]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 2, "the README's How to add an input has lost its snippets"
    return blocks[0], blocks[1]


def test_the_readme_snippets_add_an_input_everywhere(tmp_path):
    declaration, column = _snippets()
    src = tmp_path / "src"
    shutil.copytree(REPO / "src" / "ckptreport", src / "ckptreport", ignore=shutil.ignore_patterns("__pycache__"))
    inputs_py = src / "ckptreport" / "inputs.py"
    text = inputs_py.read_text()
    marker = "    # ---- plan.yaml: globals ----\n"
    assert marker in text and "tier_read_GBps" not in text
    inputs_py.write_text(text.replace(marker, declaration + marker))
    columns_py = src / "ckptreport" / "columns.py"
    columns_py.write_text(columns_py.read_text() + "\n\n" + column)

    models = tmp_path / "models"
    shutil.copytree(REPO / "models", models)
    (models / "plan.yaml").write_text(SMALL_PLAN)
    storage = models / "storage.yaml"
    text = storage.read_text()
    anchor = "    write: {value: 100 GB/s, basis: assumption"
    assert anchor in text
    storage.write_text(text.replace(anchor, '    read: {value: 50 GB/s, basis: assumption, source: "assumption: '
                                    'half the write"}\n' + anchor, 1))
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run([sys.executable, "-c", CHECK, str(models), str(tmp_path / "out")], env=env,
                          capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got["build_exit"] == 0, got["build_output"]
    # the frame: the input and the column, computed
    assert {"tier_read_GBps", "restore_s"} <= set(got["columns"])
    assert got["pfs_read"] == [50.0] and got["pfs_restore"] == [round(1 / 50e9, 15)]
    assert got["other_restore"] == [0.0]  # omitted: no read limit
    # the workbook: a blue input per tier with its source; a lookup and a formula on Scenarios
    rows = {r[0]: r for r in got["assumptions"]}
    assert rows["tiers.pfs-100"][2] == 50 and rows["tiers.pfs-100"][4] == "assumption"
    assert rows["tiers.pfs-100"][5] == "assumption: half the write" and rows["tiers.pfs-100"][6].startswith("storage.yaml:")
    assert rows["tiers.superpod-good"][4] == "default" and rows["tiers.superpod-good"][5] == "omitted: no read limit"
    assert got["scenario_header"] and re.fullmatch(r"=Assumptions!\$C\$\d+", got["read_formula"]), got["read_formula"]
    assert re.fullmatch(r"=[A-Z]+3/\([A-Z]+3\*BYTES_PER_GB\)", got["restore_formula"]), got["restore_formula"]
    # explain: the input with its place, the column with its arithmetic
    assert re.search(r"tier_read_GBps\s+50 GB/s\s+assumption, storage\.yaml:\d+ — assumption: half the write",
                     got["explain"])
    assert "restore_s: Time to read the whole checkpoint back from the tier." in got["explain"]
    assert "= ckpt_bytes / tier_read_GBps" in got["explain"]
    # the README's tables, and the schema's errors
    assert "| `tier_read_GBps` | GB/s (1e9 B/s) | input: aggregate read bandwidth of the tier (tiers.*.read;" \
           " omitted: no read limit) |" in got["docs"]
    assert "| `read` | bandwidth | no | aggregate read bandwidth of the tier; omitted: no read limit |" in got["docs"]
    assert got["refused_exit"] == 2
    assert re.search(r"storage\.yaml:\d+:\d+: tiers\.pfs-100\.read: expected a bandwidth like .*got '50 GB' "
                     r"\(that is a size\)", got["refused"]), got["refused"]


def test_the_snippets_are_what_the_readme_shows():
    """The test above runs the README's own text: the declaration and the column as printed."""
    declaration, column = _snippets()
    assert textwrap.dedent(declaration).startswith('Input("tier_read_GBps", "GBps"')
    assert "def restore_s(ckpt_bytes, tier_read_GBps):" in column
    with pytest.raises(KeyError):
        from ckptreport.inputs import INPUTS

        INPUTS["tier_read_GBps"]  # the example is not part of the product
