"""The strategies beyond sync, async and tiered: peer_memory, differential, replica_recovery and jit,
each against hand arithmetic on one documented case.

The case, for all three: a 1B-parameter model saving 14 B/param (bf16 weights, fp32 master, Adam
states): 14 GB a checkpoint, fully sharded over 16 GPUs on two 8-GPU nodes, 7 GB a node. GPU ->
host 25 GB/s per GPU (200 GB/s a node), the storage NIC and the writers unlimited, a 100 GB/s tier
(read as fast), 50 GB/s between nodes. A checkpoint every 30 min; the target 1%; per-GPU MTBF
50,677 h (the cluster's: 50,677 / 16 h); a restart 10 min. Of the failures 75% restart the
process from host memory, 20% lose one node, 5% need the durable tier. No engine cost: no fixed
cost, no coordination, no slowdown.
"""

from __future__ import annotations

import pytest

from ckptreport.answer.calibration import predict_many

GB = 1e9
CASE = dict(
    gpus=16.0,
    interval_s=1800.0,
    tier_write_GBps=100.0,
    tier_read_GBps=100.0,
    peer_nic_GBps=50.0,
    host_recoverable_pct=75.0,
    node_loss_pct=20.0,
    restart_s=600.0,
    retention=3.0,
)
CKPT, NODE_BYTES = 14 * GB, 7 * GB
SNAPSHOT_S = NODE_BYTES / (200 * GB)  # 0.035 s: 8 GPUs x 25 GB/s into host memory
HOST_S = SNAPSHOT_S  # back from host memory to the GPUs at the same rate
TIER_READ_S = (
    CKPT / (100 * GB) + HOST_S
)  # every node reads its shard at once: 14 GB at 100 GB/s, then to the GPUs
MTBF_S = 50677 * 3600.0 / 16


def row(strategy: str, **inputs) -> dict:
    return predict_many([{**CASE, "strategy": strategy, **inputs}])[0]


def test_the_case_is_what_the_docstring_says():
    r = row("async")
    assert r["ckpt_bytes"] == pytest.approx(CKPT) and r["bytes_per_node"] == pytest.approx(
        NODE_BYTES
    )
    assert r["nodes"] == 2 and r["snapshot_s"] == pytest.approx(SNAPSHOT_S)
    assert r["write_s"] == pytest.approx(CKPT / (100 * GB))  # 0.14 s into the tier
    assert r["cluster_mtbf_s"] == pytest.approx(MTBF_S)


def test_peer_memory_against_hand_arithmetic():
    """k = 1 peer, a durable save every N = 6 checkpoints (every 3 h)."""
    r = row("peer_memory", peer_replicas=1.0, durable_every=6.0)
    peer_s = 1 * NODE_BYTES / (50 * GB)  # 0.14 s to copy a node's 7 GB to its one peer
    assert r["peer_s"] == pytest.approx(peer_s)
    # the tier sees one save in six: 0.14 s of writing spread over six checkpoints
    assert r["background_s"] == pytest.approx(peer_s + 0.14 / 6)
    assert r["stall_s"] == pytest.approx(SNAPSHOT_S)  # no slowdown: the stall is the copy to host
    # storage: a save must land within 6 intervals (10,800 s), not one, and may outlast them by the
    # stall the 1% target still leaves (18 s less the snapshot) as backpressure, six times over (it waits
    # once in six saves): a sixth of async's bandwidth
    left = 0.01 * 1800.0 - SNAPSHOT_S
    assert r["required_write_GBps"] == pytest.approx(CKPT / (6 * (1800.0 + left)) / GB)
    assert r["required_write_GBps"] == pytest.approx(row("async")["required_write_GBps"] / 6)
    assert r["host_memory_needed_bytes"] == pytest.approx(
        NODE_BYTES * (1 + 1)
    )  # its own copy and its peer's
    # restore: 75% from host memory, 20% from a peer (7 GB at 50 GB/s, then to the GPUs), 5% from the tier
    restore = 0.75 * HOST_S + 0.20 * (NODE_BYTES / (50 * GB) + HOST_S) + 0.05 * TIER_READ_S
    assert r["restore_s"] == pytest.approx(restore)
    # work redone: half an interval for 95% of failures; half of six intervals for the 5% that need the tier
    lost = 0.95 * 900 + 0.05 * 6 * 1800 / 2
    assert r["lost_work_s"] == pytest.approx(lost)
    assert r["rework_pct"] == pytest.approx(100 * (lost + 600 + restore) / MTBF_S)
    rework = (lost + 600 + restore) / MTBF_S  # a share of the wall clock: failures strike by it
    assert r["waste_pct"] == pytest.approx(100 * (SNAPSHOT_S / 1800 + rework) / (1 - rework))
    assert r["capacity_needed_bytes"] == pytest.approx(3 * CKPT)  # retention 3 durable saves
    assert r["layout_ok"]
    assert not row("peer_memory", peer_replicas=2.0)["layout_ok"]  # two peers need three nodes


