"""How well the model predicts published checkpoint measurements.

Each case restates a published figure with its citation (the project's reference notes,
calibration.yaml), the inputs the source gave, the inputs it did not give (stated as assumptions,
never fitted to the answer), and what the engine predicts from them. A case is

- ``scored``: compared with its tolerance (sizes and rates 1%, bandwidth-bound times 25%, Daly
  optima 0.5 min);
- ``input``: the published figure is itself a default input, so agreement proves only consistency;
- ``unexplained``: no input the source published explains it; shown, never tuned to.
"""

from __future__ import annotations

import functools
import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from .columns import COLUMNS
from .engine import compute
from .inputs import INPUTS

WRITER_GBPS = 1.44  # plan.writer_bandwidth default: torchsnapshot, 1 writer, p4d local FS (20 GB / ~13.91 s)

# A row's defaults: what each input's declaration says omitting it means (no fixed cost, no per-node
# cap ...), then a DGX-A100-like node for the inputs that have no default, unless a case says otherwise.
NODE = dict(model="m", recipe="r", sku="s", tier="t", strategy="sync", tier_kind="parallel_fs",
            gpus=8.0, interval_s=3600.0, params=1e9, active_params=1e9, tokens=1e12,
            weights_bytes_per_param=2.0, master_bytes_per_param=4.0, optimizer_bytes_per_param=8.0,
            gpus_per_node=8.0, peak_TFLOPS=312.0, d2h_gpu_GBps=25.0, d2h_node_GBps=200.0, host_memory_bytes=1e12,
            storage_nic_GBps=math.inf, usd_per_gpu_hour=1.0, gpu_mtbf_s=50677 * 3600.0, usd_per_tb_month=0.0,
            target_overhead_pct=1.0, mfu_pct=40.0, restart_s=600.0, retention=1.0, buffers=1.0,
            writer_GBps=WRITER_GBPS)
BASE = {**{i.name: i.default for i in INPUTS.values() if i.default is not None}, **NODE, "tier_family": "t"}


def predict(**inputs) -> dict:
    """The engine's columns for one row (BASE with the given inputs)."""
    row = {**BASE, **inputs}
    missing = sorted(set(INPUTS) - set(row))
    if missing:  # an input declared without a default needs a figure here
        raise KeyError(f"calibration.NODE has no figure for {', '.join(missing)}")
    values = {k: np.array([v], dtype=bool if INPUTS[k].unit == "bool" else None) for k, v in row.items()}
    return {k: (v[0].item() if hasattr(v[0], "item") else v[0]) for k, v in compute(values).items()}


@dataclass
class Case:
    id: str
    source: str
    quantity: str
    unit: str  # bytes, s, pct, min, h, GBps
    published: float
    predicted: float
    kind: str  # size, time, rate, optimum, range
    status: str = "scored"  # scored, input, unexplained
    tolerance: float | None = None  # relative for size/time/rate, absolute minutes for optimum
    assumptions: list[str] = field(default_factory=list)
    note: str = ""
    low: float | None = None  # for a published range

    @property
    def error(self) -> float | None:
        if self.kind == "range":
            return None
        if self.kind == "optimum":
            return self.predicted - self.published
        return (self.predicted - self.published) / self.published

    @property
    def verdict(self) -> str:
        if self.status != "scored":
            return self.status
        if self.kind == "range":
            return "pass" if self.low <= self.predicted <= self.published else "FAIL"
        ok = abs(self.error) <= self.tolerance
        return "pass" if ok else "FAIL"

    def shown_error(self) -> str:
        if self.error is None:
            return "in range" if self.low <= self.predicted <= self.published else "out of range"
        return f"{self.error:+.2f} min" if self.kind == "optimum" else f"{self.error:+.1%}"

    def shown_tolerance(self) -> str:
        if self.status != "scored":
            return "-"
        if self.kind == "range":
            return "within range"
        return f"±{self.tolerance:g} min" if self.kind == "optimum" else f"±{self.tolerance:.0%}"


