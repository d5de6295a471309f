"""The input schema, declared once: one typed, documented field per key; unknown keys rejected.

Every quantity is a string with a unit (``100 GB/s``), or a mapping that also says where the figure
comes from: ``{value: 100 GB/s, basis: spec, source: "vendor datasheet ..."}``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic_core import PydanticCustomError

from . import units

Basis = Literal["spec", "measured", "derived", "assumption", "input"]
BASES: tuple[str, ...] = ("spec", "measured", "derived", "assumption", "input")
STRATEGIES: tuple[str, ...] = ("sync", "async", "tiered")
TIER_KINDS: tuple[str, ...] = ("parallel_fs", "cloud_fs", "object_store", "local_nvme")


@dataclass(frozen=True)
class Q:
    """A parsed quantity: value in base units, the text the user wrote, and where it comes from."""

    value: float
    text: str
    kind: str
    basis: str | None = None  # None: take the entry's (spec when the entry has a source)
    source: str | None = None


def _quantity_validator(kind: str, minimum: float, inclusive: bool, integer: bool, maximum: float | None):
    def validate(raw: Any) -> Q:
        if isinstance(raw, Q):
            return raw
        basis = source = None
        if isinstance(raw, dict):
            unknown = set(raw) - {"value", "basis", "source"}
            if unknown or "value" not in raw:
                raise PydanticCustomError(
                    "quantity_mapping",
                    "a sourced quantity is a mapping with keys value, basis, source; "
                    + (f"unknown key(s) {', '.join(sorted(map(repr, unknown)))}" if unknown
                       else "'value' is missing"))
            basis, source = raw.get("basis"), raw.get("source")
            if basis is not None and basis not in BASES:
                raise PydanticCustomError("basis", "basis must be one of {bases}, got {got}",
                                          {"bases": ", ".join(BASES), "got": repr(basis)})
            raw = raw["value"]
        try:
            value = units.parse(raw, kind)
        except units.UnitError as e:
            raise PydanticCustomError("unit", str(e)) from None
        if value < minimum or (value == minimum and not inclusive):
            word = "at least" if inclusive else "greater than"
            floor = units.fmt(minimum, kind) if minimum else "0"
            raise PydanticCustomError(
                "unit_range", "expected a {kind} {word} {floor}, got {got}",
                {"kind": units.KINDS[kind].name, "word": word, "floor": floor, "got": repr(raw)})
        if maximum is not None and value > maximum:
            raise PydanticCustomError(
                "unit_range", "expected a {kind} of at most {ceiling}, got {got}",
                {"kind": units.KINDS[kind].name, "ceiling": units.fmt(maximum, kind), "got": repr(raw)})
        if integer and value != int(value):
            raise PydanticCustomError("unit_int", "expected a whole number, got {got}", {"got": repr(raw)})
        return Q(value, str(raw).strip(), kind, basis, source)

    return validate


@dataclass(frozen=True)
class Kind:
    """Marks a field's unit kind (read by the docs generator)."""

    name: str


def Quantity(kind: str, *, minimum: float = 0.0, inclusive: bool = False, integer: bool = False,
             maximum: float | None = None):
    """An annotated field type: a quantity of ``kind`` (see ``units.KINDS``), positive by default."""
    return Annotated[Q, BeforeValidator(_quantity_validator(kind, minimum, inclusive, integer, maximum)),
                     Kind(units.KINDS[kind].name)]


def _dtype(raw: Any) -> float:
    try:
        return units.parse(raw, "dtype")
    except units.UnitError as e:
        raise PydanticCustomError("unit", str(e)) from None


Dtype = Annotated[float, BeforeValidator(_dtype), Kind("dtype")]
Name = Annotated[str, Field(min_length=1, max_length=200)]
Text = Annotated[str, Field(max_length=4000)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)


class Recipe(Strict):
    """What a checkpoint holds for each parameter."""

    weights: Dtype = Field(description="dtype of the model weights, e.g. bf16")
    master: Dtype | None = Field(None, description="dtype of the master copy of the weights (fp32), if kept")
    optimizer: list[Dtype] = Field(default_factory=list,
                                   description="dtype of each optimizer state (AdamW: [fp32, fp32])")
    grads: Dtype | None = Field(None, description="dtype of gradients, only if the checkpoint saves them")
    description: Text | None = Field(None, description="free text")
    source: Text | None = Field(None, description="where this recipe is documented")