def test_replica_recovery_against_hand_arithmetic():
    """80% of failures confined to one of the 16 data-parallel replicas (fully sharded: one GPU each),
    a 3-minute re-form: the job trains on without the failed replica, which restarts (10 min) and
    copies a healthy replica's live state over the peer network; the other 20% restart the job from
    its async checkpoint."""
    r = row("replica_recovery", replica_confined_pct=80.0, replica_reform_s=180.0)
    a = row("async")
    assert r["dp_ranks"] == 16 and r["replica_pct"] == pytest.approx(80.0)
    assert r["stall_s"] == pytest.approx(SNAPSHOT_S)  # its saves are async's
    assert r["required_write_GBps"] == pytest.approx(a["required_write_GBps"])  # the tier it needs
    assert r["capacity_needed_bytes"] == pytest.approx(a["capacity_needed_bytes"])
    restore = 0.75 * HOST_S + 0.25 * TIER_READ_S  # a job restart: async's recovery mix
    assert r["restore_s"] == pytest.approx(restore) and r["lost_work_s"] == pytest.approx(900)
    # a replica is one GPU (tp = pp = 1) on one node: it takes the whole 14 GB from a healthy one at
    # 50 GB/s, then into its GPU at the node's 200 GB/s
    copy = CKPT / (50 * GB) + CKPT / (200 * GB)
    assert r["replica_copy_s"] == pytest.approx(copy)
    lost_one = 180 + (600 + copy) / 16  # the re-form stalls all; the replica is 1/16 of them
    assert r["replica_loss_s"] == pytest.approx(lost_one)
    rework = 100 * (0.2 * (900 + 600 + restore) + 0.8 * lost_one) / MTBF_S
    assert r["rework_pct"] == pytest.approx(rework)
    # per hour of training: (overhead + rework) / (1 - rework); ETTR (1 - rework) / (1 + overhead)
    assert r["waste_pct"] == pytest.approx(
        100 * (SNAPSHOT_S / 1800 + rework / 100) / (1 - rework / 100)
    )
    assert r["ettr_pct"] == pytest.approx(100 * (1 - rework / 100) / (1 + SNAPSHOT_S / 1800))
    assert r["replica_share_pct"] == pytest.approx(100 * 0.8 * lost_one / MTBF_S)
    assert (
        r["rework_pct"] < a["rework_pct"] / 3
    )  # against async's 100 x (900 + 600 + restore) / MTBF
    assert r["durable_mtbf_s"] == pytest.approx(
        MTBF_S / 0.2
    )  # the failures that need the checkpoint
    assert r["daly_interval_s"] > a["daly_interval_s"] * 2  # so its cadence is far rarer
    assert r["restart_recovery_s"] == pytest.approx(600 + restore + 900)  # a job restart
    assert r["replica_recovery_s"] == pytest.approx(180 + 600 + copy)  # a dropped replica
    recover = 0.2 * (600 + restore + 900) + 0.8 * (180 + 600 + copy)
    assert r["time_to_recover_s"] == pytest.approx(recover)
    parts = ("stop", "interference", "rework", "restart", "restore", "replica")
    assert r["ettr_pct"] + sum(r[f"{p}_share_pct"] for p in parts) == pytest.approx(100)
    assert r["layout_ok"]
    assert not row("replica_recovery", gpus=1.0)[
        "layout_ok"
    ]  # one replica cannot train on without itself


