"""model/plan.py: which rows the plan has. Its rules read the engines' strategies and the strategies'
traits, never a strategy's name: a test strategy with traits of its own is crossed, and left out, by
the same rules as the shipped ones."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from ckptreport.base.errors import InputError
from ckptreport.model.columns import COLUMNS
from ckptreport.model.evaluate import scenarios
from ckptreport.model.plan import checked, plan_rows, replicas_needed, runs, too_few_replicas
from ckptreport.read.quantity import Q
from ckptreport.read.strategies import Strategy, declared

TRIPLE = Strategy(
    "triple",
    "a sync save that needs three data-parallel replicas (a test's)",
    built_on="sync",
    blocks_for_persist=True,
    fixed_cost="sync",
    min_replicas=3,
    replicas_why="three replicas to vote on the state",
)
NVME = Strategy(
    "nvme_only",
    "as tiered, on another engine key (a test's)",
    built_on="async",
    stages_snapshot=True,
    keeps_host_copy=True,
    lands_on_nvme=True,
    fixed_cost="tiered",
)


def narrow(inputs, **update):
    return dataclasses.replace(inputs, plan=inputs.plan.model_copy(update=update))


def test_an_engine_runs_what_it_implements_and_what_is_built_on_it(shipped):
    torch_save, dcp = shipped.engines["torch-save"], shipped.engines["dcp-async-cached"]
    assert (
        runs(torch_save, "sync") and runs(torch_save, "jit") and not runs(torch_save, "peer_memory")
    )
    assert (
        runs(dcp, "async")
        and runs(dcp, "peer_memory")
        and runs(dcp, "differential")
        and not runs(dcp, "jit")
    )
    with declared(TRIPLE):
        assert runs(torch_save, "triple") and not runs(dcp, "triple")


def test_too_few_replicas_reads_min_replicas_and_the_one_definition_of_replicas(shipped):
    """Llama 3 405B at TP8 x PP16 is one replica on 128 GPUs, two on 256: a strategy needing three is
    left out at both, with its own reason; at 1,024 (8 replicas) it runs. The replicas are the dp_ranks
    column's."""
    with declared(TRIPLE):
        inputs = narrow(
            shipped,
            models=["llama3-405b"],
            skus=["dgx-h100"],
            tiers=["pfs-100"],
            engines=["torch-save"],
            strategies=["sync", "triple"],
            recipes=None,
            gpus=[Q(float(g), str(g), "count") for g in (128, 256, 1024)],
            intervals=[Q(1800.0, "30 min", "duration")],
        )
        from ckptreport.model.plan import dimensions

        dims = dimensions(inputs)
        few = too_few_replicas(inputs, dims)
        assert few.shape == (2, 1, 3)
        assert few[0].tolist() == [[False, False, False]] and few[1].tolist() == [
            [True, True, False]
        ]
        assert COLUMNS["dp_ranks"].fn(np.array([128.0, 256.0, 1024.0]), 8.0, 16.0).tolist() == [
            1.0,
            2.0,
            8.0,
        ]
        frame, dropped = scenarios(inputs)
        assert set(frame[frame["strategy"] == "triple"]["gpus"]) == {1024}
        assert {d.reason: d.rows for d in dropped} == {replicas_needed("triple"): 2}
        assert replicas_needed("triple") == (
            "triple needs 3 data-parallel replicas (three replicas to vote on the "
            "state), more than the job holds"
        )
        assert plan_rows(inputs) == (len(frame), dropped)


def test_a_strategy_that_lands_on_nvme_is_left_out_where_there_is_no_remote_tier(shipped):
    with declared(NVME):
        inputs = narrow(
            shipped,
            models=["llama3-8b"],
            skus=["dgx-h100"],
            tiers=["local-nvme", "pfs-100"],
            engines=["dcp-async-cached"],
            strategies=["async", "nvme_only"],
            recipes=None,
            gpus=[Q(1024.0, "1024", "count")],
            intervals=[Q(1800.0, "30 min", "duration")],
        )
        frame, dropped = scenarios(inputs)
        mine = frame[frame["strategy"] == "nvme_only"]
        assert set(mine["tier"]) == {"pfs-100"} and (mine["nvme_s"] > 0).all()
        assert [d.reason for d in dropped] == [
            "nvme_only needs a remote tier to drain to (the tier is node-local NVMe)"
        ]


def test_checked_refuses_a_plan_over_its_max_rows_at_the_key(shipped):
    small = narrow(shipped, max_rows=Q(10.0, "10", "count"))
    with pytest.raises(InputError) as caught:
        checked(small)
    (problem,) = caught.value.problems
    assert (
        problem.path == "max_rows"
        and problem.file.endswith("plan.yaml")
        and "more than max_rows (10)" in problem.message
    )
    assert checked(shipped) is shipped
