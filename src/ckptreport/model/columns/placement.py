"""How a save spreads over GPUs and nodes: replicas, shards, the heaviest rank and node, the bytes
written and the share a durable save writes."""

from __future__ import annotations

from ..expr import PERCENT, ceil, floor, maximum, minimum, where
from .define import column, section

section("Placement over GPUs and nodes")


@column("count")
def dp_ranks(gpus, tp, pp):
    """Data-parallel replicas: whole replicas of tensor x pipeline parallel ranks in the GPUs, rounded
    down as planners do (a third of a replica trains nothing); at least one."""
    return maximum(floor(gpus / (tp * pp)), 1)


@column("count")
def training_gpus(gpus, dp_ranks, tp, pp):
    """GPUs that train and hold the state: the whole replicas (all GPUs where tp x pp divides them)."""
    return minimum(dp_ranks * tp * pp, gpus)


@column("count")
def idle_gpus(gpus, training_gpus):
    """GPUs of the cluster left over when tp x pp does not divide it: they stand idle, and are paid for."""
    return gpus - training_gpus


@column("count")
def nodes(gpus, gpus_per_node):
    """Nodes the job occupies."""
    return ceil(gpus / gpus_per_node)


@column("count")
def gpus_on_node(gpus, gpus_per_node):
    """GPUs writing from one node (fewer than gpus_per_node only for a job smaller than a node)."""
    return minimum(gpus, gpus_per_node)


@column("bytes")
def bytes_per_gpu(ckpt_bytes, training_gpus):
    """Bytes each training GPU writes on average."""
    return ckpt_bytes / training_gpus


@column("count")
def stage_params_max(params, layers, hidden, vocab, pp):
    """Parameters of the heaviest pipeline stage: its share of the layers plus the embedding (first
    stage) or output layer (last stage), vocab x hidden each; all of them without pipelining (whole
    parameters, rounded up)."""
    return ceil(
        where(
            (pp > 1) & (layers > 0),
            ceil(layers / pp) * (params - 2 * vocab * hidden) / maximum(layers, 1) + vocab * hidden,
            params / pp,
        )
    )


@column("label")
def save_sharding(sharding, replicated):
    """How the save splits the state over ranks: the model's sharding, or balanced where the engine spreads
    replicated state over the data-parallel replicas (a fully parallel save)."""
    return where((replicated == "balanced") & (sharding != "fully_sharded"), "balanced", sharding)


def _rank_bytes(
    save_sharding,
    params,
    sharded_bytes_per_param,
    training_gpus,
    stage_params,
    tp,
    dp_ranks,
    weights,
):
    """One rank's share of the sharded state, on a stage of ``stage_params`` (not a column: the heaviest
    and the lightest rank both read it)."""
    rank_params = stage_params / tp
    shared = rank_params * weights + rank_params * (sharded_bytes_per_param - weights) / dp_ranks
    return where(
        save_sharding == "fully_sharded",
        params * sharded_bytes_per_param / training_gpus,
        where(
            save_sharding == "balanced",
            rank_params * sharded_bytes_per_param / dp_ranks,
            where(save_sharding == "replica0", rank_params * sharded_bytes_per_param, shared),
        ),
    )


@column("bytes")
def shard_bytes_max(
    save_sharding,
    params,
    sharded_bytes_per_param,
    training_gpus,
    stage_params_max,
    tp,
    dp_ranks,
    weights_bytes_per_param,
    grads_bytes_per_param,
):
    """The heaviest rank's share of the sharded state: fully_sharded splits it evenly; replica0 has one
    data-parallel replica write it all; optimizer_sharded (ZeRO-1, distributed optimizer) has replica 0
    write the weights and every replica its share of master copy and optimizer states; balanced spreads
    a stage's state over its data-parallel replicas."""
    return _rank_bytes(
        save_sharding,
        params,
        sharded_bytes_per_param,
        training_gpus,
        stage_params_max,
        tp,
        dp_ranks,
        weights_bytes_per_param + grads_bytes_per_param,
    )


@column("bytes")
def bytes_per_gpu_max(shard_bytes_max, consolidated_bytes):
    """The heaviest rank, which sets the time: its share of the sharded state, plus the consolidated copy of
    the weights where the recipe saves one (rank 0 writes it)."""
    return shard_bytes_max + consolidated_bytes


@column("count")
def stage_params_min(params, layers, hidden, vocab, pp):
    """Parameters of the lightest pipeline stage: a middle stage's share of the layers rounded down
    (with two stages, one edge stage: its layers and the embedding or output layer); all of them
    without pipelining (whole parameters, rounded down)."""
    edge = where(pp > 2, 0, vocab * hidden)
    return floor(
        where(
            (pp > 1) & (layers > 0),
            floor(layers / pp) * (params - 2 * vocab * hidden) / maximum(layers, 1) + edge,
            params / pp,
        )
    )


