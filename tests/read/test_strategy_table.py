"""read/strategies.py: the strategy table. Each strategy is one entry of traits; everything that names
strategies derives from it (the plan's axis and its checks, the sweeps' masks, the compared pair)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ckptreport.read.inputs import INPUTS, STRATEGY_ENTITY, of, trait_values
from ckptreport.read.schema import Plan, StrategyName
from ckptreport.read.strategies import (
    BACKGROUND,
    BASELINE,
    COMPARED,
    FIXED_COSTS,
    STRATEGIES,
    Strategy,
    declared,
    layered,
    listed,
    names,
    read_only_by,
)


def test_the_shipped_table():
    assert names() == (
        "sync",
        "async",
        "tiered",
        "peer_memory",
        "differential",
        "replica_recovery",
        "jit",
    )
    assert layered() == {"peer_memory", "differential", "replica_recovery", "jit"}
    assert {s.name: s.built_on for s in STRATEGIES.values() if s.built_on} == {
        "peer_memory": "async",
        "differential": "async",
        "replica_recovery": "async",
        "jit": "sync",
    }
    assert COMPARED == (BASELINE, BACKGROUND) and set(COMPARED) <= set(STRATEGIES)
    assert STRATEGIES[BASELINE].blocks_for_persist and not STRATEGIES[BACKGROUND].blocks_for_persist


def test_every_strategy_either_waits_for_its_save_or_stages_a_snapshot():
    """The two ways a save can go (the columns' two branches): training waits for the persist, or a
    snapshot is staged and persisted after; a save after a failure waits for it (jit)."""
    for s in STRATEGIES.values():
        assert s.blocks_for_persist != s.stages_snapshot, s.name
        assert s.fixed_cost in FIXED_COSTS
        assert not (s.saves_after_failure and s.stages_snapshot), s.name
        assert not s.keeps_host_copy or s.stages_snapshot, s.name  # a copy kept is a copy staged


def test_the_inputs_only_a_strategy_reads_are_declared_inputs():
    only = read_only_by()
    assert only == {
        "peer_replicas": ("peer_memory",),
        "durable_every": ("peer_memory",),
        "node_loss_pct": ("peer_memory",),
        "peer_nic_GBps": ("peer_memory", "replica_recovery"),
        "full_every": ("differential",),
        "diff_fraction_pct": ("differential",),
        "replica_confined_pct": ("replica_recovery",),
        "replica_reform_s": ("replica_recovery",),
        "jit_overhead_pct": ("jit",),
        "batch_tokens": ("jit",),
    }
    assert set(only) <= set(INPUTS)


def test_a_strategy_is_its_traits_as_input_columns():
    values = trait_values("peer_memory")
    assert set(values) == {i.name for i in of(STRATEGY_ENTITY)}
    assert values["copies_to_peers"] == 1.0 and values["saves_differences"] == 0.0
    assert values["fixed_cost"] == "async" and values["min_replicas"] == 1.0
    assert trait_values("jit")["min_replicas"] == 2.0


def test_declared_adds_a_strategy_for_a_block_and_takes_it_out():
    extra = Strategy(
        "snapshot_only",
        "an async snapshot in host memory, never persisted",
        built_on="async",
        stages_snapshot=True,
        keeps_host_copy=True,
        fixed_cost="async",
    )
    with declared(extra):
        assert names()[-1] == "snapshot_only" and "snapshot_only" in layered()
        assert Plan.model_validate(
            {
                "gpus": ["8"],
                "intervals": ["1 h"],
                "strategies": ["snapshot_only"],
                "target_overhead": "1%",
                "mfu": "40%",
                "restart": "10 min",
                "retention": "1",
            }
        ).strategies == ["snapshot_only"]
    assert "snapshot_only" not in STRATEGIES


def test_the_tables_rules_are_checked_on_declaration():
    with pytest.raises(ValueError, match="not one of"):
        Strategy("x", "a fixed cost of no engine", fixed_cost="sometimes")
    with pytest.raises(ValueError, match="say why"):
        Strategy("x", "needs replicas", min_replicas=3)
    with pytest.raises(ValueError, match="declared twice"):
        with declared(Strategy("async", "again")):
            pass
    assert STRATEGIES["async"].doc.startswith(
        "training stops for a snapshot"
    )  # the shipped one is kept


def test_a_name_outside_the_table_is_refused_as_a_literal_would_be():
    """The plan's and an engine's strategies are checked against the table when the file is read; the
    message lists the table's names (what the loader prints at the key)."""
    with pytest.raises(ValidationError) as caught:
        Plan.model_validate(
            {
                "gpus": ["8"],
                "intervals": ["1 h"],
                "strategies": ["asinc", 3],
                "target_overhead": "1%",
                "mfu": "40%",
                "restart": "10 min",
                "retention": "1",
            }
        )
    errors = caught.value.errors()
    assert [e["type"] for e in errors] == ["literal_error", "literal_error"]
    assert (
        errors[0]["ctx"]["expected"]
        == "'sync', 'async', 'tiered', 'peer_memory', 'differential', 'replica_recovery' or 'jit'"
    )
    assert Plan.model_json_schema()["properties"]["strategies"]["items"] == {
        "enum": list(names()),
        "type": "string",
    }
    assert StrategyName._known("jit") == "jit"
    assert listed(("a",)) == "a" and listed(("a", "b", "c")) == "a, b or c"