def test_differential_against_hand_arithmetic():
    """A full checkpoint every K = 4 saves, differences of 25% between."""
    r = row("differential", full_every=4.0, diff_fraction_pct=25.0)
    share = (1 + 3 * 0.25) / 4  # 0.4375 of the checkpoint per save, on average
    assert r["durable_share_pct"] == pytest.approx(100 * share)
    assert r["durable_bytes"] == pytest.approx(share * CKPT)
    assert r["write_s"] == pytest.approx(share * CKPT / (100 * GB))
    assert r["stall_s"] == pytest.approx(SNAPSHOT_S)  # staged as async's
    assert r["required_write_GBps"] == pytest.approx(row("async")["required_write_GBps"] * share)
    # kept: 3 retained chains, each the full save and up to three differences
    assert r["capacity_needed_bytes"] == pytest.approx(3 * (1 + 3 * 0.25) * CKPT)
    # a restore reads the full save and, on average, half the chain (1.5 differences)
    chain = 1 + 1.5 * 0.25
    tier = CKPT * chain / (100 * GB) + HOST_S
    assert r["restore_tier_s"] == pytest.approx(tier)
    assert r["restore_s"] == pytest.approx(
        0.75 * HOST_S + 0.25 * tier
    )  # node losses read the tier too
    assert r["lost_work_s"] == pytest.approx(900)


def test_jit_against_hand_arithmetic():
    """No periodic save, a 0.1% failure-detection overhead, a 4M-token batch; the survivors write the
    state after a failure."""
    r = row("jit", jit_overhead_pct=0.1, batch_tokens=4e6)
    assert r["stall_s"] == pytest.approx(0.001 * 1800) and r["overhead_pct"] == pytest.approx(0.1)
    assert r["snapshot_s"] == 0 and r["background_s"] == 0 and r["host_memory_needed_bytes"] == 0
    assert (
        r["required_write_GBps"] == 0
    )  # nothing periodic to write: storage is bought for capacity alone
    assert r["capacity_needed_bytes"] == pytest.approx(
        CKPT
    )  # the one state written after a failure
    compute = 6 * 1e9 * 1e12 / (16 * 312e12 * 0.40)
    step = compute * 4e6 / 1e12
    assert r["step_s"] == pytest.approx(step) and r["lost_work_s"] == pytest.approx(step)
    # after a failure: a sync save (to host, then into the tier at the bandwidth bought), then read back
    save = SNAPSHOT_S + CKPT / (r["tier_bought_GBps"] * GB)
    read = CKPT / (r["read_GBps"] * GB) + HOST_S
    assert r["failure_save_s"] == pytest.approx(save)
    assert r["restore_s"] == pytest.approx(save + read)
    assert r["rework_pct"] == pytest.approx(100 * (step + 600 + save + read) / MTBF_S)
    assert r["optimal_waste_pct"] == pytest.approx(r["waste_pct"])  # no cadence to choose
    assert r["layout_ok"]


def test_one_data_parallel_replica_cannot_save_just_in_time():
    """tp x pp fills the job: dp 1, no survivor holds the state."""
    r = row("jit", tp=8.0, pp=2.0, batch_tokens=4e6)
    assert r["dp_ranks"] == 1 and not r["layout_ok"] and not r["meets_target"]


