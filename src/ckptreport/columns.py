"""The model: one small function per derived column, named after it, its parameters named after
the columns it reads. The engine evaluates them with numpy; ``explain`` and the workbook read the
same functions as formulas (see ``expr``). Units are in the names: bytes, seconds (``_s``), GB/s
(``_GBps``, 1 GB = 1e9 bytes), percent (``_pct``), US dollars (``_usd``).

The order of definition is the order of evaluation; a column may read inputs and earlier columns.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from .expr import DAY, GB, HOUR, INF, PERCENT, TERA, THOUSAND, TIB, Named, ceil, floor, isna, known, largest, maximum, minimum, sqrt, where
from .inputs import INPUTS
from .units import COLUMN_UNITS, INF_FMT

DAYS_PER_MONTH = 365.25 / 12  # storage is priced per month; a run lasts days
SECONDS_PER_MONTH = Named(DAYS_PER_MONTH * 86400.0, "SECONDS_PER_MONTH")
MONTHS_PER_YEAR = Named(12.0, "MONTHS_PER_YEAR")
# A figure meets its target within a billionth of it: an option sized to land on the target exactly lands
# on it up to the last bits of the arithmetic, which two spreadsheets (and numpy) round alike only so far.
WITHIN_TARGET = Named(1 + 1e-9, "WITHIN_TARGET")


@dataclass(frozen=True)
class Column:
    name: str
    unit: str  # a key of units.COLUMN_UNITS: bytes, s, GBps, pct, usd, days, count, B/param, label, bool
    doc: str
    fn: Callable
    params: tuple[str, ...]
    section: str
    excel: str | None = None  # a number format of its own, else the unit's
    infinite: str = "unbounded"  # how an infinite value reads


COLUMNS: dict[str, Column] = {}


_section = ["Size"]


def section(title: str) -> None:
    """Start a group of columns (explain and the README print them under this title)."""
    _section[0] = title


def column(unit: str, *, excel: str | None = None, infinite: str = "unbounded"):
    """Register the decorated function as the definition of the column it is named after."""

    def register(fn: Callable) -> Callable:
        params = tuple(inspect.signature(fn).parameters)
        for p in params:
            if p not in INPUTS and p not in COLUMNS:
                raise NameError(f"{fn.__name__} reads {p!r}, which is neither an input nor an earlier column")
        if fn.__name__ in INPUTS or fn.__name__ in COLUMNS:
            raise NameError(f"column {fn.__name__!r} is defined twice")
        if unit not in COLUMN_UNITS:
            raise NameError(f"{fn.__name__}: unknown unit {unit!r}; known: {', '.join(COLUMN_UNITS)}")
        doc = " ".join((inspect.getdoc(fn) or "").split())
        COLUMNS[fn.__name__] = Column(fn.__name__, unit, doc, fn, params, _section[0], excel, infinite)
        return fn

    return register


section("Size")

@column("B/param")
def consolidated_saved_bytes_per_param(consolidated_bytes_per_param, engine_consolidates, weights_bytes_per_param):
    """Bytes per parameter of the consolidated copy saved: the recipe's, or the weights' dtype where the
    engine writes a consolidated copy and the recipe names none."""
    return where(engine_consolidates & (consolidated_bytes_per_param == 0), weights_bytes_per_param,
                 consolidated_bytes_per_param)


@column("B/param")
def recipe_bytes_per_param(weights_bytes_per_param, master_bytes_per_param, optimizer_bytes_per_param,
                           grads_bytes_per_param, consolidated_saved_bytes_per_param):
    """Bytes the recipe saves per parameter: weights + master copy + optimizer states + gradients + a
    consolidated copy of the weights."""
    return (weights_bytes_per_param + master_bytes_per_param + optimizer_bytes_per_param + grads_bytes_per_param
            + consolidated_saved_bytes_per_param)


@column("B/param")
def bytes_per_param(checkpoint_size_bytes, params, model_bytes_per_param, recipe_bytes_per_param):
    """Bytes the checkpoint holds per parameter: the model's checkpoint_size / params, or its bytes_per_param,
    where given; else the recipe's."""
    return where(known(checkpoint_size_bytes), checkpoint_size_bytes / params,
                 where(known(model_bytes_per_param), model_bytes_per_param, recipe_bytes_per_param))


