"""The input schema: one typed, documented field per key; unknown keys rejected.

The keys that feed the model (a SKU's ``d2h_per_gpu``, a tier's ``write``, the plan's ``mfu``) are
built from their declarations in ``inputs``, so the key, its type, its description and the column it
becomes are written once. The keys that are not inputs (names, descriptions, sources, the plan's axes,
its briefs and output settings) are declared here. Every quantity is a string with a unit, or a
mapping that also says where the figure comes from (see ``quantity``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import (
    Field,
    GetCoreSchemaHandler,
    GetJsonSchemaHandler,
    ValidationError,
    create_model,
    model_validator,
)
from pydantic_core import InitErrorDetails, PydanticCustomError, core_schema

from .inputs import ENGINES, GROUPS, MODELS, PLAN, RECIPES, SKUS, TIERS, Input, attribute, of
from .quantity import Name, Quantity, Strict, Text, plausible_of
from .strategies import STRATEGIES
from .vocab import PAPERS

__all__ = [
    "Recipe",
    "Model",
    "Sku",
    "Tier",
    "Engine",
    "Summary",
    "Job",
    "Brief",
    "Cluster",
    "StorageUnit",
    "UnitSize",
    "Plan",
    "SECTIONS",
    "FILES",
    "MOVED",
]


class StrategyName(str):
    """A strategy of the table (``strategies.STRATEGIES``), checked against the table as it is when a file
    is read (a test may declare one of its own), and refused as a Literal would be."""

    @classmethod
    def __get_pydantic_core_schema__(
        cls, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(cls._known)

    @classmethod
    def __get_pydantic_json_schema__(
        cls, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> dict:
        return {"enum": list(STRATEGIES), "type": "string"}

    @staticmethod
    def _known(value: Any) -> str:
        if isinstance(value, str) and value in STRATEGIES:
            return value
        names = [repr(n) for n in STRATEGIES]
        expected = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]
        raise PydanticCustomError(
            "literal_error", "Input should be {expected}", {"expected": expected}
        )


def _described(inp: Input) -> str:
    bounds = plausible_of(inp.type)
    doc = inp.doc if bounds is None else f"{inp.doc}; plausible: {bounds.low} to {bounds.high}"
    if inp.required:
        return doc
    return f"{doc}; omitted: {inp.derived_doc or inp.absent}"


def _field(inp: Input, key: str) -> tuple[Any, Any]:
    alias = key if attribute(key) != key else None
    if inp.required:
        return inp.type, Field(description=_described(inp), alias=alias)
    return inp.type | None, Field(None, description=_described(inp), alias=alias)


def _input_fields(entity: str) -> dict[str, tuple[Any, Any]]:
    """The fields of an entity's declared inputs, in declaration order; dotted keys become a mapping."""
    fields: dict[str, tuple[Any, Any]] = {}
    groups: dict[str, list[Input]] = {}
    for inp in of(entity):
        head, _, rest = inp.key.partition(".")
        if not rest:
            fields[attribute(head)] = _field(inp, head)
            continue
        if head not in groups:
            groups[head] = []
            fields[attribute(head)] = (None, None)  # keeps its place; filled below
        groups[head].append(inp)
    for head, members in groups.items():
        group = GROUPS[(entity, head)]
        sub = create_model(
            group.title,
            __base__=Strict,
            __doc__=group.class_doc,
            **{
                attribute(i.key.split(".", 1)[1]): _field(i, i.key.split(".", 1)[1])
                for i in members
            },
        )
        # a module attribute of its own name, as the entities are: pickle finds it (a Dask worker
        # receives the inputs by pickling them)
        assert globals().get(group.title, sub) is sub, f"two groups named {group.title}"
        globals()[group.title] = sub
        fields[attribute(head)] = (sub | None, Field(None, description=group.doc))
    return fields


def _entity(
    name: str, doc: str, entity: str, base: type[Strict] = Strict, **extra: tuple[Any, Any]
) -> type[Strict]:
    return create_model(name, __base__=base, __doc__=doc, **_input_fields(entity), **extra)


