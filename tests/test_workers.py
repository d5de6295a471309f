"""Where a build's pieces run (``base.workers``): in this process, on a local pool of every core, or on
a Dask cluster (``--scheduler``, ``DASK_SCHEDULER_ADDRESS``). Wherever they run, a streamed plan's
Parquet parts, its CSV, the Monte Carlo's draws and the manifest are the same bytes. The clusters here
are two-worker ``LocalCluster``s; speed on one is measured by benchmarks/bench_dask.py, not here."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from click.testing import CliRunner

from ckptreport.answer import report as report_mod
from ckptreport.base import workers as workers_mod
from ckptreport.build import build
from ckptreport.cli import main
from ckptreport.model.evaluate import chunk, scenarios, spans

distributed = pytest.importorskip("distributed")  # a test dependency: installed by .[test]


@pytest.fixture(scope="module")
def cluster():
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
    ) as c:
        yield c


def test_spans_cut_the_plan_into_pieces_labelled_as_the_whole_frame(shipped):
    whole, _ = scenarios(shipped)
    cut = spans(shipped, 3000)
    pieces = [chunk(shipped, s) for s in cut]
    intervals = len(shipped.plan.intervals)
    assert len(pieces) == -(-len(whole) // 3000)  # pieces of 3,000 rows (a run of interval blocks)
    assert all(len(p) <= 3000 + intervals for p in pieces[:-1])
    joined = pd.concat(pieces)
    assert list(joined.index) == list(whole.index)
    for name in ("waste_pct", "total_usd", "tier", "gpus"):
        assert joined[name].astype(str).equals(whole[name].astype(str)), name


def test_workers_hand_results_back_in_the_items_order_wherever_they_run(cluster):
    with distributed.Client(cluster) as client:
        places = [workers_mod.InProcess(), workers_mod.Local(2), workers_mod.Dask(client=client)]
        try:
            got = [list(w.map(divmod, 1000, [7, 3, 11, 2, 5, 13, 17])) for w in places]
        finally:
            for w in places:
                w.close()
    assert got[0] == got[1] == got[2] == [divmod(1000, d) for d in (7, 3, 11, 2, 5, 13, 17)]


def _streamed(monkeypatch):
    monkeypatch.setattr(report_mod, "ROWS_IN_MEMORY", 300)
    monkeypatch.setattr(report_mod, "CHUNK_ROWS", 200)


def _files(out) -> dict[str, str]:
    return json.loads((out / "manifest.json").read_text())["files"]


def test_a_streamed_build_is_the_same_bytes_in_process_on_a_pool_and_on_dask(
    small_models, tmp_path, monkeypatch, cluster
):
    """Parts written by whichever process computed them; the CSV joined; the draws mapped too."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    whole = build(small_models, tmp_path / "whole", skip=["workbook", "briefs", "page"])
    _streamed(monkeypatch)
    options = dict(skip=["workbook", "briefs", "page"], csv=True, samples=96)
    said: list[str] = []
    one = build(small_models, tmp_path / "one", workers=1, **options)
    pool = build(small_models, tmp_path / "pool", workers=2, **options)
    dask = build(
        small_models, tmp_path / "dask", said.append, scheduler=cluster.scheduler_address, **options
    )
    assert any("dask, 2 worker(s)" in s for s in said)  # it ran there, not here
    parts = sorted(k for k in _files(tmp_path / "one") if k.startswith("scenarios.parquet/"))
    assert len(parts) >= 4 and parts[0] == "scenarios.parquet/part-000000000000.parquet"
    assert _files(tmp_path / "one") == _files(tmp_path / "pool") == _files(tmp_path / "dask")
    for name in ("manifest.json", "scenarios.csv", "samples.parquet"):
        assert (tmp_path / "one" / name).read_bytes() == (tmp_path / "dask" / name).read_bytes(), (
            name
        )
    # one dataset: every reader gets every row, in order, as the in-memory build wrote them
    expected = pd.read_parquet(tmp_path / "whole" / "scenarios.parquet")
    import dask.dataframe as dd
    import pyarrow.dataset as ds

    for got in (
        pd.read_parquet(tmp_path / "dask" / "scenarios.parquet"),
        ds.dataset(tmp_path / "dask" / "scenarios.parquet").to_table().to_pandas(),
        _dask_read(dd, tmp_path / "dask" / "scenarios.parquet"),
    ):
        assert len(got) == len(expected) == whole.report.rows
        for name in ("model", "tier", "waste_pct", "total_usd", "gpus"):
            assert got[name].astype(str).tolist() == expected[name].astype(str).tolist(), name
    assert (tmp_path / "one" / "scenarios.csv").read_bytes() == (
        tmp_path / "whole" / "scenarios.csv"
    ).read_bytes()
    assert one.sampled.lines == pool.sampled.lines == dask.sampled.lines
    assert not (tmp_path / "dask" / ".csv-parts").exists()