@column("bytes")
def weights_bytes(params, weights_bytes_per_param):
    """Checkpoint bytes holding the model weights."""
    return params * weights_bytes_per_param


@column("bytes")
def master_bytes(params, master_bytes_per_param):
    """Checkpoint bytes holding the fp32 master copy of the weights."""
    return params * master_bytes_per_param


@column("bytes")
def optimizer_bytes(params, optimizer_bytes_per_param):
    """Checkpoint bytes holding the optimizer states."""
    return params * optimizer_bytes_per_param


@column("bytes")
def grads_bytes(params, grads_bytes_per_param):
    """Checkpoint bytes holding gradients (only recipes that save them)."""
    return params * grads_bytes_per_param


@column("bytes")
def consolidated_bytes(params, consolidated_saved_bytes_per_param):
    """The consolidated copy of the weights one rank writes (recipes that save one, or engines that write one)."""
    return params * consolidated_saved_bytes_per_param


@column("bytes")
def ckpt_bytes(params, bytes_per_param):
    """Size of one checkpoint (MoE: every expert is saved)."""
    return params * bytes_per_param


@column("bytes")
def other_bytes(ckpt_bytes, weights_bytes, master_bytes, optimizer_bytes, grads_bytes, consolidated_bytes):
    """What a model's checkpoint_size or bytes_per_param holds beyond the recipe's components (negative:
    less); 0 without an override."""
    return ckpt_bytes - (weights_bytes + master_bytes + optimizer_bytes + grads_bytes + consolidated_bytes)


@column("B/param")
def sharded_bytes_per_param(bytes_per_param, consolidated_saved_bytes_per_param):
    """Bytes per parameter the ranks split between them: all but the consolidated copy (never negative: a
    size given below the copy is all copy)."""
    return maximum(bytes_per_param - consolidated_saved_bytes_per_param, 0)


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
    return ceil(where((pp > 1) & (layers > 0),
                      ceil(layers / pp) * (params - 2 * vocab * hidden) / maximum(layers, 1) + vocab * hidden,
                      params / pp))


@column("label")
def save_sharding(sharding, replicated):
    """How the save splits the state over ranks: the model's sharding, or balanced where the engine spreads
    replicated state over the data-parallel replicas (a fully parallel save)."""
    return where((replicated == "balanced") & (sharding != "fully_sharded"), "balanced", sharding)


def _rank_bytes(save_sharding, params, sharded_bytes_per_param, training_gpus, stage_params, tp, dp_ranks, weights):
    """One rank's share of the sharded state, on a stage of ``stage_params`` (not a column: the heaviest
    and the lightest rank both read it)."""
    rank_params = stage_params / tp
    shared = rank_params * weights + rank_params * (sharded_bytes_per_param - weights) / dp_ranks
    return where(save_sharding == "fully_sharded", params * sharded_bytes_per_param / training_gpus,
                 where(save_sharding == "balanced", rank_params * sharded_bytes_per_param / dp_ranks,
                       where(save_sharding == "replica0", rank_params * sharded_bytes_per_param, shared)))


@column("bytes")
def shard_bytes_max(save_sharding, params, sharded_bytes_per_param, training_gpus, stage_params_max, tp, dp_ranks,
                    weights_bytes_per_param, grads_bytes_per_param):
    """The heaviest rank's share of the sharded state: fully_sharded splits it evenly; replica0 has one
    data-parallel replica write it all; optimizer_sharded (ZeRO-1, distributed optimizer) has replica 0
    write the weights and every replica its share of master copy and optimizer states; balanced spreads
    a stage's state over its data-parallel replicas."""
    return _rank_bytes(save_sharding, params, sharded_bytes_per_param, training_gpus, stage_params_max, tp, dp_ranks,
                       weights_bytes_per_param + grads_bytes_per_param)


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
    return floor(where((pp > 1) & (layers > 0),
                       floor(layers / pp) * (params - 2 * vocab * hidden) / maximum(layers, 1) + edge,
                       params / pp))


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
def bytes_per_gpu_min(save_sharding, params, sharded_bytes_per_param, training_gpus, stage_params_min, tp, dp_ranks,
                      weights_bytes_per_param, grads_bytes_per_param):
    """The lightest writing rank (a middle pipeline stage's, never rank 0's consolidated copy): as
    shard_bytes_max, for the lightest stage."""
    return _rank_bytes(save_sharding, params, sharded_bytes_per_param, training_gpus, stage_params_min, tp, dp_ranks,
                       weights_bytes_per_param + grads_bytes_per_param)


