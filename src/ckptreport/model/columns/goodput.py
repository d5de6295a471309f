"""Goodput: the share of wall-clock time that trains, the effective training time ratio (ETTR), and
what takes the rest, each as a share of wall-clock time: the stop of each checkpoint, the background
persist's interference, the work redone after a failure, the restart, the restore. The losses are
those of the waste; as shares of the wall clock they and ETTR add up to 100%. Failures strike by the
wall clock (the per-GPU MTBF is counted so: Llama 3's interruptions over 54 days), so a failure's
losses take their share of the wall clock directly, and the stops theirs of the time that trains:
ETTR = (1 - rework) / (1 + overhead), Kokolis's model (Kokolis et al.,
"Revisiting Reliability in Large-Scale ML Research Clusters", HPCA'25; Google's ML Productivity
Goodput, arXiv 2502.06982)."""

from __future__ import annotations

from ..expr import PERCENT, where
from .define import column, section

section("Goodput: the productive share of the wall clock")


@column("pct")
def ettr_pct(waste_pct):
    """Effective training time ratio: the share of wall-clock time that trains, compute / (compute +
    waste), 1 / (1 + waste)."""
    return PERCENT / (1 + waste_pct / PERCENT)


@column("pct")
def stop_share_pct(checkpoint_cost_s, backpressure_s, interval_s, ettr_pct):
    """Wall-clock time lost to the stops of checkpoints (what training waits for, and any backpressure)."""
    return (checkpoint_cost_s + backpressure_s) / interval_s * ettr_pct


@column("pct")
def interference_share_pct(interference_s, interval_s, ettr_pct):
    """Wall-clock time lost to a background persist slowing training."""
    return interference_s / interval_s * ettr_pct


@column("pct")
def rework_share_pct(lost_work_s, cluster_mtbf_s, replica_pct):
    """Wall-clock time lost redoing the work since the checkpoint a failure restores (the failures that
    restart the job)."""
    return (1 - replica_pct / PERCENT) * lost_work_s / cluster_mtbf_s * PERCENT


@column("pct")
def restart_share_pct(restart_s, cluster_mtbf_s, replica_pct):
    """Wall-clock time lost restarting the job after failures (those that restart it)."""
    return (1 - replica_pct / PERCENT) * restart_s / cluster_mtbf_s * PERCENT


@column("pct")
def restore_share_pct(restore_s, cluster_mtbf_s, replica_pct):
    """Wall-clock time lost reading the checkpoint back after failures (and jit's save after one)."""
    return (1 - replica_pct / PERCENT) * restore_s / cluster_mtbf_s * PERCENT


@column("pct")
def replica_share_pct(replica_pct, replica_loss_s, cluster_mtbf_s):
    """Wall-clock time lost to failures a dropped replica absorbs (replica_recovery): the re-forms, and
    the replica's share of the time it is out."""
    return where(
        replica_pct > 0, replica_pct / PERCENT * replica_loss_s / cluster_mtbf_s * PERCENT, 0
    )


@column("pct")
def optimal_ettr_pct(optimal_waste_pct):
    """ETTR at the optimal interval."""
    return PERCENT / (1 + optimal_waste_pct / PERCENT)


@column("label")
def implausible(overhead_pct, rework_pct):
    """A figure outside what a run can be, with its cause: the stall outlasts the interval between
    checkpoints (overhead above 100%: the interval is shorter than a checkpoint takes), or failures take
    all the wall clock (rework at or above 100%: the job's MTBF, per-GPU MTBF over its GPUs, is no longer
    than a restart, a restore and the work redone; it never finishes); none when the figures can be."""
    return where(
        overhead_pct > PERCENT,
        "stall above the interval",
        where(rework_pct >= PERCENT, "failures faster than recovery", "none"),
    )