SIZE, TIME = 0.01, 0.25
CALIB = "calibration.yaml"


@functools.cache
def cases() -> tuple[Case, ...]:
    """Every case, computed once per process (the inputs are constants of this module)."""
    out: list[Case] = []
    # MLPerf Storage v2: Llama3-70B checkpoint, 14 B/param
    r = predict(params=69_882_617_856)
    out.append(Case("mlperf_storage_v2_llama3_70b_size",
                    f"mlcommons/storage Submission_guidelines.md Table 2 ({CALIB})", "checkpoint size", "bytes",
                    978_356_649_984, r["ckpt_bytes"], "size", tolerance=SIZE))
    # BLOOM-176B on Jean Zay: 384 A100 (48 nodes), TP4 PP12 DP8, bf16 ZeRO-1-equivalent optimizer
    bloom = dict(params=176e9, gpus=384.0, tp=4.0, pp=12.0, layers=70.0, hidden=14336.0, vocab=250880.0,
                 sharding="optimizer_sharded", interval_s=3 * 3600.0, tier_write_GBps=60.0)
    r = predict(**bloom)
    src = f"bigscience tr11-176B-ml README and chronicles ({CALIB} bloom176b_sync_checkpoint_jeanzay)"
    out.append(Case("bloom176b_size", src, "checkpoint size (14 B/param)", "bytes", 2.464e12, r["ckpt_bytes"], "size",
                    tolerance=SIZE))
    out.append(Case("bloom176b_per_rank_average", src, "bytes per rank, average", "bytes", 6.4e9, r["bytes_per_gpu"],
                    "size", tolerance=SIZE, note="published as ~6.4 GB (2.464e12 / 384)"))
    assume = ["aggregate GPFS write ~60 GB/s: not published; the calibration note's round figure, not fitted",
              "A100 PCIe Gen4: 25 GB/s per GPU, 200 GB/s per node (hardware-storage.md 2a)",
              f"writer {WRITER_GBPS} GB/s (torchsnapshot); no per-node limit published"]
    out.append(Case("bloom176b_save_time", src, "sync save, 2.3 TB on 384 processes", "s", 40.0, r["stall_s"], "time",
                    tolerance=TIME, assumptions=assume,
                    note="40 s may benefit from GPFS client caching (no fsync stated)"))
    out.append(Case("bloom176b_overhead", src, "overhead at a 3 h cadence", "pct", 0.37, r["overhead_pct"], "time",
                    tolerance=TIME, assumptions=assume[:1]))
    # Llama 3 405B: per-GPU model state 1 MB - 4 GB (TP8 PP16 DP128 on 16,384 H100)
    r = predict(params=405e9, gpus=16384.0, tp=8.0, pp=16.0, layers=126.0, hidden=16384.0, vocab=128256.0,
                sharding="fully_sharded", d2h_gpu_GBps=55.0, d2h_node_GBps=358.66)
    out.append(Case("llama3_405b_per_gpu_state", f"The Llama 3 Herd of Models, 3.3.1 ({CALIB})",
                    "per-GPU checkpoint state (14 B/param, fully sharded)", "bytes", 4e9, r["bytes_per_gpu_max"],
                    "range", low=1e6, assumptions=["bytes per param 14 and a fully sharded save: not published"]))
    out.append(Case("llama3_405b_cluster_mtbf", f"The Llama 3 Herd of Models, 3.3.4 ({CALIB} llama3_405b_interruptions)",
                    "job MTBF on 16,384 GPUs (419 unexpected in 54 days)", "h", 3.09,
                    r["cluster_mtbf_s"] / 3600, "rate", status="input", tolerance=SIZE,
                    note="the per-GPU MTBF default is derived from this case"))
    # DLRover: GPT-1.5B, 2 nodes x 8 A100, TP8 PP1 (DP2), no distributed optimizer, NAS 100 MB/s
    dl = dict(params=1.5e9, gpus=16.0, tp=8.0, pp=1.0, sharding="replica0", weights_bytes_per_param=4.0,
              master_bytes_per_param=0.0, optimizer_bytes_per_param=8.0, tier_write_GBps=0.1)
    src = f"dlrover docs/blogs/megatron_flash_checkpoint.md ({CALIB} dlrover_megatron_gpt1p5b_nas_no_distopt)"
    r = predict(**dl)
    out.append(Case("dlrover_gpt1p5b_size", src, "checkpoint size (fp32 weights + Adam, 12 B/param)", "bytes",
                    18e9, r["ckpt_bytes"], "size", tolerance=SIZE, note="params ~1.5e9: exact count not published"))
    out.append(Case("dlrover_gpt1p5b_sync_save", src, "Megatron sync save to NAS at 100 MB/s", "s", 151.0, r["stall_s"],
                    "time", tolerance=TIME, assumptions=["params 1.5e9 (from 18 GB / 12 B)"]))
    r = predict(**dl, strategy="async")
    out.append(Case("dlrover_gpt1p5b_flash_stall", src, "Flash Checkpoint stall (copy to host memory)", "s", 0.5,
                    r["stall_s"], "time", status="unexplained",
                    note="not bandwidth-bound: the copy of 18 GB takes 0.09 s; the rest is staging set-up, "
                         "which no source publishes separately (plan.fixed_cost.async is 0 s, an assumption)"))
    # torchsnapshot DDP, 20 GB, p4d.24xlarge (8x A100 40GB)
    src = f"pytorch/torchsnapshot benchmarks/ddp/README.md ({CALIB} torchsnapshot_ddp_20gb_p4d)"
    for fs, published in (("local FS", {1: 13.91, 8: 3.38, 16: 2.02, 32: 1.29}),
                          ("FSx for Lustre", {1: 14.52, 8: 7.61, 16: 4.61, 32: 2.68})):
        for ranks, seconds in published.items():
            r = predict(params=20e9, weights_bytes_per_param=1.0, master_bytes_per_param=0.0,
                        optimizer_bytes_per_param=0.0, gpus=float(ranks))
            if ranks == 1 and fs == "local FS":
                status, note = "input", "the writer bandwidth default (1.44 GB/s) is this measurement"
            elif ranks == 1:
                status, note = "scored", "one writer: bound by the writer, a check independent of the local FS run"
            else:
                status = "unexplained"
                note = ("several writers: bound by the node's storage, whose bandwidth (p4d local NVMe, the FSx "
                        "file system's throughput) is not published; the writer limit alone predicts this")
            out.append(Case(f"torchsnapshot_{'local' if fs == 'local FS' else 'fsx'}_{ranks}", src,
                            f"20 GB by {ranks} writer(s), {fs}", "s", seconds, r["write_s"], "time", status=status,
                            tolerance=TIME if status == "scored" else None, note=note))
    # DeepNVMe: local NVMe writes on ND-H200-v5
    src = f"deepspeedai/DeepSpeed blogs/deepnvme/03-2025 ({CALIB} deepnvme_nd_h200_v5_write_bw)"
    r = predict(params=1e9, weights_bytes_per_param=1.0, master_bytes_per_param=0.0, optimizer_bytes_per_param=0.0,
                gpus=1.0, gpus_per_node=1.0, tier_kind="local_nvme", nvme_write_GBps=26.0, writer_GBps=math.inf)
    out.append(Case("deepnvme_8xgen5_write", src, "1 GB to 8x Gen5 NVMe RAID-0 (26 GB/s)", "s", 1 / 26, r["write_s"],
                    "time", status="input", note="the local NVMe defaults of DGX H100/H200/B200 are this measurement"))
    # Daly (2006): optimum interval, checkpoint 5 min
    src = f"J. T. Daly, FGCS 22(3) 2006, figs. 3-5 ({CALIB} daly_2006_formula_and_validation)"
    for mtbf_h, minutes in ((24, 117), (6, 57), (0.25, 9.1)):
        got = COLUMNS["daly_interval_s"].fn(np.array([300.0]), np.array([mtbf_h * 3600.0]))[0] / 60
        out.append(Case(f"daly_5min_mtbf_{mtbf_h:g}h", src, f"optimum interval, checkpoint 5 min, MTBF {mtbf_h:g} h",
                        "min", minutes, float(got), "optimum", tolerance=0.5))
    # PyTorch DCP async, IBM 7B: sync 148.8 s -> async 6.3 s (medium confidence)
    src = f"PyTorch blog, Reducing Model Checkpointing Times by Over 10x ({CALIB} pytorch_ibm_async_dcp_7b)"
    r = predict(params=7e9, gpus=128.0, strategy="async")
    out.append(Case("pytorch_dcp_7b_async_stall", src, "async stall (GPU -> CPU phase)", "s", 6.3, r["stall_s"], "time",
                    status="unexplained", assumptions=["128 A100 (IBM's related FSDP post; not stated for this run)",
                                                       "14 B/param"],
                    note="the copy of 98 GB over 16 nodes takes 0.03 s at PCIe speed: the 6-14 s the blog reports is "
                         "staging work no source breaks down; the sync 148.8 s needs a storage bandwidth not published"))
    # torchtitan issue #1301 (low confidence): kept to show what a bandwidth model cannot explain
    r = predict(params=8_030_261_248, weights_bytes_per_param=4.0, master_bytes_per_param=0.0,
                optimizer_bytes_per_param=8.0, tier_kind="local_nvme", nvme_write_GBps=2.2, writer_GBps=math.inf,
                gpus=8.0)
    out.append(Case("torchtitan_llama3_8b_sync", f"pytorch/torchtitan issue #1301 ({CALIB})",
                    "sync save of Llama3-8B to a 2.2 GB/s disk", "s", 393.86, r["write_s"], "time",
                    status="unexplained", assumptions=["12 B/param (fp32 weights + Adam), 8 GPUs: not published"],
                    note="a bandwidth model predicts ~44 s; the issue found no cause: shown, not tuned to"))
    return tuple(out)