@column("bool")
def replica0_writes(save_sharding, replicated):
    """Whether only data-parallel replica 0 writes (replica0 sharding, and an engine that writes replicated
    state once)."""
    return (save_sharding == "replica0") & (replicated != "every")


@column("count")
def nodes_writing(replica0_writes, training_gpus, tp, pp, gpus_per_node):
    """Nodes that write: all that train, or where replica 0 writes alone only those holding replica 0."""
    return ceil(where(replica0_writes, minimum(tp * pp, training_gpus), training_gpus) / gpus_per_node)


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
def written_bytes(ckpt_bytes, replicated, sharding, dp_ranks, params, sharded_bytes_per_param,
                  weights_bytes_per_param, grads_bytes_per_param):
    """Bytes a save writes to the tier: the checkpoint, plus a copy of the replicated state per further
    data-parallel replica where the engine does not remove it (replicated: every)."""
    shared = where(sharding == "replica0", params * sharded_bytes_per_param,
                   where(sharding == "optimizer_sharded", params * (weights_bytes_per_param + grads_bytes_per_param), 0))
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
    return where(saves_differences, (1 + (full_every - 1) * diff_fraction_pct / PERCENT) / full_every,
                 1) * PERCENT


@column("bytes")
def durable_bytes(written_bytes, durable_share_pct):
    """Bytes one durable save writes to the tier, on average (differences between full saves write less)."""
    return written_bytes * durable_share_pct / PERCENT


@column("bytes")
def durable_node_bytes(bytes_per_node, durable_share_pct):
    """Bytes the heaviest node writes to the tier in one durable save, on average."""
    return bytes_per_node * durable_share_pct / PERCENT


section("The copy to host, and what the target demands")

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
    return where(staging_kind == "pinned", d2h_gpu_GBps,
                 minimum(where(known(engine_staging_gpu_GBps), engine_staging_gpu_GBps, staging_gpu_GBps),
                         d2h_gpu_GBps))


@column("GBps")
def staging_GBps(writers_on_node, staging_rate_GBps, d2h_node_GBps):
    """GPU -> host staging copy of an async or tiered snapshot, for one node: its writing GPUs at the
    engine's staging rate, capped by the node's GPU->host total."""
    return minimum(writers_on_node * staging_rate_GBps, d2h_node_GBps)


@column("s")
def snapshot_s(stages_snapshot, saves_after_failure, d2h_s, bytes_per_node, staging_GBps, overlap_pct):
    """The copy to host training waits for: a strategy that stages a snapshot (async, tiered, peer_memory,
    differential) copies it at the staging rate, less the share the engine hides behind the next forward
    and backward pass; one that saves only after a failure (jit) takes none in steady state; a sync save
    streams through pinned memory (d2h_s)."""
    return where(stages_snapshot, bytes_per_node / (staging_GBps * GB) * (1 - overlap_pct / PERCENT),
                 where(saves_after_failure, 0, d2h_s))


@column("s")
def nvme_s(lands_on_nvme, bytes_per_node, nvme_write_GBps):
    """Time to land a node's shard on its local NVMe, where the persist lands there first (tiered)."""
    return where(lands_on_nvme, bytes_per_node / (nvme_write_GBps * GB), 0)


@column("s")
def fixed_s(fixed_cost, sync_fixed_s, async_fixed_s, tiered_fixed_s):
    """Fixed cost of one checkpoint (coordination, file creation, staging set-up): the engine's fixed cost
    the strategy pays (peer_memory and differential the async snapshot's; jit, which takes none in steady
    state, none)."""
    return where(fixed_cost == "sync", sync_fixed_s, where(fixed_cost == "tiered", tiered_fixed_s,
                                                           where(fixed_cost == "async", async_fixed_s, 0)))


