"""answer/explain.py: one scenario's arithmetic, its inputs with their places. A strategy's traits are
inputs of its rows, cited from the strategy table; an engine is found for a strategy built on another."""

from __future__ import annotations

from ckptreport.answer.explain import Scenario, default_engine, explanation


def test_a_strategy_built_on_another_finds_an_engine_that_runs_it(shipped):
    """jit is built on sync: no engine lists it, so the plan's first engine implementing sync runs it
    (the first engine of the plan implements async only). peer_memory is listed by nvrx-local, so
    only it runs peer_memory, though dcp-async-cached implements async, the strategy it is built on."""
    assert default_engine(shipped, "jit") == "megatron-dist-ckpt"
    assert default_engine(shipped, "peer_memory") == "nvrx-local"
    steps = explanation(shipped, Scenario("llama3-70b", "dgx-h100", "pfs-100", 1024, 1800.0, "jit"))
    assert steps["scenario"]["engine"] == "megatron-dist-ckpt"


def test_the_traits_a_row_reads_are_cited_from_the_strategy_table(shipped):
    steps = explanation(
        shipped, Scenario("llama3-70b", "dgx-h100", "pfs-100", 1024, 1800.0, "tiered")
    )
    inputs = {i["name"]: i for i in steps["inputs"]}
    assert (
        inputs["lands_on_nvme"]["display"] == "yes"
        and inputs["blocks_for_persist"]["display"] == "no"
    )
    assert inputs["fixed_cost"]["display"] == "tiered"
    for trait in ("lands_on_nvme", "stages_snapshot", "fixed_cost"):
        assert (inputs[trait]["basis"], inputs[trait]["file"], inputs[trait]["line"]) == (
            "definition",
            "the strategy table",
            0,
        )
        assert inputs[trait]["source"].startswith(
            "tiered: as async, but the background write lands on node-local"
        )
    assert (
        "peer_replicas" not in inputs and "full_every" not in inputs
    )  # only a layered strategy's rows read them
    nvme = next(s for s in steps["steps"] if s["name"] == "nvme_s")
    assert nvme["formula"].startswith("if(lands_on_nvme,") and nvme["substituted"].startswith(
        "if(yes,"
    )
    assert nvme["value"] > 0
