"""How well the model predicts published checkpoint measurements, and the fit of its free terms.

Each case restates a published figure with its citation (the project's reference notes,
calibration.yaml, or the source named in the case), the inputs the source gave, the inputs it did
not give (stated as assumptions), and what the engine predicts from them. A case is

- ``scored``: compared with its tolerance (sizes and rates 1%, times 25%, Daly optima 0.5 min). A
  scored case either took part in the fit (``role="fit"``) or is held out of it (``role="test"``):
  the held-out errors are what the model *predicts*, the fit residuals only what it can *reproduce*;
- ``input``: the published figure is itself a default input, so agreement proves only consistency;
- ``lacks``: the model lacks a term the case needs; the case names it (``lacks``) and says why.

The free terms (``FIT_TERMS``: one writer's bandwidth, how further writers share a node, the
coordination a persist costs per rank, an async snapshot's fixed cost, the staging copy rate) have no
published figure of their own. ``fit()`` finds them by least squares on the relative errors of the
``fit`` cases; ``FITTED`` holds the result to three figures, and the shipped models carry the same
values (``basis: derived``; the tests keep the three in step).
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

# A row's defaults: what each input's declaration says omitting it means (no fixed cost, no per-node
# cap ...), then a DGX-A100-like node for the inputs that have no default, unless a case says otherwise.
NODE = dict(model="m", recipe="r", sku="s", tier="t", strategy="sync", tier_kind="parallel_fs",
            gpus=8.0, interval_s=3600.0, params=1e9, active_params=1e9, tokens=1e12,
            weights_bytes_per_param=2.0, master_bytes_per_param=4.0, optimizer_bytes_per_param=8.0,
            gpus_per_node=8.0, peak_TFLOPS=312.0, d2h_gpu_GBps=25.0, d2h_node_GBps=200.0, host_memory_bytes=1e12,
            storage_nic_GBps=math.inf, staging_gpu_GBps=25.0, usd_per_gpu_hour=1.0, gpu_mtbf_s=50677 * 3600.0, usd_per_tb_month=0.0,
            target_overhead_pct=1.0, mfu_pct=40.0, restart_s=600.0, retention=1.0, buffers=1.0)
BASE = {**{i.name: i.default for i in INPUTS.values() if i.default is not None}, **NODE, "tier_family": "t"}


@dataclass(frozen=True)
class Term:
    """A free term of the model: an input with no published figure of its own, found by the fit."""

    name: str  # the input it sets
    low: float
    high: float
    start: float
    where: str  # the shipped key that carries the fitted value


FIT_TERMS = (
    Term("writer_GBps", 0.1, 100.0, 1.0, "plan.writer_bandwidth"),
    Term("writer_scaling_pct", 0.0, 100.0, 50.0, "plan.writer_scaling"),
    Term("coordination_per_rank_s", 0.0, 1.0, 0.01, "plan.coordination_per_rank"),
    Term("async_fixed_s", 0.0, 10.0, 0.1, "plan.fixed_cost.async (and .tiered)"),
    Term("staging_gpu_GBps", 0.1, 100.0, 5.0, "skus.*.staging_per_gpu"),
)
# The fit's result to three significant figures: what every prediction below uses, and what the
# shipped models say (tests/test_calibration.py fits anew and compares).
FITTED = {"writer_GBps": 1.53, "writer_scaling_pct": 44.9, "coordination_per_rank_s": 0.0148,
          "async_fixed_s": 0.113, "staging_gpu_GBps": 5.81}


def _fitted(terms: dict) -> dict:
    """The inputs a set of term values sets (a tiered snapshot's fixed cost is an async one's)."""
    return {**terms, "tiered_fixed_s": terms["async_fixed_s"]}


def predict_many(rows: list[dict]) -> list[dict]:
    """The engine's columns for several rows at once (each BASE with its own inputs)."""
    full = [{**BASE, **r} for r in rows]
    missing = sorted(set(INPUTS) - set(full[0]))
    if missing:  # an input declared without a default needs a figure here
        raise KeyError(f"calibration.NODE has no figure for {', '.join(missing)}")
    values = {k: np.array([r[k] for r in full], dtype=bool if INPUTS[k].unit == "bool" else
                          (object if INPUTS[k].unit == "label" else float)) for k in full[0]}
    out = compute(values)
    return [{k: (v[i].item() if hasattr(v[i], "item") else v[i]) for k, v in out.items()} for i in range(len(rows))]


