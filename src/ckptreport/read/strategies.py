"""The strategies, declared: one table of traits, the way ``engines.yaml`` declares engines.

A strategy is how a job takes its checkpoints: whether training waits for the whole save or only for
a snapshot, where the snapshot goes, how often a save reaches the durable tier, what a restore
reads. Each is one ``Strategy`` below. The columns read its traits (``where(blocks_for_persist,
...)``), never its name; the plan's axis and its "cannot exist" rules, the loader's checks, the
engines a strategy runs on, the sweeps that move only a strategy's rows, the brief's strategy table
and the workbook's formulas all follow from the table. A new strategy is one entry here, plus the
columns that are genuinely new (README, "How the code is laid out").

The traits the columns read are inputs of the entity ``strategies`` (``inputs.STRATEGY_TRAITS``):
each is a column of the scenario frame and a cell of the workbook's Assumptions sheet.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass

FIXED_COSTS = (
    "sync",
    "async",
    "tiered",
    "none",
)  # the engine's fixed_cost a save pays (engines.*.fixed_cost)


@dataclass(frozen=True)
class Strategy:
    """One strategy and its traits. Every trait but ``name``, ``doc``, ``built_on``, ``reads`` and
    ``replicas_why`` is an input column (``inputs.STRATEGY_TRAITS``)."""

    name: str
    doc: str  # what it does, in a sentence: the README, explain, the Assumptions sheet
    built_on: str | None = None  # the strategy an engine must implement for this one to run on it
    blocks_for_persist: bool = (
        False  # training waits for the whole save: the copy to host and the persist
    )
    stages_snapshot: bool = (
        False  # copies a snapshot to host memory at the engine's staging rate; persists it after
    )
    keeps_host_copy: bool = (
        False  # the snapshot stays in host memory: a restarted process restores from it
    )
    lands_on_nvme: bool = (
        False  # the persist lands on node-local NVMe first, then drains to the tier
    )
    copies_to_peers: bool = (
        False  # copies each node's snapshot to the host memory of peer nodes (peer_replicas)
    )
    durable_every_nth: bool = False  # only every durable_every-th save reaches the durable tier
    saves_differences: bool = (
        False  # a full save every full_every, differences between: a restore reads the chain
    )
    saves_after_failure: bool = (
        False  # no periodic save: after a failure the survivors save, about a step is redone
    )
    drops_failed_replica: bool = (
        False  # a failure confined to one data-parallel replica drops it; the others train on
    )
    fixed_cost: str = "none"  # which of the engine's fixed costs a save pays (FIXED_COSTS)
    min_replicas: int = 1  # the least data-parallel replicas a job needs to run it
    replicas_why: str = (
        ""  # why, as the plan's note on rows left out says: 'a second ... to save from'
    )
    peers_below_nodes: bool = False  # a job needs more nodes than peer_replicas
    reads: tuple[
        str, ...
    ] = ()  # the inputs only this strategy reads: a sweep of one moves no other's rows

    def __post_init__(self):
        if self.fixed_cost not in FIXED_COSTS:
            raise ValueError(
                f"strategy {self.name}: fixed_cost {self.fixed_cost!r} is not one of {FIXED_COSTS}"
            )
        if self.min_replicas > 1 and not self.replicas_why:
            raise ValueError(
                f"strategy {self.name} needs {self.min_replicas} replicas: say why (replicas_why)"
            )


STRATEGIES: dict[str, Strategy] = {}


def declare(*strategies: Strategy) -> None:
    """Add strategies to the table (in order: one is built on another declared before it)."""
    for s in strategies:
        if s.name in STRATEGIES:
            raise ValueError(f"strategy {s.name!r} is declared twice")
        if s.built_on is not None and s.built_on not in STRATEGIES:
            raise ValueError(
                f"strategy {s.name} is built on {s.built_on!r}, which is not declared before it"
            )
        STRATEGIES[s.name] = s


declare(
    Strategy(
        "sync",
        "training stops while the save copies the state to host memory and writes it to the tier",
        blocks_for_persist=True,
        fixed_cost="sync",
    ),
    Strategy(
        "async",
        "training stops for a snapshot in host memory; the write to the tier runs in the background",
        stages_snapshot=True,
        keeps_host_copy=True,
        fixed_cost="async",
    ),
    Strategy(
        "tiered",
        "as async, but the background write lands on node-local NVMe first, then drains to the tier",
        stages_snapshot=True,
        keeps_host_copy=True,
        lands_on_nvme=True,
        fixed_cost="tiered",
    ),
    Strategy(
        "peer_memory",
        "an async snapshot copied to the host memory of peer_replicas peers; one save in "
        "durable_every reaches the durable tier",
        built_on="async",
        stages_snapshot=True,
        keeps_host_copy=True,
        copies_to_peers=True,
        durable_every_nth=True,
        fixed_cost="async",
        peers_below_nodes=True,
        reads=("peer_replicas", "durable_every", "node_loss_pct", "peer_nic_GBps"),
    ),
    Strategy(
        "differential",
        "an async snapshot; a full save every full_every, differences (diff_fraction of it) "
        "between, and a restore reads the chain",
        built_on="async",
        stages_snapshot=True,
        keeps_host_copy=True,
        saves_differences=True,
        fixed_cost="async",
        reads=("full_every", "diff_fraction_pct"),
    ),
    Strategy(
        "replica_recovery",
        "an async save to the durable tier at its own cadence; a failure confined to one "
        "data-parallel replica drops that replica while the others train on, and it rejoins from a "
        "healthy replica's live state (fault-tolerant HSDP, torchft); a failure beyond one replica "
        "restarts the job from the checkpoint",
        built_on="async",
        stages_snapshot=True,
        keeps_host_copy=True,
        drops_failed_replica=True,
        fixed_cost="async",
        min_replicas=2,
        replicas_why="a second data-parallel replica to train on and to copy the state from",
        reads=("replica_confined_pct", "replica_reform_s", "peer_nic_GBps"),
    ),
    Strategy(
        "jit",
        "no periodic save: after a failure the surviving replicas save the state and the job restarts "
        "from it, redoing about one step",
        built_on="sync",
        blocks_for_persist=True,
        saves_after_failure=True,
        min_replicas=2,
        replicas_why="a second data-parallel replica to save from",
        reads=("jit_overhead_pct", "batch_tokens"),
    ),
)

# The strategies the per-tier comparisons set side by side (the brief's tier table, the workbook's
# Choice and Cadence sheets, the page's tier cells): the save training waits for, and the one it does not.
BASELINE, BACKGROUND = "sync", "async"
COMPARED = (BASELINE, BACKGROUND)


def names() -> tuple[str, ...]:
    """Every declared strategy, in the table's order."""
    return tuple(STRATEGIES)


def layered() -> set[str]:
    """The strategies built on another (peer_memory and differential on async, jit on sync)."""
    return {s.name for s in STRATEGIES.values() if s.built_on is not None}


def read_only_by() -> dict[str, tuple[str, ...]]:
    """Each input only some strategies read -> those strategies (a sweep of it moves their rows only)."""
    out: dict[str, tuple[str, ...]] = {}
    for s in STRATEGIES.values():
        for name in s.reads:
            out[name] = (*out.get(name, ()), s.name)
    return out


def listed(words: tuple[str, ...]) -> str:
    """'sync, async or tiered'."""
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


@contextlib.contextmanager
def declared(*strategies: Strategy) -> Iterator[None]:
    """The table with ``strategies`` added, for the ``with`` block (a test's own strategy)."""
    declare(*strategies)
    try:
        yield
    finally:
        for s in strategies:
            STRATEGIES.pop(s.name, None)
