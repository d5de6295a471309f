"""A models directory that built keeps building after an upgrade: the earliest public one (the four
files of the first release, tests/fixtures/models-earliest, from commit 5cd3227) builds with the
shipped defaults for what was added since, and says so once."""

from __future__ import annotations

import json
import shutil

from click.testing import CliRunner

from ckptreport.cli import main
from ckptreport.read.load import ADDED, load

from conftest import REPO

EARLIEST = REPO / "tests" / "fixtures" / "models-earliest"


def test_the_earliest_models_directory_lacks_only_files_added_since():
    names = {p.name for p in EARLIEST.glob("*.yaml")}
    assert names == {"models.yaml", "hardware.yaml", "storage.yaml", "plan.yaml"}
    assert set(ADDED) == {"engines.yaml"}


def test_a_models_directory_from_before_engines_builds_with_the_shipped_engines(tmp_path):
    models = tmp_path / "models"
    shutil.copytree(EARLIEST, models)
    inputs = load(models)
    assert len(inputs.notes) == 1 and "engines.yaml is not in" in inputs.notes[0]
    assert "the shipped one is used" in inputs.notes[0]
    assert inputs.engines  # the shipped engines
    out = tmp_path / "out"
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(models),
            "--out",
            str(out),
            "--no-workbook",
            "--no-briefs",
            "--no-html",
        ],
    )
    assert result.exit_code == 0, result.output
    assert result.output.count("engines.yaml is not in") == 1  # a note, once, not an error
    assert "problem" not in result.output.lower() and "internal error" not in result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["recommendations"] and manifest["decisions"]
    assert not (models / "engines.yaml").exists()  # nothing written into the user's directory
    said = CliRunner().invoke(main, ["validate", "--models", str(models)])
    assert said.exit_code == 0 and "engines.yaml is not in" in said.output


def test_a_missing_file_that_was_always_there_is_still_an_error(tmp_path):
    models = tmp_path / "models"
    shutil.copytree(EARLIEST, models)
    (models / "storage.yaml").unlink()
    result = CliRunner().invoke(main, ["validate", "--models", str(models)])
    assert result.exit_code == 2 and "storage.yaml: file is missing" in result.output
