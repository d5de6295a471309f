"""Measured bandwidths: ckptreport probe for real, the fio / IOR / nvbandwidth importers, and builds
that use what was measured — changing exactly the hops measured and saying so in every output."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import openpyxl
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner

from ckptreport import probe
from ckptreport.answer.uncertainty.ranges import parameters
from ckptreport.build import build
from ckptreport.cli import main
from ckptreport.read import importers, measured, units

from conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "measured"


def cli(*args):
    return CliRunner().invoke(main, [str(a) for a in args])


# ---- probe --------------------------------------------------------------------------------------


def test_probe_measures_this_host_and_its_file_loads_into_build(tmp_path, small_models):
    """On a machine without GPUs the probe measures the host copy and a real fsync'd disk write into
    a temp dir, says what it skipped, leaves no test files, and build uses the figure."""
    disk = tmp_path / "nvme"
    disk.mkdir()
    out = tmp_path / "measured" / "host.yaml"
    result = cli(
        "probe",
        "--sku",
        "dgx-h100",
        "--path",
        disk,
        "--size",
        "64MiB",
        "--writers",
        "2",
        "--repeat",
        "2",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    assert list(disk.iterdir()) == []  # its test files are gone
    doc = yaml.safe_load(out.read_text())
    assert doc["sku"] == "dgx-h100" and doc["tool"].startswith("ckptreport probe")
    assert {"host_memcpy", "local_nvme_write"} <= set(doc["metrics"])
    assert len(doc["metrics"]["local_nvme_write"]["samples"]) == 2
    if probe._torch() is None:
        assert any("PyTorch is not installed" in s for s in doc["skipped"])
        assert "skipped GPU -> host copies" in result.output
    built = build(small_models, tmp_path / "out", measured=[out], skip=["workbook", "briefs"])
    f = built.frame
    h100 = f[f.sku == "dgx-h100"]
    assert (h100["nvme_source"] == "measured on 1 host").all()
    got = yaml.safe_load(out.read_text())["metrics"]["local_nvme_write"]["value"]
    assert h100["nvme_write_GBps"].iloc[0] == pytest.approx(
        float(got.split()[0]) * {"GB/s": 1, "MB/s": 1e-3}[got.split()[1]]
    )


def test_probe_gpu_copies_where_a_gpu_exists():
    """GPU -> pinned host copies, per GPU and all at once, on a real CUDA device."""
    torch = probe._torch()
    if torch is None or not torch.cuda.is_available():
        pytest.skip(
            "no CUDA GPU here (PyTorch "
            + ("missing" if torch is None else "sees no device")
            + "): the GPU copies are measured only on a GPU host"
        )
    one, node, gpus = probe.gpu_copies(torch, 256 * 2**20, 2)
    assert (
        gpus["count"] == torch.cuda.device_count()
        and one["value"] > 1e9
        and node["value"] > one["value"] * 0.5
    )


def test_probe_refuses_an_unwritable_path(tmp_path):
    result = cli(
        "probe", "--sku", "dgx-h100", "--path", tmp_path / "missing", "-o", tmp_path / "m.yaml"
    )
    assert (
        result.exit_code == 2
        and "does not exist" in result.output
        and not (tmp_path / "m.yaml").exists()
    )


def test_interrupted_probe_leaves_nothing(tmp_path, monkeypatch):
    """Ctrl-C during a write: the test files are removed and no measured file is written."""
    disk = tmp_path / "nvme"
    disk.mkdir()

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(probe, "host_memcpy", interrupt)
    result = cli(
        "probe", "--sku", "dgx-h100", "--path", disk, "--size", "32MiB", "-o", tmp_path / "m.yaml"
    )
    assert result.exit_code == 130 and "nothing was written" in result.output
    assert not (tmp_path / "m.yaml").exists() and list(disk.iterdir()) == []


def test_probe_refuses_a_test_bigger_than_the_room_it_writes_into(tmp_path):
    """--size 100PB once started writing 100 PB into the directory, until the disk was full."""
    disk = tmp_path / "nvme"
    disk.mkdir()
    result = cli(
        "probe", "--sku", "dgx-h100", "--path", disk, "--size", "100PB", "-o", tmp_path / "m.yaml"
    )
    assert result.exit_code == 2, result.output
    assert f"{disk}: the test writes 100 PB there" in result.output and "free" in result.output
    assert not (tmp_path / "m.yaml").exists() and list(disk.iterdir()) == []


def test_a_probe_killed_while_it_writes_leaves_no_test_file(tmp_path):
    """SIGTERM (a kill, a scheduler's time limit) cleans up as Ctrl-C does: a killed probe once left
    its gigabytes of test files behind."""
    import os
    import signal
    import subprocess
    import sys
    import time

    disk = tmp_path / "nvme"
    disk.mkdir()
    exe = Path(sys.executable).with_name("ckptreport")
    argv = [str(exe), "probe", "--sku", "dgx-h100", "--path", str(disk), "--size", "4GiB"]
    proc = subprocess.Popen(
        [*argv, "--writers", "1", "-o", str(tmp_path / "m.yaml")],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not any(disk.iterdir()) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    assert proc.poll() is None, proc.stdout.read()  # caught while it writes
    os.kill(proc.pid, signal.SIGTERM)
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    assert "nothing was written" in out and "Traceback" not in out
    assert list(disk.iterdir()) == [] and not (tmp_path / "m.yaml").exists()


# ---- importers ------------------------------------------------------------------------------------


def test_fio_group_reporting():
    """A real fio 3.33 JSON (4 jobs, group_reporting): its bw_bytes is the host's local write."""
    doc = importers.fio(FIXTURES / "fio-seqwrite-4jobs.json", "dgx-h100")
    m = doc["metrics"]["local_nvme_write"]
    assert m["value"] == "585.145 MB/s" and m["writers"] == "4" and "fio-3.33" in m["method"]


def test_fio_separate_jobs_are_summed_and_a_tier_is_per_node():
    doc = importers.fio(FIXTURES / "fio-seqwrite-2jobs-separate.json", "dgx-h100", tier="pfs-100")
    m = doc["metrics"]["tier_write_per_node"]
    assert m["tier"] == "pfs-100" and m["value"] == "1.24856 GB/s"  # 621,378,370 + 627,185,644 B/s


def test_ior_summary_across_nodes_is_the_tiers_aggregate():
    """IOR's JSON summary (documented format): bwMeanMIB 20,732.90 MiB/s over 4 nodes."""
    doc = importers.ior(FIXTURES / "ior-write-4nodes.json", "dgx-h100", "pfs-100")
    m = doc["metrics"]["tier_write"]
    assert units.parse(m["value"], "bandwidth") == pytest.approx(20732.90 * 2**20, rel=1e-5)
    assert m["nodes"] == "4" and doc["host"] == "node017"


def test_nvbandwidth_per_gpu_median_and_node_sum():
    """nvbandwidth -j (documented format; figures of the H800 run in the reference notes): per GPU
    the median of device_to_host_memcpy_ce, per node the sum of all_to_host_memcpy_ce (358.66)."""
    doc = importers.nvbandwidth(FIXTURES / "nvbandwidth-h800.json", "dgx-h100")
    assert doc["metrics"]["d2h_per_gpu"]["value"] == "55.12 GB/s"
    assert doc["metrics"]["d2h_per_node"]["value"] == "358.66 GB/s"
    assert doc["gpus"]["count"] == "8"


# ---- builds with measured files -----------------------------------------------------------------


def _imported(tmp_path) -> Path:
    d = tmp_path / "measured"
    for tool, fixture, extra in (
        ("nvbandwidth", "nvbandwidth-h800.json", []),
        ("ior", "ior-write-4nodes.json", ["--tier", "pfs-100"]),
    ):
        r = cli(
            "import",
            tool,
            FIXTURES / fixture,
            "--sku",
            "dgx-h100",
            *extra,
            "-o",
            d / f"{tool}.yaml",
        )
        assert r.exit_code == 0, r.output
    doc = yaml.safe_load((d / "nvbandwidth.yaml").read_text())
    doc["host"] = "node018"  # a second host, slower: the median of two
    doc["metrics"]["d2h_per_node"]["value"] = "300 GB/s"
    measured.write(doc, d / "node018.yaml")
    return d


def test_a_build_with_measured_files_changes_exactly_the_hops_measured(tmp_path, small_models):
    base = build(small_models, tmp_path / "spec", skip=["workbook", "briefs"]).frame
    got = build(
        small_models, tmp_path / "meas", measured=[_imported(tmp_path)], skip=["workbook", "briefs"]
    ).frame
    h100 = got.sku == "dgx-h100"
    assert (
        got.loc[h100, "d2h_node_GBps"].sub((358.66 + 300) / 2).abs().lt(1e-9).all()
    )  # median of two hosts
    assert got.loc[h100, "d2h_gpu_GBps"].sub(55.12).abs().lt(1e-9).all()
    assert got.loc[got.tier == "pfs-100", "tier_write_GBps"].round(2).eq(21.74).all()
    assert (got.loc[h100, "d2h_source"] == "measured on 2 hosts").all()
    assert (
        got.loc[got.tier == "pfs-100", "tier_source"].str.startswith("measured on 1 host")
    ).all()
    untouched = ~h100 & (
        got.tier != "pfs-100"
    )  # other SKUs on other tiers: not a single value moved

    def plain(f):
        return f.astype({c: str for c in f.select_dtypes("category").columns}).reset_index(
            drop=True
        )

    pd.testing.assert_frame_equal(plain(base[untouched]), plain(got[untouched]))
    inputs = [
        "params",
        "gpus",
        "ckpt_bytes",
        "storage_nic_GBps",
        "nvme_write_GBps",
        "host_memory_bytes",
        "usd_per_gpu_hour",
        "gpu_mtbf_s",
        "nic_source",
    ]
    pd.testing.assert_frame_equal(
        plain(base[inputs]), plain(got[inputs])
    )  # unmeasured inputs: unchanged everywhere


def test_every_output_names_the_measured_source(tmp_path, small_models):
    d = _imported(tmp_path)
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(small_models),
            "--out",
            str(tmp_path / "out"),
            "--measured",
            str(d),
            "--workbook-rows",
            "100",
        ],
    )
    assert result.exit_code == 0, result.output
    assert "skus.dgx-h100.d2h_per_node: measured on 2 hosts" in result.output
    csv = pd.read_csv(tmp_path / "out" / "scenarios.csv")
    assert (csv.loc[csv.sku == "dgx-h100", "d2h_source"] == "measured on 2 hosts").all()
    wb = openpyxl.load_workbook(tmp_path / "out" / "ckptreport.xlsx", read_only=True)
    rows = [
        r for r in wb["Assumptions"].iter_rows(values_only=True) if r and r[0] == "skus.dgx-h100"
    ]
    d2h = next(r for r in rows if r[1] == "d2h_node_GBps")
    assert d2h[4] == "measured on 2 hosts" and d2h[9] == pytest.approx(358.66) and d2h[11] == "ok"
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    assert "measured on 2 hosts" in manifest
    if shutil.which("pdftotext"):
        text = subprocess.run(
            ["pdftotext", str(tmp_path / "out" / "briefs" / "llama3-405b.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "Measured on your hosts" in text and "measured on 2 hosts" in text


def test_a_measurement_far_from_spec_is_flagged(tmp_path, small_models):
    """Below 50% or above 110% of spec is flagged in the workbook and the briefs."""
    d = tmp_path / "m"
    r = cli(
        "import",
        "fio",
        FIXTURES / "fio-seqwrite-4jobs.json",
        "--sku",
        "dgx-h100",
        "-o",
        d / "fio.yaml",
    )
    assert r.exit_code == 0
    built = build(small_models, tmp_path / "out", measured=[d], workbook_rows=100)
    m = built.inputs.measured[("skus", "dgx-h100", "local_nvme.write")]
    assert m.flag == "below 50% of spec" and m.ratio == pytest.approx(0.585145408 / 26, rel=1e-5)
    wb = openpyxl.load_workbook(tmp_path / "out" / "ckptreport.xlsx", read_only=True)
    row = next(
        r
        for r in wb["Assumptions"].iter_rows(values_only=True)
        if r and r[0] == "skus.dgx-h100" and r[1] == "nvme_write_GBps"
    )
    assert row[11] == "below 50% of spec"
    if shutil.which("pdftotext"):
        text = subprocess.run(
            ["pdftotext", str(tmp_path / "out" / "briefs" / "llama3-405b.pdf"), "-"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        assert "skus.dgx-h100.local_nvme.write" in text and "below 50% of spec" in text


# ---- bad measured files ---------------------------------------------------------------------------


def _good(tmp_path) -> Path:
    path = tmp_path / "m" / "good.yaml"
    measured.write(importers.nvbandwidth(FIXTURES / "nvbandwidth-h800.json", "dgx-h100"), path)
    return path


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda t: t.replace("55.12 GB/s", "55.12 GB", 1), "expected a bandwidth like"),
        (lambda t: t.replace("value: 55.12 GB/s", "value: -55.12 GB/s", 1), "greater than 0"),
        (
            lambda t: t.replace("sku: dgx-h100", "sku: dgx-h10", 1),
            "unknown sku 'dgx-h10' (did you mean 'dgx-h100'?)",
        ),
        (lambda t: t.replace("metrics:", "metric:", 1), "unknown key 'metric'"),
        (lambda t: t[: len(t) // 2] + "\n  - [", "YAML syntax error"),
        (lambda t: "just: a mapping\n", "missing required key"),
    ],
)
def test_bad_measured_files_are_clear_errors(tmp_path, small_models, edit, message):
    path = _good(tmp_path)
    path.write_text(edit(path.read_text()))
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main, ["build", "--models", str(small_models), "--out", str(out), "--measured", str(path)]
    )
    assert result.exit_code == 2, result.output
    assert (
        str(path) in result.output and message in result.output and "Traceback" not in result.output
    )
    assert not out.exists() or not any(out.iterdir())


def test_a_gigabyte_of_junk_is_refused_without_reading_it(tmp_path, small_models):
    junk = tmp_path / "junk.yaml"
    with open(junk, "wb") as f:
        f.truncate(2**30)  # sparse: 1 GiB of zeros
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(small_models),
            "--out",
            str(tmp_path / "out"),
            "--measured",
            str(junk),
        ],
    )
    assert result.exit_code == 2 and "is larger than 8,388,608 bytes" in result.output
    for tool in ("fio", "ior", "nvbandwidth"):
        r = cli(
            "import",
            tool,
            junk,
            "--sku",
            "dgx-h100",
            *(["--tier", "pfs-100"] if tool == "ior" else []),
            "-o",
            tmp_path / "x.yaml",
        )
        assert r.exit_code == 2 and "bytes" in r.output and not (tmp_path / "x.yaml").exists()


@pytest.mark.parametrize(
    "content, message",
    [
        ('{"jobs": [{"write": {"bw_bytes": 123', "not JSON"),
        ('{"jobs": [{"write": {"bw_bytes": -5}}]}', "expected a positive number"),
        ('{"summary": []}', "no jobs"),
        ("[1, 2, 3]", "expected a JSON object"),
    ],
)
def test_truncated_or_hostile_tool_output(tmp_path, content, message):
    bad = tmp_path / "fio.json"
    bad.write_text(content)
    r = cli("import", "fio", bad, "--sku", "dgx-h100", "-o", tmp_path / "x.yaml")
    assert r.exit_code == 2 and message in r.output and str(bad) in r.output
    assert not (tmp_path / "x.yaml").exists()


def test_a_tier_that_does_not_exist_is_named(tmp_path, small_models):
    d = tmp_path / "m"
    cli(
        "import",
        "ior",
        FIXTURES / "ior-write-4nodes.json",
        "--sku",
        "dgx-h100",
        "--tier",
        "pfs-10",
        "-o",
        d / "i.yaml",
    )
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(small_models),
            "--out",
            str(tmp_path / "out"),
            "--measured",
            str(d),
        ],
    )
    assert (
        result.exit_code == 2 and "unknown tier 'pfs-10' (did you mean 'pfs-100'?)" in result.output
    )
    assert re.search(r"i\.yaml:\d+:\d+: metrics\.tier_write\.tier:", result.output)