class _ModelRules(Strict):
    @model_validator(mode="after")
    def _sharding_needs_parallelism(self):
        if self.sharding not in (None, "fully_sharded") and (self.tp is None or self.pp is None):
            raise PydanticCustomError(
                "sharding",
                "sharding {s} needs tp and pp (which ranks hold which parameters)",
                {"s": self.sharding},
            )
        return self

    @model_validator(mode="after")
    def _layers_fit_the_parameters(self):
        """The embedding and the output layer (vocab x hidden each) are part of params: they cannot
        exceed it (a typo in params or vocab would give stages of negative size)."""
        if self.vocab is not None and self.hidden is not None:
            edges = 2 * self.vocab.value * self.hidden.value
            if edges >= self.params.value:
                raise ValidationError.from_exception_data(
                    "Model",
                    [
                        InitErrorDetails(
                            type=PydanticCustomError(
                                "architecture",
                                "2 x vocab x hidden (the embedding and output "
                                "layers, {edges} parameters) is not below params ({p}): one of "
                                "them is a typo",
                                {"edges": f"{edges:,.0f}", "p": self.params.text},
                            ),
                            loc=("vocab",),
                            input=None,
                        )
                    ],
                )
        return self

    @model_validator(mode="after")
    def _active_le_total(self):
        if self.active_params is not None and self.active_params.value > self.params.value:
            raise PydanticCustomError(
                "active",
                "active_params ({a}) exceeds params ({p})",
                {"a": self.active_params.text, "p": self.params.text},
            )
        return self


class UnitSize(Strict):
    """A size of the product a source measured or published: its bandwidth at that many units. Between
    two published sizes the bandwidth per unit is interpolated; beyond the largest it keeps the largest's
    (and the purchase says it is beyond a published size)."""

    units: Quantity("count", integer=True, plausible=("1", "100000")) = Field(
        description="units in the published system"
    )
    write: Quantity("bandwidth", ranged=False) = Field(description="its aggregate write bandwidth")
    read: Quantity("bandwidth", ranged=False) | None = Field(
        None, description="its aggregate read bandwidth; omitted: scaled as write"
    )
    source: Text | None = Field(None, description="where the figure is published")


class StorageUnit(Strict):
    """The building block a storage product is sold in (a data node, an OSS pair, a storage SU): what
    one unit adds, what it costs, and how many can be bought. The purchase for a cluster chooses how
    many; a tier without a unit is one fixed unit."""

    name: Annotated[str, Field(min_length=1, max_length=40)] = Field(
        "unit", description="what a unit is called: SU, data node, OSS pair"
    )
    write: Quantity("bandwidth", ranged=False) = Field(
        description="aggregate write bandwidth one unit adds"
    )
    read: Quantity("bandwidth", ranged=False) | None = Field(
        None, description="aggregate read bandwidth one unit adds; omitted: its write"
    )
    capacity: Quantity("bytes", ranged=False) | None = Field(
        None,
        description="usable capacity one unit adds; omitted: capacity is bought apart, at the tier's "
        "capex_usd_per_tb",
    )
    price: Quantity("usd", ranged=False) | None = Field(
        None,
        description="purchase price of one unit; omitted: its write at the tier's capex_usd_per_GBps",
    )
    power_W: Quantity("count", ranged=False, plausible=("1", "1M")) | None = Field(
        None, description="electrical power one unit draws, in watts; omitted: not charged"
    )
    rack_units: Quantity("count", ranged=False, plausible=("1", "10000")) | None = Field(
        None, description="rack units (U) one unit takes; omitted: not charged"
    )
    min: Quantity("count", integer=True, plausible=("1", "100000")) = Field(
        "1", validate_default=True, description="the fewest units sold (default 1)"
    )
    max: Quantity("count", integer=True, plausible=("1", "100000")) = Field(
        "256", validate_default=True, description="the most units sold (default 256)"
    )
    per_nodes: Quantity("count", integer=True, plausible=("1", "1M")) | None = Field(
        None,
        description="a reference design's sizing: one unit for this many GPU nodes (shown beside the "
        "choice, never imposed)",
    )
    sizes: list[UnitSize] = Field(
        default_factory=list,
        description="published sizes of the product (units and bandwidth): the bandwidth per unit "
        "between and beyond them; omitted: linear in units",
    )
    source: Text | None = Field(None, description="where the unit's figures come from")

    @model_validator(mode="after")
    def _fewest_le_most(self):
        if self.min.value > self.max.value:
            raise ValidationError.from_exception_data(
                "StorageUnit",
                [
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "unit",
                            "the fewest units sold (min: {lo}) is above the most (max: {hi})",
                            {"lo": self.min.text, "hi": self.max.text},
                        ),
                        loc=("min",),
                        input=None,
                    )
                ],
            )
        seen = [s.units.value for s in self.sizes]
        if len(set(seen)) != len(seen):
            raise PydanticCustomError("unit", "two sizes give the same number of units")
        return self


