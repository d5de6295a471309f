"""What a durable save needs of the tier, whatever is bought: the per-node limits of the persist (the
NIC, the writers, the node's cap on the tier), the copy to peers, and from them and the target the
aggregate write bandwidth the target demands, solved with the stall's every term (the interference of
a background persist, backpressure, the per-node limits), not from the drain alone."""

from __future__ import annotations

from ..expr import GB, INF, PERCENT, maximum, minimum, where
from .define import column, section

section("What the target demands of the tier")


@column("GBps")
def tier_node_GBps(tier_kind, tier_node_write_GBps, nvme_write_GBps):
    """Most one node can write to the tier (a local_nvme tier: the node's own drives)."""
    return where(
        tier_kind == "local_nvme",
        minimum(nvme_write_GBps, tier_node_write_GBps),
        tier_node_write_GBps,
    )


@column("s")
def nic_s(tier_kind, durable_node_bytes, storage_nic_GBps):
    """Time for the heaviest node's durable save to cross its storage NIC (none for node-local NVMe)."""
    return where(tier_kind == "local_nvme", 0, durable_node_bytes / (storage_nic_GBps * GB))


@column("GBps")
def writers_GBps(writers_on_node, writer_GBps, writer_scaling_pct):
    """What the node's writer processes (one per writing GPU) sustain together: one writer's bandwidth,
    and each further writer adds writer_scaling of it (they share the node sub-linearly)."""
    return writer_GBps * (1 + (writers_on_node - 1) * writer_scaling_pct / PERCENT)


@column("s")
def writer_s(durable_node_bytes, writers_GBps, bytes_per_gpu_max, durable_share_pct, writer_GBps):
    """Time for the node's writer processes to write its durable save; never less than the heaviest
    rank's part at one writer's bandwidth."""
    return maximum(
        durable_node_bytes / (writers_GBps * GB),
        bytes_per_gpu_max * durable_share_pct / PERCENT / (writer_GBps * GB),
    )


@column("s")
def peer_s(copies_to_peers, peer_replicas, bytes_per_node, peer_nic_GBps):
    """Time to copy a node's snapshot to its peer_replicas peers over the peer network, where the strategy
    copies to peers (peer_memory)."""
    return where(copies_to_peers, peer_replicas * bytes_per_node / (peer_nic_GBps * GB), 0)


@column("s")
def tier_floor_s(nic_s, writer_s, durable_node_bytes, tier_node_GBps):
    """The least time a durable save's data takes to move, however much aggregate bandwidth is bought:
    the heaviest node's part through its NIC, its writers, or its cap on the tier, whichever is slowest."""
    return maximum(maximum(nic_s, writer_s), durable_node_bytes / (tier_node_GBps * GB))


@column("s")
def write_budget_s(
    saves_after_failure,
    blocks_for_persist,
    target_overhead_pct,
    interval_s,
    fixed_s,
    snapshot_s,
    nvme_s,
    coordination_s,
    blocking_coordination_s,
    metadata_s,
    peer_s,
    durable_every_saves,
    async_slowdown_pct,
):
    """Time the durable save's data may take to reach the tier (all of it at the aggregate bandwidth) and
    the option still meet the target, every term of the stall counted. A save training waits for
    (sync): what the target leaves after the fixed cost, the copy to host, the coordination, the
    files' metadata and the copy to peers. A background save: the persist may run as long as the
    target leaves after what training waits for, its interference (async_slowdown of it, up to an
    interval) and its backpressure (what outlasts the time to the next durable save) counted, less the
    NVMe landing, the coordination left to it and the metadata. Without a periodic save (jit), no
    limit. Zero when nothing is left (never negative)."""
    allowed = target_overhead_pct / PERCENT * interval_s
    slow = async_slowdown_pct / PERCENT
    n = durable_every_saves
    peers = (
        maximum(peer_s - interval_s, 0) + minimum(peer_s, interval_s) * slow
    )  # what the peer copy costs
    waited = allowed - fixed_s - snapshot_s - coordination_s - metadata_s - peers
    left = (
        allowed - fixed_s - snapshot_s - blocking_coordination_s - maximum(peer_s - interval_s, 0)
    )
    # the longest background persist the target allows: slowed training until the background fills the
    # interval, then backpressure (past the time to the next durable save) a second for a second
    persist = where(
        left < minimum(peer_s, interval_s) * slow,
        -INF,
        where(
            left < interval_s * slow,
            n * (left / slow - peer_s),
            interval_s * n + n * (left - interval_s * slow),
        ),
    )
    background = persist - nvme_s - (coordination_s - blocking_coordination_s) - metadata_s
    return where(
        saves_after_failure, INF, maximum(where(blocks_for_persist, waited, background), 0)
    )


@column("GBps", infinite="unreachable")
def required_write_GBps(write_budget_s, tier_floor_s, durable_bytes):
    """The least aggregate tier write bandwidth at which the option meets the target: the durable save
    over the time the target leaves it (write_budget_s). Unreachable when nothing is left, or when the
    per-node limits alone (tier_floor_s) take longer than that; none without a periodic save (jit)."""
    return where(
        (write_budget_s > 0) & (tier_floor_s <= write_budget_s),
        durable_bytes / write_budget_s / GB,
        INF,
    )


@column("GBps", infinite="unreachable")
def required_node_write_GBps(required_write_GBps, write_budget_s, durable_node_bytes):
    """Per-node write bandwidth (NIC and tier share) that meets the target."""
    return where(required_write_GBps < INF, durable_node_bytes / write_budget_s / GB, INF)