def _dask_read(dd, path) -> pd.DataFrame:
    """dask.dataframe's read of the dataset (its own use of an argument pandas 3.1 deprecates is
    not this tool's warning to fail on)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", getattr(pd.errors, "Pandas4Warning", DeprecationWarning))
        return dd.read_parquet(path).compute().reset_index(drop=True)


def _build_command(models, out, *flags: str):
    return CliRunner().invoke(main, ["build", "--models", str(models), "--out", str(out), *flags])


def test_dask_scheduler_address_is_honoured_as_dask_users_set_it(
    small_models, tmp_path, monkeypatch, cluster
):
    _streamed(monkeypatch)
    monkeypatch.setenv("DASK_SCHEDULER_ADDRESS", cluster.scheduler_address)
    done = _build_command(
        small_models, tmp_path / "out", "--no-workbook", "--no-briefs", "--no-html"
    )
    assert done.exit_code == 0, done.output
    assert "dask, 2 worker(s)" in done.output
    assert len(list((tmp_path / "out" / "scenarios.parquet").glob("part-*.parquet"))) >= 4


@pytest.mark.parametrize("address", ["tcp://127.0.0.1:9", "no-such-host.invalid:8786"])
def test_a_scheduler_that_cannot_be_reached_is_said_in_words_and_nothing_is_written(
    small_models, tmp_path, address
):
    import dask

    with dask.config.set({"distributed.comm.timeouts.connect": "2s"}):  # Dask's own setting
        done = _build_command(small_models, tmp_path / "out", "--scheduler", address)
    assert done.exit_code != 0
    assert "cannot reach the Dask scheduler" in done.output and address in done.output
    assert "Traceback" not in done.output
    assert not (tmp_path / "out").exists()


def test_parts_written_where_this_machine_cannot_see_them_fail_the_build(
    small_models, tmp_path, monkeypatch
):
    """A worker on another machine writing into its own disk: its rows are missing, and it is said."""
    from ckptreport.base.errors import InputError
    from ckptreport.render import tables

    _streamed(monkeypatch)
    write = tables.Tables._part
    seen: list[int] = []

    def elsewhere(self, frame):
        seen.append(len(frame))
        if len(seen) != 2:  # the second piece lands on a disk this machine does not see
            write(self, frame)

    monkeypatch.setattr(tables.Tables, "_part", elsewhere)
    with pytest.raises(
        InputError, match=r"wrote [\d,]+ of the plan's [\d,]+ rows .*shared filesystem"
    ):
        build(small_models, tmp_path / "out", workers=1, skip=["workbook", "briefs", "page"])
    assert len(seen) >= 3 and not (tmp_path / "out").exists()


def test_the_briefs_data_computed_on_a_pool_is_what_this_process_computes(
    shipped, report, monkeypatch
):
    """A plan of many briefs computes their data on the workers: each brief's HTML is the same."""
    from ckptreport.render import brief as render_brief

    monkeypatch.setattr(report_mod, "BRIEFS_HERE", 0)
    pool = workers_mod.Local(2)
    try:
        there = report_mod.compute(shipped, workers=pool)
    finally:
        pool.close()
    meta = {
        "ckptreport_version": "test",
        "input_hash": shipped.input_hash,
        "build_time": "2000-01-01T00:00:00Z",
    }
    assert len(there.briefs) == len(report.briefs) >= 3
    for a, b in zip(there.briefs, report.briefs):
        html = [
            render_brief.render_html(render_brief.context(d, r, meta, "A4"))
            for d, r in ((a, there), (b, report))
        ]
        assert html[0] == html[1], a.spec.name


def test_a_script_that_builds_without_a_main_guard_still_builds(small_models, tmp_path):
    """Each spawned worker imports the main script; one that builds at its top level would build
    again there. The worker stops at once, and the build computes what is left in its own process:
    no deadlock on the output's lock, the same files."""
    import subprocess
    import sys

    script = tmp_path / "plan.py"
    script.write_text(
        "from ckptreport.build import build\n"
        f"r = build({str(small_models)!r}, {str(tmp_path / 'out')!r}, skip=['workbook', 'page'])\n"
        "print('built', r.report.rows, len(r.report.decisions))\n"
    )
    done = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=600, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.startswith("built ") and int(done.stdout.split()[2]) >= 2
    assert "if __name__" in done.stderr  # what the worker said, once
    assert len(list((tmp_path / "out" / "briefs").glob("*.pdf"))) >= 2


def test_kept_workers_serve_a_later_build_elsewhere_and_one_killed_is_replaced(
    small_models, tmp_path, monkeypatch
):
    """A process's worker pools (the decisions' and the briefs' layout) are kept for its later
    builds: a second build, from another working directory with a relative output, runs on the same
    worker processes and writes the same bytes where it was asked. Workers killed between builds
    (the out-of-memory killer) are replaced by fresh ones: the next build still writes every file,
    the same bytes, and later builds still use workers; ``stop_workers`` stops them."""
    import multiprocessing
    import os
    import signal
    import time

    import ckptreport.api as ck
    from ckptreport.render import brief as render_brief

    from conftest import output_files

    monkeypatch.setattr(render_brief, "workers_cores", lambda: 2)  # the same on a 1-core machine
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    ck.stop_workers()  # no pool of an earlier test: the ones seen here are this test's
    before = {p.pid for p in multiprocessing.active_children()}

    def workers() -> set[int]:
        return {p.pid for p in multiprocessing.active_children()} - before

    skip = ["workbook", "page"]
    try:
        (tmp_path / "a").mkdir()
        monkeypatch.chdir(tmp_path / "a")
        first = build(small_models, "out", workers=2, skip=skip)
        kept = workers()
        assert len(first.report.briefs) == 2 and len(kept) == 4  # 2 for decisions, 2 for layout
        (tmp_path / "b").mkdir()
        monkeypatch.chdir(tmp_path / "b")
        build(small_models, "out", workers=2, skip=skip)
        assert workers() == kept
        files = output_files(tmp_path / "a" / "out")
        assert len([n for n in files if n.endswith(".pdf")]) == 2
        assert output_files(tmp_path / "b" / "out") == files
        for pid in kept:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while workers() & kept and time.monotonic() < deadline:
            time.sleep(0.05)
        build(small_models, tmp_path / "c", workers=2, skip=skip)
        assert output_files(tmp_path / "c") == files
        fresh = workers()
        assert len(fresh) == 4 and not fresh & kept and workers_mod.spawn_works()
        ck.stop_workers()
        assert workers() == set()
    finally:
        ck.stop_workers()