class _TierRules(Strict):
    @model_validator(mode="after")
    def _owned_has_no_price(self):
        """An owned tier is not bought again: a purchase price on it is a contradiction."""
        if self.owned is None:
            return self
        priced = [
            k
            for k in ("capex_usd_per_tb", "capex_usd_per_GBps", "usd_per_tb_month")
            if getattr(self, k) is not None
        ]
        if self.unit is not None and self.unit.price is not None:
            priced.append("unit.price")
        if priced:
            raise ValidationError.from_exception_data(
                "Tier",
                [
                    InitErrorDetails(
                        type=PydanticCustomError(
                            "tier",
                            "an owned tier is not bought: it has no purchase price or rent ({keys}); "
                            "its running costs only (support_usd_per_year, and power and space of its "
                            "units)",
                            {"keys": ", ".join(priced)},
                        ),
                        loc=("owned",),
                        input=None,
                    )
                ],
            )
        return self

    @model_validator(mode="after")
    def _bought_over_a_life(self):
        bought = [
            k for k in ("capex_usd_per_tb", "capex_usd_per_GBps") if getattr(self, k) is not None
        ]
        if bought and self.life is None:
            raise PydanticCustomError(
                "tier",
                "a purchase price ({keys}) needs life: the years it is spread over, e.g. life: 5 y",
                {"keys": ", ".join(bought)},
            )
        if self.kind == "local_nvme" and self.durable:
            raise PydanticCustomError(
                "tier", "a local_nvme tier is lost with its node: it cannot be durable"
            )
        return self

    @model_validator(mode="after")
    def _bandwidth_given(self):
        if self.kind == "local_nvme":
            if self.write is not None or self.write_per_TiB is not None:
                raise PydanticCustomError(
                    "tier",
                    "a local_nvme tier is written by each node to its own drives: give "
                    "per_node_write (or nothing, to use each SKU's local_nvme.write), not write or write_per_TiB",
                )
            return self
        if self.write is not None and self.write_per_TiB is not None:
            raise PydanticCustomError("tier", "give write or write_per_TiB, not both")
        if (
            self.write is None
            and self.write_per_TiB is None
            and self.per_node_write is None
            and self.unit is None
        ):
            raise PydanticCustomError(
                "tier",
                "a tier needs a write bandwidth: write (aggregate), per_node_write, or "
                "write_per_TiB with capacity",
            )
        return self


class _EngineRules(Strict):
    @model_validator(mode="after")
    def _consistent(self):
        """Every contradiction among an engine's terms, each at its key (all of them reported at once)."""
        problems: list[tuple[tuple, str, dict]] = []
        if self.staging_per_gpu is not None and self.staging in (None, "pinned"):
            problems.append(
                (
                    ("staging_per_gpu",),
                    "pinned staging copies at the SKU's d2h_per_gpu: give "
                    "staging_per_gpu with staging: pageable or shared_memory",
                    {},
                )
            )
        if all(STRATEGIES[s].blocks_for_persist for s in self.strategies):
            for key in ("overlap", "coordination_blocks", "async_slowdown"):
                if getattr(self, key) is not None:
                    problems.append(
                        (
                            (key,),
                            "{key} applies to async and tiered saves, and this engine's "
                            "strategies are sync only",
                            {"key": key},
                        )
                    )
        cached, first = self.cached_coordination, self.coordination
        if cached is not None and cached.constant is None:
            problems.append(
                (
                    ("cached_coordination",),
                    "cached_coordination needs its constant (what a later "
                    "save costs whatever the job's size)",
                    {},
                )
            )
        for key in ("constant", "per_rank"):
            c = getattr(cached, key) if cached is not None else None
            f = getattr(first, key) if first is not None else None
            if c is not None and c.value > (f.value if f is not None else 0.0):
                problems.append(
                    (
                        ("cached_coordination", key),
                        "cached_coordination.{key} ({c}) exceeds "
                        "coordination.{key} ({f}): a cached plan never costs more than planning anew",
                        {"key": key, "c": c.text, "f": f.text if f is not None else "0 s"},
                    )
                )
        if problems:
            raise ValidationError.from_exception_data(
                "Engine",
                [
                    InitErrorDetails(
                        type=PydanticCustomError("engine", message, ctx), loc=loc, input=None
                    )
                    for loc, message, ctx in problems
                ],
            )
        return self


