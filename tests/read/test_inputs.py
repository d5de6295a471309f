"""inputs.py: each input is declared once; everything that reads inputs follows from the
declaration. These tests fail when a declaration and anything built from it disagree: the schema
key, its type and the column's unit; what omitting a key means; provenance; measured metrics; the
workbook's layout; the calibration defaults; the README."""

from __future__ import annotations

import dataclasses
import math
import typing

import pytest
from pydantic import BaseModel

from ckptreport.answer import calibration
from ckptreport.model.columns import COLUMNS, column
from ckptreport.read import measured, schema
from ckptreport.read.inputs import (
    ENTITIES,
    GROUPS,
    INPUTS,
    PLAN,
    SCENARIO,
    SOURCES,
    STRATEGY_ENTITY,
    attribute,
    of,
)
from ckptreport.read.provenance import FILE_OF, TABLE, provenance
from ckptreport.read.quantity import Kind
from ckptreport.read.strategies import STRATEGIES, Strategy
from ckptreport.read.units import COLUMN_UNITS

MODEL_OF = {
    "models": schema.Model,
    "recipes": schema.Recipe,
    "skus": schema.Sku,
    "tiers": schema.Tier,
    "engines": schema.Engine,
    "plan": schema.Plan,
}
# the key kinds (units.KINDS, "dtype", a Literal) a column of each unit may be read from
KINDS_OF_UNIT = {
    "GBps": {"bandwidth"},
    "bytes": {"bytes"},
    "s": {"duration"},
    "count": {"count"},
    "usd": {"usd"},
    "pct": {"percent"},
    "TFLOPS": {"flops"},
    "B/param": {"dtype", "count"},
    "label": {"literal", "text"},
    "bool": {"bool"},
}
NOT_INPUTS = {  # the keys that are names, prose or output settings, not figures of the model
    "models": {"recipe", "description", "source"},
    "recipes": {"description", "source"},
    "skus": {"description", "source"},
    "tiers": {
        "sites",
        "description",
        "source",
        "unit",
        "owned",
        "support_usd_per_year",
    },  # the purchase's
    "engines": {"strategies", "description", "source"},
    STRATEGY_ENTITY: {
        "name",
        "doc",
        "built_on",
        "replicas_why",
        "reads",
    },  # what a trait does not hold
    "plan": {
        "models",
        "recipes",
        "skus",
        "tiers",
        "engines",
        "gpus",
        "intervals",
        "strategies",
        "max_rows",
        "workbook_rows",
        "summary",
        "briefs",
        "jobs",
        "clusters",
        "paper",
    },
}


def _kinds(annotation, metadata=()) -> set[str]:
    """The key kinds an annotation accepts: the Kind markers of its quantities, 'literal' for choices."""
    found = set()
    for m in (*metadata, *getattr(annotation, "__metadata__", ())):
        if isinstance(m, Kind):
            found.add(m.key)
    origin = typing.get_origin(annotation)
    if origin is typing.Literal:
        found.add("literal")
    if annotation is str:
        found.add("text")
    if annotation is bool:
        found.add("bool")
    for arg in typing.get_args(annotation):
        if not isinstance(arg, str):
            found |= _kinds(arg)
    return found


def _field(model: type[BaseModel], key: str):
    head, _, rest = key.partition(".")
    info = model.model_fields[attribute(head)]
    assert (info.alias or attribute(head)) == head, f"{key}: the field is not spelt as the key"
    if not rest:
        return info
    sub = next(
        a
        for a in typing.get_args(info.annotation)
        if isinstance(a, type) and issubclass(a, BaseModel)
    )
    return _field(sub, rest)


def _leaf_keys(entity: str, model: type[BaseModel], prefix: str = "") -> set[str]:
    """Every key of an entity, a declared mapping's keys dotted (local_nvme.write)."""
    out = set()
    for name, info in model.model_fields.items():
        key = prefix + (info.alias or name)
        if (entity, key) in GROUPS:
            sub = next(
                a
                for a in typing.get_args(info.annotation)
                if isinstance(a, type) and issubclass(a, BaseModel)
            )
            out |= _leaf_keys(entity, sub, key + ".")
        else:
            out.add(key)
    return out


@pytest.mark.parametrize(
    "name", [n for n, i in INPUTS.items() if i.entity not in (SCENARIO, STRATEGY_ENTITY)]
)
def test_every_input_is_a_key_of_its_entity_with_a_type_of_its_unit(name):
    """The key exists in the schema, is spelt as users write it, and holds what the unit needs."""
    inp = INPUTS[name]
    info = _field(MODEL_OF[inp.entity], inp.key)
    assert _kinds(info.annotation, info.metadata) & KINDS_OF_UNIT[inp.unit], (name, info.annotation)
    assert info.description.startswith(inp.doc)
    assert info.is_required() == inp.required  # inside its mapping, for a dotted key


TRAIT_TYPES = {
    "bool": "bool",
    "label": "str",
    "count": "int",
}  # a trait's annotation by its column's unit


def test_every_trait_is_a_field_of_the_strategy_table_and_every_field_a_trait_or_named_as_not_one():
    """A strategy's traits are the Strategy dataclass's fields: each declared input is one, with the type
    its unit needs and a value in every strategy; a field added without a declaration would never reach
    a column."""
    fields = {f.name: f for f in dataclasses.fields(Strategy)}
    traits = of(STRATEGY_ENTITY)
    for inp in traits:
        assert inp.key == inp.name and inp.key in fields, inp.name
        assert fields[inp.key].type == TRAIT_TYPES[inp.unit], (inp.name, fields[inp.key].type)
        assert inp.required and inp.default is None
        for name, declared in STRATEGIES.items():
            assert inp.value(declared, name) is not None
    assert set(fields) - {i.key for i in traits} == NOT_INPUTS[STRATEGY_ENTITY]


