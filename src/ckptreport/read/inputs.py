"""Every input, declared once.

An input is a column of the scenario frame whose value comes from the models directory (or from the
plan's cross product). Its declaration says everything the rest of ckptreport needs to know of it:
its name and unit; where it lives (the entity and the YAML key, and the key's type); what it means;
what it is when the key is omitted (a default, or a value derived from other keys); which measured
metric may replace it; and how a spreadsheet formats it. From these declarations, and nothing else:

- ``schema`` builds the YAML schema of recipes, models, SKUs, tiers, engines and the plan's globals;
- the evaluator reads each entity's values (``Input.value``);
- ``load.provenance`` names the file, line, basis and source of each value;
- ``measured.TARGETS`` knows which key each measured metric replaces;
- the workbook lays out Assumptions and looks inputs up; ``explain``, the README's tables and the
  calibration defaults follow.

Adding an input is one ``Input`` here and the column functions in ``columns.py`` that read it by
name (README, "How to add an input"); ``tests/test_inputs.py`` fails when anything disagrees.
"""

from __future__ import annotations

import keyword
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from .quantity import Dtype, Flag, Name, Q, Quantity, bounds_of
from .strategies import FIXED_COSTS, STRATEGIES, listed, names
from .units import COLUMN_UNITS
from .vocab import REPLICATED, SHARDINGS, STAGINGS, TIER_KINDS

SCENARIO, MODELS, RECIPES, SKUS, TIERS, ENGINES, PLAN = (
    "scenario",
    "models",
    "recipes",
    "skus",
    "tiers",
    "engines",
    "plan",
)
STRATEGY_ENTITY = (
    "strategies"  # a strategy's traits: declared in the strategy table (strategies.py), not in YAML
)
ENTITIES = (
    MODELS,
    RECIPES,
    SKUS,
    TIERS,
    ENGINES,
    STRATEGY_ENTITY,
    PLAN,
)  # where an input lives; SCENARIO: the axes
ENTITY_COLUMN = {
    MODELS: "model",
    RECIPES: "recipe",
    SKUS: "sku",
    TIERS: "tier",
    ENGINES: "engine",
    STRATEGY_ENTITY: "strategy",
}  # PLAN: every row
TiB = 2**40
NAME = "<its name>"  # the default of a label input that, omitted, is its entity's own name


@dataclass(frozen=True)
class Input:
    """One input column and the YAML key it is read from."""

    name: str  # the column: tier_write_GBps
    unit: str  # a key of units.COLUMN_UNITS; the column's values are in this unit
    doc: str  # what it means; also the YAML key's description
    entity: str = (
        SCENARIO  # models, recipes, skus, tiers, plan; scenario: an axis of the cross product
    )
    key: str | None = None  # the YAML key inside the entity, dotted: local_nvme.write
    type: Any = None  # the key's type (a Quantity, Dtype, Literal); None for the plan's axes
    required: bool = False
    default: float | str | None = None  # the value, in ``unit``, when the key is omitted
    absent: str = ""  # what omitting the key means, in words: '1', 'no aggregate limit'
    derive: Callable[[Any], float | None] | None = (
        None  # the entity -> a value in base units, when omitted
    )
    derived_from: tuple[str, ...] = ()  # the keys ``derive`` reads, cited as its source
    derived_doc: str = ""  # how: 'gpus_per_node x d2h_per_gpu'
    derived_formula: str = (
        ""  # the same in a workbook: other inputs of the entity as {name}, in their units
    )
    measured: str | None = None  # the metric of a measured file that replaces it (measured.TARGETS)
    excel: str | None = None  # a number format of its own, else the unit's
    infinite: str = "unbounded"  # how an infinite value reads
    price: bool = False  # a price: outputs say when a recommendation rests on an assumed one

    @property
    def scale(self) -> float:
        return COLUMN_UNITS[self.unit].scale

    def raw(self, entity) -> Any:
        """What the validated entity holds at ``key`` (None when omitted)."""
        obj = entity
        for part in self.key.split("."):
            if obj is None:
                return None
            obj = getattr(obj, attribute(part))
        return obj

    def given(self, entity) -> bool:
        return self.raw(entity) is not None

    def derived(self, entity) -> float | None:
        """The value derived from other keys (base units), when the key is omitted and a rule applies."""
        if self.derive is None or self.given(entity):
            return None
        return self.derive(entity)

    def value(self, entity, name: str = "") -> float | str:
        """The input's value for one entity (named ``name``), in the column's unit."""
        raw = self.raw(entity)
        if raw is None and self.default == NAME:
            return name
        if raw is None:
            derived = self.derived(entity)
            return self.default if derived is None else derived / self.scale
        if isinstance(raw, Q):
            return raw.value / self.scale
        if isinstance(raw, list):
            return float(sum(raw))
        return raw if isinstance(raw, str) else float(raw)

    def base_value(self, entity) -> float:
        """The value in base units (bytes/s, bytes, seconds, fractions)."""
        return float(self.value(entity)) * self.scale

    @property
    def bounds(self) -> tuple[float, float]:
        """Where a value of its key may lie, in the column's unit (``Bounds``): what validation allows,
        so where every draw and sweep end of a range stays; (-inf, inf) for a key without bounds."""
        b = bounds_of(self.type)
        return (-math.inf, math.inf) if b is None else (b.low / self.scale, b.high / self.scale)

    @property
    def where(self) -> str:
        """The YAML key as the docs name it: skus.*.local_nvme.write."""
        if self.entity == SCENARIO:
            return f"plan.{self.key}" if self.key else "the scenario"
        if self.entity == STRATEGY_ENTITY:
            return f"the strategy table: {self.key}"
        return f"plan.{self.key}" if self.entity == PLAN else f"{self.entity}.*.{self.key}"