@column("s")
def first_coordination_s(training_gpus, coordination_constant_s, coordination_per_rank_s, coordination_per_rank2_s):
    """Coordination of the first save: the engine's constant, plus per rank x the job's ranks (one per
    training GPU), plus per rank squared x ranks^2 (pairwise plan validation)."""
    return (coordination_constant_s + coordination_per_rank_s * training_gpus
            + coordination_per_rank2_s * training_gpus * training_gpus)


@column("s")
def coordination_s(first_coordination_s, training_gpus, cached_constant_s, cached_per_rank_s):
    """Coordination of a save in steady state (every save but the first): with cached plans the cached
    constant plus per rank x ranks, else as the first save."""
    return where(known(cached_constant_s), cached_constant_s + cached_per_rank_s * training_gpus,
                 first_coordination_s)


@column("s")
def blocking_coordination_s(saves_after_failure, blocks_for_persist, coordination_blocks, coordination_s):
    """The part of the coordination training waits for: all of a save training waits for (sync); a
    background save's where the engine plans before training resumes; none where the strategy saves
    only after a failure (jit)."""
    return where(saves_after_failure, 0, where(blocks_for_persist | coordination_blocks, coordination_s, 0))


@column("s")
def metadata_s(files_per_rank, per_file_s):
    """Creating each writing rank's files on the tier (ranks create theirs at once)."""
    return files_per_rank * per_file_s


@column("s")
def write_budget_s(saves_after_failure, blocks_for_persist, target_overhead_pct, interval_s, fixed_s, snapshot_s,
                   nvme_s, coordination_s, blocking_coordination_s, metadata_s, durable_every_saves):
    """Time the tier write may take and still meet the target: a save training waits for (sync), what the
    target leaves after the fixed cost, the copy to host, the coordination and the files' metadata; the
    background strategies, the time to the next durable save (the interval, peer_memory's durable_every
    intervals) less the NVMe landing, the coordination left to the persist and the metadata, if the
    snapshot and the coordination it waits for meet the target; without a periodic save (jit), no limit.
    Zero when nothing is left (never negative)."""
    allowed_s = target_overhead_pct / PERCENT * interval_s - fixed_s
    background = coordination_s - blocking_coordination_s
    return where(saves_after_failure, INF,
                 maximum(where(blocks_for_persist, allowed_s - snapshot_s - coordination_s - metadata_s,
                               where(snapshot_s + blocking_coordination_s <= allowed_s,
                                     interval_s * durable_every_saves - nvme_s - background - metadata_s, 0)), 0))


@column("GBps", infinite="unreachable")
def required_write_GBps(write_budget_s, durable_bytes):
    """Aggregate tier write bandwidth that meets the target (unreachable when the copy to host alone misses
    it; none for jit, which writes only after a failure)."""
    return where(write_budget_s > 0, durable_bytes / write_budget_s / GB, INF)


@column("GBps", infinite="unreachable")
def required_node_write_GBps(write_budget_s, durable_node_bytes):
    """Per-node write bandwidth (NIC and tier share) that meets the target."""
    return where(write_budget_s > 0, durable_node_bytes / write_budget_s / GB, INF)


section("Storage bought: capacity and bandwidth")

@column("bytes")
def capacity_needed_bytes(saves_differences, saves_after_failure, retention, written_bytes, full_every,
                          diff_fraction_pct, headroom_pct):
    """Capacity the plan needs on the tier: the retained checkpoints as written (one that saves
    differences with its chain: the full save and up to full_every - 1 differences; one that saves only
    after a failure keeps only the state it writes then), plus headroom."""
    kept = where(saves_differences, retention * (1 + (full_every - 1) * diff_fraction_pct / PERCENT),
                 where(saves_after_failure, 1, retention))
    return kept * written_bytes * (1 + headroom_pct / PERCENT)


@column("bool")
def sized_per_TiB(tier_write_per_TiB_GBps, tier_capacity_bytes):
    """A per-TiB tier without a fixed capacity: the tool buys the TiB that capacity and bandwidth need."""
    return known(tier_write_per_TiB_GBps) & isna(tier_capacity_bytes)