def _readme_answer() -> list[list[str]]:
    from conftest import REPO

    text = (REPO / "README.md").read_text()
    part = text[text.index("**The shipped defaults' answer.**") :]
    part = part[: part.index("\n\n", part.index("| strategies allowed"))]
    return [
        [c.strip() for c in line.strip("|").split("|")]
        for line in part.splitlines()
        if line.startswith("| ") and not line.startswith("| strategies allowed")
    ]


def test_the_readmes_answer_for_the_on_premises_405b_buyer_is_what_the_tool_says(monkeypatch):
    """The README's table of what Llama 3 405B on DGX H100 buys as strategies are allowed: each row is
    the summary's recommendation for a build of the shipped models with those strategies."""
    import dataclasses

    from ckptreport.answer.report import compute
    from ckptreport.answer.types import option_label
    from ckptreport.base.paths import shipped_models
    from ckptreport.model import display
    from ckptreport.read.load import load

    rows = _readme_answer()
    assert len(rows) == 4
    inputs = load(shipped_models())
    allowed = ["sync", "async", "tiered"]
    previous = None  # the option of the row before (a row may say it is "the same")
    for extra, row in zip([None, "peer_memory", "differential", "jit"], rows):
        if extra:
            allowed.append(extra)
        plan = inputs.plan.model_copy(
            update={"strategies": list(allowed), "models": ["llama3-405b"], "skus": ["dgx-h100"]}
        )
        line = compute(dataclasses.replace(inputs, plan=plan), needs=frozenset()).summary.iloc[0]
        option = option_label(line["option_strategy"], line["option_tier"], line["option_engine"])
        assert row[1] == option or (row[1].startswith("the same") and option == previous), (
            row,
            option,
        )
        assert row[2] == display.of("tier_bought_GBps", line["option_bought_GBps"])
        assert row[3] == display.value(line["option_storage_usd_month"], "usd")
        assert row[4] == display.value(line["option_lost_gpu_usd_month"], "usd")
        assert row[5] == display.value(line["option_total_usd"], "usd")
        previous = option


def test_jit_on_a_single_replica_is_left_out_with_the_reason():
    """Llama 3 405B at TP8 x PP16 fills 128 GPUs: one data-parallel replica, no survivor to save from.
    Its jit rows there are left out, counted with the reason; at 1,024 GPUs (8 replicas) they exist."""
    import dataclasses

    from ckptreport.base.paths import shipped_models
    from ckptreport.model.evaluate import scenarios
    from ckptreport.model.plan import plan_rows, replicas_needed
    from ckptreport.read.load import load
    from ckptreport.read.quantity import Q

    inputs = load(shipped_models())
    model = inputs.models["llama3-405b"]
    assert model.tp.value * model.pp.value == 128
    plan = inputs.plan.model_copy(
        update={
            "strategies": ["async", "jit"],
            "models": ["llama3-405b"],
            "skus": ["dgx-h100"],
            "gpus": [Q(128.0, "128", "count"), Q(1024.0, "1024", "count")],
        }
    )
    narrow = dataclasses.replace(inputs, plan=plan)
    frame, dropped = scenarios(narrow)
    jit = frame[frame["strategy"] == "jit"]
    assert len(jit) > 0 and set(jit["gpus"]) == {1024.0} and (jit["dp_ranks"] >= 2).all()
    assert 128.0 in set(frame[frame["strategy"] == "async"]["gpus"])
    reasons = {d.reason: d.rows for d in dropped}
    assert replicas_needed("jit") == (
        "jit needs a second data-parallel replica to save from (tp x pp of the model fills the job)"
    )
    assert reasons[replicas_needed("jit")] == len(
        jit
    )  # as many as at 1,024 GPUs: the same tiers, engines and intervals
    rows, counted = plan_rows(narrow)
    assert rows == len(frame) and {d.reason: d.rows for d in counted} == reasons


