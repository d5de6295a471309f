"""A 20-million-row plan built without the workbook and briefs: peak memory and rows per second.

    python benchmarks/bench_large.py [--rows 20000000] [--keep DIR]

The shipped models with a plan of many cluster sizes and intervals (at most the rows asked, within 2%) are
built by the real command in a process of its own (`ckptreport build --no-workbook --no-briefs`);
its peak resident memory is the child's maximum RSS. For scale, the same run builds the shipped
defaults the same way: the baseline. Reported: rows, seconds, rows per second, peak
RSS, the Parquet's size, each as a ratio against the baseline. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import math
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ckptreport.base.paths import shipped_models
from ckptreport.model.plan import plan_rows
from ckptreport.read.load import load


def big_plan(models: Path, rows: int) -> int:
    """Rewrite models/plan.yaml with enough cluster sizes and intervals for about ``rows`` rows."""
    inputs = load(models)
    per_point = plan_rows(inputs)[0] / (len(inputs.plan.gpus) * len(inputs.plan.intervals))
    side = max(
        30, math.floor(math.sqrt(rows / per_point))
    )  # the summary's 1,024 GPUs and 30 min are in the grid
    gpus = ", ".join(
        str(128 * (i + 1)) for i in range(side)
    )  # 128: the 405B's one replica (TP8 x PP16)
    intervals = ", ".join(f"{i + 1} min" for i in range(side))
    plan = models / "plan.yaml"
    text = plan.read_text()
    text = re.sub(r"^gpus: .*$", f"gpus: [{gpus}]", text, flags=re.M)
    text = re.sub(r"^intervals: .*$", f"intervals: [{intervals}]", text, flags=re.M)
    text += "\nmax_rows: 20M\n"
    plan.write_text(text)
    return plan_rows(load(models))[0]


def run(models: Path, out: Path) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ckptreport.cli",
            "build",
            "--models",
            str(models),
            "--out",
            str(out),
            "--no-workbook",
            "--no-briefs",
            "-q",
        ],
        capture_output=True,
        text=True,
    )
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return {
        "seconds": seconds,
        "peak_GiB": max(peak_kib, before) / 2**20,
        "parquet_MB": (out / "scenarios.parquet").stat().st_size / 1e6,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--keep", type=Path, help="keep the large build's output here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        shutil.copytree(shipped_models(), tmp / "base")
        base = run(tmp / "base", tmp / "out-base")
        base["rows"] = plan_rows(load(tmp / "base"))[0]
        shutil.copytree(shipped_models(), tmp / "big")
        rows = big_plan(tmp / "big", args.rows)
        big = run(tmp / "big", args.keep or tmp / "out-big")
        big["rows"] = rows
    for name, r in (("shipped defaults", base), ("large plan", big)):
        print(
            f"{name:<17} {r['rows']:>12,} rows  {r['seconds']:7.1f} s  {r['rows'] / r['seconds'] / 1e6:5.2f} M rows/s  "
            f"peak {r['peak_GiB']:5.2f} GiB  parquet {r['parquet_MB']:8.1f} MB"
        )
    print(
        f"ratios, large / defaults: rows x{big['rows'] / base['rows']:,.0f}, "
        f"time x{big['seconds'] / base['seconds']:.1f}, "
        f"peak memory x{big['peak_GiB'] / base['peak_GiB']:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