@column("bytes")
def provisioned_bytes(sized_per_TiB, capacity_needed_bytes, tier_min_capacity_bytes, required_write_GBps,
                      tier_write_per_TiB_GBps):
    """Capacity bought: what the plan stores; a per-TiB tier buys more when the bandwidth the target
    needs takes more TiB (never less than its smallest size)."""
    for_bandwidth = where(required_write_GBps < INF, required_write_GBps / tier_write_per_TiB_GBps * TIB, 0)
    return where(sized_per_TiB,
                 maximum(maximum(capacity_needed_bytes, tier_min_capacity_bytes), for_bandwidth),
                 capacity_needed_bytes)


@column("label")
def sized_for(sized_per_TiB, provisioned_bytes, capacity_needed_bytes):
    """What set the capacity bought: the checkpoints kept, or (a per-TiB tier) the bandwidth or its smallest size."""
    return where(sized_per_TiB & (provisioned_bytes > capacity_needed_bytes), "bandwidth", "capacity")


@column("GBps")
def request_ceiling_GBps(puts_per_s_per_prefix, prefixes, part_size_bytes):
    """Object stores: the most the request-rate ceiling lets through: requests/s per prefix x prefixes x part size."""
    return where((puts_per_s_per_prefix < INF) & (part_size_bytes < INF),
                 puts_per_s_per_prefix * prefixes * part_size_bytes / GB, INF)


@column("GBps")
def tier_bought_GBps(sized_per_TiB, tier_write_per_TiB_GBps, provisioned_bytes, tier_write_GBps,
                     request_ceiling_GBps):
    """Aggregate write bandwidth of the storage as bought: a per-TiB tier's rate x the TiB bought, else
    the tier's figure; capped by an object store's request ceiling."""
    return minimum(where(sized_per_TiB, tier_write_per_TiB_GBps * provisioned_bytes / TIB, tier_write_GBps),
                   request_ceiling_GBps)


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
    return where(limited, maximum(ceil(required_write_GBps * GB / (puts_per_s_per_prefix * part_size_bytes)), 1), 0)


section("The write chain, per node")

@column("GBps")
def tier_node_GBps(tier_kind, tier_node_write_GBps, nvme_write_GBps):
    """Most one node can write to the tier (a local_nvme tier: the node's own drives)."""
    return where(tier_kind == "local_nvme", minimum(nvme_write_GBps, tier_node_write_GBps), tier_node_write_GBps)


@column("GBps", excel=INF_FMT + '#,##0.000" GB/s"')
def tier_share_GBps(tier_node_GBps, tier_bought_GBps, nodes_writing):
    """What one node gets from the tier while every writing node writes: its cap, or an even share."""
    return minimum(tier_node_GBps, tier_bought_GBps / nodes_writing)


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
    return maximum(durable_node_bytes / (writers_GBps * GB),
                   bytes_per_gpu_max * durable_share_pct / PERCENT / (writer_GBps * GB))


@column("s")
def tier_s(durable_bytes, tier_bought_GBps, durable_node_bytes, tier_node_GBps):
    """Time the tier needs: all a durable save writes at its aggregate bandwidth, or the heaviest node's
    part at the most one node gets, whichever is longer (nodes that finish early free bandwidth)."""
    return maximum(durable_bytes / (tier_bought_GBps * GB), durable_node_bytes / (tier_node_GBps * GB))


@column("s")
def write_s(coordination_s, blocking_coordination_s, blocks_for_persist, metadata_s, nic_s, writer_s, tier_s):
    """Time to persist from host memory: the coordination (a background save's only where it is not done
    before training resumes), the files' metadata, then the writers stream through the NIC into the
    tier; the slowest sets the pace."""
    persist = where(blocks_for_persist, coordination_s, coordination_s - blocking_coordination_s)
    return persist + metadata_s + maximum(maximum(nic_s, writer_s), tier_s)


