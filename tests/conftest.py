from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ckptreport.build import shipped_models
from ckptreport.engine import scenarios
from ckptreport.load import load

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shipped():
    """The shipped models, loaded once."""
    return load(shipped_models())


@pytest.fixture(scope="session")
def frame(shipped):
    return scenarios(shipped)[0]


@pytest.fixture
def models_copy(tmp_path) -> Path:
    """A writable copy of the shipped models, to break or extend."""
    target = tmp_path / "models"
    shutil.copytree(shipped_models(), target)
    return target


def pick(frame, **where):
    """The single row matching every column=value given."""
    mask = True
    for key, value in where.items():
        mask = mask & (frame[key] == value)
    rows = frame[mask]
    assert len(rows) == 1, f"{len(rows)} rows match {where}"
    return rows.iloc[0]