def _about(what: str) -> dict[str, tuple[Any, Any]]:
    return {
        "description": (Text | None, Field(None, description="free text")),
        "source": (Text | None, Field(None, description=what)),
    }


Recipe = _entity(
    "Recipe",
    "What a checkpoint holds for each parameter.",
    RECIPES,
    **_about("where this recipe is documented"),
)
Model = _entity(
    "Model",
    "A model family: its size and how it is trained.",
    MODELS,
    _ModelRules,
    recipe=(Name, Field("adamw-bf16", description="name of a recipe; default adamw-bf16")),
    **_about("where the figures come from"),
)
Sku = _entity(
    "Sku",
    "A GPU node and each link a checkpoint crosses on its way out of it.",
    SKUS,
    **_about("default source for the figures above"),
)
Engine = _entity(
    "Engine",
    "A checkpointing engine: how a save is staged, coordinated and written.",
    ENGINES,
    _EngineRules,
    strategies=(
        list[StrategyName],
        Field(
            min_length=1,
            description=(
                "the strategies the engine implements (sync, async, tiered); the plan crosses it with these only"
            ),
        ),
    ),
    **_about("default source for the figures above"),
)
Tier = _entity(
    "Tier",
    "A storage tier a checkpoint is written to.",
    TIERS,
    _TierRules,
    sites=(
        list[Name],
        Field(
            default_factory=lambda: ["on-prem"],
            min_length=1,
            description=(
                "the sites whose SKUs can reach it (SKUs' site labels; any: every site); omitted: on-prem"
            ),
        ),
    ),
    unit=(
        StorageUnit | None,
        Field(
            None,
            description="the building block the product is sold in; the purchase for a cluster "
            "chooses how many (omitted: the tier is one fixed unit, as its figures say)",
        ),
    ),
    owned=(
        Quantity("count", integer=True, plausible=("1", "100000")) | None,
        Field(
            None,
            description="units of it already owned (a tier without a unit: 1): no purchase, its "
            "running costs only; omitted: not owned",
        ),
    ),
    support_usd_per_year=(
        Quantity("usd", ranged=False, inclusive=True) | None,
        Field(None, description="an owned tier: its support and operations a year; omitted: $0"),
    ),
    **_about("default source for the figures above"),
)


class Summary(Strict):
    """Which cluster size and cadence the terminal summary and headlines use."""

    gpus: Quantity("count", integer=True) = Field(description="one of the plan's gpus")
    interval: Quantity("duration", ranged=False) = Field(description="one of the plan's intervals")
    model: Name | None = Field(
        None, description="model whose overhead by tier the workbook charts; default: first"
    )
    sku: Name | None = Field(
        None, description="SKU for that chart and the per-model briefs; default: first"
    )


class Brief(Strict):
    """A PDF brief for a purchase proposal: one model, the candidate hardware and storage."""

    name: Annotated[
        str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    ] = Field(description="file name of the brief (letters, digits, . _ -): out/briefs/NAME.pdf")
    model: Name = Field(description="the model the proposal trains")
    skus: list[Name] = Field(min_length=1, description="candidate SKUs")
    tiers: list[Name] = Field(min_length=1, description="candidate storage tiers")
    gpus: Quantity("count", integer=True) = Field(description="GPUs proposed")
    interval: Quantity("duration", ranged=False) = Field(description="checkpoint cadence proposed")
    recipe: Name | None = Field(None, description="recipe; default: the model's own")
    title: Text | None = Field(None, description="title on the first page; default from the model")


