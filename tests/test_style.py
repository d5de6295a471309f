"""The code is kept by ruff (configured in pyproject.toml): formatted to its width, imports sorted, no
unused import or undefined name, the lint rules chosen there. A change that ruff would reformat or
flag fails here, in CI as on a laptop; `ruff format . && ruff check --fix .` mends most of it."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import REPO

RUFF = shutil.which("ruff") or str(Path(sys.executable).with_name("ruff"))
# Skipped only outside CI (make test installs the test extras, ruff among them); in CI a missing ruff fails.
needs_ruff = pytest.mark.skipif(
    not Path(RUFF).exists() and not os.environ.get("CI"),
    reason="ruff is not installed: pip install -e '.[test]'",
)


@needs_ruff
def test_the_code_is_formatted():
    done = subprocess.run(
        [RUFF, "format", "--check", "--diff", "."], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]


@needs_ruff
def test_the_linter_finds_nothing():
    done = subprocess.run(
        [RUFF, "check", "--output-format", "concise", "."], cwd=REPO, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
