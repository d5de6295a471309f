"""The storage bought: capacity, and bandwidth (a per-TiB tier bought to size), an object store's
request ceiling."""

from __future__ import annotations

from ..expr import GB, INF, PERCENT, TIB, ceil, isna, known, maximum, minimum, where
from .define import column, section

section("Storage bought: capacity and bandwidth")


@column("bytes")
def capacity_needed_bytes(
    saves_differences,
    saves_after_failure,
    retention,
    written_bytes,
    full_every,
    diff_fraction_pct,
    headroom_pct,
):
    """Capacity the plan needs on the tier: the retained checkpoints as written (one that saves
    differences with its chain: the full save and up to full_every - 1 differences; one that saves only
    after a failure keeps only the state it writes then), plus headroom."""
    kept = where(
        saves_differences,
        retention * (1 + (full_every - 1) * diff_fraction_pct / PERCENT),
        where(saves_after_failure, 1, retention),
    )
    return kept * written_bytes * (1 + headroom_pct / PERCENT)


@column("bool")
def sized_per_TiB(tier_write_per_TiB_GBps, tier_capacity_bytes):
    """A per-TiB tier without a fixed capacity: the tool buys the TiB that capacity and bandwidth need."""
    return known(tier_write_per_TiB_GBps) & isna(tier_capacity_bytes)


@column("bytes")
def provisioned_bytes(
    sized_per_TiB,
    capacity_needed_bytes,
    tier_min_capacity_bytes,
    required_write_GBps,
    tier_write_per_TiB_GBps,
):
    """Capacity bought: what the plan stores; a per-TiB tier buys more when the bandwidth the target
    needs takes more TiB (never less than its smallest size)."""
    for_bandwidth = where(
        required_write_GBps < INF, required_write_GBps / tier_write_per_TiB_GBps * TIB, 0
    )
    return where(
        sized_per_TiB,
        maximum(maximum(capacity_needed_bytes, tier_min_capacity_bytes), for_bandwidth),
        capacity_needed_bytes,
    )


@column("label")
def sized_for(sized_per_TiB, provisioned_bytes, capacity_needed_bytes):
    """What set the capacity bought: the checkpoints kept, or (a per-TiB tier) the bandwidth or its smallest size."""
    return where(
        sized_per_TiB & (provisioned_bytes > capacity_needed_bytes), "bandwidth", "capacity"
    )


@column("GBps")
def request_ceiling_GBps(puts_per_s_per_prefix, prefixes, part_size_bytes):
    """Object stores: the most the request-rate ceiling lets through: requests/s per prefix x prefixes x part size."""
    return where(
        (puts_per_s_per_prefix < INF) & (part_size_bytes < INF),
        puts_per_s_per_prefix * prefixes * part_size_bytes / GB,
        INF,
    )


@column("GBps")
def tier_bought_GBps(
    sized_per_TiB, tier_write_per_TiB_GBps, provisioned_bytes, tier_write_GBps, request_ceiling_GBps
):
    """Aggregate write bandwidth of the storage as bought: a per-TiB tier's rate x the TiB bought, else
    the tier's figure; capped by an object store's request ceiling."""
    return minimum(
        where(sized_per_TiB, tier_write_per_TiB_GBps * provisioned_bytes / TIB, tier_write_GBps),
        request_ceiling_GBps,
    )


@column("bool")
def capacity_ok(tier_capacity_bytes, capacity_needed_bytes):
    """Whether the retained checkpoints fit (a tier with no stated capacity is bought to size)."""
    return capacity_needed_bytes <= where(isna(tier_capacity_bytes), INF, tier_capacity_bytes)


@column("count")
def puts_per_ckpt(durable_bytes, part_size_bytes):
    """Object stores: write requests per durable save, one per part."""
    return where(part_size_bytes < INF, ceil(durable_bytes / part_size_bytes), 0)


@column("count")
def prefixes_needed(required_write_GBps, puts_per_s_per_prefix, part_size_bytes):
    """Object stores: prefixes the target's bandwidth needs at the request-rate ceiling (0: no ceiling)."""
    limited = (required_write_GBps < INF) & (puts_per_s_per_prefix < INF) & (part_size_bytes < INF)
    return where(
        limited,
        maximum(ceil(required_write_GBps * GB / (puts_per_s_per_prefix * part_size_bytes)), 1),
        0,
    )
