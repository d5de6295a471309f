"""Monte Carlo over the shipped defaults' summary lines: samples per second and peak memory at 1k,
10k and 100k samples, each in a fresh process, against the same build without samples (the
baseline, measured in the same run).

    python benchmarks/bench_samples.py [--max 100000]

Each run is `ckptreport build --no-workbook --no-briefs --samples N` into a temporary directory;
its peak resident memory is the child's ru_maxrss. The draws of the samples alone are timed by the
build itself (``result.seconds['samples']``). Nothing here asserts a time.
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import tempfile
import time

CHILD = """
import json, sys, time
from ckptreport.build import build
t = time.perf_counter()
r = build(None, sys.argv[1], skip=["workbook", "briefs"], csv=False, samples=int(sys.argv[2]))
print(json.dumps({"total_s": time.perf_counter() - t, "samples_s": r.seconds.get("samples", 0.0),
                  "lines": len(r.report.summary)}))
"""


def run(samples: int) -> dict:
    with tempfile.TemporaryDirectory() as out:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        t = time.perf_counter()
        done = subprocess.run(
            [sys.executable, "-c", CHILD, out + "/out", str(samples)],
            capture_output=True,
            text=True,
            check=True,
        )
        wall = time.perf_counter() - t
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        got = json.loads(done.stdout.strip().splitlines()[-1])
        got.update(wall_s=wall, peak_MiB=max(peak_kib, before) / 1024)
        return got


def main() -> int:
    largest = int(sys.argv[sys.argv.index("--max") + 1]) if "--max" in sys.argv else 100_000
    base = run(0)
    print(
        f"baseline: build without samples {base['total_s']:.2f} s, peak {base['peak_MiB']:.0f} MiB "
        f"({base['lines']} summary lines)"
    )
    print(
        f"{'samples':>8}  {'draws s':>8}  {'samples/s':>10}  {'line-draws/s':>13}  {'build s':>8}  "
        f"{'x baseline':>10}  {'peak MiB':>9}  {'x baseline':>10}"
    )
    for n in (1_000, 10_000, 100_000):
        if n > largest:
            break
        r = run(n)
        print(
            f"{n:>8,}  {r['samples_s']:>8.2f}  {n / r['samples_s']:>10,.0f}  "
            f"{n * r['lines'] / r['samples_s']:>13,.0f}  "
            f"{r['total_s']:>8.2f}  {r['total_s'] / base['total_s']:>10.2f}  {r['peak_MiB']:>9.0f}  "
            f"{r['peak_MiB'] / base['peak_MiB']:>10.2f}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