def attribute(key: str) -> str:
    """The attribute a YAML key is held in (``async`` is a Python keyword: ``async_``)."""
    return key + "_" if keyword.iskeyword(key) else key


def replaced(entity, key: str, value):
    """A copy of a validated entity with the (dotted) ``key`` set to ``value``: ``local_nvme.write``
    replaces the write figure inside the SKU's local_nvme mapping."""
    head, _, rest = key.partition(".")
    if rest:
        value = replaced(getattr(entity, attribute(head)), rest, value)
    return entity.model_copy(update={attribute(head): value})


def _d2h_node(sku) -> float:
    return sku.gpus_per_node.value * sku.d2h_per_gpu.value


def _tier_write(tier) -> float | None:
    if tier.write_per_TiB is not None and tier.capacity is not None:
        return tier.write_per_TiB.value * tier.capacity.value / TiB
    unit = getattr(tier, "unit", None)
    if unit is not None:  # a product sold in units, at its fewest (the purchase chooses how many)
        return unit.write.value * unit.min.value
    return None


_BW = Quantity("bandwidth")
_COUNT = Quantity("count", integer=True)
_PCT = Quantity("percent", maximum=1.0)

_DECLARED = [
    # ---- the plan's axes: one value per scenario ----
    Input("model", "label", "model name", key="models"),
    Input(
        "recipe", "label", "training recipe: what a checkpoint holds per parameter", key="recipes"
    ),
    Input("sku", "label", "hardware SKU", key="skus"),
    Input("tier", "label", "storage tier", key="tiers"),
    Input(
        "engine",
        "label",
        "checkpointing engine (how a save is staged, coordinated and written)",
        key="engines",
    ),
    Input("strategy", "label", listed(names()), key="strategies"),
    Input("gpus", "count", "GPUs in the job", key="gpus"),
    Input("interval_s", "s", "time between checkpoints", key="intervals", excel='#,##0" s"'),
    # ---- models.yaml: models ----
    Input(
        "params",
        "count",
        "total parameters, e.g. 405.85B (MoE: all experts)",
        MODELS,
        "params",
        Quantity("count", plausible=("1M", "100T")),
        required=True,
    ),
    Input(
        "active_params",
        "count",
        "parameters active per token (MoE)",
        MODELS,
        "active_params",
        Quantity("count", plausible=("1M", "100T")),
        derive=lambda m: m.params.value,
        derived_from=("params",),
        derived_doc="params (a dense model)",
        derived_formula="{params}",
    ),
    Input(
        "tokens",
        "count",
        "training tokens, e.g. 15.6T",
        MODELS,
        "tokens",
        Quantity("count", plausible=("1M", "10000T")),
        required=True,
    ),
    Input(
        "sharding",
        "label",
        "how ranks split the save: fully_sharded (FSDP, every rank an equal share), "
        "optimizer_sharded (ZeRO-1 / distributed optimizer: replica 0 writes the weights), replica0 (one "
        "data-parallel replica writes everything); the last two need tp and pp",
        MODELS,
        "sharding",
        Literal[SHARDINGS],
        default="fully_sharded",
        absent="fully_sharded",
    ),
    Input(
        "tp",
        "count",
        "tensor-parallel degree",
        MODELS,
        "tp",
        Quantity("count", integer=True, plausible=("1", "1024")),
        default=1.0,
        absent="1",
    ),
    Input(
        "pp",
        "count",
        "pipeline-parallel degree",
        MODELS,
        "pp",
        Quantity("count", integer=True, plausible=("1", "1024")),
        default=1.0,
        absent="1",
    ),
    Input(
        "layers",
        "count",
        "transformer layers (per-stage balance)",
        MODELS,
        "layers",
        Quantity("count", integer=True, plausible=("1", "100K")),
        default=0.0,
        absent="0 (no per-stage balance)",
    ),
    Input(
        "tensors_per_layer",
        "count",
        "weight tensors one transformer layer holds (a dense Llama block 9: four attention "
        "matrices, three MLP matrices, two norms; a mixture of experts three matrices per expert more): "
        "with the layers, the tensors a save plans",
        MODELS,
        "tensors_per_layer",
        Quantity("count", integer=True, plausible=("1", "1M")),
        default=9.0,
        absent="9 (a dense Llama block)",
    ),
    Input(
        "hidden",
        "count",
        "hidden size (embedding = vocab x hidden)",
        MODELS,
        "hidden",
        Quantity("count", integer=True, plausible=("1", "1M")),
        default=0.0,
        absent="0",
    ),
    Input(
        "vocab",
        "count",
        "vocabulary size",
        MODELS,
        "vocab",
        Quantity("count", integer=True, plausible=("1", "100M")),
        default=0.0,
        absent="0",
    ),
    Input(
        "model_bytes_per_param",
        "B/param",
        "bytes the checkpoint holds per parameter, given directly when no "
        "recipe of dtypes fits: a plain number such as 16 ('16 B' would read 16 billion and is refused); replaces "
        "the recipe's total",
        MODELS,
        "bytes_per_param",
        Quantity("count", maximum=100.0),
        default=float("nan"),
        absent="the recipe's dtypes",
    ),
    Input(
        "checkpoint_size_bytes",
        "bytes",
        "size of one checkpoint, given directly (e.g. a measured 2.3 TB); "
        "replaces the recipe and bytes_per_param",
        MODELS,
        "checkpoint_size",
        Quantity("bytes", plausible=("1 MB", "1000 PB")),
        default=float("nan"),
        absent="params x bytes per parameter",
    ),
    # ---- models.yaml: recipes ----
    Input(
        "weights_bytes_per_param",
        "B/param",
        "dtype of the model weights, e.g. bf16 (2 bytes per parameter)",
        RECIPES,
        "weights",
        Dtype,
        required=True,
    ),
    Input(
        "master_bytes_per_param",
        "B/param",
        "dtype of the master copy of the weights (fp32), if kept",
        RECIPES,
        "master",
        Dtype,
        default=0.0,
        absent="0 (no master copy)",
    ),
    Input(
        "optimizer_bytes_per_param",
        "B/param",
        "dtype of each optimizer state (AdamW: [fp32, fp32]); their bytes per parameter add up",
        RECIPES,
        "optimizer",
        list[Dtype],
        default=0.0,
        absent="0 (no optimizer state)",
    ),
    Input(
        "grads_bytes_per_param",
        "B/param",
        "dtype of gradients, only if the checkpoint saves them",
        RECIPES,
        "grads",
        Dtype,
        default=0.0,
        absent="0 (gradients not saved)",
    ),
    Input(
        "consolidated_bytes_per_param",
        "B/param",
        "dtype of a consolidated copy of the weights that one rank "
        "writes beside the sharded state (e.g. a Hugging Face export in bf16)",
        RECIPES,
        "consolidated",
        Dtype,
        default=0.0,
        absent="0 (no consolidated copy)",
    ),
    # ---- hardware.yaml: SKUs ----
    Input(
        "gpus_per_node",
        "count",
        "GPUs in one node",
        SKUS,
        "gpus_per_node",
        Quantity("count", integer=True, plausible=("1", "1024")),
        required=True,
    ),
    Input(
        "peak_TFLOPS",
        "TFLOPS",
        "dense BF16 peak per GPU, e.g. 989 TFLOPS",
        SKUS,
        "peak_bf16",
        Quantity("flops", plausible=("1 TFLOPS", "100 PFLOPS")),
        required=True,
    ),
    Input(
        "d2h_gpu_GBps",
        "GBps",
        "pinned GPU->host copy, one GPU alone",
        SKUS,
        "d2h_per_gpu",
        Quantity("bandwidth", plausible=("0.1 GB/s", "10 TB/s")),
        required=True,
        measured="d2h_per_gpu",
    ),
    Input(
        "d2h_node_GBps",
        "GBps",
        "GPU->host copy, all GPUs of a node at once",
        SKUS,
        "d2h_per_node",
        Quantity("bandwidth", plausible=("0.1 GB/s", "100 TB/s")),
        derive=_d2h_node,
        derived_from=("d2h_per_gpu",),
        derived_doc="gpus_per_node x d2h_per_gpu",
        derived_formula="{gpus_per_node}*{d2h_gpu_GBps}",
        measured="d2h_per_node",
    ),
    Input(
        "staging_gpu_GBps",
        "GBps",
        "GPU->host copy of an async or tiered snapshot, per GPU, into the memory the "
        "framework stages in: pageable or shared memory runs at a few GB/s, pinned memory at d2h_per_gpu",
        SKUS,
        "staging_per_gpu",
        Quantity("bandwidth", plausible=("0.01 GB/s", "10 TB/s")),
        derive=lambda s: s.d2h_per_gpu.value,
        derived_from=("d2h_per_gpu",),
        derived_doc="d2h_per_gpu (staging in pinned memory)",
        derived_formula="{d2h_gpu_GBps}",
    ),
    Input(
        "host_memory_bytes",
        "bytes",
        "host DRAM per node",
        SKUS,
        "host_memory",
        Quantity("bytes", plausible=("1 GB", "1000 TB")),
        required=True,
    ),
    Input(
        "storage_nic_GBps",
        "GBps",
        "per node, toward the storage fabric",
        SKUS,
        "storage_nic",
        Quantity("bandwidth", plausible=("0.01 GB/s", "100 TB/s")),
        required=True,
    ),
    Input(
        "peer_nic_GBps",
        "GBps",
        "per node, toward the other nodes (the network peer_memory replicates snapshots over)",
        SKUS,
        "peer_network",
        Quantity("bandwidth", plausible=("0.01 GB/s", "100 TB/s")),
        derive=lambda s: s.storage_nic.value,
        derived_from=("storage_nic",),
        derived_doc="storage_nic (replication shares the storage fabric)",
        derived_formula="{storage_nic_GBps}",
    ),
    Input(
        "nvme_write_GBps",
        "GBps",
        "node-local NVMe: sequential write per node, e.g. 26 GB/s",
        SKUS,
        "local_nvme.write",
        Quantity("bandwidth", plausible=("0.01 GB/s", "100 TB/s")),
        required=True,
        default=0.0,
        absent="0 (the SKU has no local NVMe)",
        measured="local_nvme_write",
    ),
    Input(
        "nvme_read_GBps",
        "GBps",
        "node-local NVMe: sequential read per node (restoring a tiered copy)",
        SKUS,
        "local_nvme.read",
        Quantity("bandwidth", plausible=("0.01 GB/s", "100 TB/s")),
        default=float("nan"),
        absent="the NVMe write figure",
    ),
    Input(
        "nvme_capacity_bytes",
        "bytes",
        "node-local NVMe: usable capacity per node, e.g. 30.72 TB",
        SKUS,
        "local_nvme.capacity",
        Quantity("bytes", plausible=("1 GB", "100 PB")),
        required=True,
        default=0.0,
        absent="0 (the SKU has no local NVMe)",
    ),
    Input(
        "usd_per_gpu_hour",
        "usd",
        "price of one GPU-hour",
        SKUS,
        "usd_per_gpu_hour",
        Quantity("usd", plausible=("$0.01", "$1,000")),
        required=True,
        excel='"$"0.000',
        price=True,
    ),
    Input(
        "gpu_mtbf_s",
        "s",
        "mean time between job-stopping failures, per GPU",
        SKUS,
        "gpu_mtbf",
        Quantity("duration", plausible=("100 h", "10000 y")),
        required=True,
        excel='#,##0" s"',
    ),
    Input(
        "site",
        "label",
        "where the nodes run: a free label such as on-prem, aws, gcp; the SKU is paired only "
        "with tiers that serve this site",
        SKUS,
        "site",
        Name,
        default="on-prem",
        absent="on-prem",
    ),
    # ---- storage.yaml: tiers ----
    Input(
        "tier_kind",
        "label",
        "parallel_fs, cloud_fs, object_store, or local_nvme (the node's own drives; no NIC hop)",
        TIERS,
        "kind",
        Literal[TIER_KINDS],
        required=True,
    ),
    Input(
        "tier_durable",
        "bool",
        "whether a checkpoint may live there as the system of record (node-local NVMe "
        "and scratch file systems may not: they can only be the fast first level of a tiered save)",
        TIERS,
        "durable",
        Flag,
        default=1.0,
        derive=lambda t: float(t.kind != "local_nvme"),
        derived_from=("kind",),
        derived_doc="no for local_nvme, else yes",
        derived_formula='{tier_kind}<>"local_nvme"',
    ),
    Input(
        "tier_family",
        "label",
        "tiers sold as steps of one product (a ladder of sizes), compared on one purchase curve",
        TIERS,
        "family",
        Name,
        default=NAME,
        absent="the tier's own name",
    ),
    Input(
        "tier_write_GBps",
        "GBps",
        "aggregate write bandwidth of the tier",
        TIERS,
        "write",
        Quantity("bandwidth", plausible=("1 MB/s", "1000 TB/s")),
        default=float("inf"),
        absent="no aggregate limit (a per-TiB tier without capacity is sized by the plan: "
        "tier_bought_GBps)",
        derive=_tier_write,
        derived_from=("write_per_TiB", "capacity"),
        derived_doc="write_per_TiB x capacity (TiB); a tier sold in units: unit.write x unit.min",
        derived_formula="{tier_write_per_TiB_GBps}*{tier_capacity_bytes}/BYTES_PER_TIB",
        measured="tier_write",
    ),
    Input(
        "tier_node_write_GBps",
        "GBps",
        "most one node (client) can write; local_nvme: overrides the SKU's drives",
        TIERS,
        "per_node_write",
        Quantity("bandwidth", plausible=("1 MB/s", "100 TB/s")),
        default=float("inf"),
        absent="not limited per node",
        measured="tier_write_per_node",
    ),
    Input(
        "tier_read_GBps",
        "GBps",
        "aggregate read bandwidth of the tier (restoring after a failure)",
        TIERS,
        "read",
        Quantity("bandwidth", plausible=("1 MB/s", "1000 TB/s")),
        default=float("nan"),
        absent="the write bandwidth bought (tier_bought_GBps)",
    ),
    Input(
        "tier_node_read_GBps",
        "GBps",
        "most one node can read from the tier",
        TIERS,
        "per_node_read",
        Quantity("bandwidth", plausible=("1 MB/s", "100 TB/s")),
        default=float("nan"),
        absent="the per-node write figure",
    ),
    Input(
        "tier_write_per_TiB_GBps",
        "GBps",
        "cloud file systems: write bandwidth per TiB provisioned; without "
        "capacity the tool buys the TiB the plan needs",
        TIERS,
        "write_per_TiB",
        Quantity("bandwidth", plausible=("1 MB/s", "1 TB/s")),
        default=float("nan"),
        absent="none (not a per-TiB tier)",
    ),
    Input(
        "tier_capacity_bytes",
        "bytes",
        "the most the tier holds (a system already sized); a per-TiB tier with it has a fixed size",
        TIERS,
        "capacity",
        Quantity("bytes", plausible=("1 GB", "100000 PB")),
        default=float("nan"),
        absent="not stated: bought to what the plan needs",
    ),
    Input(
        "tier_min_capacity_bytes",
        "bytes",
        "per-TiB tiers: the smallest size that can be bought",
        TIERS,
        "min_capacity",
        Quantity("bytes", plausible=("1 GB", "100000 PB")),
        default=0.0,
        absent="0",
    ),
    Input(
        "usd_per_tb_month",
        "usd",
        "rent: price per TB (1e12 bytes) stored per month",
        TIERS,
        "usd_per_tb_month",
        Quantity("usd", inclusive=True, plausible=("$0.0001", "$10,000")),
        default=float("nan"),
        absent="not rented: bought (capex_usd_per_tb), or not priced",
        excel='"$"#,##0.00',
        price=True,
    ),
    Input(
        "usd_per_GBps_month",
        "usd",
        "rent: price per GB/s of write bandwidth per month, where it is sold apart from capacity",
        TIERS,
        "usd_per_GBps_month",
        Quantity("usd", inclusive=True, plausible=("$0.0001", "$1,000,000")),
        default=0.0,
        absent="0 (bandwidth not priced apart from capacity)",
        excel='"$"#,##0.00',
        price=True,
    ),
    Input(
        "capex_usd_per_tb",
        "usd",
        "bought: purchase price per TB (1e12 bytes) usable",
        TIERS,
        "capex_usd_per_tb",
        Quantity("usd", inclusive=True, plausible=("$0.01", "$1,000,000")),
        default=float("nan"),
        absent="not bought: rented (usd_per_tb_month), or not priced",
        excel='"$"#,##0.00',
        price=True,
    ),
    Input(
        "capex_usd_per_GBps",
        "usd",
        "bought: purchase price per GB/s of write bandwidth",
        TIERS,
        "capex_usd_per_GBps",
        Quantity("usd", inclusive=True, plausible=("$0.01", "$10,000,000")),
        default=0.0,
        absent="0",
        excel='"$"#,##0',
        price=True,
    ),
    Input(
        "life_s",
        "s",
        "bought: the years a purchase is spread over, e.g. 5 y",
        TIERS,
        "life",
        Quantity("duration", plausible=("30 d", "50 y")),
        default=float("nan"),
        absent="none (needed with a purchase price)",
        excel='#,##0" s"',
        price=True,
    ),
    Input(
        "support_pct",
        "pct",
        "bought: support and operations per year, as a share of the purchase price",
        TIERS,
        "support_per_year",
        Quantity("percent", inclusive=True, maximum=1.0),
        default=0.0,
        absent="0%",
        price=True,
    ),
    Input(
        "usd_per_1k_puts",
        "usd",
        "object stores: price per 1,000 write requests (PUT)",
        TIERS,
        "usd_per_1k_puts",
        Quantity("usd", inclusive=True, plausible=("$0.000001", "$100")),
        default=0.0,
        absent="0",
        excel='"$"0.0000',
        price=True,
    ),
    Input(
        "part_size_bytes",
        "bytes",
        "object stores: bytes per write request (the multipart part size)",
        TIERS,
        "part_size",
        Quantity("bytes", plausible=("1 kB", "1 TB")),
        default=float("inf"),
        absent="no request model",
        excel='[>=1E+280]"{inf}";[>=1000000000]#,##0.00,,," GB";#,##0.00,," MB"',
    ),  # MB-sized; infinite: none
    Input(
        "puts_per_s_per_prefix",
        "count",
        "object stores: write requests per second one prefix (or bucket) sustains",
        TIERS,
        "puts_per_s_per_prefix",
        Quantity("count", plausible=("1", "1000M")),
        default=float("inf"),
        absent="no request-rate ceiling",
    ),
    Input(
        "prefixes",
        "count",
        "object stores: prefixes written in parallel (each adds its request rate)",
        TIERS,
        "prefixes",
        Quantity("count", integer=True, plausible=("1", "1M")),
        default=1.0,
        absent="1",
    ),
    # ---- engines.yaml: checkpointing engines ----
    Input(
        "staging_kind",
        "label",
        "where a snapshot is staged in host memory: pinned (at the link's rate, "
        "d2h_per_gpu), pageable or shared_memory (a CPU memory copy, a few GB/s)",
        ENGINES,
        "staging",
        Literal[STAGINGS],
        default="pinned",
        absent="pinned",
    ),
    Input(
        "engine_staging_gpu_GBps",
        "GBps",
        "the GPU->host staging copy per GPU, where the engine's own rate is "
        "known (capped by the SKU's d2h_per_gpu)",
        ENGINES,
        "staging_per_gpu",
        Quantity("bandwidth", plausible=("0.01 GB/s", "10 TB/s")),
        default=float("nan"),
        absent="the SKU's staging_per_gpu (pinned: d2h_per_gpu)",
    ),
    Input(
        "writer_GBps",
        "GBps",
        "what one rank's writer sustains: serialisation and one stream to storage",
        ENGINES,
        "writer_bandwidth",
        Quantity("bandwidth", plausible=("1 MB/s", "10 TB/s")),
        default=float("inf"),
        absent="no limit",
    ),
    Input(
        "writer_scaling_pct",
        "pct",
        "what each writer beyond the first adds on one node, as a share of one "
        "writer's bandwidth (100%: writers scale linearly; less: they share the node sub-linearly)",
        ENGINES,
        "writer_scaling",
        Quantity("percent", inclusive=True, maximum=1.0),
        default=100.0,
        absent="100%",
    ),
    Input(
        "sync_fixed_s",
        "s",
        "fixed cost of a sync save: set-up, barriers",
        ENGINES,
        "fixed_cost.sync",
        Quantity("duration", inclusive=True, plausible=("0.001 s", "1 h")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "async_fixed_s",
        "s",
        "fixed cost of an async snapshot: staging set-up",
        ENGINES,
        "fixed_cost.async",
        Quantity("duration", inclusive=True, plausible=("0.001 s", "1 h")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "tiered_fixed_s",
        "s",
        "fixed cost of a tiered snapshot",
        ENGINES,
        "fixed_cost.tiered",
        Quantity("duration", inclusive=True, plausible=("0.001 s", "1 h")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "coordination_constant_s",
        "s",
        "coordination of a save whatever the job's size (planning, barriers), at its first save",
        ENGINES,
        "coordination.constant",
        Quantity("duration", inclusive=True, plausible=("0.001 s", "1 d")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "coordination_per_rank_s",
        "s",
        "coordination per rank at the first save: plans and metadata gathered at "
        "one rank, files created; grows with the job",
        ENGINES,
        "coordination.per_rank",
        Quantity("duration", inclusive=True, plausible=("0.000001 s", "60 s")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "coordination_per_rank2_s",
        "s",
        "coordination per rank squared at the first save (a version that validates plans pairwise)",
        ENGINES,
        "coordination.per_rank_squared",
        Quantity("duration", inclusive=True, plausible=("0.000000001 s", "1 s")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "per_write_item_s",
        "s",
        "coordination per write item at the first save: each rank's write items "
        "(a chunk of a tensor) gathered, deduplicated and written into the metadata at one rank",
        ENGINES,
        "coordination.per_write_item",
        Quantity("duration", inclusive=True, plausible=("0.000000001 s", "1 s")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "per_chunk_pair_s",
        "s",
        "coordination per pair of chunks of one tensor at the first save (a version "
        "that validates the global plan pairwise: DCP before pytorch/pytorch PR #166820)",
        ENGINES,
        "coordination.per_chunk_pair",
        Quantity("duration", inclusive=True, plausible=("0.000000000001 s", "1 s")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "cached_constant_s",
        "s",
        "coordination of a later save, whatever the job's size, when the engine caches its plans",
        ENGINES,
        "cached_coordination.constant",
        Quantity("duration", inclusive=True, plausible=("0.001 s", "1 d")),
        default=float("nan"),
        absent="no plan caching: every save coordinates as the first",
    ),
    Input(
        "cached_per_rank_s",
        "s",
        "coordination per rank of a later save when plans are cached",
        ENGINES,
        "cached_coordination.per_rank",
        Quantity("duration", inclusive=True, plausible=("0.000001 s", "60 s")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "coordination_blocks",
        "bool",
        "whether an async save coordinates before training resumes (yes: its "
        "planning is part of the stall) or in its background persist (no)",
        ENGINES,
        "coordination_blocks",
        Flag,
        default=1.0,
        absent="yes",
    ),
    Input(
        "files_per_rank",
        "count",
        "files each writing rank creates per save",
        ENGINES,
        "files_per_rank",
        Quantity("count", integer=True, plausible=("1", "1M")),
        default=1.0,
        absent="1",
    ),
    Input(
        "per_file_s",
        "s",
        "metadata cost of creating one file (open, create, close on the tier)",
        ENGINES,
        "per_file",
        Quantity("duration", inclusive=True, plausible=("0.000001 s", "60 s")),
        default=0.0,
        absent="0 s",
    ),
    Input(
        "replicated",
        "label",
        "who writes state the data-parallel replicas share: replica0 (each shard once, by "
        "replica 0: DCP's dedup), balanced (spread over the replicas: a fully parallel save) or every (each "
        "replica its own copy: no dedup)",
        ENGINES,
        "replicated",
        Literal[REPLICATED],
        default="replica0",
        absent="replica0",
    ),
    Input(
        "engine_consolidates",
        "bool",
        "whether a save also writes a consolidated copy of the weights (one rank, "
        "in the weights' dtype)",
        ENGINES,
        "consolidated",
        Flag,
        default=0.0,
        absent="no",
    ),
    Input(
        "overlap_pct",
        "pct",
        "share of the staging copy hidden behind the next forward and backward pass (the "
        "parameters do not change until the optimizer step)",
        ENGINES,
        "overlap",
        Quantity("percent", inclusive=True, maximum=1.0),
        default=0.0,
        absent="0%",
    ),
    Input(
        "async_slowdown_pct",
        "pct",
        "training slowdown while a background persist runs (the persist's threads "
        "contend with the trainer's)",
        ENGINES,
        "async_slowdown",
        Quantity("percent", inclusive=True, maximum=1.0),
        default=0.0,
        absent="0%",
    ),
    Input(
        "largest_case_ranks",
        "count",
        "the largest job (ranks) among the published cases the engine's terms rest "
        "on: far beyond it, they are an extrapolation",
        ENGINES,
        "largest_case",
        Quantity("count", plausible=("1", "100M")),
        default=float("inf"),
        absent="not stated: never flagged as an extrapolation",
    ),
    # ---- the strategy table (strategies.py): a strategy's traits, read by the columns ----
    Input(
        "blocks_for_persist",
        "bool",
        "whether training waits for the whole save: the copy to host and the persist (sync)",
        STRATEGY_ENTITY,
        "blocks_for_persist",
        bool,
        required=True,
    ),
    Input(
        "stages_snapshot",
        "bool",
        "whether a save stages a snapshot in host memory at the engine's staging rate "
        "and persists it after training resumes (async, tiered)",
        STRATEGY_ENTITY,
        "stages_snapshot",
        bool,
        required=True,
    ),
    Input(
        "keeps_host_copy",
        "bool",
        "whether the snapshot stays in host memory, so that a restarted process "
        "restores from it (host_recoverable)",
        STRATEGY_ENTITY,
        "keeps_host_copy",
        bool,
        required=True,
    ),
    Input(
        "lands_on_nvme",
        "bool",
        "whether the persist lands on node-local NVMe first and drains to the tier (tiered)",
        STRATEGY_ENTITY,
        "lands_on_nvme",
        bool,
        required=True,
    ),
    Input(
        "copies_to_peers",
        "bool",
        "whether each node's snapshot is copied to the host memory of peer_replicas "
        "peers, which restore a lost node (peer_memory)",
        STRATEGY_ENTITY,
        "copies_to_peers",
        bool,
        required=True,
    ),
    Input(
        "durable_every_nth",
        "bool",
        "whether only every durable_every-th save reaches the durable tier (peer_memory)",
        STRATEGY_ENTITY,
        "durable_every_nth",
        bool,
        required=True,
    ),
    Input(
        "saves_differences",
        "bool",
        "whether saves between full ones (every full_every) write differences, "
        "and a restore reads the chain (differential)",
        STRATEGY_ENTITY,
        "saves_differences",
        bool,
        required=True,
    ),
    Input(
        "saves_after_failure",
        "bool",
        "whether the strategy takes no periodic save: the surviving replicas "
        "save after a failure (jit)",
        STRATEGY_ENTITY,
        "saves_after_failure",
        bool,
        required=True,
    ),
    Input(
        "drops_failed_replica",
        "bool",
        "whether a failure confined to one data-parallel replica drops that replica while the others "
        "train on, and it rejoins from a healthy replica's live state (replica_recovery)",
        STRATEGY_ENTITY,
        "drops_failed_replica",
        bool,
        required=True,
    ),
    Input(
        "fixed_cost",
        "label",
        "which of the engine's fixed costs a save pays: " + listed(FIXED_COSTS),
        STRATEGY_ENTITY,
        "fixed_cost",
        str,
        required=True,
    ),
    Input(
        "min_replicas",
        "count",
        "the least data-parallel replicas a job needs to run the strategy (jit: 2)",
        STRATEGY_ENTITY,
        "min_replicas",
        int,
        required=True,
    ),
    Input(
        "peers_below_nodes",
        "bool",
        "whether a job needs more nodes than peer_replicas (peer_memory)",
        STRATEGY_ENTITY,
        "peers_below_nodes",
        bool,
        required=True,
    ),
    # ---- plan.yaml: globals ----
    Input(
        "target_overhead_pct",
        "pct",
        "the overhead a plan must stay under, e.g. 1%",
        PLAN,
        "target_overhead",
        Quantity("percent", maximum=1.0, plausible=("0.001%", "50%")),
        required=True,
    ),
    Input(
        "mfu_pct",
        "pct",
        "model FLOPs utilisation, e.g. 40%",
        PLAN,
        "mfu",
        Quantity("percent", maximum=1.0, plausible=("1%", "100%")),
        required=True,
    ),
    Input(
        "restart_s",
        "s",
        "time to restart a job after a failure",
        PLAN,
        "restart",
        Quantity("duration", inclusive=True, plausible=("1 s", "30 d")),
        required=True,
    ),
    Input(
        "retention",
        "count",
        "checkpoints kept on the tier",
        PLAN,
        "retention",
        Quantity("count", integer=True, plausible=("1", "10000")),
        required=True,
    ),
    Input(
        "buffers",
        "count",
        "host-memory copies of a node's shard an async or tiered checkpoint stages",
        PLAN,
        "buffers",
        Quantity("count", integer=True, plausible=("1", "100")),
        default=1.0,
        absent="1 (one staged copy, the common case)",
    ),
    Input(
        "host_recoverable_pct",
        "pct",
        "share of failures a job can restart from the copy in host memory "
        "(process-level faults: NCCL errors, network jitter); the rest need the durable tier (lost node, HBM)",
        PLAN,
        "host_recoverable",
        Quantity("percent", inclusive=True, maximum=1.0),
        default=0.0,
        absent="0% (every restart reads the durable tier)",
    ),
    Input(
        "peer_replicas",
        "count",
        "peer_memory: the peers each node's snapshot is copied to (k)",
        PLAN,
        "peer_replicas",
        Quantity("count", integer=True, plausible=("1", "64")),
        default=1.0,
        absent="1",
    ),
    Input(
        "durable_every",
        "count",
        "peer_memory: every how many saves one also goes to the durable tier (N)",
        PLAN,
        "durable_every",
        Quantity("count", integer=True, plausible=("1", "10000")),
        default=1.0,
        absent="1 (every save reaches the tier)",
    ),
    Input(
        "node_loss_pct",
        "pct",
        "share of failures that lose one node's host memory but not its peers': "
        "peer_memory restores them from a peer's copy; the rest of those not host_recoverable need the "
        "durable tier (a lost rack, the whole job)",
        PLAN,
        "node_loss",
        Quantity("percent", inclusive=True, maximum=1.0),
        default=0.0,
        absent="0% (every such failure reads the tier)",
    ),
    Input(
        "replica_confined_pct",
        "pct",
        "share of failures confined to one data-parallel replica (a GPU, its node, its host): "
        "replica_recovery drops that replica and trains on; the rest (a switch, a software bug, the "
        "whole job) restart the job from its checkpoint",
        PLAN,
        "replica_confined",
        Quantity("percent", inclusive=True, maximum=0.99),
        default=0.0,
        absent="0% (every failure restarts the job)",
    ),
    Input(
        "replica_reform_s",
        "s",
        "replica_recovery: the whole job's stall for one failure a dropped replica absorbs: "
        "detecting it, re-forming the process groups without it and again with it",
        PLAN,
        "replica_reform",
        Quantity("duration", plausible=("1 s", "1 h")),
        default=180.0,
        absent="3 min (the recovery stall of fault-tolerant HSDP at O(100,000) GPUs, arXiv 2602.00277)",
    ),
    Input(
        "full_every",
        "count",
        "differential: every how many saves one is a full checkpoint (K); the others "
        "write differences",
        PLAN,
        "full_every",
        Quantity("count", integer=True, plausible=("1", "10000")),
        default=1.0,
        absent="1 (every save full)",
    ),
    Input(
        "diff_fraction_pct",
        "pct",
        "differential: the size of a difference, as a share of the full checkpoint",
        PLAN,
        "diff_fraction",
        Quantity("percent", maximum=1.0, plausible=("0.01%", "100%")),
        default=100.0,
        absent="100% (a difference as large as the checkpoint)",
    ),
    Input(
        "jit_overhead_pct",
        "pct",
        "jit: the steady-state cost of detecting failures and keeping the state "
        "savable, as a share of training time",
        PLAN,
        "jit_overhead",
        Quantity("percent", inclusive=True, maximum=1.0),
        default=0.0,
        absent="0%",
    ),
    Input(
        "batch_tokens",
        "count",
        "tokens in one training step (the global batch): jit redoes about one step after a failure",
        PLAN,
        "batch_tokens",
        Quantity("count", plausible=("1K", "1T")),
        default=float("nan"),
        absent="unknown (jit's rework, and so its cost, unknown)",
    ),
    Input(
        "confidence_pct",
        "pct",
        "how likely an option must be to meet the target, over the draws of every uncertain input, "
        "for the decision to recommend it",
        PLAN,
        "confidence",
        Quantity("percent", maximum=1.0, plausible=("1%", "100%")),
        default=80.0,
        absent="80% (an assumption: four runs in five meet the target)",
    ),
    Input(
        "headroom_pct",
        "pct",
        "capacity bought beyond the retained checkpoints",
        PLAN,
        "capacity_headroom",
        Quantity("percent", inclusive=True, maximum=10.0),
        default=0.0,
        absent="0%",
    ),
]

INPUTS: dict[str, Input] = {i.name: i for i in _DECLARED}


@dataclass(frozen=True)
class Group:
    """A mapping of keys inside an entity (``local_nvme:``, ``fixed_cost:``)."""

    entity: str
    key: str
    title: str  # the schema class name
    doc: str  # the key's description
    class_doc: str


GROUPS: dict[tuple[str, str], Group] = {
    (g.entity, g.key): g
    for g in (
        Group(
            SKUS,
            "local_nvme",
            "LocalNvme",
            "node-local NVMe (write, read, capacity); omitted: the SKU has none",
            "The node's own NVMe drives (RAID-0), used by the tiered strategy and the local_nvme tier.",
        ),
        Group(
            ENGINES,
            "fixed_cost",
            "FixedCost",
            "fixed cost per save: sync, async, tiered",
            "Fixed cost of one save, per strategy.",
        ),
        Group(
            ENGINES,
            "coordination",
            "Coordination",
            "coordination of the first save: constant, per_rank, per_rank_squared",
            "Coordination a save costs, as the job grows: a constant plus per-rank terms.",
        ),
        Group(
            ENGINES,
            "cached_coordination",
            "CachedCoordination",
            "coordination of later saves when the engine caches "
            "its plans: constant, per_rank; omitted: no plan caching",
            "Coordination of the saves after the first, when plans are cached.",
        ),
    )
}


@dataclass(frozen=True)
class Source:
    """A column naming the basis of the bandwidth figures a hop used."""

    name: str
    doc: str
    inputs: tuple[str, ...]


SOURCES: dict[str, Source] = {
    s.name: s
    for s in (
        Source(
            "d2h_source",
            "basis of the GPU->host figure used (spec, measured, derived, assumption, input)",
            ("d2h_node_GBps",),
        ),
        Source("nic_source", "basis of the storage NIC figure used", ("storage_nic_GBps",)),
        Source(
            "tier_source",
            "basis of the tier's write figure used (for local_nvme: the SKU's drives)",
            ("tier_write_GBps", "tier_write_per_TiB_GBps", "tier_node_write_GBps"),
        ),
        Source("nvme_source", "basis of the node-local NVMe figure used", ("nvme_write_GBps",)),
    )
}


def of(entity: str) -> list[Input]:
    """The inputs an entity holds, in declaration order."""
    return [i for i in INPUTS.values() if i.entity == entity]


def trait_values(strategy: str) -> dict[str, float | str]:
    """A strategy's traits as its rows' input columns hold them (``strategies.STRATEGIES``)."""
    declared = STRATEGIES[strategy]
    return {i.name: i.value(declared, strategy) for i in of(STRATEGY_ENTITY)}


def measured_targets() -> dict[str, Input]:
    """Measured metric -> the input it replaces."""
    return {i.measured: i for i in INPUTS.values() if i.measured}


# An engine's terms that grow with the job's ranks: where a plan uses one beyond the largest published
# job its engine's terms rest on (largest_case), its range widens by the factor beyond it.
SCALING = frozenset(
    {
        "coordination_per_rank_s",
        "coordination_per_rank2_s",
        "cached_per_rank_s",
        "per_write_item_s",
        "per_chunk_pair_s",
    }
)


def widening(ranks: float, largest_case_ranks: float) -> float:
    """The factor a scaling term's range widens by when used at ``ranks``: how far beyond its largest
    case it is used (1 within it), the row's ``beyond_largest_case_x``. Its low is divided by it, its
    high multiplied."""
    return max(1.0, float(ranks) / float(largest_case_ranks))


# Shares of one whole: each group's inputs (plan keys, fractions) add up to at most 100% (the failures
# a host copy restores, those a peer's copy restores, and the rest, the durable tier's). The loader
# refuses a plan whose figures or ranges pass it; where several of a group are drawn at once, the drawn
# ones shrink in proportion to what the others leave (``Evaluator``).
SHARES: tuple[tuple[str, ...], ...] = (("host_recoverable_pct", "node_loss_pct"),)
