"""Engine speed and memory on a ~1,000,000-row cross product, against bare numpy in the same run.

    python benchmarks/bench_engine.py [--rows-target 1000000] [--repeat 5]

Reports, each the best of --repeat runs:
  - engine.compute: every column definition over the input arrays (rows/s, peak memory);
  - bare numpy: the same columns written by hand as plain numpy, on the same arrays (the baseline);
  - engine.scenarios: cross product + compute + pandas frame, end to end;
  - `ckptreport build` on the shipped defaults, wall time of the whole command.
Ratios are against the bare-numpy baseline measured in the same run. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import time
import tracemalloc

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402

from ckptreport.base.paths import shipped_models  # noqa: E402
from ckptreport.model.columns import COLUMNS  # noqa: E402
from ckptreport.model.evaluate import compute, scenarios  # noqa: E402
from ckptreport.model.plan import cross_product  # noqa: E402
from ckptreport.read.load import load  # noqa: E402
from ckptreport.read.quantity import Q  # noqa: E402


def big_inputs(rows_target: int):
    inputs = load(shipped_models())
    base = len(cross_product(inputs)[0]["model"]) / (
        len(inputs.plan.gpus) * len(inputs.plan.intervals)
    )
    side = int(np.ceil(np.sqrt(rows_target / base)))
    gpus = [Q(float(64 * (i + 1)), str(64 * (i + 1)), "count") for i in range(side)]
    intervals = [Q(60.0 * (i + 1), f"{i + 1} min", "duration") for i in range(side)]
    plan = inputs.plan.model_copy(
        update={
            "gpus": gpus,
            "intervals": intervals,
            "summary": None,
            "max_rows": Q(1e9, "1B", "count"),
        }
    )
    return dataclasses.replace(inputs, plan=plan)


def bare_numpy(v: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """The floor: each column's definition called once, in order, on the plain input arrays, with
    nothing around it (no broadcasting to the rows, no label codes, no checks). A hand-written copy of
    the model stood here and drifted from it (43 of 63 columns no longer matched); the definitions
    themselves cannot."""
    o = dict(v)
    for name, c in COLUMNS.items():
        o[name] = c.fn(*(o[p] for p in c.params))
    return {k: o[k] for k in COLUMNS}


def measure(fn, repeat: int):
    """Best wall time of `repeat` runs (no tracing), then peak traced memory of one more run."""
    best, result = float("inf"), None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t)
    del result
    tracemalloc.start()
    result = fn()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    return best, peak, result


def input_arrays(inputs) -> dict[str, np.ndarray]:
    """The engine's input arrays for the plan (captured from one engine run)."""
    import ckptreport.model.evaluate as engine

    captured = {}
    original = engine.compute

    def spy(values):
        captured.update(values)
        return original(values)

    engine.compute = spy
    try:
        scenarios(inputs)
    finally:
        engine.compute = original
    return captured


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows-target", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    inputs = big_inputs(args.rows_target)
    values = input_arrays(inputs)
    rows = len(values["gpus"])
    print(f"rows: {rows:,}  (numpy {np.__version__}, one thread)")

    with np.errstate(divide="ignore", invalid="ignore"):
        t_np, m_np, ref = measure(lambda: bare_numpy(values), args.repeat)
    t_eng, m_eng, got = measure(lambda: compute(values), args.repeat)
    for name, want in ref.items():  # the two must agree, or the comparison means nothing
        a, b = np.asarray(got[name]), np.broadcast_to(want, np.shape(got[name]))
        if a.dtype.kind in "fc":
            assert np.allclose(a, b, rtol=1e-12, equal_nan=True), name
        else:
            assert (a.astype(str) == np.asarray(b).astype(str)).all(), name
    t_sc, m_sc, _ = measure(lambda: scenarios(inputs), args.repeat)

    def line(label, t, m):
        print(
            f"{label:<34} {t:8.3f} s  {rows / t / 1e6:7.2f} M rows/s  peak {m / 2**20:8.1f} MiB  "
            f"x{t / t_np:5.2f} time, x{m / m_np:5.2f} memory vs bare numpy"
        )

    line("bare numpy (baseline)", t_np, m_np)
    line("engine.compute (column defs)", t_eng, m_eng)
    line("engine.scenarios (+cross, frame)", t_sc, m_sc)

    walls = []
    for _ in range(3):
        t = time.perf_counter()
        subprocess.run(
            [
                sys.executable,
                "-m",
                "ckptreport.cli",
                "build",
                "-q",
                "--out",
                "/tmp/ckptreport-bench-out",
            ],
            check=True,
            capture_output=True,
        )
        walls.append(time.perf_counter() - t)
    walls.sort()
    print(
        f"ckptreport build, shipped defaults: median {walls[1]:.2f} s wall (of 3; includes interpreter start)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
