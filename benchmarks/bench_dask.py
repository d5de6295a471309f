"""A 20M-row sweep on a Dask LocalCluster of two workers against one worker, in the same run, with
the same bytes.

    python benchmarks/bench_dask.py [--rows 20000000] [--repeat 1]

The plan (``bigplan.big_plan``) is built by ``build(..., scheduler=ADDRESS)`` (what ``ckptreport
build --scheduler ADDRESS`` runs) without the workbook, briefs or page, on a ``LocalCluster`` of one
worker process and then of two (one thread each); each worker computes its pieces and writes their
Parquet parts. The clusters are started before the clock starts. Reported: the compute stage's
seconds (the pieces' computing and writing: the part a cluster runs) and the whole build's, the
speed-up of two workers over one (the issue's bound: at least 1.7x), and whether the two builds'
files are the same bytes (every file's SHA-256 in their manifests). Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bigplan import big_plan  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000_000)
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1700000000")  # the two builds' bytes comparable
    from distributed import LocalCluster

    from ckptreport.build import build

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        rows = big_plan(tmp / "models", args.rows)
        times: dict[int, list[tuple[float, float]]] = {1: [], 2: []}
        files = {}
        for i in range(args.repeat):
            for n in (1, 2):
                with LocalCluster(
                    n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
                ) as c:
                    out = tmp / f"out-{n}-{i}"
                    t = time.perf_counter()
                    r = build(
                        tmp / "models",
                        out,
                        skip=["workbook", "briefs", "page"],
                        scheduler=c.scheduler_address,
                    )
                    times[n].append((r.seconds["engine"], time.perf_counter() - t))
                    files[n] = json.loads((out / "manifest.json").read_text())["files"]
                    shutil.rmtree(out)
    med = {
        n: (statistics.median(a for a, _ in v), statistics.median(b for _, b in v))
        for n, v in times.items()
    }
    for n, (engine, whole) in med.items():
        print(
            f"{n} worker(s): {rows:,} rows, compute stage {engine:6.1f} s ({rows / engine / 1e6:.2f} M rows/s), "
            f"build {whole:6.1f} s"
        )
    print(
        f"two workers / one: {med[1][0] / med[2][0]:.2f}x faster (compute stage), {med[1][1] / med[2][1]:.2f}x "
        f"(whole build); same bytes: {files[1] == files[2]} ({len(files[1])} files)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
