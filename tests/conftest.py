from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from ckptreport.build import shipped_models
from ckptreport.load import load
from ckptreport.report import compute

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def shipped():
    """The shipped models, loaded once."""
    return load(shipped_models())


@pytest.fixture(scope="session")
def report(shipped):
    """Everything the outputs of the shipped models show, computed once."""
    return compute(shipped)


@pytest.fixture(scope="session")
def frame(report):
    return report.frame


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


SMALL_PLAN = """\
models: [llama3-405b, llama3-8b]
recipes: [adamw-bf16, adamw-bf16-grads]
skus: [dgx-h100, gh200, dgx-a100]
gpus: [1024, 4096]
intervals: [10 min, 30 min]
strategies: [sync, async, tiered]
target_overhead: 1%
mfu: 40%
restart: 10 min
retention: 3
buffers: 1
summary: {gpus: 1024, interval: 30 min, model: llama3-405b, sku: dgx-h100}
"""


@pytest.fixture
def small_models(models_copy) -> Path:
    """The shipped models with a small plan (~1,000 scenarios): quick to build and recalculate."""
    (models_copy / "plan.yaml").write_text(SMALL_PLAN)
    return models_copy