class Job(Strict):
    """A training job the cluster runs, at its real scale: the headline answers each (the storage, the
    strategy, the engine and the cadence to run), and each gets a brief."""

    name: Annotated[
        str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    ] = Field(
        description="the job's name (letters, digits, . _ -): its brief is out/briefs/NAME.pdf"
    )
    model: Name = Field(description="the model the job trains")
    sku: Name = Field(description="the SKU it runs on")
    gpus: Quantity("count", integer=True, plausible=("1", "10M")) = Field(
        description="GPUs in the job"
    )
    tokens: Quantity("count", plausible=("1M", "10000T")) | None = Field(
        None, description="tokens the job trains on; default: the model's tokens"
    )
    recipe: Name | None = Field(None, description="recipe; default: the model's own")
    title: Text | None = Field(None, description="title of its brief; default from the job")
    source: Text | None = Field(None, description="where the job's scale comes from")
    cluster: Name | None = Field(
        None,
        description="the cluster (plan's clusters) the job runs on: one purchase of storage serves "
        "every job of a cluster; omitted: the job is answered on its own",
    )
    start: Quantity("duration", ranged=False, inclusive=True, plausible=("1 s", "50 y")) | None = (
        Field(
            None,
            description="when the job starts, from the storage's first day (jobs whose training "
            "overlaps share the storage); default 0",
        )
    )


