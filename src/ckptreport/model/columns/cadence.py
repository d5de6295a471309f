"""Cadence under failures: the job's MTBF, the optimum interval (Young, Daly), rework and waste."""

from __future__ import annotations

from ..expr import PERCENT, TERA, maximum, sqrt, where
from .define import WITHIN_TARGET, column, section

section("Cadence under failures")


@column("s", excel='#,##0" s"')
def cluster_mtbf_s(gpu_mtbf_s, training_gpus):
    """Mean time between failures of the whole job: per-GPU MTBF / the GPUs it trains on (an idle
    GPU's failure stops nothing)."""
    return gpu_mtbf_s / training_gpus


@column("s")
def lost_per_checkpoint_s(checkpoint_cost_s, background_s, async_slowdown_pct):
    """Training time one checkpoint costs at a cadence no shorter than its background persist: the stop,
    and the slowdown while the persist runs (the cost d the optimum cadence weighs against rework)."""
    return checkpoint_cost_s + background_s * async_slowdown_pct / PERCENT


@column("s")
def young_interval_s(lost_per_checkpoint_s, cluster_mtbf_s):
    """Young's optimal interval, sqrt(2 x cost x MTBF)."""
    return sqrt(2 * lost_per_checkpoint_s * cluster_mtbf_s)


@column("s")
def daly_interval_s(lost_per_checkpoint_s, cluster_mtbf_s):
    """Daly's higher-order optimum (2006, eq. 37): sqrt(2dM)[1 + sqrt(d/2M)/3 + (d/2M)/9] - d for d < 2M, else M."""
    ratio = lost_per_checkpoint_s / (2 * cluster_mtbf_s)
    return where(
        ratio < 1,
        sqrt(2 * lost_per_checkpoint_s * cluster_mtbf_s) * (1 + sqrt(ratio) / 3 + ratio / 9)
        - lost_per_checkpoint_s,
        cluster_mtbf_s,
    )


@column("s")
def optimal_interval_s(daly_interval_s, background_s):
    """Best cadence: Daly's optimum, but never shorter than the background persist."""
    return maximum(daly_interval_s, background_s)


@column("s")
def compute_s(active_params, tokens, training_gpus, peak_TFLOPS, mfu_pct):
    """Training compute time: 6 x active params x tokens / (training GPUs x peak x MFU)."""
    return 6 * active_params * tokens / (training_gpus * peak_TFLOPS * TERA * mfu_pct / PERCENT)


@column("s")
def step_s(compute_s, batch_tokens, tokens):
    """One training step: the compute time of one global batch."""
    return compute_s * batch_tokens / tokens


@column("s")
def lost_work_s(
    saves_after_failure, interval_s, step_s, host_restore_pct, peer_restore_pct, durable_every_saves
):
    """Training redone after a failure, on average: half an interval since the last checkpoint restored;
    failures that need the tier, half the durable_every intervals since the last durable save
    (peer_memory); a strategy that saves after the failure (jit), about one step."""
    near = (host_restore_pct + peer_restore_pct) / PERCENT
    return where(
        saves_after_failure,
        step_s,
        interval_s / 2 * near + interval_s * durable_every_saves / 2 * (1 - near),
    )


@column("pct")
def rework_pct(lost_work_s, restart_s, restore_s, cluster_mtbf_s):
    """Share of training lost to failures: (work redone + restart + restore) per MTBF."""
    return PERCENT * (lost_work_s + restart_s + restore_s) / cluster_mtbf_s


@column("pct")
def waste_pct(overhead_pct, rework_pct):
    """Checkpoint overhead plus rework after failures."""
    return overhead_pct + rework_pct


@column("pct")
def optimal_waste_pct(
    saves_after_failure,
    lost_per_checkpoint_s,
    optimal_interval_s,
    lost_work_s,
    interval_s,
    restart_s,
    restore_s,
    cluster_mtbf_s,
    waste_pct,
):
    """Waste at the optimal interval, restart and restore included (the work redone scaled from the
    interval to the optimum); a strategy that takes no periodic checkpoint (jit) wastes the same at any
    interval."""
    return where(
        saves_after_failure,
        waste_pct,
        PERCENT
        * (
            lost_per_checkpoint_s / optimal_interval_s
            + (lost_work_s * optimal_interval_s / interval_s + restart_s + restore_s)
            / cluster_mtbf_s
        ),
    )


@column("bool")
def meets_target(
    overhead_pct, target_overhead_pct, host_memory_ok, nvme_ok, capacity_ok, layout_ok
):
    """Overhead within the target (to a billionth of it, WITHIN_TARGET), and feasible: the staging fits
    in host memory and NVMe, the retained checkpoints fit on the tier, the job's layout runs the
    strategy."""
    return (
        (overhead_pct <= target_overhead_pct * WITHIN_TARGET)
        & host_memory_ok
        & nvme_ok
        & capacity_ok
        & layout_ok
    )