def predict(**inputs) -> dict:
    """The engine's columns for one row (BASE, the fitted terms, then the given inputs)."""
    return predict_many([{**_fitted(FITTED), **inputs}])[0]


@dataclass
class Case:
    id: str
    source: str
    quantity: str
    unit: str  # bytes, s, pct, min, h, GBps
    published: float
    predicted: float
    kind: str  # size, time, async, restore, rate, optimum, range
    status: str = "scored"  # scored, input, lacks
    tolerance: float | None = None  # relative for size/time/rate, absolute minutes for optimum
    assumptions: list[str] = field(default_factory=list)
    note: str = ""
    low: float | None = None  # for a published range
    role: str = "test"  # scored cases: fit (the fit used it) or test (held out of the fit)
    lacks: str = ""  # status lacks: the term the model lacks

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
TORCHSNAPSHOT = f"pytorch/torchsnapshot benchmarks/ddp/README.md ({CALIB} torchsnapshot_ddp_20gb_p4d)"
DLROVER = f"dlrover docs/blogs/megatron_flash_checkpoint.md ({CALIB} dlrover_megatron_gpt1p5b_nas_no_distopt)"
GLM = ("dlrover docs/blogs/flash_checkpoint.md, 'Train GLM-65B on Thousands of GPUs': FSDP on 1536 H800, "
       "'each checkpoint operation only blocks the training for 0.2 seconds'")
A100 = "A100 PCIe Gen4: 25 GB/s per GPU, 200 GB/s per node (hardware-storage.md 2a)"
H800 = "H800 PCIe Gen5: 55 GB/s per GPU, 358.66 GB/s per node all at once (hardware-storage.md 2a)"
STAGING = "the staging rate is the fitted one (a CPU memory copy into shared memory, taken as the same on A100 and H800)"
DL = dict(params=1.5e9, gpus=16.0, tp=8.0, pp=1.0, sharding="replica0", weights_bytes_per_param=4.0,
          master_bytes_per_param=0.0, optimizer_bytes_per_param=8.0, tier_write_GBps=0.1)
GLM_ROW = dict(params=65e9, gpus=1536.0, weights_bytes_per_param=4.0, master_bytes_per_param=0.0,
               optimizer_bytes_per_param=8.0, d2h_gpu_GBps=55.0, d2h_node_GBps=358.66, strategy="async")
SNAP = dict(params=20e9, weights_bytes_per_param=1.0, master_bytes_per_param=0.0, optimizer_bytes_per_param=0.0)


def _fit_cases() -> list[tuple[str, str, float, dict, str]]:
    """The cases the fit uses: (id, quantity, published, the row's inputs, the column compared)."""
    return [
        ("torchsnapshot_local_1", "20 GB by 1 writer, local FS", 13.91, dict(SNAP, gpus=1.0), "stall_s"),
        ("torchsnapshot_local_8", "20 GB by 8 writers, local FS", 3.38, dict(SNAP, gpus=8.0), "stall_s"),
        ("torchsnapshot_local_32", "20 GB by 32 writers on 4 nodes, local FS", 1.29, dict(SNAP, gpus=32.0),
         "stall_s"),
        ("dlrover_gpt1p5b_flash_stall", "Flash Checkpoint stall (copy to shared memory)", 0.5,
         dict(DL, strategy="async"), "stall_s"),
        ("dlrover_glm65b_flash_stall", "Flash Checkpoint stall, GLM-65B on 1,536 H800", 0.2, GLM_ROW, "stall_s"),
    ]