class Model(Strict):
    """A model family: its size and how it is trained."""

    params: Quantity("count") = Field(description="total parameters, e.g. 405.85B (MoE: all experts)")
    recipe: Name = Field("adamw-bf16", description="name of a recipe; default adamw-bf16")
    tokens: Quantity("count") = Field(description="training tokens, e.g. 15.6T")
    active_params: Quantity("count") | None = Field(
        None, description="parameters active per token (MoE); default: params")
    sharding: Literal["fully_sharded", "optimizer_sharded", "replica0"] = Field(
        "fully_sharded", description="how ranks split the save: fully_sharded (FSDP, every rank an equal "
        "share), optimizer_sharded (ZeRO-1 / distributed optimizer: replica 0 writes the weights), replica0 "
        "(one data-parallel replica writes everything); the last two need tp and pp")
    layers: Quantity("count", integer=True) | None = Field(None, description="transformer layers (per-stage balance)")
    hidden: Quantity("count", integer=True) | None = Field(None, description="hidden size (embedding = vocab x hidden)")
    vocab: Quantity("count", integer=True) | None = Field(None, description="vocabulary size")
    tp: Quantity("count", integer=True) | None = Field(None, description="tensor-parallel degree; default 1")
    pp: Quantity("count", integer=True) | None = Field(None, description="pipeline-parallel degree; default 1")
    description: Text | None = Field(None, description="free text")
    source: Text | None = Field(None, description="where the figures come from")

    @model_validator(mode="after")
    def _sharding_needs_parallelism(self):
        if self.sharding != "fully_sharded" and (self.tp is None or self.pp is None):
            raise PydanticCustomError("sharding", "sharding {s} needs tp and pp (which ranks hold which "
                                      "parameters)", {"s": self.sharding})
        return self

    @model_validator(mode="after")
    def _active_le_total(self):
        if self.active_params is not None and self.active_params.value > self.params.value:
            raise PydanticCustomError("active", "active_params ({a}) exceeds params ({p})",
                                      {"a": self.active_params.text, "p": self.params.text})
        return self


class LocalNvme(Strict):
    """The node's own NVMe drives (RAID-0), used by the tiered strategy and the local_nvme tier."""

    write: Quantity("bandwidth") = Field(description="sequential write per node, e.g. 26 GB/s")
    capacity: Quantity("bytes") = Field(description="usable capacity per node, e.g. 30.72 TB")


class Sku(Strict):
    """A GPU node and each link a checkpoint crosses on its way out of it."""

    gpus_per_node: Quantity("count", integer=True) = Field(description="GPUs in one node")
    peak_bf16: Quantity("flops") = Field(description="dense BF16 peak per GPU, e.g. 989 TFLOPS")
    d2h_per_gpu: Quantity("bandwidth") = Field(description="pinned GPU->host copy, one GPU alone")
    d2h_per_node: Quantity("bandwidth") | None = Field(
        None, description="GPU->host copy, all GPUs of a node at once; default gpus_per_node x d2h_per_gpu")
    host_memory: Quantity("bytes") = Field(description="host DRAM per node")
    storage_nic: Quantity("bandwidth") = Field(description="per node, toward the storage fabric")
    local_nvme: LocalNvme | None = Field(None, description="node-local NVMe (write, capacity)")
    usd_per_gpu_hour: Quantity("usd") = Field(description="price of one GPU-hour")
    gpu_mtbf: Quantity("duration") = Field(description="mean time between job-stopping failures, per GPU")
    description: Text | None = Field(None, description="free text")
    source: Text | None = Field(None, description="default source for the figures above")


class Tier(Strict):
    """A storage tier a checkpoint is written to."""

    kind: Literal["parallel_fs", "cloud_fs", "object_store", "local_nvme"] = Field(
        description="parallel_fs, cloud_fs, object_store, or local_nvme (the node's own drives; no NIC hop)")
    write: Quantity("bandwidth") | None = Field(None, description="aggregate write bandwidth of the tier")
    per_node_write: Quantity("bandwidth") | None = Field(
        None, description="most one node (client) can write; local_nvme: overrides the SKU's drives")
    write_per_TiB: Quantity("bandwidth") | None = Field(
        None, description="cloud filesystems: write bandwidth per TiB provisioned (with capacity)")
    capacity: Quantity("bytes") | None = Field(None, description="provisioned capacity")
    usd_per_tb_month: Quantity("usd", inclusive=True) | None = Field(
        None, description="price per TB (1e12 bytes) stored per month; omit when unknown")
    description: Text | None = Field(None, description="free text")
    source: Text | None = Field(None, description="default source for the figures above")

    @model_validator(mode="after")
    def _bandwidth_given(self):
        if self.kind == "local_nvme":
            if self.write is not None or self.write_per_TiB is not None:
                raise PydanticCustomError(
                    "tier", "a local_nvme tier is written by each node to its own drives: give "
                    "per_node_write (or nothing, to use each SKU's local_nvme.write), not write or write_per_TiB")
            return self
        if self.write is not None and self.write_per_TiB is not None:
            raise PydanticCustomError("tier", "give write or write_per_TiB, not both")
        if self.write_per_TiB is not None and self.capacity is None:
            raise PydanticCustomError("tier", "write_per_TiB needs capacity (the TiB provisioned)")
        if self.write is None and self.write_per_TiB is None and self.per_node_write is None:
            raise PydanticCustomError(
                "tier", "a tier needs a write bandwidth: write (aggregate), per_node_write, or "
                "write_per_TiB with capacity")
        return self


