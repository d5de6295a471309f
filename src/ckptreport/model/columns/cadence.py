"""Cadence under failures: the job's MTBF, the optimum interval (Young, Daly), rework and waste."""

from __future__ import annotations

from ..expr import INF, PERCENT, TERA, maximum, sqrt, where
from .define import WITHIN_TARGET, column, section

section("Cadence under failures")


@column("s", excel='#,##0" s"')
def cluster_mtbf_s(gpu_mtbf_s, training_gpus):
    """Mean time between failures of the whole job: per-GPU MTBF / the GPUs it trains on (an idle
    GPU's failure stops nothing)."""
    return gpu_mtbf_s / training_gpus


@column("pct")
def replica_pct(drops_failed_replica, replica_confined_pct):
    """The share of failures the job survives by dropping the failed data-parallel replica, where the
    strategy does (replica_recovery); none elsewhere: every failure restarts the job."""
    return where(drops_failed_replica, replica_confined_pct, 0)


@column("s", excel='#,##0" s"')
def durable_mtbf_s(cluster_mtbf_s, replica_pct):
    """Mean time between the failures that restart the job from its checkpoint: every failure, or
    those a dropped replica does not absorb (replica_recovery). Its cadence is weighed against these."""
    return cluster_mtbf_s / (1 - replica_pct / PERCENT)


@column("s")
def lost_per_checkpoint_s(checkpoint_cost_s, background_s, async_slowdown_pct):
    """Training time one checkpoint costs at a cadence no shorter than its background persist: the stop,
    and the slowdown while the persist runs (the cost d the optimum cadence weighs against rework)."""
    return checkpoint_cost_s + background_s * async_slowdown_pct / PERCENT


@column("s")
def young_interval_s(lost_per_checkpoint_s, durable_mtbf_s):
    """Young's optimal interval, sqrt(2 x cost x MTBF), the MTBF of the failures that restart the job."""
    return sqrt(2 * lost_per_checkpoint_s * durable_mtbf_s)


@column("s")
def daly_interval_s(lost_per_checkpoint_s, durable_mtbf_s):
    """Daly's higher-order optimum (2006, eq. 37): sqrt(2dM)[1 + sqrt(d/2M)/3 + (d/2M)/9] - d for d < 2M,
    else M; M the MTBF of the failures that restart the job."""
    ratio = lost_per_checkpoint_s / (2 * durable_mtbf_s)
    return where(
        ratio < 1,
        sqrt(2 * lost_per_checkpoint_s * durable_mtbf_s) * (1 + sqrt(ratio) / 3 + ratio / 9)
        - lost_per_checkpoint_s,
        durable_mtbf_s,
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


@column("s")
def replica_loss_s(replica_reform_s, restart_s, replica_copy_s, dp_ranks):
    """Training lost to one failure a dropped replica absorbs (replica_recovery), in the job's time:
    the whole job stalls while the process groups re-form (replica_reform); the failed replica, one of
    dp_ranks, is out while it restarts and copies a healthy replica's live state (replica_copy). Its
    step in flight (seconds, against a restart of minutes) is not counted."""
    return replica_reform_s + (restart_s + replica_copy_s) / dp_ranks


def _mix(replica_pct, restarted, dropped):
    """A figure over the failure mix: ``restarted`` for a failure that restarts the job, ``dropped`` for
    the replica_pct a dropped replica absorbs; ``restarted`` alone where none does (bit for bit, and
    whatever ``dropped`` is there)."""
    kept = replica_pct / PERCENT
    return where(kept > 0, (1 - kept) * restarted + kept * dropped, restarted)


@column("pct")
def rework_pct(lost_work_s, restart_s, restore_s, cluster_mtbf_s, replica_pct, replica_loss_s):
    """Share of the wall clock lost to failures, per MTBF: for a failure that restarts the job, the work
    redone, the restart and the restore; for one a dropped replica absorbs (replica_pct of them), its
    replica_loss."""
    return (
        PERCENT
        * _mix(replica_pct, lost_work_s + restart_s + restore_s, replica_loss_s)
        / cluster_mtbf_s
    )


@column("s")
def restart_recovery_s(restart_s, restore_s, lost_work_s):
    """Time to recover from a failure that restarts the job: the restart, the restore, and the work
    redone since the checkpoint it restores."""
    return restart_s + restore_s + lost_work_s


@column("s")
def replica_recovery_s(replica_reform_s, restart_s, replica_copy_s):
    """Time to recover from a failure a dropped replica absorbs (replica_recovery): the re-form, the
    replica's restart and its copy from a healthy replica (the others train on meanwhile)."""
    return replica_reform_s + restart_s + replica_copy_s


@column("s")
def time_to_recover_s(replica_pct, restart_recovery_s, replica_recovery_s):
    """Mean time from a failure until every GPU trains on from where the job was, over the failure mix
    (each domain's path: restart_recovery, replica_recovery)."""
    return _mix(replica_pct, restart_recovery_s, replica_recovery_s)


@column("pct")
def waste_pct(overhead_pct, rework_pct):
    """Time lost per hour of training: checkpoint overhead plus rework after failures, failures
    counting by the wall clock (they strike during restarts as during training: a job whose failures
    cost rework_pct of the wall clock trains 1 - rework of it), (overhead + rework) / (1 - rework);
    unbounded (the job never finishes) when failures cost as much time as there is."""
    return where(
        rework_pct < PERCENT, (overhead_pct + rework_pct) / (1 - rework_pct / PERCENT), INF
    )


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
    replica_pct,
    replica_loss_s,
):
    """Waste at the optimal interval, restart and restore included (the work redone scaled from the
    interval to the optimum; a failure a dropped replica absorbs costs its replica_loss at any
    interval); a strategy that takes no periodic checkpoint (jit) wastes the same at any interval."""
    restarts = lost_work_s * optimal_interval_s / interval_s + restart_s + restore_s
    failures = _mix(replica_pct, restarts, replica_loss_s) / cluster_mtbf_s
    return where(
        saves_after_failure,
        waste_pct,
        where(
            failures < 1,
            PERCENT * (lost_per_checkpoint_s / optimal_interval_s + failures) / (1 - failures),
            INF,
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
