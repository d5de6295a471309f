"""Builds again in one process (a notebook, a script's sweep, the Python API): each build on the
worker processes the process kept from its last build, against each build starting its pools afresh
(the decisions' and the briefs' layout pools shut down before it), in the same run, interleaved.

    python benchmarks/bench_rebuild.py [--repeat 3]

The shipped defaults, every output but the workbook (``build(skip=["workbook"])``: the decisions and
the briefs are what the pools serve). For each build: its wall seconds, and the CPU seconds of this
process and of every worker (those that exited, and those still kept, read from /proc: Linux).
The first build, which starts the pools either way, is reported apart. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import resource
import statistics
import tempfile
import time
from pathlib import Path


def _cpu() -> float:
    """CPU seconds of this process, of its children that exited, and of those alive (/proc)."""
    me, gone = (resource.getrusage(w) for w in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN))
    alive = 0
    for p in multiprocessing.active_children():
        try:
            fields = Path(f"/proc/{p.pid}/stat").read_text().rsplit(")", 1)[1].split()
            alive += int(fields[11]) + int(fields[12])  # utime, stime (clock ticks)
        except (OSError, IndexError, ValueError):
            pass
    return (
        me.ru_utime + me.ru_stime + gone.ru_utime + gone.ru_stime + alive / os.sysconf("SC_CLK_TCK")
    )


def main() -> int:
    # imported here: a spawned worker re-imports this file
    from ckptreport.base import workers
    from ckptreport.build import build

    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    runs: dict[str, list[tuple[float, float]]] = {"fresh pools": [], "kept pools": []}
    with tempfile.TemporaryDirectory() as tmp:
        t = time.perf_counter()
        build(None, Path(tmp) / "first", skip=["workbook"])
        print(f"first build (starts the pools): {time.perf_counter() - t:.2f} s")
        for i in range(args.repeat):
            for name in ("kept pools", "fresh pools"):  # kept: the pools the last build left
                if name == "fresh pools":
                    workers.shutdown()
                c, t = _cpu(), time.perf_counter()
                build(None, Path(tmp) / f"{name}-{i}".replace(" ", "-"), skip=["workbook"])
                runs[name].append((time.perf_counter() - t, _cpu() - c))
    fresh = statistics.median(w for w, _ in runs["fresh pools"])
    for name, got in runs.items():
        wall = statistics.median(w for w, _ in got)
        cpu = statistics.median(c for _, c in got)
        print(
            f"{name:<12} median {wall:5.2f} s wall, {cpu:5.2f} s CPU (runs: "
            f"{', '.join(f'{w:.2f}' for w, _ in got)})  x{wall / fresh:.2f} of fresh pools' wall"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
