"""Building: reproducible bytes, atomic writes, and the shipped defaults inside an installed wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ckptreport.base.errors import InputError
from ckptreport.base.paths import resolve_models, shipped_models
from ckptreport.build import build

from conftest import EPOCH, REPO, output_files


def test_same_inputs_give_the_same_bytes_from_any_working_directory(
    small_build, tmp_path, monkeypatch
):
    """The shared build's inputs built again from another working directory, naming the models
    directory by a relative path instead of an absolute one, with the same SOURCE_DATE_EPOCH: every
    output file (tables, workbook, each brief, manifest) is byte-identical."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    elsewhere = tmp_path / "elsewhere" / "deeper"
    elsewhere.mkdir(parents=True)
    monkeypatch.chdir(elsewhere)
    relative = os.path.relpath(small_build.models, elsewhere)
    assert not Path(relative).is_absolute() and relative != str(small_build.models)
    build(relative, "out")
    first, again = output_files(small_build.out), output_files(elsewhere / "out")
    assert sorted(first) == sorted(again)
    assert len([n for n in first if n.startswith("briefs/")]) == 2
    for name in first:
        assert first[name] == again[name], name
    manifest = (small_build.out / "manifest.json").read_text()
    assert '"build_time": "2023-11-14T22:13:20Z"' in manifest
    assert str(small_build.models) not in manifest and str(tmp_path) not in manifest


def test_a_bad_epoch_is_a_user_error(tmp_path, monkeypatch, small_models):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH"):
        build(small_models, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_no_temporary_files_are_left_behind(small_build):
    assert sorted(p.name for p in small_build.out.iterdir()) == [
        "briefs",
        "ckptreport.xlsx",
        "manifest.json",
        "report.html",
        "scenarios.csv",
        "scenarios.parquet",
    ]


def test_models_resolution_prefers_flag_then_cwd_then_shipped(tmp_path, monkeypatch):
    """--models wins; else ./models if present; else the shipped set."""
    monkeypatch.chdir(tmp_path)
    assert resolve_models(None) == shipped_models()
    (tmp_path / "models").mkdir()
    assert resolve_models(None) == Path("models")
    assert resolve_models("x") == Path("x")


def test_wheel_carries_the_shipped_models_and_builds_anywhere(tmp_path):
    """From an installed wheel, `ckptreport build` run in an empty directory uses the packaged defaults."""
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(REPO)],
        check=True,
        capture_output=True,
    )
    wheel = next(dist.glob("ckptreport-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for f in ("models.yaml", "hardware.yaml", "storage.yaml", "plan.yaml"):
        assert f"ckptreport/defaults/models/{f}" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "empty"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = (
        "import ckptreport.base.paths as p, ckptreport.render.env as e, sys; "
        "print(p.shipped_models(), e.templates_dir()); "
        "sys.argv=['ckptreport','build','-q','--workbook-rows','50']; "
        "from ckptreport.cli import main; main()"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(str(site))
    assert done.stdout.splitlines()[0].split()[1].startswith(str(site))  # the templates ship too
    assert (work / "out" / "scenarios.parquet").exists() and (
        work / "out" / "ckptreport.xlsx"
    ).exists()
