"""A plan of about N rows for the large benchmarks: the shipped models with as many cluster sizes
and intervals as it takes (the summary's 1,024 GPUs and 30 min among them), found by counting the
rows (``plan_rows``), not by building them."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

from ckptreport.base.paths import shipped_models
from ckptreport.model.plan import plan_rows
from ckptreport.read.load import load


def _write(plan: Path, text: str, side: int) -> None:
    gpus = ", ".join(
        str(128 * (i + 1)) for i in range(side)
    )  # 128: the 405B's one replica (TP8 x PP16)
    intervals = ", ".join(f"{i + 1} min" for i in range(side))
    text = re.sub(r"^gpus:.*?(?=^\S)", f"gpus: [{gpus}]\n", text, count=1, flags=re.M | re.S)
    text = re.sub(r"^intervals:.*$", f"intervals: [{intervals}]", text, count=1, flags=re.M)
    plan.write_text(text + "\nmax_rows: 20M\n")  # the most a plan may hold


def big_plan(target: Path, rows: int) -> int:
    """Copy the shipped models to ``target`` with a plan of at most ``rows`` rows (the largest square
    grid of cluster sizes x intervals within it); returns its row count."""
    shutil.copytree(shipped_models(), target)
    plan = target / "plan.yaml"
    text = plan.read_text()

    def count(side: int) -> int:
        _write(plan, text, side)
        return plan_rows(load(target))[0]

    lo, hi = 30, 60
    while count(hi) <= rows:
        lo, hi = hi, hi * 2
    while hi - lo > 1:  # the largest side within the rows
        mid = (lo + hi) // 2
        lo, hi = (mid, hi) if count(mid) <= rows else (lo, mid)
    _write(plan, text, lo)
    return plan_rows(load(target))[0]
