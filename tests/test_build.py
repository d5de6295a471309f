"""Building: reproducible bytes, atomic writes, and the shipped defaults inside an installed wheel."""

from __future__ import annotations

import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from ckptreport.build import build, resolve_models, shipped_models
from ckptreport.errors import InputError
from conftest import REPO


def test_same_inputs_and_epoch_give_the_same_bytes(tmp_path, monkeypatch, small_models):
    """Two builds of the same inputs with SOURCE_DATE_EPOCH set write identical files."""
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    a, b = tmp_path / "a", tmp_path / "b"
    build(small_models, a)
    build(small_models, b)
    for name in ("scenarios.parquet", "scenarios.csv", "manifest.json", "ckptreport.xlsx", "briefs/llama3-405b.pdf"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
    assert '"build_time": "2023-11-14T22:13:20Z"' in (a / "manifest.json").read_text()


def test_a_bad_epoch_is_a_user_error(tmp_path, monkeypatch, small_models):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "yesterday")
    with pytest.raises(InputError, match="SOURCE_DATE_EPOCH"):
        build(small_models, tmp_path / "out")
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())


def test_no_temporary_files_are_left_behind(tmp_path, small_models):
    build(small_models, tmp_path / "out")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["briefs", "ckptreport.xlsx", "manifest.json",
                                                                   "scenarios.csv", "scenarios.parquet"]


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
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(dist), str(REPO)],
                   check=True, capture_output=True)
    wheel = next(dist.glob("ckptreport-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    for f in ("models.yaml", "hardware.yaml", "storage.yaml", "plan.yaml"):
        assert f"ckptreport/defaults/models/{f}" in names
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    work = tmp_path / "empty"
    work.mkdir()
    env = {**os.environ, "PYTHONPATH": str(site)}
    code = "import ckptreport.build as b, sys; print(b.shipped_models()); sys.argv=['ckptreport','build','-q','--workbook-rows','50']; " \
           "from ckptreport.cli import main; main()"
    done = subprocess.run([sys.executable, "-c", code], cwd=work, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[0].startswith(str(site))
    assert (work / "out" / "scenarios.parquet").exists() and (work / "out" / "ckptreport.xlsx").exists()