def test_replica_recovery_rows_recalculate_in_libreoffice_to_the_engine(tmp_path):
    """The small plan with replica_recovery beside async: its new columns (replica_pct, replica_copy,
    replica_loss, durable_mtbf, time_to_recover, replica_share) are formulas in the workbook, and
    LibreOffice's recalculation of every cell equals the engine's frame."""
    import shutil

    from ckptreport.build import build

    from conftest import SMALL_PLAN, recalculated, shipped_models
    from spreadsheets import assert_cells_equal_engine, scenario_cells

    models = tmp_path / "models"
    shutil.copytree(shipped_models(), models)
    plan = SMALL_PLAN.replace(
        "strategies: [sync, async, tiered]", "strategies: [async, replica_recovery]"
    )
    assert plan != SMALL_PLAN
    extra = "host_recoverable: 75%\nreplica_confined: 76.6%\nreplica_reform: 3 min\n"
    (models / "plan.yaml").write_text(plan + extra)
    result = build(models, tmp_path / "out", skip=["page", "briefs"])
    frame = result.frame
    mine = frame[frame["strategy"] == "replica_recovery"]
    assert len(mine) and (mine["replica_pct"] == 76.6).all()
    keys = ["model", "recipe", "sku", "tier", "engine", "gpus", "interval_s"]
    both = mine.merge(frame[frame["strategy"] == "async"], on=keys, suffixes=("", "_async"))
    assert len(both) == len(mine) and (both["rework_pct"] < both["rework_pct_async"]).all()
    lo = recalculated(tmp_path / "out" / "ckptreport.xlsx", tmp_path)
    shown = scenario_cells(lo)
    assert "replica_recovery" in set(shown["strategy"])
    for column in ("replica_copy_s", "replica_loss_s", "replica_recovery_s", "time_to_recover_s"):
        assert column in shown.columns, column
    frame = frame.astype({c: object for c in frame.select_dtypes("category").columns})
    assert assert_cells_equal_engine(shown, frame) > 1000


def test_the_100k_gpu_rows_are_finite_flagged_and_attributed(shipped, frame):
    """The shipped plan reaches 100,352 GPUs, its source named; every combination has a row there, its
    goodput and recovery figures finite, a waste that is unbounded only where the row says failures
    take all the wall clock, and every engine's scaling terms flagged as used beyond their cases."""
    import numpy as np

    top = max(shipped.plan.gpus, key=lambda q: q.value)
    assert top.value == 100_352 and "arXiv 2602.00277" in top.source
    rows = frame[frame["gpus"] == top.value]
    assert len(rows) == (frame["gpus"] == 16_384).sum() > 0
    for name in (
        "ettr_pct",
        "optimal_ettr_pct",
        "time_to_recover_s",
        "optimal_interval_s",
        "stall_s",
    ):
        values = rows[name].to_numpy(float)
        assert np.isfinite(values).all(), name
    ettr = rows["optimal_ettr_pct"].to_numpy(float)
    assert ((ettr >= 0) & (ettr < 100)).all()
    # none at all where even the best cadence loses everything (a sync save of many minutes on a slow
    # tier against a 30-minute MTBF): its waste is unbounded, never a finite figure printed as normal
    never = ~np.isfinite(rows["optimal_waste_pct"].to_numpy(float))
    assert (never == (ettr == 0)).all() and set(rows.loc[never, "strategy"].astype(str)) == {"sync"}
    unbounded = ~np.isfinite(rows["waste_pct"].to_numpy(float))
    cause = rows["implausible"].astype(str).to_numpy()
    assert (
        unbounded.any() and (cause[unbounded] != "none").all()
    )  # at a 1-3 h cadence it never finishes
    assert unbounded[
        cause == "failures faster than recovery"
    ].all()  # (a stall past the interval first)
    assert (rows.loc[unbounded, "ettr_pct"] == 0).all()
    assert (rows["beyond_largest_case_x"] > 1).all() and rows["extrapolated"].all()
