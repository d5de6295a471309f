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

CHECK = r"""
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
storage = (models / "storage.yaml").read_text()
wrong = storage.replace("usd_per_gb_egress: {value: $0.09", "usd_per_gb_egress: {value: 0.09 GB")
(models / "storage.yaml").write_text(wrong)
refused = run("validate", "--models", str(models))
print(json.dumps({
    "build_exit": built.exit_code, "build_output": built.output,
    "columns": list(frame.columns),
    "pfs_egress": (pfs["egress_usd"] / pfs["ckpt_bytes"]).round(15).unique().tolist(),
    "pfs_price": pfs["usd_per_gb_egress"].unique().tolist(), "other_egress": other["egress_usd"].unique().tolist(),
    "assumptions": [r[:7] for r in assumptions if r[1] == "usd_per_gb_egress"],
    "scenario_header": "usd_per_gb_egress" in header and "egress_usd" in header,
    "egress_formula": first["egress_usd"], "price_formula": first["usd_per_gb_egress"],
    "explain": explained,
    "docs": docs.columns_markdown() + docs.schema_markdown(),
    "refused_exit": refused.exit_code, "refused": refused.output,
}))
"""


def _snippets() -> tuple[str, str]:
    section = README[README.index("### How to add an input") :]
    blocks = re.findall(r"```python\n(.*?)```", section, re.S)
    assert len(blocks) >= 2, "the README's How to add an input has lost its snippets"
    return blocks[0], blocks[1]


def test_the_readme_snippets_add_an_input_everywhere(tmp_path):
    declaration, column = _snippets()
    src = tmp_path / "src"
    shutil.copytree(
        REPO / "src" / "ckptreport",
        src / "ckptreport",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    inputs_py = src / "ckptreport" / "read" / "inputs.py"
    text = inputs_py.read_text()
    marker = "    # ---- plan.yaml: globals ----\n"
    assert marker in text and "usd_per_gb_egress" not in text
    inputs_py.write_text(text.replace(marker, declaration + marker))
    package = src / "ckptreport" / "model" / "columns"
    (package / "egress.py").write_text(column)  # a section of its own, imported after the others
    init = (package / "__init__.py").read_text()
    last = "from . import tco  # noqa: F401\n"
    assert last in init
    (package / "__init__.py").write_text(
        init.replace(last, last + "from . import egress  # noqa: F401\n", 1)
    )

    models = tmp_path / "models"
    shutil.copytree(REPO / "models", models)
    (models / "plan.yaml").write_text(SMALL_PLAN)
    storage = models / "storage.yaml"
    text = storage.read_text()
    anchor = "    write: {value: 100 GB/s, basis: assumption"
    assert anchor in text
    storage.write_text(
        text.replace(
            anchor,
            "    usd_per_gb_egress: {value: $0.09, basis: assumption, date: 2026, "
            'region: any, source: "assumption: a cloud\'s list egress"}\n' + anchor,
            1,
        )
    )
    env = {**os.environ, "PYTHONPATH": str(src)}
    done = subprocess.run(
        [sys.executable, "-c", CHECK, str(models), str(tmp_path / "out")],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    got = json.loads(done.stdout)
    assert got["build_exit"] == 0, got["build_output"]
    # the frame: the input and the column, computed
    assert {"usd_per_gb_egress", "egress_usd"} <= set(got["columns"])
    assert got["pfs_price"] == [0.09] and got["pfs_egress"] == [round(0.09 / 1e9, 15)]
    assert got["other_egress"] == [0.0]  # omitted: no egress charge
    # the workbook: a blue input per tier with its source; a lookup and a formula on Scenarios
    rows = {r[0]: r for r in got["assumptions"]}
    assert rows["tiers.pfs-100"][2] == 0.09 and rows["tiers.pfs-100"][4] == "assumption"
    assert rows["tiers.pfs-100"][5] == "assumption: a cloud's list egress"
    assert rows["tiers.pfs-100"][6].startswith("storage.yaml:")
    assert (
        rows["tiers.superpod-good"][4] == "default"
        and rows["tiers.superpod-good"][5] == "omitted: no egress charge"
    )
    assert got["scenario_header"] and re.fullmatch(
        r"=Assumptions!\$C\$\d+", got["price_formula"]
    ), got["price_formula"]
    assert re.fullmatch(r"=[A-Z]+3/BYTES_PER_GB\*[A-Z]+3", got["egress_formula"]), got[
        "egress_formula"
    ]
    # explain: the input with its place, the column with its arithmetic
    assert re.search(
        r"usd_per_gb_egress\s+\$0\.09\s+assumption \(2026, any\), storage\.yaml:\d+ — assumption: a "
        r"cloud's list egress",
        got["explain"],
    ), got["explain"]
    assert "egress_usd: Price of copying one checkpoint out of the tier." in got["explain"]
    assert (
        "= ckpt_bytes × usd_per_gb_egress" in got["explain"]
    )  # bytes read in GB: the unit, not a factor
    # the README's tables, and the schema's errors
    assert (
        "| `usd_per_gb_egress` | US dollars | input: price per GB (1e9 bytes) copied out of the tier "
        "(tiers.*.usd_per_gb_egress; omitted: no egress charge) |" in got["docs"]
    )
    assert (
        "| `usd_per_gb_egress` | dollar amount | no | price per GB (1e9 bytes) copied out of the tier; omitted: no "
        "egress charge |" in got["docs"]
    )
    assert got["refused_exit"] == 2
    assert re.search(
        r"storage\.yaml:\d+:\d+: tiers\.pfs-100\.usd_per_gb_egress: expected a dollar amount",
        got["refused"],
    ), got["refused"]


def test_the_snippets_are_what_the_readme_shows():
    """The test above runs the README's own text: the declaration and the column as printed."""
    declaration, column = _snippets()
    assert textwrap.dedent(declaration).startswith('Input("usd_per_gb_egress", "usd"')
    assert (
        "def egress_usd(ckpt_bytes, usd_per_gb_egress):" in column and 'section("Egress")' in column
    )
    with pytest.raises(KeyError):
        from ckptreport.read.inputs import INPUTS

        INPUTS["usd_per_gb_egress"]  # the example is not part of the product
