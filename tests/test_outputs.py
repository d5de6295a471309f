"""outputs.py: the build's outputs, registered. The command line's --no-* flags and build(skip=...)
choose from one list; each output says what the compute stage computes for it; the build starts and
then finishes them in the list's order, whatever they are."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from ckptreport import outputs
from ckptreport.answer.types import BRIEFS, DECISIONS, NEEDS, PAGE, WORKBOOK
from ckptreport.build import build
from ckptreport.cli import main
from ckptreport.outputs import OUTPUTS, SKIPPABLE, Output, choose


def test_the_registry():
    assert [o.name for o in OUTPUTS] == [
        "tables",
        "samples",
        "briefs",
        "workbook",
        "page",
        "manifest",
    ]
    assert SKIPPABLE == ("briefs", "workbook", "page")
    assert {o.flag for o in OUTPUTS if o.flag} == {"briefs", "workbook", "html"}  # --no-briefs ...
    assert frozenset().union(*(o.needs for o in OUTPUTS)) == NEEDS
    assert [o.name for o in choose()] == ["tables", "briefs", "workbook", "page", "manifest"]
    assert [o.name for o in choose(["workbook", "briefs", "page"])] == ["tables", "manifest"]
    assert [o.name for o in choose(samples=10)][:2] == ["tables", "samples"]
    with pytest.raises(ValueError, match="no output named"):
        choose(["manifest"])  # written always
    assert {o.name: o.needs for o in OUTPUTS if o.needs} == {
        "briefs": frozenset({BRIEFS}),
        "workbook": frozenset({WORKBOOK}),
        "page": frozenset({PAGE}),
        "manifest": frozenset({DECISIONS}),
    }


class Counter:
    """A sink: counts the rows handed to it, says how many when closed."""

    def __init__(self, log: list):
        self.log, self.rows = log, 0

    def __call__(self, frame):
        self.rows += len(frame)

    def close(self):
        self.log.append(("rows", self.rows))


class Recorder(Output):
    """An output of the test's: it records what the build did with it, and writes a file."""

    name = "recorder"

    def __init__(self, log: list):
        self.log = log

    def sink(self, run):
        self.log.append("sink")
        return Counter(self.log)

    def start(self, run):
        self.log.append(("start", run.report.rows))
        (run.staging / "recorded.json").write_text(json.dumps({"rows": run.report.rows}))

    def finish(self, run):
        self.log.append("finish")


def test_an_output_added_to_the_list_is_run_and_its_file_lands_with_the_others(
    small_models, tmp_path, monkeypatch
):
    log: list = []
    registry = (
        *OUTPUTS[:-1],
        Recorder(log),
        OUTPUTS[-1],
    )  # before the manifest, which hashes its file
    monkeypatch.setattr(outputs, "OUTPUTS", registry)
    result = build(small_models, tmp_path / "out", skip=["workbook", "briefs", "page"])
    assert log == ["sink", ("rows", result.report.rows), ("start", result.report.rows), "finish"]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "recorded.json" in manifest["files"] and (tmp_path / "out" / "recorded.json").exists()


def test_the_flags_choose_what_is_written(small_models, tmp_path):
    out = tmp_path / "out"
    done = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(small_models),
            "--out",
            str(out),
            "--no-workbook",
            "--no-briefs",
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    assert {p.name for p in out.iterdir()} == {
        "scenarios.parquet",
        "scenarios.csv",
        "report.html",
        "manifest.json",
    }
    done = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(small_models),
            "--out",
            str(out),
            "--no-workbook",
            "--no-briefs",
            "--no-html",
            "-q",
        ],
    )
    assert done.exit_code == 0, done.output
    assert {p.name for p in out.iterdir()} == {
        "scenarios.parquet",
        "scenarios.csv",
        "manifest.json",
    }