class Cluster(Strict):
    """The cluster that runs the jobs, and buys one storage system for all of them over its life."""

    name: Annotated[
        str, Field(min_length=1, max_length=80, pattern=r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
    ] = Field(description="the cluster's name (letters, digits, . _ -); jobs name it")
    sku: Name = Field(description="the SKU of its nodes")
    gpus: Quantity("count", integer=True, plausible=("1", "10M")) = Field(
        description="GPUs in the cluster: the jobs that run at the same time share them"
    )
    tiers: list[Name] | None = Field(
        None,
        min_length=1,
        description="the storage products to weigh; omitted: every durable tier its SKU reaches",
    )
    life: Quantity("duration", ranged=False, plausible=("30 d", "50 y")) | None = Field(
        None, description="the years the storage serves; omitted: each product's life"
    )
    usd_per_kwh: Quantity("usd", ranged=False, inclusive=True) | None = Field(
        None, description="price of electricity; omitted: power is not charged"
    )
    usd_per_rack_unit_month: Quantity("usd", ranged=False, inclusive=True) | None = Field(
        None,
        description="price of a rack unit (U) of data-centre space a month; omitted: not charged",
    )
    discount_rate: Quantity("percent", ranged=False, inclusive=True, maximum=1.0) | None = Field(
        None, description="a year's discount rate for the present value; omitted: 0%"
    )
    title: Text | None = Field(None, description="how outputs name it; default: its name")
    source: Text | None = Field(None, description="where the cluster's figures come from")
    prices_source: Text | None = Field(
        None, description="where the electricity, space and discount figures come from"
    )


_AXES = {
    "models": (
        list[Name] | None,
        Field(
            None, min_length=1, description="model names; omitted: all (an empty list is refused)"
        ),
    ),
    "recipes": (
        list[Name] | None,
        Field(None, min_length=1, description="recipes to cross with; omitted: each model's own"),
    ),
    "skus": (
        list[Name] | None,
        Field(None, min_length=1, description="SKU names; omitted: all (an empty list is refused)"),
    ),
    "tiers": (
        list[Name] | None,
        Field(
            None, min_length=1, description="tier names; omitted: all (an empty list is refused)"
        ),
    ),
    "engines": (
        list[Name] | None,
        Field(
            None,
            min_length=1,
            description="checkpointing engine names; omitted: all (an empty list is refused)",
        ),
    ),
    "gpus": (
        list[Quantity("count", integer=True, plausible=("1", "10M"))],
        Field(min_length=1, description="cluster sizes in GPUs"),
    ),
    "intervals": (
        list[Quantity("duration", ranged=False, plausible=("1 s", "1 y"))],
        Field(min_length=1, description="checkpoint cadences"),
    ),
    "strategies": (
        list[StrategyName],
        Field(
            default_factory=lambda: list(STRATEGIES),
            min_length=1,
            description=", ".join(STRATEGIES) + "; omitted: all",
        ),
    ),
}
_OUTPUTS = {
    "max_rows": (
        Quantity("count", integer=True, maximum=20_000_000),
        Field(
            "5M",
            validate_default=True,
            description="refuse a plan of more rows than this (the combinations that can "
            "exist; default 5M rows, at most 20M)",
        ),
    ),
    "workbook_rows": (
        Quantity("count", integer=True, maximum=1_000_000),
        Field(
            "8K",
            validate_default=True,
            description="most scenario rows in the workbook (default 8K: it opens and "
            "recalculates in seconds; Excel holds 1,048,576); above it, the lowest-waste interval of each group",
        ),
    ),
    "summary": (
        Summary | None,
        Field(None, description="gpus and interval for the summary; default: first of each"),
    ),
    "jobs": (
        list[Job],
        Field(
            default_factory=list,
            description="the jobs the cluster runs, each answered at its scale with a cadence chosen "
            "for it; omitted: each model of the plan on the summary's SKU and GPUs",
        ),
    ),
    "clusters": (
        list[Cluster],
        Field(
            default_factory=list,
            description="the clusters that run the jobs: each buys one storage system for every job "
            "that names it (how many units of which product); omitted: each job is answered alone",
        ),
    ),
    "briefs": (
        list[Brief],
        Field(default_factory=list, description="PDF briefs beyond the one per job"),
    ),
    "paper": (
        Literal[PAPERS],
        Field("A4", description="paper size of the PDF briefs: A4 or Letter"),
    ),
}
Plan = create_model(
    "Plan",
    __base__=Strict,
    __doc__="Which cross product to compute, and the globals every scenario shares.",
    **_AXES,
    **_input_fields(PLAN),
    **_OUTPUTS,
)

SECTIONS: dict[str, type[Strict]] = {
    "recipes": Recipe,
    "models": Model,
    "skus": Sku,
    "tiers": Tier,
    "engines": Engine,
}
FILES: dict[str, tuple[str, ...]] = {
    "models.yaml": ("recipes", "models"),
    "hardware.yaml": ("skus",),
    "storage.yaml": ("tiers",),
    "engines.yaml": ("engines",),
    "plan.yaml": ("plan",),
}
# Keys an earlier plan.yaml held, and where they live now: an error names the new place
MOVED = {
    "writer_bandwidth": "engines.NAME.writer_bandwidth",
    "writer_scaling": "engines.NAME.writer_scaling",
    "coordination_per_rank": "engines.NAME.coordination.per_rank",
    "fixed_cost": "engines.NAME.fixed_cost",
    "async_slowdown": "engines.NAME.async_slowdown",
}


# ---- JSON Schema for editors (ckptreport schema; ckptreport init points each file at its schema) ----

SCHEMA_DIALECT = "https://json-schema.org/draft/2020-12/schema"
SECTION_DOCS = {
    "recipes": "training recipes by name: what a checkpoint holds per parameter",
    "models": "model families by name",
    "skus": "hardware SKUs by name: a GPU node and its links",
    "tiers": "storage tiers by name",
    "engines": "checkpointing engines by name: how a save is staged, coordinated and written",
}


def json_schemas() -> dict[str, dict]:
    """One JSON Schema per models file (``models.yaml`` -> its schema), built from the same pydantic
    declarations validation uses: keys, types, descriptions; quantities as lenient unit patterns with
    examples (``quantity.json_schema``). An editor with a YAML language server completes and checks
    keys from it; ``ckptreport validate`` stays the judge of values."""
    out: dict[str, dict] = {}
    for fname, sections in FILES.items():
        defs: dict[str, dict] = {}
        if sections == ("plan",):
            body = Plan.model_json_schema()
            defs.update(body.pop("$defs", {}))
        else:
            props = {}
            for sec in sections:
                model = SECTIONS[sec]
                sub = model.model_json_schema()
                defs.update(sub.pop("$defs", {}))
                defs[model.__name__] = sub
                props[sec] = {
                    "type": "object",
                    "description": SECTION_DOCS[sec],
                    "additionalProperties": {"$ref": f"#/$defs/{model.__name__}"},
                }
            body = {"type": "object", "additionalProperties": False, "properties": props}
        body.pop("title", None)
        out[fname] = {
            "$schema": SCHEMA_DIALECT,
            "$id": f"https://ckptreport.invalid/schema/{fname}.json",
            "title": f"ckptreport {fname}",
            **body,
            **({"$defs": defs} if defs else {}),
        }
    return out


def schema_file(fname: str) -> str:
    """The name the schema of a models file is written under: ``plan.yaml`` -> ``plan.schema.json``."""
    return fname.removesuffix(".yaml") + ".schema.json"


SCHEMA_DIR = ".schema"


def write_schemas(directory: str | Path) -> list[Path]:
    """Write the JSON Schema of each models file into ``directory`` (``plan.schema.json`` ...)."""
    from ..base.safeio import make_dir_here, write_text_here

    directory = make_dir_here(directory)  # never below a linked directory
    written = []
    for fname, body in json_schemas().items():
        path = directory / schema_file(fname)
        text = json.dumps(body, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        written.append(write_text_here(path, text))
    return written