@pytest.mark.parametrize("entity", [e for e in ENTITIES if e != STRATEGY_ENTITY])
def test_every_key_of_the_schema_is_an_input_or_named_as_not_one(entity):
    """A figure added to the schema without a declaration would be validated and then ignored."""
    declared = {i.key for i in of(entity)}
    keys = _leaf_keys(entity, MODEL_OF[entity])
    assert keys - declared == NOT_INPUTS[entity], "undeclared keys"
    assert declared <= keys


def test_every_optional_input_says_what_omitting_it_means():
    for inp in INPUTS.values():
        if inp.entity == SCENARIO:
            continue
        optional = not inp.required or "." in inp.key
        if optional:
            assert inp.default is not None or inp.derive is not None, inp.name
            assert inp.absent or inp.derived_doc, inp.name
        if inp.derive is not None:
            assert inp.derived_from and inp.derived_doc, inp.name
        assert inp.unit in COLUMN_UNITS and inp.name not in COLUMNS, inp.name
    assert {g.key for g in GROUPS.values()} == {
        i.key.split(".")[0]
        for i in INPUTS.values()
        if i.key and "." in i.key and i.entity != SCENARIO
    }


def test_provenance_of_every_input_of_every_entity(shipped):
    """Every input of every shipped entity, given, derived or omitted, names its file, line and basis."""
    for inp in INPUTS.values():
        if inp.entity == SCENARIO:
            continue
        names = [PLAN] if inp.entity == PLAN else list(shipped.section(inp.entity))
        for name in names:
            prov = provenance(shipped, inp, {inp.entity: name})
            if inp.entity == STRATEGY_ENTITY:  # declared in code: the table and the strategy's doc
                assert (prov.file, prov.basis) == (TABLE, "definition") and STRATEGIES[
                    name
                ].doc in prov.source
                continue
            assert prov.file == FILE_OF[inp.entity] and prov.line > 0, (inp.name, name, prov)
            entity = shipped.entity(inp.entity, name)
            if inp.given(entity):
                assert prov.basis in ("spec", "measured", "derived", "assumption", "input")
            elif inp.derived(entity) is not None:
                assert prov.basis == "derived" and prov.source.startswith(inp.derived_doc)
            else:
                assert prov.basis == "default" and prov.source == f"omitted: {inp.absent}"


def test_an_omitted_key_takes_its_declared_default_and_a_derived_one_its_rule(shipped, frame):
    """gh200 gives no d2h_per_node (derived: gpus_per_node x d2h_per_gpu) and no local NVMe (0);
    s3-standard gives no aggregate write (unbounded); fsx-lustre-1000 derives it from per-TiB x capacity."""

    def row(**where):
        mask = True
        for k, v in where.items():
            mask = mask & (frame[k] == v)
        return frame[mask].iloc[0]

    gh = row(sku="gh200")
    assert gh["d2h_node_GBps"] == gh["gpus_per_node"] * gh["d2h_gpu_GBps"]
    assert gh["nvme_write_GBps"] == INPUTS["nvme_write_GBps"].default == 0
    assert math.isinf(row(tier="s3-standard")["tier_write_GBps"])
    fsx = row(tier="fsx-lustre-1000")  # per TiB without a capacity: sized by the plan
    assert fsx["sized_per_TiB"] and math.isnan(fsx["tier_capacity_bytes"])
    assert fsx["tier_bought_GBps"] == pytest.approx(
        fsx["tier_write_per_TiB_GBps"] * fsx["provisioned_bytes"] / 2**40
    )
    assert fsx["tier_source"] == "spec"  # its per-TiB rate


def test_measured_metrics_name_the_inputs_they_replace():
    """Each metric a measured file may hold replaces one declared input (or is informative)."""
    targets = {m: t for m, t in measured.TARGETS.items() if t is not None}
    assert {t.name for t in targets.values()} == {i.name for i in INPUTS.values() if i.measured}
    assert all(t.unit == "GBps" for t in targets.values())


def test_source_columns_name_declared_bandwidths():
    for src in SOURCES.values():
        assert all(INPUTS[n].unit == "GBps" for n in src.inputs), src.name


def test_calibration_rows_hold_every_input():
    """The calibration defaults are the declared defaults plus a node's figures: nothing missing."""
    assert set(calibration.BASE) == set(INPUTS)
    for inp in INPUTS.values():
        if isinstance(inp.default, float) and inp.name not in calibration.NODE:
            assert calibration.BASE[inp.name] == inp.default or math.isnan(inp.default)


def test_a_column_reading_an_undeclared_name_is_refused():
    with pytest.raises(NameError, match="neither an input nor an earlier column"):
        column("s")(lambda not_declared_anywhere: not_declared_anywhere)
    with pytest.raises(NameError, match="defined twice"):

        def stall_s(d2h_s):
            return d2h_s

        column("s")(stall_s)
    with pytest.raises(NameError, match="unknown unit"):

        def fresh_name_s(d2h_s):
            return d2h_s

        column("seconds")(fresh_name_s)
