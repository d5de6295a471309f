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
    """The model's columns written by hand in numpy: the baseline, not a second source of truth."""
    GB = 1e9
    o: dict[str, np.ndarray] = {}
    sync, asyn, tiered = (
        v["strategy"] == "sync",
        v["strategy"] == "async",
        v["strategy"] == "tiered",
    )
    local = v["tier_kind"] == "local_nvme"
    o["bytes_per_param"] = (
        v["weights_bytes_per_param"]
        + v["master_bytes_per_param"]
        + v["optimizer_bytes_per_param"]
        + v["grads_bytes_per_param"]
    )
    for part in ("weights", "master", "optimizer", "grads"):
        o[f"{part}_bytes"] = v["params"] * v[f"{part}_bytes_per_param"]
    o["ckpt_bytes"] = v["params"] * o["bytes_per_param"]
    o["nodes"] = np.ceil(v["gpus"] / v["gpus_per_node"])
    o["gpus_on_node"] = np.minimum(v["gpus"], v["gpus_per_node"])
    o["bytes_per_gpu"] = o["ckpt_bytes"] / v["gpus"]
    o["dp_ranks"] = np.maximum(v["gpus"] / (v["tp"] * v["pp"]), 1)
    o["stage_params_max"] = np.where(
        (v["pp"] > 1) & (v["layers"] > 0),
        np.ceil(v["layers"] / v["pp"])
        * (v["params"] - 2 * v["vocab"] * v["hidden"])
        / np.maximum(v["layers"], 1)
        + v["vocab"] * v["hidden"],
        v["params"] / v["pp"],
    )
    rank = o["stage_params_max"] / v["tp"]
    w = v["weights_bytes_per_param"] + v["grads_bytes_per_param"]
    o["bytes_per_gpu_max"] = np.where(
        v["sharding"] == "fully_sharded",
        o["bytes_per_gpu"],
        np.where(
            v["sharding"] == "replica0",
            rank * o["bytes_per_param"],
            rank * w + rank * (o["bytes_per_param"] - w) / o["dp_ranks"],
        ),
    )
    o["nodes_writing"] = np.ceil(
        np.where(v["sharding"] == "replica0", np.minimum(v["tp"] * v["pp"], v["gpus"]), v["gpus"])
        / v["gpus_per_node"]
    )
    o["bytes_per_node"] = o["bytes_per_gpu_max"] * o["gpus_on_node"]
    o["d2h_GBps"] = np.minimum(o["gpus_on_node"] * v["d2h_gpu_GBps"], v["d2h_node_GBps"])
    o["d2h_s"] = o["bytes_per_node"] / (o["d2h_GBps"] * GB)
    o["nvme_s"] = np.where(tiered, o["bytes_per_node"] / (v["nvme_write_GBps"] * GB), 0)
    o["fixed_s"] = np.where(
        sync, v["sync_fixed_s"], np.where(asyn, v["async_fixed_s"], v["tiered_fixed_s"])
    )
    allowed = v["target_overhead_pct"] / 100 * v["interval_s"] - o["fixed_s"]
    budget = np.where(
        sync,
        allowed - o["d2h_s"],
        np.where(o["d2h_s"] <= allowed, v["interval_s"] - o["nvme_s"], 0),
    )
    o["write_budget_s"] = budget
    o["required_write_GBps"] = np.where(budget > 0, o["ckpt_bytes"] / budget / GB, np.inf)
    o["required_node_write_GBps"] = np.where(budget > 0, o["bytes_per_node"] / budget / GB, np.inf)
    tib = 2.0**40
    o["capacity_needed_bytes"] = v["retention"] * o["ckpt_bytes"] * (1 + v["headroom_pct"] / 100)
    sized = ~np.isnan(v["tier_write_per_TiB_GBps"]) & np.isnan(v["tier_capacity_bytes"])
    o["sized_per_TiB"] = sized
    for_bw = np.where(
        o["required_write_GBps"] < np.inf,
        o["required_write_GBps"] / v["tier_write_per_TiB_GBps"] * tib,
        0,
    )
    o["provisioned_bytes"] = np.where(
        sized,
        np.maximum(np.maximum(o["capacity_needed_bytes"], v["tier_min_capacity_bytes"]), for_bw),
        o["capacity_needed_bytes"],
    )
    ceiling = np.where(
        (v["puts_per_s_per_prefix"] < np.inf) & (v["part_size_bytes"] < np.inf),
        v["puts_per_s_per_prefix"] * v["prefixes"] * v["part_size_bytes"] / GB,
        np.inf,
    )
    o["request_ceiling_GBps"] = ceiling
    o["tier_bought_GBps"] = np.minimum(
        np.where(
            sized, v["tier_write_per_TiB_GBps"] * o["provisioned_bytes"] / tib, v["tier_write_GBps"]
        ),
        ceiling,
    )
    o["capacity_ok"] = o["capacity_needed_bytes"] <= np.where(
        np.isnan(v["tier_capacity_bytes"]), np.inf, v["tier_capacity_bytes"]
    )
    o["tier_node_GBps"] = np.where(
        local,
        np.minimum(v["nvme_write_GBps"], v["tier_node_write_GBps"]),
        v["tier_node_write_GBps"],
    )
    o["tier_share_GBps"] = np.minimum(
        o["tier_node_GBps"], o["tier_bought_GBps"] / o["nodes_writing"]
    )
    o["nic_s"] = np.where(local, 0, o["bytes_per_node"] / (v["storage_nic_GBps"] * GB))
    o["writers_GBps"] = o["gpus_on_node"] * v["writer_GBps"]
    o["writer_s"] = o["bytes_per_node"] / (o["writers_GBps"] * GB)
    o["tier_s"] = np.maximum(
        o["ckpt_bytes"] / (o["tier_bought_GBps"] * GB),
        o["bytes_per_node"] / (o["tier_node_GBps"] * GB),
    )
    o["write_s"] = np.maximum(np.maximum(o["nic_s"], o["writer_s"]), o["tier_s"])
    hops = np.stack([o["d2h_s"], o["nvme_s"], o["nic_s"], o["writer_s"], o["tier_s"]])
    o["bottleneck"] = np.array(["d2h", "nvme", "nic", "writer", "tier"])[np.argmax(hops, axis=0)]
    o["checkpoint_cost_s"] = o["fixed_s"] + np.where(sync, o["d2h_s"] + o["write_s"], o["d2h_s"])
    o["background_s"] = np.where(sync, 0, np.where(asyn, o["write_s"], o["nvme_s"] + o["write_s"]))
    o["backpressure_s"] = np.maximum(o["background_s"] - v["interval_s"], 0)
    o["interference_s"] = (
        np.minimum(o["background_s"], v["interval_s"]) * v["async_slowdown_pct"] / 100
    )
    o["stall_s"] = o["checkpoint_cost_s"] + o["backpressure_s"] + o["interference_s"]
    o["overhead_pct"] = 100 * o["stall_s"] / v["interval_s"]
    o["host_memory_needed_bytes"] = np.where(sync, 0, o["bytes_per_node"] * v["buffers"])
    o["host_memory_ok"] = o["host_memory_needed_bytes"] <= v["host_memory_bytes"]
    o["nvme_needed_bytes"] = np.where(
        local, o["bytes_per_node"] * v["retention"], np.where(tiered, o["bytes_per_node"], 0)
    )
    o["nvme_ok"] = o["nvme_needed_bytes"] <= v["nvme_capacity_bytes"]
    d, m = o["checkpoint_cost_s"], v["gpu_mtbf_s"] / v["gpus"]
    o["cluster_mtbf_s"] = m
    o["young_interval_s"] = np.sqrt(2 * d * m)
    r = d / (2 * m)
    o["daly_interval_s"] = np.where(r < 1, np.sqrt(2 * d * m) * (1 + np.sqrt(r) / 3 + r / 9) - d, m)
    o["optimal_interval_s"] = np.maximum(o["daly_interval_s"], o["background_s"])
    o["rework_pct"] = 100 * (v["interval_s"] / 2 + v["restart_s"]) / m
    o["waste_pct"] = o["overhead_pct"] + o["rework_pct"]
    opt = o["optimal_interval_s"]
    o["optimal_waste_pct"] = 100 * (d / opt + (opt / 2 + v["restart_s"]) / m)
    o["meets_target"] = (
        (o["overhead_pct"] <= v["target_overhead_pct"])
        & o["host_memory_ok"]
        & o["nvme_ok"]
        & o["capacity_ok"]
    )
    o["compute_s"] = (
        6
        * v["active_params"]
        * v["tokens"]
        / (v["gpus"] * v["peak_TFLOPS"] * 1e12 * v["mfu_pct"] / 100)
    )
    o["run_days"] = o["compute_s"] * (1 + o["waste_pct"] / 100) / 86400
    gpu_h = v["gpus"] * o["compute_s"] / 3600 * v["usd_per_gpu_hour"]
    o["overhead_usd"] = gpu_h * o["overhead_pct"] / 100
    o["waste_usd"] = gpu_h * o["waste_pct"] / 100
    o["run_usd"] = v["gpus"] * o["run_days"] * 24 * v["usd_per_gpu_hour"]
    month = 365.25 / 12 * 86400
    share = 100 * month / v["life_s"] + v["support_pct"] / 12
    tb_price = np.where(
        ~np.isnan(v["usd_per_tb_month"]), v["usd_per_tb_month"], v["capex_usd_per_tb"] * share / 100
    )
    bw_price = v["usd_per_GBps_month"] + np.where(
        v["capex_usd_per_GBps"] > 0, v["capex_usd_per_GBps"] * share / 100, 0
    )
    puts = np.where(
        v["part_size_bytes"] < np.inf, np.ceil(o["ckpt_bytes"] / v["part_size_bytes"]), 0
    )
    o["storage_usd_month"] = (
        o["provisioned_bytes"] / 1e12 * tb_price
        + np.where(bw_price > 0, o["tier_bought_GBps"] * bw_price, 0)
        + puts * month / v["interval_s"] * v["usd_per_1k_puts"] / 1000
    )
    o["lost_gpu_usd_month"] = (
        v["gpus"] * v["usd_per_gpu_hour"] * month / 3600 * o["waste_pct"] / 100
    )
    o["total_usd_month"] = o["storage_usd_month"] + o["lost_gpu_usd_month"]
    o["storage_run_usd"] = o["storage_usd_month"] * o["run_days"] * 86400 / month
    o["total_usd"] = o["storage_run_usd"] + o["waste_usd"]
    return o


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
        a, b = got[name], want
        if a.dtype.kind in "fc":
            assert np.allclose(a, b, rtol=1e-12, equal_nan=True), name
        else:
            assert (a == b).all(), name
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