@column("label")
def bottleneck(snapshot_s, nvme_s, nic_s, writer_s, tier_s, coordination_s, metadata_s):
    """The slowest part of the chain: the d2h copy, nvme, nic, writer, tier, the coordination, or the
    files' metadata."""
    return largest(d2h=snapshot_s, nvme=nvme_s, nic=nic_s, writer=writer_s, tier=tier_s,
                   coordination=coordination_s, metadata=metadata_s)


@column("bool")
def extrapolated(training_gpus, largest_case_ranks):
    """Whether the job is more than 10x the largest published case the engine's terms rest on: its
    coordination is then an extrapolation."""
    return training_gpus > 10 * largest_case_ranks


section("Strategy: what training waits for")

@column("s")
def checkpoint_cost_s(saves_after_failure, blocks_for_persist, fixed_s, snapshot_s, write_s, blocking_coordination_s,
                      jit_overhead_pct, interval_s):
    """Time training stops for one checkpoint: the fixed cost, then a save training waits for (sync) copies
    and persists; the background strategies stage a snapshot to host (and wait for the coordination
    where the engine plans first); one that saves only after a failure (jit) pays its failure detection
    (jit_overhead of the interval)."""
    return where(saves_after_failure, jit_overhead_pct / PERCENT * interval_s,
                 fixed_s + snapshot_s + where(blocks_for_persist, write_s, blocking_coordination_s))


@column("s")
def peer_s(copies_to_peers, peer_replicas, bytes_per_node, peer_nic_GBps):
    """Time to copy a node's snapshot to its peer_replicas peers over the peer network, where the strategy
    copies to peers (peer_memory)."""
    return where(copies_to_peers, peer_replicas * bytes_per_node / (peer_nic_GBps * GB), 0)


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
    return (maximum(peer_s - interval_s, 0)
            + maximum(persist_s - interval_s * durable_every_saves, 0) / durable_every_saves)


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
def host_memory_needed_bytes(stages_snapshot, copies_to_peers, bytes_per_node, buffers, peer_replicas):
    """Host memory a checkpoint stages per node: a strategy that stages a snapshot its buffers, one that
    copies to peers (peer_memory) also the copies it holds for them; a sync save streams through and
    jit stages nothing."""
    return where(stages_snapshot, bytes_per_node * (buffers + where(copies_to_peers, peer_replicas, 0)), 0)


@column("bool")
def host_memory_ok(host_memory_needed_bytes, host_memory_bytes):
    """Whether the staging buffers fit in the node's host memory."""
    return host_memory_needed_bytes <= host_memory_bytes


@column("bytes")
def nvme_needed_bytes(tier_kind, lands_on_nvme, bytes_per_node, retention):
    """Node-local NVMe a checkpoint occupies: all retained ones on a local_nvme tier, one where the persist
    lands on NVMe first (tiered)."""
    return where(tier_kind == "local_nvme", bytes_per_node * retention,
                 where(lands_on_nvme, bytes_per_node, 0))


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


section("Restore after a failure")

@column("GBps")
def read_GBps(tier_read_GBps, tier_bought_GBps):
    """Aggregate read bandwidth of the tier as bought: its read figure, else its write bandwidth."""
    return where(known(tier_read_GBps), tier_read_GBps, tier_bought_GBps)


@column("GBps")
def node_read_GBps(tier_kind, nvme_read_GBps, nvme_write_GBps, tier_node_read_GBps, tier_node_GBps,
                   storage_nic_GBps):
    """Most one node reads back: a local_nvme tier, the node's drives; else the tier's per-node read (or
    write) figure, capped by the storage NIC."""
    local = where(known(nvme_read_GBps), nvme_read_GBps, nvme_write_GBps)
    remote = minimum(where(known(tier_node_read_GBps), tier_node_read_GBps, tier_node_GBps), storage_nic_GBps)
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
    return where(saves_differences, 1 + (full_every - 1) / 2 * diff_fraction_pct / PERCENT, 1) * PERCENT


@column("s")
def restore_tier_s(ckpt_bytes, read_GBps, bytes_per_node, node_read_GBps, restore_chain_pct, restore_host_s):
    """Restore from the durable tier: every node reads its shard back at once (the whole checkpoint at the
    tier's read bandwidth, or the heaviest node's shard at its read rate, whichever is longer; a
    differential chain in proportion), then copies it to the GPUs."""
    return (maximum(ckpt_bytes / (read_GBps * GB), bytes_per_node / (node_read_GBps * GB)) * restore_chain_pct / PERCENT
            + restore_host_s)


