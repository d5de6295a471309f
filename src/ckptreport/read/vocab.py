"""The words of the model's vocabularies, each list spelt once (and imported cheaply, by the CLI too). The
strategies are the strategy table's (``strategies``)."""

TIER_KINDS: tuple[str, ...] = ("parallel_fs", "cloud_fs", "object_store", "local_nvme")
SHARDINGS: tuple[str, ...] = ("fully_sharded", "optimizer_sharded", "replica0")
STAGINGS: tuple[str, ...] = (
    "pinned",
    "pageable",
    "shared_memory",
)  # where an engine stages a snapshot
REPLICATED: tuple[str, ...] = (
    "replica0",
    "balanced",
    "every",
)  # who writes state that replicas share
BASES: tuple[str, ...] = (
    "spec",
    "measured",
    "derived",
    "assumption",
    "input",
)  # what a figure rests on
PAPERS: tuple[str, ...] = ("A4", "Letter")
