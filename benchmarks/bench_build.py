"""The whole build on the shipped defaults against the bare build (no workbook, no briefs), in the
same run: medians of repeated runs of the real command, each in a process of its own.

    python benchmarks/bench_build.py [--repeat 3]

``full``: ``ckptreport build`` (Parquet, CSV, workbook, PDF briefs, manifest), as a user runs it.
``bare``: ``ckptreport build --no-workbook --no-briefs --no-html`` (the engine, Parquet, CSV, manifest): the
floor that reading the inputs, computing and writing the tables sets. The bound: full at
most 2.5x bare. Also reported: the ``--no-briefs`` build (the workbook alone on top of bare). Runs are
interleaved so that a busy moment of the machine hits each variant alike. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = {
    "bare": ["--no-workbook", "--no-briefs", "--no-html"],
    "workbook": ["--no-briefs", "--no-html"],
    "full": [],
}


def once(flags: list[str], out: Path) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ckptreport.cli", "build", "--out", str(out), "-q", *flags],
        check=True,
        capture_output=True,
    )
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for name, flags in VARIANTS.items():
                times[name].append(once(flags, Path(tmp) / f"{name}-{i}"))
    bare = statistics.median(times["bare"])
    for name, runs in times.items():
        median = statistics.median(runs)
        print(
            f"{name:<9} median {median:6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in runs)})  "
            f"x{median / bare:.2f} of bare"
        )
    print(
        f"full build / bare build: {statistics.median(times['full']) / bare:.2f}x (the bound: at most 2.5x)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
