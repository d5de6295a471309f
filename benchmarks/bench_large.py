"""Memory flat with rows: a 2M-row and a 20M-row plan built the same way, in the same run.

    python benchmarks/bench_large.py [--rows 20000000] [--small 2000000] [--workers N]

Each plan (``bigplan.big_plan``: the shipped models with more cluster sizes and intervals) is built by
``ckptreport build --no-workbook --no-briefs --no-html`` in a process of its own, on this machine's
cores (its local pool; ``--workers``). Peak memory is each process's maximum resident set
(``ru_maxrss``): the build's own process, and its largest worker. Reported: rows, seconds, rows per
second, the two peaks, the Parquet's size, and each as a ratio of the large plan against the small one
(the issue's bound: peak memory within 1.2x). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bigplan import big_plan  # noqa: E402

CHILD = """
import json, resource, sys, time
from ckptreport.build import build
t = time.perf_counter()
workers = int(sys.argv[3]) if sys.argv[3] != "0" else None
r = build(sys.argv[1], sys.argv[2], skip=["workbook", "briefs", "page"], workers=workers)
seconds = time.perf_counter() - t
from ckptreport.base.workers import shutdown
shutdown()  # the pool's workers waited for: their peak counts among this process's children
print(json.dumps({"seconds": seconds, "engine_s": r.seconds.get("engine", 0.0), "rows": r.report.rows,
                  "main_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                  "worker_MiB": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024}))
"""


def run(models: Path, out: Path, workers: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(models), str(out), str(workers)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    got = json.loads(done.stdout.strip().splitlines()[-1])
    tables = out / "scenarios.parquet"  # a directory of parts above 1M rows, else one file
    parts = list(tables.rglob("*.parquet")) if tables.is_dir() else [tables]
    got["parquet_MB"] = sum(p.stat().st_size for p in parts) / 1e6
    return got


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--small", type=int, default=2_000_000)
    parser.add_argument(
        "--workers", type=int, default=0, help="worker processes (default: every core)"
    )
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for name, rows in (("small", args.small), ("large", args.rows)):
            big_plan(tmp / name, rows)
            t = time.perf_counter()
            results[name] = run(tmp / name, tmp / f"out-{name}", args.workers)
            results[name]["wall_s"] = time.perf_counter() - t
            shutil.rmtree(tmp / f"out-{name}", ignore_errors=True)  # 2.6 GB at 20M rows
    for name, r in results.items():
        print(
            f"{name:<6} {r['rows']:>12,} rows  {r['seconds']:7.1f} s  {r['rows'] / r['engine_s'] / 1e6:5.2f} M rows/s "
            f"(compute stage {r['engine_s']:.1f} s)  peak: build {r['main_MiB']:6.0f} MiB, worker "
            f"{r['worker_MiB']:6.0f} MiB  parquet {r['parquet_MB']:8.1f} MB"
        )
    s, big = results["small"], results["large"]
    print(
        f"ratios, large / small: rows x{big['rows'] / s['rows']:.2f}, time x{big['seconds'] / s['seconds']:.2f}, "
        f"peak memory: build x{big['main_MiB'] / s['main_MiB']:.2f}, worker x{big['worker_MiB'] / s['worker_MiB']:.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