@column("s")
def restore_peer_s(bytes_per_node, peer_nic_GBps, restore_host_s):
    """peer_memory, a lost node: its replacement reads the node's snapshot from a peer over the peer
    network, then copies it to the GPUs."""
    return bytes_per_node / (peer_nic_GBps * GB) + restore_host_s


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
def restore_s(host_restore_pct, restore_host_s, peer_restore_pct, restore_peer_s, restore_tier_s, failure_save_s):
    """Expected time to read the checkpoint back after a failure, over the recovery mix (host memory, a
    peer, the durable tier), plus jit's save after the failure."""
    tier_pct = PERCENT - host_restore_pct - peer_restore_pct
    return (host_restore_pct * restore_host_s + peer_restore_pct * restore_peer_s + tier_pct * restore_tier_s) / PERCENT \
        + failure_save_s


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
    return where(ratio < 1,
                 sqrt(2 * lost_per_checkpoint_s * cluster_mtbf_s) * (1 + sqrt(ratio) / 3 + ratio / 9)
                 - lost_per_checkpoint_s,
                 cluster_mtbf_s)


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
def lost_work_s(saves_after_failure, interval_s, step_s, host_restore_pct, peer_restore_pct, durable_every_saves):
    """Training redone after a failure, on average: half an interval since the last checkpoint restored;
    failures that need the tier, half the durable_every intervals since the last durable save
    (peer_memory); a strategy that saves after the failure (jit), about one step."""
    near = (host_restore_pct + peer_restore_pct) / PERCENT
    return where(saves_after_failure, step_s,
                 interval_s / 2 * near + interval_s * durable_every_saves / 2 * (1 - near))


@column("pct")
def rework_pct(lost_work_s, restart_s, restore_s, cluster_mtbf_s):
    """Share of training lost to failures: (work redone + restart + restore) per MTBF."""
    return PERCENT * (lost_work_s + restart_s + restore_s) / cluster_mtbf_s


@column("pct")
def waste_pct(overhead_pct, rework_pct):
    """Checkpoint overhead plus rework after failures."""
    return overhead_pct + rework_pct


@column("pct")
def optimal_waste_pct(saves_after_failure, lost_per_checkpoint_s, optimal_interval_s, lost_work_s, interval_s,
                      restart_s, restore_s, cluster_mtbf_s, waste_pct):
    """Waste at the optimal interval, restart and restore included (the work redone scaled from the
    interval to the optimum); a strategy that takes no periodic checkpoint (jit) wastes the same at any
    interval."""
    return where(saves_after_failure, waste_pct,
                 PERCENT * (lost_per_checkpoint_s / optimal_interval_s
                            + (lost_work_s * optimal_interval_s / interval_s + restart_s + restore_s) / cluster_mtbf_s))


@column("bool")
def meets_target(overhead_pct, target_overhead_pct, host_memory_ok, nvme_ok, capacity_ok, layout_ok):
    """Overhead within the target (to a billionth of it, WITHIN_TARGET), and feasible: the staging fits
    in host memory and NVMe, the retained checkpoints fit on the tier, the job's layout runs the
    strategy."""
    return ((overhead_pct <= target_overhead_pct * WITHIN_TARGET) & host_memory_ok & nvme_ok & capacity_ok
            & layout_ok)


section("Run length and money")

@column("days")
def run_days(compute_s, waste_pct):
    """Wall-clock run length: compute time plus waste."""
    return compute_s * (1 + waste_pct / PERCENT) / DAY


@column("usd")
def overhead_usd(gpus, compute_s, usd_per_gpu_hour, overhead_pct):
    """GPU-hours stalled on checkpoints over the run, in dollars."""
    return gpus * compute_s / HOUR * usd_per_gpu_hour * overhead_pct / PERCENT


@column("usd")
def waste_usd(gpus, compute_s, usd_per_gpu_hour, waste_pct):
    """GPU-hours lost to checkpoint stalls and failure rework over the run, in dollars."""
    return gpus * compute_s / HOUR * usd_per_gpu_hour * waste_pct / PERCENT


