"""What training waits for: the stop of a checkpoint, the background persist and its backpressure and
interference, the stall and overhead; what the staging needs of host memory and NVMe; whether the
layout runs the strategy."""

from __future__ import annotations

from ..expr import PERCENT, maximum, minimum, where
from .define import column, section

section("Strategy: what training waits for")


@column("s")
def checkpoint_cost_s(
    saves_after_failure,
    blocks_for_persist,
    fixed_s,
    snapshot_s,
    write_s,
    blocking_coordination_s,
    jit_overhead_pct,
    interval_s,
):
    """Time training stops for one checkpoint: the fixed cost, then a save training waits for (sync) copies
    and persists; the background strategies stage a snapshot to host (and wait for the coordination
    where the engine plans first); one that saves only after a failure (jit) pays its failure detection
    (jit_overhead of the interval)."""
    return where(
        saves_after_failure,
        jit_overhead_pct / PERCENT * interval_s,
        fixed_s + snapshot_s + where(blocks_for_persist, write_s, blocking_coordination_s),
    )


@column("s")
def persist_s(blocks_for_persist, lands_on_nvme, write_s, nvme_s):
    """Time a durable save runs after training resumes: the background strategies write from host
    memory, one that lands on NVMe first (tiered) then drains; where training waits for the persist
    (sync, jit), nothing runs in the background."""
    return where(blocks_for_persist, 0, where(lands_on_nvme, nvme_s + write_s, write_s))


@column("s")
def background_s(peer_s, persist_s, durable_every_saves):
    """Time the background runs per checkpoint, on average: the copy to peers, and the durable persist
    (peer_memory's every durable_every saves)."""
    return peer_s + persist_s / durable_every_saves


@column("s")
def backpressure_s(peer_s, persist_s, interval_s, durable_every_saves):
    """Wait per checkpoint when the background outlasts its time: the copy to peers the interval, the
    durable persist the time to the next durable save."""
    return (
        maximum(peer_s - interval_s, 0)
        + maximum(persist_s - interval_s * durable_every_saves, 0) / durable_every_saves
    )


@column("s")
def interference_s(background_s, interval_s, async_slowdown_pct):
    """Training time lost while the background write runs and slows training by async_slowdown_pct."""
    return minimum(background_s, interval_s) * async_slowdown_pct / PERCENT


@column("s")
def stall_s(checkpoint_cost_s, backpressure_s, interference_s):
    """Training time lost to each checkpoint."""
    return checkpoint_cost_s + backpressure_s + interference_s


@column("pct")
def overhead_pct(stall_s, interval_s):
    """Share of training time spent stalled on checkpoints: stall / interval."""
    return PERCENT * stall_s / interval_s


@column("bool")
def stalls_more_than_trains(overhead_pct):
    """A warning: each checkpoint stalls training longer than the interval between them (overhead above 100%)."""
    return overhead_pct > PERCENT


@column("bytes")
def host_memory_needed_bytes(
    stages_snapshot, copies_to_peers, bytes_per_node, buffers, peer_replicas
):
    """Host memory a checkpoint stages per node: a strategy that stages a snapshot its buffers, one that
    copies to peers (peer_memory) also the copies it holds for them; a sync save streams through and
    jit stages nothing."""
    return where(
        stages_snapshot, bytes_per_node * (buffers + where(copies_to_peers, peer_replicas, 0)), 0
    )


@column("bool")
def host_memory_ok(host_memory_needed_bytes, host_memory_bytes):
    """Whether the staging buffers fit in the node's host memory."""
    return host_memory_needed_bytes <= host_memory_bytes


@column("bytes")
def nvme_needed_bytes(tier_kind, lands_on_nvme, bytes_per_node, retention):
    """Node-local NVMe a checkpoint occupies: all retained ones on a local_nvme tier, one where the persist
    lands on NVMe first (tiered)."""
    return where(
        tier_kind == "local_nvme",
        bytes_per_node * retention,
        where(lands_on_nvme, bytes_per_node, 0),
    )


@column("bool")
def nvme_ok(nvme_needed_bytes, nvme_capacity_bytes):
    """Whether that fits on the node's NVMe."""
    return nvme_needed_bytes <= nvme_capacity_bytes


@column("bool")
def layout_ok(dp_ranks, min_replicas, peers_below_nodes, nodes, peer_replicas):
    """Whether the job can run the strategy: at least its min_replicas data-parallel replicas (jit needs a
    second to save from after a failure), and more nodes than peer_replicas where it needs them
    (peer_memory)."""
    return (dp_ranks >= min_replicas) & (~peers_below_nodes | (nodes > peer_replicas))
