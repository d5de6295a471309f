"""The commands as a planner runs them: build, explain, validate, init, and their --help."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd
import pytest
from click.testing import CliRunner

from ckptreport.cli import main
from ckptreport.model import display
from ckptreport.model.columns import COLUMNS
from ckptreport.read.inputs import INPUTS, SOURCES

DESIGN_COLUMNS = (
    "model, sku, tier, strategy, gpus, nodes, interval_s, params, bytes_per_param, ckpt_bytes, "
    "bytes_per_gpu, bytes_per_node, d2h_s, write_s, bottleneck, stall_s, overhead_pct, "
    "host_memory_ok, cluster_mtbf_s, optimal_interval_s, waste_pct, run_days, overhead_usd, "
    "required_write_GBps"
).split(", ")


def run(*args, ok=True):
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    if ok:
        assert result.exit_code == 0, result.output
    return result


@pytest.fixture(scope="module")
def built(default_build):
    return default_build.out, default_build.cli


def test_build_writes_parquet_csv_and_manifest(built, shipped):
    """build writes the full frame to Parquet and CSV, with the public columns of DESIGN.md."""
    out, _ = built
    pq = pd.read_parquet(out / "scenarios.parquet")
    csv = pd.read_csv(out / "scenarios.csv")
    assert len(pq) == len(csv) > 10_000
    for name in DESIGN_COLUMNS:
        assert name in pq.columns, name
    assert set(pq.columns) == set(INPUTS) | set(COLUMNS) | set(SOURCES)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["input_hash"] == shipped.input_hash and manifest["rows"] == len(pq)
    import pyarrow.parquet as papq

    meta = papq.read_schema(out / "scenarios.parquet").metadata
    assert meta[b"input_hash"].decode() == shipped.input_hash


def test_csv_matches_parquet_values(built):
    """The CSV holds the same numbers as the Parquet (floats round-trip through text)."""
    out, _ = built
    pq = pd.read_parquet(out / "scenarios.parquet")
    csv = pd.read_csv(out / "scenarios.csv")
    for name in ("ckpt_bytes", "stall_s", "overhead_pct", "optimal_interval_s", "waste_usd"):
        pd.testing.assert_series_equal(
            pq[name].astype(float), csv[name].astype(float), check_names=False
        )


def test_build_summary_names_cheapest_tier_per_model_and_sku(built, shipped):
    """The summary prints, per model and SKU, the cheapest tier meeting the target, sync vs async."""
    _, result = built
    lines = result.stdout.splitlines()
    lines = lines[next(i for i, line in enumerate(lines) if line.startswith("Explore:")) :]
    assert "meeting the 1% target at 1,024 GPUs, every 30 min" in lines[0]
    assert lines[1].startswith(
        "recommended: of the options meeting the target, durable and priced, the lowest cost"
    )
    header = lines[3].split("  ")
    header = [h.strip() for h in header if h.strip()]
    assert header == [
        "model",
        "sku",
        "checkpoint",
        "sync",
        "async",
        "tiered",
        "peer_memory",
        "recommended",
        "bought",
        "storage/month",
        "lost GPU/month",
        "runner-up (extra over the run)",
    ]
    body = [
        line for line in lines[5:] if line.strip() and not line.startswith(("*", "needs a price"))
    ]
    assert len(body) == len(shipped.models) * len(shipped.skus)
    row = next(line for line in body if line.startswith("llama3-405b") and " dgx-h100 " in line)
    assert "5.68 TB" in row  # 405.85e9 x 14 B, the model's own recipe


def test_build_prints_the_purchase_then_the_decision_for_each_job_first(built, shipped):
    """Before the exploration: the purchase for each cluster (what it buys, its purchase price and its
    runner-up's), then one line per job of the plan at its scale, with its cadence, purchase, ETTR and
    chance of meeting the target, then what each must be told (the manifest's figures)."""
    out_dir, result = built
    lines = result.stdout.splitlines()
    manifest = json.loads((out_dir / "manifest.json").read_text())
    assert lines[0].startswith("The purchase, for each cluster")
    for c in manifest["clusters"]:
        row = next(line for line in lines[4:] if line.startswith(c["cluster"] + " "))
        assert display.value(c["choice"]["purchase_usd"], "usd") in row
        assert display.value(c["runner_up"]["purchase_usd"], "usd") in row
    first = next(i for i, line in enumerate(lines) if line.startswith("The decision, for each job"))
    header = [h.strip() for h in lines[first + 2].split("  ") if h.strip()]
    assert header[:4] == ["job", "GPUs", "sku", "recommended"] and "ETTR" in header
    for d in manifest["decisions"]:
        row = next(line for line in lines[first + 4 :] if line.startswith(d["job"] + " "))
        assert f"{d['gpus']:,}" in row and d["pick"]["option"] in row
        assert display.value(d["pick"]["ettr_pct"], "pct") in row
        assert f"{display.value(d['pick']['p_meets_pct'], 'pct')} of draws" in row
    assert [d["job"] for d in manifest["decisions"]] == [j.name for j in shipped.plan.jobs]


def test_build_reports_progress_and_left_out_combinations(built):
    """Progress goes to stderr, with the combinations that cannot exist."""
    _, result = built
    assert "computed" in result.stderr and "scenarios" in result.stderr
    assert "left out" in result.stderr and "tiered" in result.stderr


def test_explain_prints_the_worked_example_step_by_step():
    """explain reads like the worked example: each number with its unit and where it came from."""
    out = run(
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
    ).stdout
    assert "6.49 TB per checkpoint" in out
    assert "bottleneck: tier" in out
    # the tier's 64.9 s, plus Megatron-Core's cached plan (1.5 s) and the copy to host
    assert "sync with megatron-dist-ckpt" in out.splitlines()[0]
    assert "4.13% overhead" in " ".join(out.split())  # the fitted 7.69 s floor, then the tier
    assert "coordination 1.5 s a save with cached plans, 29.5 s at the first" in " ".join(
        out.split()
    )
    assert "= max(6.49 TB / 100 GB/s, 50.7 GB / 20 GB/s)\n    = 64.9 s" in out
    assert (
        "= 1.5 s + 0 s × 1,024 + 0 s × 1,024 × 1,024 + 0.0000881 s × 290,304 + 2.44 s\n    = 29.5 s"
        in out
    )
    assert "= if(known(1.5 s), 1.5 s + 0 s × 1,024, 29.5 s)\n    = 1.5 s" in out
    assert "a restart reads the checkpoint back in 65.1 s" in " ".join(out.split())
    assert "= 405.85B × 16 B/param" in out
    assert "= 6.49 TB" in out
    assert (
        "spec, models.yaml:38 — Meta Llama 3.1 405B" in out
    )  # the input's place, in the models directory
    assert "nvbandwidth" in out  # and its source


def test_explain_json_matches_the_engine(frame):
    """--json gives the same values the build computes for that scenario."""
    out = run(
        "explain",
        "llama3-405b",
        "dgx-h100",
        "pfs-100",
        "--gpus",
        "1024",
        "--interval",
        "30 min",
        "--strategy",
        "async",
        "--json",
    ).stdout
    data = json.loads(out)
    steps = {s["name"]: s for s in data["steps"]}
    row = frame[
        (frame.model == "llama3-405b")
        & (frame.recipe == "adamw-bf16")
        & (frame.sku == "dgx-h100")
        & (frame.tier == "pfs-100")
        & (frame.gpus == 1024)
        & (frame.interval_s == 1800)
        & (frame.strategy == "async")
    ].iloc[0]
    for name in (
        "ckpt_bytes",
        "d2h_s",
        "stall_s",
        "overhead_pct",
        "optimal_interval_s",
        "waste_usd",
    ):
        assert steps[name]["value"] == pytest.approx(row[name], rel=1e-12)
    sources = {i["name"]: i for i in data["inputs"]}
    assert sources["d2h_node_GBps"]["basis"] == "measured"
    assert sources["tier_write_GBps"]["basis"] == "assumption"


def test_explain_works_outside_the_plan():
    """The scenario need not be in the plan: any GPU count and interval."""
    out = run(
        "explain", "bloom-176b", "dgx-a100", "superpod-best", "--gpus", "384", "--interval", "3h"
    ).stdout
    assert "on 384 GPUs of dgx-a100" in out and "every 3 h" in out


def test_explain_rejects_a_bad_interval():
    result = run(
        "explain",
        "llama3-8b",
        "dgx-h100",
        "pfs-100",
        "--gpus",
        "8",
        "--interval",
        "30 GB",
        ok=False,
    )
    assert result.exit_code == 2
    assert "expected a duration" in result.output


def test_validate_counts_the_plan(shipped):
    out = run("validate").stdout
    assert "valid" in out and f"{len(shipped.models)} models" in out


def test_init_copies_the_shipped_set_and_it_builds(tmp_path):
    """init writes a complete starting set that builds as is, and refuses to overwrite."""
    target = tmp_path / "mine"
    run("init", str(target))
    assert sorted(p.name for p in target.iterdir()) == [
        ".schema",
        "engines.yaml",
        "hardware.yaml",
        "models.yaml",
        "plan.yaml",
        "storage.yaml",
    ]
    assert (target / ".schema" / "engines.schema.json").is_file()
    assert "engines.schema.json" in (target / "engines.yaml").read_text().splitlines()[0]
    run("validate", "--models", str(target))
    again = run("init", str(target), ok=False)
    assert again.exit_code == 2 and "--force" in again.output
    run("init", str(target), "--force")


@pytest.mark.parametrize(
    "command",
    [
        "build",
        "explain",
        "validate",
        "init",
        "schema",
        "probe",
        "calibrate",
        "import",
        "import fio",
        "import ior",
        "import nvbandwidth",
    ],
)
def test_every_command_has_help_with_examples(command):
    """--help teaches: every command shows at least one example."""
    out = run(*command.split(), "--help").stdout
    assert "Example" in out and f"ckptreport {command}" in out


def test_top_level_help_lists_commands():
    out = run("--help").stdout
    for command in ("build", "explain", "validate", "init", "probe", "import"):
        assert command in out


def test_shell_completion_as_the_readme_enables_it():
    """The README's bash line yields click's completion script, and the script completes a command."""
    import os
    import subprocess

    exe = Path(sys.executable).with_name("ckptreport")
    script = subprocess.run(
        [str(exe)],
        env={**os.environ, "_CKPTREPORT_COMPLETE": "bash_source"},
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "complete -o nosort -F _ckptreport_completion ckptreport" in script
    words = subprocess.run(
        [str(exe)],
        env={
            **os.environ,
            "_CKPTREPORT_COMPLETE": "bash_complete",
            "COMP_WORDS": "ckptreport cal",
            "COMP_CWORD": "1",
        },
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "plain,calibrate" in words.split()
    options = subprocess.run(
        [str(exe)],
        env={
            **os.environ,
            "_CKPTREPORT_COMPLETE": "bash_complete",
            "COMP_WORDS": "ckptreport calibrate --f",
            "COMP_CWORD": "2",
        },
        capture_output=True,
        text=True,
        timeout=60,
    ).stdout
    assert "plain,--fit" in options.split()


def test_explain_never_prints_a_normal_headline_over_a_layout_that_cannot_exist():
    """Peer memory on one node (8 GPUs): no peer to copy to; the headline says so first, and a
    layout that can exist says nothing of the kind."""
    args = ["explain", "llama3-8b", "dgx-h100", "pfs-100", "--interval", "30min"]
    one = CliRunner().invoke(main, [*args, "--gpus", "8", "--strategy", "peer_memory"])
    assert one.exit_code == 0, one.output
    head = " ".join(one.output.split("Inputs (")[0].split())
    assert "Cannot run as asked: peer_memory copies each node's snapshot to 1 peer(s)" in head
    assert "the job has 1" in head
    many = CliRunner().invoke(main, [*args, "--gpus", "64", "--strategy", "peer_memory"])
    assert many.exit_code == 0 and "Cannot run as asked" not in many.output


def test_running_out_of_memory_is_a_clean_exit_that_names_what_to_narrow(monkeypatch, tmp_path):
    """A plan too big for the machine: exit 2, a message saying what to narrow, nothing written."""
    import ckptreport.build

    def full(*_, **__):
        raise MemoryError

    monkeypatch.setattr(ckptreport.build, "build", full)
    res = CliRunner().invoke(main, ["build", "--out", str(tmp_path / "out")])
    assert res.exit_code == 2
    assert "out of memory" in res.output and "--no-workbook" in res.output
    assert "nothing was written" in res.output and "Traceback" not in res.output
    assert not (tmp_path / "out").exists()
