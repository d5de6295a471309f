"""Writers never write through a symbolic link: init --force over a linked plan.yaml, schema over a
planted plan.schema.json.tmp link or into a linked .schema folder leave the file outside untouched
and refuse with a clear error; a directory name holding a terminal escape prints escaped."""

from __future__ import annotations

import os

from click.testing import CliRunner

from ckptreport.cli import main


def _outside(tmp_path):
    victim = tmp_path / "outside" / "precious.yaml"
    victim.parent.mkdir()
    victim.write_text("mine\n")
    return victim


def test_init_force_refuses_a_linked_models_file(tmp_path):
    victim = _outside(tmp_path)
    target = tmp_path / "models"
    assert CliRunner().invoke(main, ["init", str(target)]).exit_code == 0
    (target / "plan.yaml").unlink()
    os.symlink(victim, target / "plan.yaml")
    result = CliRunner().invoke(main, ["init", "--force", str(target)])
    assert result.exit_code == 2, result.output
    assert "symbolic link" in result.output and "Traceback" not in result.output
    assert victim.read_text() == "mine\n"


def test_schema_never_follows_a_planted_temporary_link(tmp_path):
    victim = _outside(tmp_path)
    where = tmp_path / "schemas"
    where.mkdir()
    os.symlink(victim, where / "plan.schema.json.tmp")  # the name the old writer used
    result = CliRunner().invoke(main, ["schema", str(where)])
    assert result.exit_code == 0, result.output
    assert victim.read_text() == "mine\n"
    assert (where / "plan.schema.json").is_file() and not (where / "plan.schema.json").is_symlink()


def test_schema_refuses_a_linked_folder_and_a_linked_target(tmp_path):
    victim = _outside(tmp_path)
    linked = tmp_path / "linked"
    os.symlink(victim.parent, linked)
    result = CliRunner().invoke(main, ["schema", str(linked)])
    assert result.exit_code == 2 and "symbolic link" in result.output, result.output
    assert sorted(p.name for p in victim.parent.iterdir()) == ["precious.yaml"]
    where = tmp_path / "schemas"
    where.mkdir()
    os.symlink(victim, where / "plan.schema.json")
    result = CliRunner().invoke(main, ["schema", str(where)])
    assert result.exit_code == 2 and "symbolic link" in result.output
    assert victim.read_text() == "mine\n"


def test_a_folder_name_with_a_terminal_escape_prints_escaped(tmp_path):
    where = tmp_path / "evil\x1b[2Jname"
    result = CliRunner().invoke(main, ["schema", str(where)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\\x1b[2Jname" in result.output