def test_measured_spread_across_hosts_is_the_figures_range(tmp_path, small_models):
    """Two hosts measured 358.66 and 300 GB/s per node: the figure used is their median, and its
    range (for sensitivity and Monte Carlo) runs from the slower host to the faster."""
    from ckptreport.build import load_inputs

    inputs = load_inputs(small_models, measured_paths=[_imported(tmp_path)])
    q = inputs.skus["dgx-h100"].d2h_per_node
    assert (q.low, q.value, q.high) == (300e9, pytest.approx((358.66e9 + 300e9) / 2), 358.66e9)
    (param,) = [p for p in parameters(inputs) if p.label == "skus.dgx-h100.d2h_per_node"]
    assert (param.low, param.high) == (300.0, 358.66)
    assert inputs.skus["dgx-h100"].d2h_per_gpu.low is None  # one host measured it: no spread


# ---- interference: training slowed by a background persist ---------------------------------------


def test_probe_measures_interference_on_its_cpu_path_and_build_uses_it(tmp_path, small_models):
    """--interference with --cpu-loop (no GPU here): the step time of a compute loop alone and while a
    background process writes the shard into the path, the file names the engines it stands for and
    leaves no test file behind; build --measured then takes that engine's async_slowdown from it
    (the frame, explain's basis, the manifest), and leaves the other engines' as shipped."""
    disk = tmp_path / "tier"
    disk.mkdir()
    out = tmp_path / "measured" / "host.yaml"
    result = cli(
        "probe",
        "--sku",
        "dgx-h100",
        "--path",
        disk,
        "--size",
        "16MiB",
        "--writers",
        "1",
        "--repeat",
        "1",
        "--interference",
        "dcp-async-cached",
        "--cpu-loop",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    assert list(disk.iterdir()) == []  # the background writer's file is gone
    doc = yaml.safe_load(out.read_text())
    got = doc["interference"]
    assert got["engines"] == ["dcp-async-cached"] and "CPU path, no GPU" in got["method"]
    assert len(got["samples"]) == 1 and got["path"] == str(disk)
    share = units.parse(got["value"], "percent")
    assert 0 <= share <= 1
    built = build(small_models, tmp_path / "out", measured=[out], skip=["workbook", "briefs"])
    f = built.frame
    cached = f[f.engine == "dcp-async-cached"]
    assert cached["async_slowdown_pct"].to_numpy() == pytest.approx(100 * share)
    other = f[f.engine == "torch-save"]
    assert (other["async_slowdown_pct"] == 0).all()
    import json

    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (hop,) = [m for m in manifest["measured"] if m["hop"].startswith("engines.")]
    assert hop["hop"] == "engines.dcp-async-cached.async_slowdown"
    assert hop["median_fraction"] == pytest.approx(share) and "median_Bps" not in hop
    assert hop["shipped_fraction"] == pytest.approx(0.139)


def test_without_a_gpu_the_interference_is_skipped_and_says_why(tmp_path):
    """No GPU and no --cpu-loop: nothing is measured, the file says why (a CPU loop is not a
    training step)."""
    if probe._torch() is not None and probe._torch().cuda.is_available():
        pytest.skip("a GPU is here: the GPU loop runs (test_probe_gpu_copies_where_a_gpu_exists)")
    out = tmp_path / "host.yaml"
    result = cli(
        "probe",
        "--sku",
        "dgx-h100",
        "--size",
        "16MiB",
        "--repeat",
        "1",
        "--interference",
        "dcp-async-cached",
        "-o",
        out,
    )
    assert result.exit_code == 0, result.output
    doc = yaml.safe_load(out.read_text())
    assert "interference" not in doc
    assert any(s.startswith("interference: no CUDA device") for s in doc["skipped"])


@pytest.mark.parametrize(
    "engines, message",
    [
        (
            ["dcp-async-cachd"],
            "unknown engine 'dcp-async-cachd' (did you mean 'dcp-async-cached'?)",
        ),
        (["torch-save"], "engine 'torch-save' saves only in sync: no background persist"),
        ([], "interference.engines"),
    ],
)
def test_a_measured_interference_names_an_engine_that_runs_in_the_background(
    tmp_path, small_models, engines, message
):
    doc = measured.document(
        "h1",
        "ckptreport probe",
        "dgx-h100",
        {},
        interference={"value": 0.2, "samples": [0.2], "method": "m", "engines": ["nvrx-local"]},
    )
    doc["interference"]["engines"] = engines
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    out = tmp_path / "out"
    result = cli("build", "--models", small_models, "--out", out, "--measured", path)
    assert result.exit_code == 2, result.output
    assert f"{path}:" in result.output and message in result.output
    assert "Traceback" not in result.output and not out.exists()


def test_a_measured_interference_above_100_percent_is_refused(tmp_path, small_models):
    doc = measured.document(
        "h1",
        "ckptreport probe",
        "dgx-h100",
        {},
        interference={"value": 0.2, "samples": [0.2], "method": "m", "engines": ["nvrx-local"]},
    )
    doc["interference"]["value"] = "140%"
    path = tmp_path / "m.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = cli("build", "--models", small_models, "--out", tmp_path / "out", "--measured", path)
    assert result.exit_code == 2 and "interference.value" in result.output, result.output