def fit(start: dict | None = None) -> dict:
    """Least squares on the fit cases' relative errors (log of predicted / published) over the free
    terms, within their bounds. Returns the values, each fit case's residual and the cost."""
    from scipy.optimize import least_squares

    fitted = _fit_cases()
    published = np.array([c[2] for c in fitted])
    names = [t.name for t in FIT_TERMS]

    def residuals(x: np.ndarray) -> np.ndarray:
        terms = _fitted(dict(zip(names, x)))
        got = predict_many([{**terms, **c[3]} for c in fitted])
        return np.log(np.array([g[c[4]] for g, c in zip(got, fitted)]) / published)

    x0 = [(start or {}).get(t.name, t.start) for t in FIT_TERMS]
    result = least_squares(residuals, x0, bounds=([t.low for t in FIT_TERMS], [t.high for t in FIT_TERMS]),
                           x_scale="jac", xtol=1e-12, ftol=1e-12, gtol=1e-12)
    return {"values": dict(zip(names, (float(v) for v in result.x))),
            "residuals": {c[0]: float(math.expm1(r)) for c, r in zip(fitted, result.fun)},
            "cases": [c[0] for c in fitted], "terms": len(names), "converged": bool(result.success)}


@functools.cache
def cases() -> tuple[Case, ...]:
    """Every case, computed once per process with the fitted terms."""
    out: list[Case] = []
    # ---- sizes ----
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
    assume = ["aggregate GPFS write ~60 GB/s: not published; the calibration note's round figure, not fitted", A100,
              "no per-node limit published"]
    out.append(Case("bloom176b_save_time", src, "sync save, 2.3 TB on 384 processes", "s", 40.0, r["stall_s"], "time",
                    tolerance=TIME, assumptions=assume,
                    note="held out: 384 ranks, 12x the largest fit case; 40 s may benefit from GPFS client caching"))
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
    r = predict(**DL)
    out.append(Case("dlrover_gpt1p5b_size", DLROVER, "checkpoint size (fp32 weights + Adam, 12 B/param)", "bytes",
                    18e9, r["ckpt_bytes"], "size", tolerance=SIZE, note="params ~1.5e9: exact count not published"))
    out.append(Case("dlrover_gpt1p5b_sync_save", DLROVER, "Megatron sync save to NAS at 100 MB/s", "s", 151.0,
                    r["stall_s"], "time", tolerance=TIME, assumptions=["params 1.5e9 (from 18 GB / 12 B)", A100]))
    # Megatron's own load of the same checkpoint from the same NAS: a restore from the durable tier
    out.append(Case("dlrover_gpt1p5b_load", DLROVER + ", Megatron-LM Load column", "Megatron load from NAS at 100 MB/s",
                    "s", 205.0, r["restore_tier_s"], "restore", tolerance=TIME,
                    assumptions=["the NAS reads at its stated 100 MB/s IO speed", A100],
                    note="held out: read back at the tier's bandwidth, then copied to the GPUs"))
    # the same run with Megatron's distributed optimizer: 24 GB, 16 B/param (the table's second row)
    dist = dict(DL, sharding="optimizer_sharded", master_bytes_per_param=4.0)
    r = predict(**dist)
    src = DLROVER + ", 'distributed optimizer' row (24GB, 242s, 0.5s, 242s)"
    out.append(Case("dlrover_gpt1p5b_distopt_sync_save", src, "Megatron sync save, distributed optimizer", "s",
                    242.0, r["stall_s"], "time", tolerance=TIME,
                    assumptions=["16 B/param (fp32 weights, master and Adam: 24 GB / 1.5e9)", A100]))
    out.append(Case("dlrover_gpt1p5b_distopt_load", src, "Megatron load, distributed optimizer", "s", 242.0,
                    r["restore_tier_s"], "restore", tolerance=TIME, assumptions=["as dlrover_gpt1p5b_load"]))
    r = predict(**dist, strategy="async")
    out.append(Case("dlrover_gpt1p5b_distopt_flash_stall", src, "Flash Checkpoint stall, distributed optimizer", "s",
                    0.5, r["stall_s"], "async", tolerance=TIME, assumptions=["as dlrover_gpt1p5b_distopt_sync_save",
                                                                             STAGING],
                    note="held out: replica 0's GPUs copy 1.9 GB each (weights and half the optimizer)"))
    # ---- the fit cases ----
    fit_notes = {
        "torchsnapshot_local_1": (TORCHSNAPSHOT, ["the local FS's own bandwidth is not published: the writers bound",
                                                  A100], "one writer: sets the writer bandwidth"),
        "torchsnapshot_local_8": (TORCHSNAPSHOT, ["as torchsnapshot_local_1"], "8 writers on one node: their sharing"),
        "torchsnapshot_local_32": (TORCHSNAPSHOT, ["as torchsnapshot_local_1"],
                                   "4 nodes: each writes a quarter, yet the time per node rises: coordination per rank"),
        "dlrover_gpt1p5b_flash_stall": (DLROVER, ["params 1.5e9 (from 18 GB / 12 B)", A100, STAGING],
                                        "replica 0's 8 GPUs copy 2.25 GB each: staging rate and fixed cost"),
        "dlrover_glm65b_flash_stall": (GLM, ["12 B/param (fp32 weights + Adam, as FSDP saves them): not published",
                                             H800, STAGING], "0.5 GB per GPU at 1,536 ranks: staging rate and fixed "
                                       "cost; no coordination in the snapshot"),
    }
    for cid, quantity, published, row, col in _fit_cases():
        r = predict(**row)
        source, assumptions, note = fit_notes[cid]
        out.append(Case(cid, source, quantity, "s", published, r[col], "async" if row.get("strategy") == "async"
                        else "time", tolerance=TIME, assumptions=assumptions, note=note, role="fit"))
    # ---- held out: torchsnapshot ----
    r = predict(**SNAP, gpus=16.0)
    out.append(Case("torchsnapshot_local_16", TORCHSNAPSHOT, "20 GB by 16 writers on 2 nodes, local FS", "s", 2.02,
                    r["stall_s"], "time", tolerance=TIME, assumptions=["as torchsnapshot_local_1"],
                    note="held out: between the fit's 8 and 32"))
    for ranks, seconds in {1: 14.52, 8: 7.61, 16: 4.61, 32: 2.68}.items():
        r = predict(**SNAP, gpus=float(ranks))
        if ranks == 1:
            out.append(Case("torchsnapshot_fsx_1", TORCHSNAPSHOT, "20 GB by 1 writer, FSx for Lustre", "s", seconds,
                            r["stall_s"], "time", tolerance=TIME, assumptions=[A100],
                            note="held out: one writer bounds it on another file system"))
        else:
            out.append(Case(f"torchsnapshot_fsx_{ranks}", TORCHSNAPSHOT, f"20 GB by {ranks} writers, FSx for Lustre",
                            "s", seconds, r["stall_s"], "time", status="lacks",
                            lacks="tier_node_write_GBps of that FSx file system",
                            note="bound by the file system, whose throughput (the TiB and MB/s/TiB bought) the "
                                 "benchmark does not publish; the prediction, without it, is a lower bound"))
    # ---- held out: async ----
    r = predict(params=7e9, gpus=128.0, strategy="async")
    out.append(Case("pytorch_dcp_7b_async_stall",
                    f"PyTorch blog, Reducing Model Checkpointing Times by Over 10x ({CALIB} pytorch_ibm_async_dcp_7b)",
                    "async stall (GPU -> CPU phase)", "s", 6.3, r["stall_s"], "async", status="lacks",
                    lacks="coordination inside the snapshot",
                    assumptions=["128 A100 (IBM's related FSDP post; not stated for this run)", "14 B/param", STAGING],
                    note="DCP's async_save (2024) plans every rank's writes before training resumes; the model puts "
                         "coordination in the persist, as DLRover's 0.2 s snapshot at 1,536 ranks shows it can be. "
                         "The blog gives neither the rank count nor the storage, so the term cannot be sized here"))
    # ---- Daly (2006): optimum interval, checkpoint 5 min ----
    src = f"J. T. Daly, FGCS 22(3) 2006, figs. 3-5 ({CALIB} daly_2006_formula_and_validation)"
    for mtbf_h, minutes in ((24, 117), (6, 57), (0.25, 9.1)):
        got = COLUMNS["daly_interval_s"].fn(np.array([300.0]), np.array([mtbf_h * 3600.0]))[0] / 60
        out.append(Case(f"daly_5min_mtbf_{mtbf_h:g}h", src, f"optimum interval, checkpoint 5 min, MTBF {mtbf_h:g} h",
                        "min", minutes, float(got), "optimum", tolerance=0.5))
    # DeepNVMe: local NVMe writes on ND-H200-v5
    src = f"deepspeedai/DeepSpeed blogs/deepnvme/03-2025 ({CALIB} deepnvme_nd_h200_v5_write_bw)"
    r = predict(params=1e9, weights_bytes_per_param=1.0, master_bytes_per_param=0.0, optimizer_bytes_per_param=0.0,
                gpus=1.0, gpus_per_node=1.0, tier_kind="local_nvme", nvme_write_GBps=26.0, writer_GBps=math.inf)
    out.append(Case("deepnvme_8xgen5_write", src, "1 GB to 8x Gen5 NVMe RAID-0 (26 GB/s)", "s", 1 / 26, r["tier_s"],
                    "time", status="input", note="the local NVMe defaults of DGX H100/H200/B200 are this measurement"))
    # torchtitan issue #1301 (low confidence)
    r = predict(params=8_030_261_248, weights_bytes_per_param=4.0, master_bytes_per_param=0.0,
                optimizer_bytes_per_param=8.0, tier_kind="local_nvme", nvme_write_GBps=2.2, writer_GBps=math.inf,
                coordination_per_rank_s=0.0, gpus=8.0)
    out.append(Case("torchtitan_llama3_8b_sync", f"pytorch/torchtitan issue #1301 ({CALIB})",
                    "sync save of Llama3-8B to a 2.2 GB/s disk", "s", 393.86, r["tier_s"], "time",
                    status="lacks", lacks="none identified: the issue found no cause",
                    assumptions=["12 B/param (fp32 weights + Adam), 8 GPUs: not published"],
                    note="low confidence: the disk alone bounds the save at ~44 s; the issue closed without a cause, "
                         "so no term is added for it (shown, not tuned to)"))
    return tuple(out)