@column("bytes")
def stage_bytes_first(stage_params_max, sharded_bytes_per_param):
    """Bytes of the first pipeline stage (its layers and the embedding), all of its ranks together."""
    return stage_params_max * sharded_bytes_per_param


@column("bytes")
def stage_bytes_middle(stage_params_min, sharded_bytes_per_param, pp):
    """Bytes of the lightest middle pipeline stage, all of its ranks together (0: fewer than three stages)."""
    return where(pp > 2, stage_params_min * sharded_bytes_per_param, 0)


@column("bytes")
def stage_bytes_last(stage_params_max, sharded_bytes_per_param):
    """Bytes of the last pipeline stage (its layers and the output layer), all of its ranks together."""
    return stage_params_max * sharded_bytes_per_param


@column("bytes")
def bytes_per_gpu_min(
    save_sharding,
    params,
    sharded_bytes_per_param,
    training_gpus,
    stage_params_min,
    tp,
    dp_ranks,
    weights_bytes_per_param,
    grads_bytes_per_param,
):
    """The lightest writing rank (a middle pipeline stage's, never rank 0's consolidated copy): as
    shard_bytes_max, for the lightest stage."""
    return _rank_bytes(
        save_sharding,
        params,
        sharded_bytes_per_param,
        training_gpus,
        stage_params_min,
        tp,
        dp_ranks,
        weights_bytes_per_param + grads_bytes_per_param,
    )


@column("bool")
def replica0_writes(save_sharding, replicated):
    """Whether only data-parallel replica 0 writes (replica0 sharding, and an engine that writes replicated
    state once)."""
    return (save_sharding == "replica0") & (replicated != "every")


@column("count")
def nodes_writing(replica0_writes, training_gpus, tp, pp, gpus_per_node):
    """Nodes that write: all that train, or where replica 0 writes alone only those holding replica 0."""
    return ceil(
        where(replica0_writes, minimum(tp * pp, training_gpus), training_gpus) / gpus_per_node
    )


@column("count")
def writers_on_node(replica0_writes, gpus_on_node, tp, pp):
    """GPUs of the heaviest node that write: all of them, or where replica 0 writes alone only its tp x pp
    ranks (a tp1 pp4 job on 8-GPU nodes: 4 of the 8)."""
    return where(replica0_writes, minimum(tp * pp, gpus_on_node), gpus_on_node)


@column("bytes")
def bytes_per_node(shard_bytes_max, writers_on_node, consolidated_bytes):
    """Bytes the heaviest node writes: its writing GPUs at the heaviest rank's share, plus the consolidated
    copy where rank 0 writes one."""
    return shard_bytes_max * writers_on_node + consolidated_bytes


@column("bytes")
def written_bytes(
    ckpt_bytes,
    replicated,
    sharding,
    dp_ranks,
    params,
    sharded_bytes_per_param,
    weights_bytes_per_param,
    grads_bytes_per_param,
):
    """Bytes a save writes to the tier: the checkpoint, plus a copy of the replicated state per further
    data-parallel replica where the engine does not remove it (replicated: every)."""
    shared = where(
        sharding == "replica0",
        params * sharded_bytes_per_param,
        where(
            sharding == "optimizer_sharded",
            params * (weights_bytes_per_param + grads_bytes_per_param),
            0,
        ),
    )
    return ckpt_bytes + where(replicated == "every", (dp_ranks - 1) * shared, 0)


@column("count")
def durable_every_saves(durable_every_nth, durable_every):
    """Every how many saves one reaches the durable tier: durable_every (N) where only every N-th save does
    (peer_memory), else every save."""
    return where(durable_every_nth, durable_every, 1)


@column("pct")
def durable_share_pct(saves_differences, full_every, diff_fraction_pct):
    """Share of the checkpoint one durable save writes, on average: a strategy that saves differences
    (differential) writes it whole every full_every saves (K) and a difference (diff_fraction) between,
    (1 + (K - 1) x fraction) / K; the others write it whole."""
    return (
        where(
            saves_differences, (1 + (full_every - 1) * diff_fraction_pct / PERCENT) / full_every, 1
        )
        * PERCENT
    )


@column("bytes")
def durable_bytes(written_bytes, durable_share_pct):
    """Bytes one durable save writes to the tier, on average (differences between full saves write less)."""
    return written_bytes * durable_share_pct / PERCENT


@column("bytes")
def durable_node_bytes(bytes_per_node, durable_share_pct):
    """Bytes the heaviest node writes to the tier in one durable save, on average."""
    return bytes_per_node * durable_share_pct / PERCENT