class Summary(Strict):
    """Which cluster size and cadence the terminal summary and headlines use."""

    gpus: Quantity("count", integer=True) = Field(description="one of the plan's gpus")
    interval: Quantity("duration") = Field(description="one of the plan's intervals")
    model: Name | None = Field(None, description="model whose overhead by tier the workbook charts; default: first")
    sku: Name | None = Field(None, description="SKU for that chart; default: first")


class Brief(Strict):
    """A PDF brief for a purchase proposal: one model, the candidate hardware and storage."""

    name: Annotated[str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")] = Field(
        description="file name of the brief (letters, digits, . _ -): out/briefs/NAME.pdf")
    model: Name = Field(description="the model the proposal trains")
    skus: list[Name] = Field(min_length=1, description="candidate SKUs")
    tiers: list[Name] = Field(min_length=1, description="candidate storage tiers")
    gpus: Quantity("count", integer=True) = Field(description="GPUs proposed")
    interval: Quantity("duration") = Field(description="checkpoint cadence proposed")
    recipe: Name | None = Field(None, description="recipe; default: the model's own")
    title: Text | None = Field(None, description="title on the first page; default from the model")


class FixedCost(Strict):
    """Fixed cost of one checkpoint, per strategy."""

    sync: Quantity("duration", inclusive=True) = Field("0 s", validate_default=True, description="sync checkpoint")
    async_: Quantity("duration", inclusive=True) = Field("0 s", validate_default=True, alias="async",
                                                          description="async snapshot")
    tiered: Quantity("duration", inclusive=True) = Field("0 s", validate_default=True, description="tiered snapshot")


class Plan(Strict):
    """Which cross product to compute, and the globals every scenario shares."""

    models: list[Name] | None = Field(None, description="model names; omitted: all")
    recipes: list[Name] | None = Field(None, description="recipes to cross with; omitted: each model's own")
    skus: list[Name] | None = Field(None, description="SKU names; omitted: all")
    tiers: list[Name] | None = Field(None, description="tier names; omitted: all")
    gpus: list[Quantity("count", integer=True)] = Field(min_length=1, description="cluster sizes in GPUs")
    intervals: list[Quantity("duration")] = Field(min_length=1, description="checkpoint cadences")
    strategies: list[Literal["sync", "async", "tiered"]] = Field(
        default_factory=lambda: list(STRATEGIES), min_length=1, description="sync, async, tiered; omitted: all")
    target_overhead: Quantity("percent", maximum=1.0) = Field(description="the overhead a plan must stay under, e.g. 1%")
    mfu: Quantity("percent", maximum=1.0) = Field(description="model FLOPs utilisation, e.g. 40%")
    restart: Quantity("duration", inclusive=True) = Field(description="time to restart a job after a failure")
    retention: Quantity("count", integer=True) = Field(description="checkpoints kept on the tier")
    buffers: Quantity("count", integer=True) = Field(
        description="host-memory copies of a node's shard an async or tiered checkpoint stages")
    writer_bandwidth: Quantity("bandwidth") | None = Field(
        None, description="what one writer process sustains (serialisation, one stream); omitted: no limit")
    fixed_cost: FixedCost = Field(default_factory=FixedCost, description="fixed cost per checkpoint: sync, async, tiered")
    async_slowdown: Quantity("percent", inclusive=True, maximum=1.0) = Field(
        "0%", validate_default=True, description="training slowdown while a background write runs")
    max_rows: Quantity("count", integer=True) = Field(
        "5M", validate_default=True, description="refuse a cross product larger than this (default 5M rows)")
    workbook_rows: Quantity("count", integer=True, maximum=1_000_000) = Field(
        "100K", validate_default=True,
        description="most scenario rows in the workbook (Excel holds 1,048,576); above it, the best rows of each group")
    summary: Summary | None = Field(None, description="gpus and interval for the summary; default: first of each")
    briefs: list[Brief] = Field(default_factory=list, description="PDF briefs beyond the one per model")
    paper: Literal["A4", "Letter"] = Field("A4", description="paper size of the PDF briefs: A4 or Letter")


SECTIONS: dict[str, type[Strict]] = {"recipes": Recipe, "models": Model, "skus": Sku, "tiers": Tier}
FILES: dict[str, tuple[str, ...]] = {
    "models.yaml": ("recipes", "models"),
    "hardware.yaml": ("skus",),
    "storage.yaml": ("tiers",),
    "plan.yaml": ("plan",),
}