@column("usd")
def run_usd(gpus, run_days, usd_per_gpu_hour):
    """GPU-hours of the whole run, in dollars."""
    return gpus * run_days * DAY / HOUR * usd_per_gpu_hour


section("Storage cost and total cost of ownership")

@column("pct")
def capex_pct_month(life_s, support_pct):
    """Bought storage: the share of its purchase price charged per month, its life spread evenly plus support."""
    return SECONDS_PER_MONTH / life_s * PERCENT + support_pct / MONTHS_PER_YEAR


@column("usd", excel='"$"#,##0.00')
def tb_usd_month(usd_per_tb_month, capex_usd_per_tb, capex_pct_month):
    """Price of one TB (1e12 bytes) for a month: the rent, else the purchase price's monthly share
    (empty when the tier has no price)."""
    return where(known(usd_per_tb_month), usd_per_tb_month, capex_usd_per_tb * capex_pct_month / PERCENT)


@column("usd", excel='"$"#,##0.00')
def GBps_usd_month(usd_per_GBps_month, capex_usd_per_GBps, capex_pct_month):
    """Price of one GB/s of write bandwidth for a month: its rent plus the purchase price's monthly share."""
    return usd_per_GBps_month + where(capex_usd_per_GBps > 0, capex_usd_per_GBps * capex_pct_month / PERCENT, 0)


@column("usd", excel='"$"#,##0.00')
def capacity_usd_month(provisioned_bytes, tb_usd_month):
    """The capacity bought, for a month."""
    return provisioned_bytes / TERA * tb_usd_month


@column("usd", excel='"$"#,##0.00')
def bandwidth_usd_month(tier_bought_GBps, GBps_usd_month):
    """The write bandwidth bought, for a month (where bandwidth is priced apart from capacity)."""
    return where(GBps_usd_month > 0, tier_bought_GBps * GBps_usd_month, 0)


@column("usd", excel='"$"#,##0.00')
def requests_usd_month(puts_per_ckpt, interval_s, usd_per_1k_puts):
    """Object stores: the write requests of a month of checkpoints."""
    return puts_per_ckpt * SECONDS_PER_MONTH / interval_s * usd_per_1k_puts / THOUSAND


@column("usd", excel='"$"#,##0.00')
def storage_usd_month(capacity_usd_month, bandwidth_usd_month, requests_usd_month):
    """Monthly cost of the storage: capacity, bandwidth and requests (empty when the tier is unpriced)."""
    return capacity_usd_month + bandwidth_usd_month + requests_usd_month


@column("usd")
def lost_gpu_usd_month(gpus, usd_per_gpu_hour, waste_pct):
    """GPU time a month of training loses to checkpointing (stalls, and rework and restarts after
    failures), at the job's $/GPU-hour."""
    return gpus * usd_per_gpu_hour * SECONDS_PER_MONTH / HOUR * waste_pct / PERCENT


@column("usd")
def total_usd_month(storage_usd_month, lost_gpu_usd_month):
    """What checkpointing costs a month: the storage, plus the GPU time it loses."""
    return storage_usd_month + lost_gpu_usd_month


@column("usd")
def storage_run_usd(storage_usd_month, run_days):
    """The storage over the run's length (empty when the tier is unpriced)."""
    return storage_usd_month * run_days * DAY / SECONDS_PER_MONTH


@column("usd")
def total_usd(storage_run_usd, waste_usd):
    """What checkpointing costs over the run: the storage plus the GPU time lost (empty when the tier
    is unpriced). Recommendations rank options by it."""
    return storage_run_usd + waste_usd


@column("bool")
def recommendable(meets_target, tier_durable, total_usd):
    """An option the recommendation may choose: it meets the target, is feasible, is durable and has a price."""
    return meets_target & tier_durable & known(total_usd)


@column("usd", infinite="not recommendable")
def choice_usd(recommendable, total_usd):
    """The option's cost as the recommendation ranks it: its total, or unbounded when it may not be chosen."""
    return where(recommendable, total_usd, INF)
