"""The words of the model's vocabularies, each list spelt once (and imported cheaply, by the CLI too)."""

STRATEGIES: tuple[str, ...] = ("sync", "async", "tiered", "peer_memory", "differential", "jit")
# The strategy an engine must implement for a layered one to run on it: peer replication and differences
# are built on its async snapshot, a just-in-time save on its sync save (plan.combinations)
BUILT_ON: dict[str, str] = {"peer_memory": "async", "differential": "async", "jit": "sync"}
TIER_KINDS: tuple[str, ...] = ("parallel_fs", "cloud_fs", "object_store", "local_nvme")
SHARDINGS: tuple[str, ...] = ("fully_sharded", "optimizer_sharded", "replica0")
STAGINGS: tuple[str, ...] = ("pinned", "pageable", "shared_memory")  # where an engine stages a snapshot
REPLICATED: tuple[str, ...] = ("replica0", "balanced", "every")  # who writes state that replicas share
BASES: tuple[str, ...] = ("spec", "measured", "derived", "assumption", "input")  # what a figure rests on
PAPERS: tuple[str, ...] = ("A4", "Letter")
# The inputs only a layered strategy reads: a sweep of one moves no other strategy's rows
READ_ONLY_BY: dict[str, tuple[str, ...]] = {
    "peer_replicas": ("peer_memory",), "durable_every": ("peer_memory",), "node_loss_pct": ("peer_memory",),
    "peer_nic_GBps": ("peer_memory",), "full_every": ("differential",), "diff_fraction_pct": ("differential",),
    "jit_overhead_pct": ("jit",), "batch_tokens": ("jit",)}
