"""The write chain, per node: NIC, writers, tier share; the persist's time and its bottleneck."""

from __future__ import annotations

from ...read.units import INF_FMT
from ..expr import GB, largest, maximum, minimum, where
from .define import column, section

section("The write chain, per node")


@column("GBps", excel=INF_FMT + '#,##0.000" GB/s"')
def tier_share_GBps(tier_node_GBps, tier_bought_GBps, nodes_writing):
    """What one node gets from the tier while every writing node writes: its cap, or an even share."""
    return minimum(tier_node_GBps, tier_bought_GBps / nodes_writing)


@column("s")
def tier_s(durable_bytes, tier_bought_GBps, durable_node_bytes, tier_node_GBps):
    """Time the tier needs: all a durable save writes at its aggregate bandwidth, or the heaviest node's
    part at the most one node gets, whichever is longer (nodes that finish early free bandwidth)."""
    return maximum(
        durable_bytes / (tier_bought_GBps * GB), durable_node_bytes / (tier_node_GBps * GB)
    )


@column("s")
def write_s(
    coordination_s, blocking_coordination_s, blocks_for_persist, metadata_s, nic_s, writer_s, tier_s
):
    """Time to persist from host memory: the coordination (a background save's only where it is not done
    before training resumes), the files' metadata, then the writers stream through the NIC into the
    tier; the slowest sets the pace."""
    persist = where(blocks_for_persist, coordination_s, coordination_s - blocking_coordination_s)
    return persist + metadata_s + maximum(maximum(nic_s, writer_s), tier_s)


@column("label")
def bottleneck(snapshot_s, nvme_s, nic_s, writer_s, tier_s, coordination_s, metadata_s):
    """The slowest part of the chain: the d2h copy, nvme, nic, writer, tier, the coordination, or the
    files' metadata."""
    return largest(
        d2h=snapshot_s,
        nvme=nvme_s,
        nic=nic_s,
        writer=writer_s,
        tier=tier_s,
        coordination=coordination_s,
        metadata=metadata_s,
    )


@column("x")
def beyond_largest_case_x(training_gpus, largest_case_ranks):
    """How many times the largest published case the engine's terms rest on the job's ranks are (1
    within it): the engine's scaling terms' ranges widen by it."""
    return maximum(training_gpus / largest_case_ranks, 1)


@column("bool")
def extrapolated(training_gpus, largest_case_ranks):
    """Whether the job is beyond the largest published case the engine's terms rest on: its
    coordination is then an extrapolation (by beyond_largest_case_x)."""
    return training_gpus > largest_case_ranks
