"""The copy to host, the engine's fixed cost and coordination."""

from __future__ import annotations

from ..expr import GB, PERCENT, known, maximum, minimum, where
from .define import column, section

section("The copy to host, and the coordination")


@column("GBps")
def d2h_GBps(writers_on_node, d2h_gpu_GBps, d2h_node_GBps):
    """GPU HBM -> host DRAM for one node: its writing GPUs copying at once, capped by the node's
    measured total."""
    return minimum(writers_on_node * d2h_gpu_GBps, d2h_node_GBps)


@column("s")
def d2h_s(bytes_per_node, d2h_GBps):
    """Time to copy a node's shard from GPU memory to host memory."""
    return bytes_per_node / (d2h_GBps * GB)


@column("GBps")
def staging_rate_GBps(staging_kind, d2h_gpu_GBps, engine_staging_gpu_GBps, staging_gpu_GBps):
    """The engine's staging copy per GPU: pinned memory at the link's rate (d2h_per_gpu); pageable or shared
    memory at the engine's rate where known, else the SKU's staging_per_gpu, never above the link's."""
    return where(
        staging_kind == "pinned",
        d2h_gpu_GBps,
        minimum(
            where(known(engine_staging_gpu_GBps), engine_staging_gpu_GBps, staging_gpu_GBps),
            d2h_gpu_GBps,
        ),
    )


@column("GBps")
def staging_GBps(writers_on_node, staging_rate_GBps, d2h_node_GBps):
    """GPU -> host staging copy of an async or tiered snapshot, for one node: its writing GPUs at the
    engine's staging rate, capped by the node's GPU->host total."""
    return minimum(writers_on_node * staging_rate_GBps, d2h_node_GBps)


@column("s")
def snapshot_s(
    stages_snapshot, saves_after_failure, d2h_s, bytes_per_node, staging_GBps, overlap_pct
):
    """The copy to host training waits for: a strategy that stages a snapshot (async, tiered, peer_memory,
    differential) copies it at the staging rate, less the share the engine hides behind the next forward
    and backward pass; one that saves only after a failure (jit) takes none in steady state; a sync save
    streams through pinned memory (d2h_s)."""
    return where(
        stages_snapshot,
        bytes_per_node / (staging_GBps * GB) * (1 - overlap_pct / PERCENT),
        where(saves_after_failure, 0, d2h_s),
    )


@column("s")
def nvme_s(lands_on_nvme, bytes_per_node, nvme_write_GBps):
    """Time to land a node's shard on its local NVMe, where the persist lands there first (tiered)."""
    return where(lands_on_nvme, bytes_per_node / (nvme_write_GBps * GB), 0)


@column("s")
def fixed_s(fixed_cost, sync_fixed_s, async_fixed_s, tiered_fixed_s):
    """Fixed cost of one checkpoint (coordination, file creation, staging set-up): the engine's fixed cost
    the strategy pays (peer_memory and differential the async snapshot's; jit, which takes none in steady
    state, none)."""
    return where(
        fixed_cost == "sync",
        sync_fixed_s,
        where(
            fixed_cost == "tiered", tiered_fixed_s, where(fixed_cost == "async", async_fixed_s, 0)
        ),
    )


@column("count")
def state_tensors_per_weight(
    weights_bytes_per_param, master_bytes_per_param, optimizer_bytes_per_param
):
    """Tensors a save holds per weight tensor: the weights, an fp32 master copy where the recipe keeps
    one, and the optimizer's states (fp32: 4 B each; Adam's two moments 2)."""
    return (
        where(weights_bytes_per_param > 0, 1, 0)
        + where(master_bytes_per_param > 0, 1, 0)
        + optimizer_bytes_per_param / 4
    )


@column("count")
def state_tensors(layers, tensors_per_layer, state_tensors_per_weight):
    """Tensors a save plans, the model's: layers x tensors per layer x state tensors per weight (0
    where the model does not give its layers: no per-item planning is then counted)."""
    return layers * tensors_per_layer * state_tensors_per_weight


@column("count")
def chunks_per_tensor(training_gpus, pp):
    """Ranks that hold a part of each tensor and propose it to the plan: those of its pipeline stage
    (tensor- and data-parallel shards, or replicas a deduplication then drops); at least the one
    rank that holds it (fewer GPUs than stages would make the pairwise validation negative)."""
    return maximum(training_gpus / pp, 1)


@column("count")
def write_items(state_tensors, chunks_per_tensor):
    """Write items the first save's plan gathers, deduplicates and records at one rank: every tensor's
    chunk on every rank of its stage."""
    return state_tensors * chunks_per_tensor


@column("s")
def validation_s(per_chunk_pair_s, state_tensors, chunks_per_tensor):
    """Validation of the global plan where the engine checks each tensor's chunks pairwise for overlap
    (DCP before pytorch/pytorch PR #166820): per pair x tensors x chunks (chunks - 1) / 2."""
    return per_chunk_pair_s * state_tensors * chunks_per_tensor * (chunks_per_tensor - 1) / 2


@column("s")
def first_coordination_s(
    training_gpus,
    coordination_constant_s,
    coordination_per_rank_s,
    coordination_per_rank2_s,
    per_write_item_s,
    write_items,
    validation_s,
):
    """Coordination of the first save: the engine's constant, plus per rank x the job's ranks (one per
    training GPU), plus per rank squared x ranks^2, plus per write item x the write items, plus the
    pairwise validation of the plan."""
    return (
        coordination_constant_s
        + coordination_per_rank_s * training_gpus
        + coordination_per_rank2_s * training_gpus * training_gpus
        + per_write_item_s * write_items
        + validation_s
    )


@column("s")
def coordination_s(first_coordination_s, training_gpus, cached_constant_s, cached_per_rank_s):
    """Coordination of a save in steady state (every save but the first): with cached plans the cached
    constant plus per rank x ranks, else as the first save."""
    return where(
        known(cached_constant_s),
        cached_constant_s + cached_per_rank_s * training_gpus,
        first_coordination_s,
    )


@column("s")
def blocking_coordination_s(
    saves_after_failure, blocks_for_persist, coordination_blocks, coordination_s
):
    """The part of the coordination training waits for: all of a save training waits for (sync); a
    background save's where the engine plans before training resumes; none where the strategy saves
    only after a failure (jit)."""
    return where(
        saves_after_failure, 0, where(blocks_for_persist | coordination_blocks, coordination_s, 0)
    )


@column("s")
def metadata_s(files_per_rank, per_file_s):
    """Creating each writing rank's files on the tier (ranks create theirs at once)."""
    return files_per_rank * per_file_s
