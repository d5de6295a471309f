"""Progress of the long steps: click's bar on a terminal, plain lines in a log, nothing with -q."""

from __future__ import annotations

import io
import os
import pty
import select
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from ckptreport.base.progress import Progress, task
from ckptreport.cli import main


def test_plain_lines_at_each_tenth_each_item_and_the_end(monkeypatch):
    from ckptreport.base import progress

    monkeypatch.setattr(progress, "SLOW_S", 0.0)  # every step counts as slow
    stream = io.StringIO()
    p = Progress(stream, bars=False)
    with task(p, "rows", 100) as advance:
        for _ in range(40):
            advance(2)
    with task(p, "briefs", 2) as advance:
        advance(1, "a.pdf")
        advance(1, "b.pdf")
    lines = stream.getvalue().splitlines()
    # rows stopped at 80 of 100: a line at each tenth, and no end line claiming it finished
    assert lines == [f"ckptreport: rows {n}/100" for n in range(10, 90, 10)] + [
        "ckptreport: briefs 1/2: a.pdf",
        "ckptreport: briefs 2/2: b.pdf",
    ]
    with task(p, "rows", 5) as advance:
        advance(5)
    assert stream.getvalue().splitlines()[-1].startswith("ckptreport: rows 5/5 in ")


def test_a_quick_step_says_nothing_in_a_log():
    stream = io.StringIO()
    with task(Progress(stream, bars=False), "rows", 100) as advance:
        advance(100)
    assert stream.getvalue() == ""


def test_a_plain_function_hears_no_counted_step():
    said = []
    with task(said.append, "rows", 10) as advance:
        advance(10)
    assert said == []


def test_a_build_in_a_log_prints_lines_and_nothing_with_quiet(small_models, tmp_path):
    result = CliRunner().invoke(
        main, ["build", "--models", str(small_models), "--out", str(tmp_path / "a")]
    )
    assert result.exit_code == 0, result.output
    err = result.stderr.splitlines()
    briefs = [
        line for line in err if line.startswith("ckptreport: briefs ") and line.endswith(".pdf")
    ]
    assert len(briefs) == len(list((tmp_path / "a" / "briefs").glob("*.pdf"))) > 0
    assert not any("\r" in line or "[#" in line for line in err)  # no bar drawn into a log
    quiet = CliRunner().invoke(
        main, ["build", "--models", str(small_models), "--out", str(tmp_path / "b"), "-q"]
    )
    assert quiet.exit_code == 0 and quiet.stderr == ""


def test_a_build_on_a_terminal_draws_bars(small_models, tmp_path):
    """The real command under a pseudo-terminal, as a person at a shell runs it."""
    exe = Path(sys.executable).with_name("ckptreport")
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        [str(exe), "build", "--models", str(small_models), "--out", str(tmp_path / "out")],
        stdin=follower,
        stdout=subprocess.DEVNULL,
        stderr=follower,
        env={**os.environ},
    )
    os.close(follower)
    seen = b""
    while True:
        ready, _, _ = select.select([leader], [], [], 300)
        if not ready:
            break
        try:
            data = os.read(leader, 65536)
        except OSError:  # the terminal closed: the command is done
            break
        if not data:
            break
        seen += data
    assert proc.wait(timeout=300) == 0
    text = seen.decode()
    assert "ckptreport: workbook rows  [" in text and "ckptreport: briefs  [" in text
    assert "##############################]" in text  # a bar drawn to its end
    assert "\r" in text


def test_each_line_is_flushed_as_it_is_written():
    """In a pipe a line must reach the reader when it is said, not when a buffer fills."""

    class Recording(io.StringIO):
        flushed: list[str] = []

        def flush(self):
            self.flushed.append(self.getvalue())

    stream = Recording()
    Progress(stream, bars=False)("loading models")
    assert stream.flushed[-1] == "ckptreport: loading models\n"


def test_a_log_hears_a_heartbeat_while_a_step_is_quiet_and_a_terminal_does_not():
    import time

    stream = io.StringIO()
    p = Progress(stream, bars=False)
    with p.beating(0.05), task(p, "brief data", 10) as advance:
        advance(3)
        time.sleep(0.5)
    beats = [ln for ln in stream.getvalue().splitlines() if "still working" in ln]
    assert beats and beats[0].startswith("ckptreport: still working (brief data 3/10, ")
    n = len(stream.getvalue())
    time.sleep(0.2)
    assert len(stream.getvalue()) == n  # the heartbeat stops with its block
    terminal = io.StringIO()
    with Progress(terminal, bars=True).beating(0.05):
        time.sleep(0.2)
    assert "still working" not in terminal.getvalue()


def test_a_brief_says_it_is_done_when_its_worker_finishes_not_when_it_is_waited_for():
    """The briefs' PDFs are laid out while the workbook is written; in a log each says so at once
    (a plan of 200 briefs printed every line at the end, after minutes of silence)."""
    from concurrent.futures import Future

    from ckptreport.render.brief import Briefs

    class Pool:
        def close(self, cancel=False):
            pass

    stream = io.StringIO()
    jobs = [(n, Path(f"{n}.pdf"), Future()) for n in ("a", "b")]
    briefs = Briefs(Pool(), jobs, Progress(stream, bars=False))
    assert stream.getvalue() == ""
    jobs[1][2].set_result([])
    assert stream.getvalue() == "ckptreport: briefs 1/2: b.pdf\n"  # before anyone waits
    jobs[0][2].set_result([])
    assert briefs.wait() == [Path("a.pdf"), Path("b.pdf")]
    assert stream.getvalue().splitlines() == [
        "ckptreport: briefs 1/2: b.pdf",
        "ckptreport: briefs 2/2: a.pdf",
    ]
