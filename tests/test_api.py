"""The Python API returns what the command line prints, as pandas objects; the notebook example in
examples/ runs top to bottom."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pandas as pd
import pytest
from click.testing import CliRunner

import ckptreport.api as ck
from ckptreport.answer.types import option_label
from ckptreport.cli import main

from conftest import REPO


def test_the_example_notebook_runs(tmp_path):
    """examples/notebook.py as a user runs it, from another directory (the shipped models)."""
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "notebook.py")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "MPLBACKEND": "Agg"},
    )
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert "6.49 TB per checkpoint" in done.stdout  # the worked example's size
    assert "(recommended)" in done.stdout
    assert list(tmp_path.iterdir()) == []  # it writes nothing


def test_recommendations_equal_the_builds_summary(small_build):
    inputs = ck.load(small_build.models)
    table = ck.recommendations(inputs)
    manifest = json.loads((small_build.out / "manifest.json").read_text())["recommendations"]
    assert len(table) == len(manifest)
    for row, rec in zip(table.to_dict("records"), manifest):
        assert (row["model"], row["sku"], row["option_tier"], row["option_strategy"]) == (
            rec["model"],
            rec["sku"],
            rec["tier"],
            rec["strategy"],
        )
        assert row["option_total_usd_month"] == pytest.approx(rec["total_usd_month"])
    assert not any(c.endswith("_index") for c in table.columns)  # frame labels are internal


def test_recommend_picks_what_the_summary_picks(small_build):
    inputs = ck.load(small_build.models)
    frame = ck.scenarios(inputs)
    assert len(frame) == small_build.result.report.rows
    line = ck.recommendations(inputs).iloc[0]
    best = ck.recommend(
        frame,
        model=line["model"],
        recipe=line["recipe"],
        sku=line["sku"],
        gpus=line["gpus"],
        interval="30 min",
    )
    assert (best["tier"], best["strategy"], best["status"]) == (
        line["option_tier"],
        line["option_strategy"],
        line["option_status"],
    )
    assert best["runner_up_tier"] == line["runner_up_tier"]
    assert best["runner_up_extra_usd"] == pytest.approx(line["runner_up_extra_usd"])
    with pytest.raises(ck.InputError, match="no scenario matches"):
        ck.recommend(frame, model="no-such-model")
    with pytest.raises(ck.InputError, match="no column 'colour'"):
        ck.recommend(frame, colour="red")
    with pytest.raises(ck.InputError, match="interval"):
        ck.recommend(frame, interval="30 parsecs")


def test_explain_is_the_commands_arithmetic():
    inputs = ck.load()
    e = ck.explain(
        inputs,
        "llama3-405b",
        "dgx-h100",
        "pfs-100",
        gpus=1024,
        interval="30 min",
        recipe="adamw-bf16-grads",
    )
    cli = json.loads(
        CliRunner()
        .invoke(
            main,
            [
                "explain",
                "llama3-405b",
                "dgx-h100",
                "pfs-100",
                "--gpus",
                "1024",
                "--interval",
                "30min",
                "--recipe",
                "adamw-bf16-grads",
                "--json",
            ],
        )
        .output
    )
    assert e.headline == cli["headline"] == str(e)
    assert (
        e.steps.loc["ckpt_bytes", "value"]
        == cli["steps"][[s["name"] for s in cli["steps"]].index("ckpt_bytes")]["value"]
    )
    assert e.steps.loc["ckpt_bytes", "value"] == pytest.approx(405.85e9 * 16, rel=1e-3)
    params = e.inputs.set_index("name").loc["params"]
    assert (params["file"], params["basis"]) == ("models.yaml", "spec") and params["line"] > 0
    assert isinstance(e.inputs["line"].dtype, pd.Int64Dtype)
    with pytest.raises(ck.InputError, match="unknown tier 'pfs-10'"):
        ck.explain(inputs, "llama3-405b", "dgx-h100", "pfs-10", gpus=1024, interval=1800)


def test_load_errors_name_file_line_and_key(models_copy):
    plan = models_copy / "plan.yaml"
    plan.write_text(plan.read_text().replace("mfu: {value: 40%", "mfu: {value: 40"))
    with pytest.raises(ck.InputError) as caught:
        ck.load(models_copy)
    (problem,) = caught.value.problems
    assert problem.file.endswith("plan.yaml") and problem.path == "mfu"
    assert plan.read_text().splitlines()[problem.line - 1].startswith("mfu:")
    assert "plan.yaml" in str(caught.value)


def test_columns_and_inputs_table_describe_the_frame(small_build):
    inputs = ck.load(small_build.models)
    docs = ck.columns()
    frame = ck.scenarios(inputs)
    assert set(docs.index) <= set(frame.columns)
    assert docs.loc["overhead_pct", "unit"] == "pct"
    values = ck.inputs_table(inputs)
    mfu = values[(values["file"] == "plan.yaml") & (values["key"] == "mfu")].iloc[0]
    assert mfu["value"] == "40%"
    assert (
        (small_build.models / "plan.yaml")
        .read_text()
        .splitlines()[mfu["line"] - 1]
        .startswith("mfu:")
    )


def test_the_readme_api_block_runs_as_written(small_models, monkeypatch):
    """The README's Python API block, run as written in a directory holding `models` (the small
    plan, for speed): every line runs, and the build it ends with writes out/."""
    import re

    readme = (REPO / "README.md").read_text()
    block = next(
        b
        for b in re.findall(r"```python\n(.*?)```", readme, re.S)
        if "ck.recommendations(inputs)" in b
    )
    monkeypatch.chdir(small_models.parent)
    scope: dict = {}
    exec(compile(block, "README.md (Python API)", "exec"), scope)  # noqa: S102 - the README's own code
    assert scope["best"]["status"] in ("recommended", "needs a price", "closest")
    assert isinstance(scope["table"], pd.DataFrame) and not scope["table"].empty
    assert (small_models.parent / "out" / "manifest.json").is_file()


def test_sensitivity_and_monte_carlo_from_python(small_build):
    inputs = ck.load(small_build.models)
    s = ck.sensitivity(inputs, "llama3-405b", "dgx-h100")
    line = ck.recommendations(inputs).set_index(["model", "sku"]).loc[("llama3-405b", "dgx-h100")]
    assert s.base["option"] == option_label(
        line["option_strategy"], line["option_tier"], line["option_engine"]
    )
    assert {w.param.name for w in s.swings} >= {"gpu-mtbf"}
    sampled = ck.monte_carlo(inputs, samples=100, seed=5)
    assert len(sampled.lines) == len(ck.recommendations(inputs))
    assert sampled.lines == ck.monte_carlo(inputs, samples=100, seed=5).lines  # seeded
    with pytest.raises(ck.InputError, match="no summary line"):
        ck.sensitivity(inputs, "llama3-405b", "nope")