def _errors(results, **match) -> list[float]:
    return [abs(c.error) for c in results if c.status == "scored" and c.error is not None
            and all(getattr(c, k) in (v if isinstance(v, tuple) else (v,)) for k, v in match.items())]


def summary(results: tuple[Case, ...]) -> dict:
    def stats(errors: list[float]) -> dict:
        return {"cases": len(errors), "median_abs_error": statistics.median(errors) if errors else None,
                "worst_abs_error": max(errors) if errors else None}

    timed = _errors(results, kind=("time", "async", "restore"))
    return {"scored": sum(c.status == "scored" for c in results),
            "passed": sum(c.verdict == "pass" for c in results),
            "failed": sum(c.verdict == "FAIL" for c in results),
            "lacks": sum(c.status == "lacks" for c in results),
            "fit_cases": sum(c.role == "fit" for c in results if c.status == "scored"),
            "time_median_abs_error": statistics.median(timed) if timed else None,
            "time_worst_abs_error": max(timed) if timed else None,
            "held_out": {"sizes": stats(_errors(results, role="test", kind=("size", "rate"))),
                         "times": stats(_errors(results, role="test", kind="time")),
                         "async stalls": stats(_errors(results, role="test", kind="async")),
                         "restores": stats(_errors(results, role="test", kind="restore"))},
            "fit": {"times": stats(_errors(results, role="fit", kind="time")),
                    "async stalls": stats(_errors(results, role="fit", kind="async"))},
            "fitted": dict(FITTED)}


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


@dataclass(frozen=True)
class Table:
    """What the outputs show of the calibration: a row per case and the summary."""

    rows: list[dict]
    summary: dict


def table() -> Table:
    """The calibration table, from every case (computed once per process)."""
    results = cases()
    return Table(rows(results), summary(results))


def rows(results: tuple[Case, ...] | None = None) -> list[dict]:
    """The table `ckptreport calibrate` prints and the briefs carry."""
    results = results if results is not None else cases()
    out = []
    for c in results:
        published = (f"{fmt(c.low, c.unit)} - {fmt(c.published, c.unit)}" if c.kind == "range"
                     else fmt(c.published, c.unit))
        out.append({"case": c.id, "quantity": c.quantity, "published": published,
                    "predicted": fmt(c.predicted, c.unit), "error": c.shown_error(), "tolerance": c.shown_tolerance(),
                    "verdict": c.verdict, "role": c.role if c.status == "scored" else "", "lacks": c.lacks,
                    "source": c.source, "assumptions": c.assumptions, "note": c.note})
    return out
