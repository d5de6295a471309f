"""Restore after a failure: from host memory, a peer's copy or the durable tier, over the recovery mix."""

from __future__ import annotations

from ..expr import GB, PERCENT, ceil, known, maximum, minimum, where
from .define import column, section

section("Restore after a failure")


@column("GBps")
def read_GBps(tier_read_GBps, tier_bought_GBps):
    """Aggregate read bandwidth of the tier as bought: its read figure, else its write bandwidth."""
    return where(known(tier_read_GBps), tier_read_GBps, tier_bought_GBps)


@column("GBps")
def node_read_GBps(
    tier_kind,
    nvme_read_GBps,
    nvme_write_GBps,
    tier_node_read_GBps,
    tier_node_GBps,
    storage_nic_GBps,
):
    """Most one node reads back: a local_nvme tier, the node's drives; else the tier's per-node read (or
    write) figure, capped by the storage NIC."""
    local = where(known(nvme_read_GBps), nvme_read_GBps, nvme_write_GBps)
    remote = minimum(
        where(known(tier_node_read_GBps), tier_node_read_GBps, tier_node_GBps), storage_nic_GBps
    )
    return where(tier_kind == "local_nvme", local, remote)


@column("s")
def restore_host_s(d2h_s):
    """Restore from the copy in host memory: the heaviest node's shard back to its GPUs, host->GPU taken
    as the GPU->host copy (nvbandwidth measures the two within 1%)."""
    return d2h_s


@column("pct")
def restore_chain_pct(saves_differences, full_every, diff_fraction_pct):
    """What a restore from the tier reads, as a share of the checkpoint: where saves write differences
    (differential), the full save and, on average, half the chain of differences after it,
    1 + (K - 1) / 2 x fraction; the others the checkpoint."""
    return (
        where(saves_differences, 1 + (full_every - 1) / 2 * diff_fraction_pct / PERCENT, 1)
        * PERCENT
    )


@column("s")
def restore_tier_s(
    ckpt_bytes, read_GBps, bytes_per_node, node_read_GBps, restore_chain_pct, restore_host_s
):
    """Restore from the durable tier: every node reads its shard back at once (the whole checkpoint at the
    tier's read bandwidth, or the heaviest node's shard at its read rate, whichever is longer; a
    differential chain in proportion), then copies it to the GPUs."""
    return (
        maximum(ckpt_bytes / (read_GBps * GB), bytes_per_node / (node_read_GBps * GB))
        * restore_chain_pct
        / PERCENT
        + restore_host_s
    )


@column("s")
def restore_peer_s(bytes_per_node, peer_nic_GBps, restore_host_s):
    """peer_memory, a lost node: its replacement reads the node's snapshot from a peer over the peer
    network, then copies it to the GPUs."""
    return bytes_per_node / (peer_nic_GBps * GB) + restore_host_s


@column("s")
def replica_copy_s(ckpt_bytes, tp, pp, gpus_per_node, peer_nic_GBps, d2h_node_GBps):
    """replica_recovery: a rejoining replica copies a healthy replica's live state. Each replica holds
    the whole state (hybrid sharding: sharded within a replica, replicated across), spread over its
    nodes (tp x pp GPUs); each node takes its part over the peer network, then into its GPUs."""
    part = ckpt_bytes / maximum(1, ceil(tp * pp / gpus_per_node))
    return part / (peer_nic_GBps * GB) + part / (d2h_node_GBps * GB)


@column("pct")
def host_restore_pct(keeps_host_copy, host_recoverable_pct):
    """The recovery mix used: the share of failures restored from host memory, where the strategy keeps
    its snapshot there. Sync keeps no copy there and jit saves only after the failure, so their
    restarts read the durable tier."""
    return where(keeps_host_copy, host_recoverable_pct, 0)


@column("pct")
def peer_restore_pct(copies_to_peers, node_loss_pct):
    """The share of failures restored from a peer's copy (a lost node), where the strategy copies to peers
    (peer_memory); none elsewhere."""
    return where(copies_to_peers, node_loss_pct, 0)


@column("s")
def failure_save_s(saves_after_failure, d2h_s, write_s):
    """Where the strategy saves after a failure (jit): the surviving replicas copy the state to host and
    write it to the tier (a sync save at the bandwidth bought), before the restart reads it back."""
    return where(saves_after_failure, d2h_s + write_s, 0)


@column("s")
def restore_s(
    host_restore_pct,
    restore_host_s,
    peer_restore_pct,
    restore_peer_s,
    restore_tier_s,
    failure_save_s,
):
    """Expected time to read the checkpoint back after a failure, over the recovery mix (host memory, a
    peer, the durable tier), plus jit's save after the failure."""
    tier_pct = PERCENT - host_restore_pct - peer_restore_pct
    return (
        host_restore_pct * restore_host_s
        + peer_restore_pct * restore_peer_s
        + tier_pct * restore_tier_s
    ) / PERCENT + failure_save_s