def summary(results: tuple[Case, ...]) -> dict:
    timed = [abs(c.error) for c in results if c.status == "scored" and c.kind == "time"]
    return {"scored": sum(c.status == "scored" for c in results),
            "passed": sum(c.verdict == "pass" for c in results),
            "failed": sum(c.verdict == "FAIL" for c in results),
            "unexplained": sum(c.status == "unexplained" for c in results),
            "time_median_abs_error": statistics.median(timed) if timed else None,
            "time_worst_abs_error": max(timed) if timed else None}


def fmt(value: float, unit: str) -> str:
    from . import units

    if unit == "bytes":
        return units.fmt(value, "bytes", 4)
    if unit == "s":
        return units.fmt(value, "duration", 3)
    if unit == "pct":
        return f"{value:.3g}%"
    if unit == "min":
        return f"{value:.2f} min"
    if unit == "h":
        return f"{value:.3g} h"
    return f"{value:g}"


def rows(results: tuple[Case, ...] | None = None) -> list[dict]:
    """The table `ckptreport calibrate` prints and the briefs carry."""
    results = results if results is not None else cases()
    out = []
    for c in results:
        published = (f"{fmt(c.low, c.unit)} - {fmt(c.published, c.unit)}" if c.kind == "range"
                     else fmt(c.published, c.unit))
        out.append({"case": c.id, "quantity": c.quantity, "published": published,
                    "predicted": fmt(c.predicted, c.unit), "error": c.shown_error(), "tolerance": c.shown_tolerance(),
                    "verdict": c.verdict, "source": c.source, "assumptions": c.assumptions, "note": c.note})
    return out
