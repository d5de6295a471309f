"""The figures every user knows, computed through the shipped models and the engine.

Sources: the worked example of ckptreport's README and DESIGN (405B x 16 B = 6.5 TB; ~65 s over a
100 GB/s filesystem; 3.6% at a 30-minute cadence); ../shared/reference/calibration.yaml for MLPerf
Storage, BLOOM-176B and Daly (2006).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from ckptreport.model.columns import COLUMNS
from ckptreport.model.evaluate import compute
from ckptreport.read.inputs import INPUTS, trait_values

WORKED = dict(
    model="llama3-405b",
    recipe="adamw-bf16-grads",
    sku="dgx-h100",
    tier="pfs-100",
    gpus=1024,
    interval_s=1800.0,
)  # as `ckptreport explain` computes it (the recipe is outside the plan)
SYNC = dict(
    strategy="sync", engine="megatron-dist-ckpt"
)  # the shipped plan's engines (models/plan.yaml)
ASYNC = dict(strategy="async", engine="dcp-async-cached")


def worked(shipped, **changes) -> dict:
    """The worked example's row, through the shipped models and the engine (explain's one_row)."""
    from ckptreport.answer.explain import Scenario, one_row

    return one_row(shipped, Scenario(**{**WORKED, **changes}))


def test_405b_checkpoint_is_6_49_TB(shipped):
    """Llama 3 405B: 405.85e9 params x 16 B/param (adamw-bf16-grads) = 6.4936e12 bytes."""
    row = worked(shipped, **SYNC)
    assert row["bytes_per_param"] == 16
    assert row["ckpt_bytes"] == pytest.approx(405.85e9 * 16, rel=1e-12)
    assert row["ckpt_bytes"] == pytest.approx(6.49e12, rel=1e-3)


def test_70b_checkpoint_is_1_13_TB(shipped):
    """Llama 3 70B: 70.6e9 params x 16 B/param = 1.13e12 bytes."""
    row = worked(shipped, model="llama3-70b", **SYNC)
    assert row["ckpt_bytes"] == pytest.approx(1.13e12, rel=1e-3)


def test_worked_example_sync_write_is_65_s_and_3_6_pct():
    """Through a 100 GB/s aggregate filesystem that is the bottleneck: ~65 s; every 30 min: 3.6%
    (bandwidth alone: no coordination, as the worked example counts it)."""
    row = _row(strategy="sync", params=405.85e9, grads_bytes_per_param=2.0)
    assert row["bottleneck"] == "tier"
    assert row["tier_share_GBps"] * row["nodes"] == pytest.approx(100)  # the aggregate binds
    assert row["write_s"] == pytest.approx(6.4936e12 / 100e9, rel=1e-9)  # 64.94 s
    assert 64.5 < row["stall_s"] < 65.5
    assert round(row["overhead_pct"], 1) == 3.6


def test_worked_example_with_the_shipped_engines(shipped):
    """The shipped models: the tier still takes 64.9 s. Megatron-Core's dist-ckpt plans once and then
    reuses its cached plan, 1.5 s a save (PR #149785's cached figure), and pays its fitted 7.69 s
    floor (ByteRobust's Megatron saves), so the stall is 7.69 s + the copy to host (50.7 GB a node at
    358.66 GB/s) + 1.5 s + 64.9 s = 74.3 s and the overhead 4.13%; the first save plans its 290,304
    write items (126 layers x 9 tensors x 4 states, over the 64 ranks of a stage) anew. A per-rank
    torch.save plans nothing but pays its fitted 10.8 ms a rank: 76.1 s, 4.23%."""
    row = worked(shipped, **SYNC)
    node = 6.4936e12 / 128
    assert row["tier_s"] == pytest.approx(6.4936e12 / 100e9, rel=1e-9)
    assert row["coordination_s"] == pytest.approx(1.5)
    items = 126 * 9 * 4 * 64
    assert row["write_items"] == items
    assert row["first_coordination_s"] == pytest.approx(
        1.5 + row["per_write_item_s"] * items + row["per_chunk_pair_s"] * 126 * 9 * 4 * 64 * 63 / 2
    )
    assert row["write_s"] == pytest.approx(6.4936e12 / 100e9 + 1.5)
    assert row["fixed_s"] == pytest.approx(7.69)
    assert row["stall_s"] == pytest.approx(7.69 + row["write_s"] + node / 358.66e9)
    assert round(row["overhead_pct"], 2) == 4.13
    per_rank = worked(shipped, strategy="sync", engine="torch-save")
    assert per_rank["coordination_s"] == pytest.approx(0.0108 * 1024)
    assert per_rank["bottleneck"] == "tier"
    assert per_rank["stall_s"] == pytest.approx(6.4936e12 / 100e9 + 0.0108 * 1024 + node / 358.66e9)
    assert round(per_rank["overhead_pct"], 2) == 4.23


def test_worked_example_async_stalls_for_the_snapshot_and_the_interference(shipped):
    """Made async with DCP's background process and cached plans (pinned staging), training waits for
    its fitted set-up and the copy of a node's 50.7 GB at 358.66 GB/s; the write drains behind
    training, which runs 13.9% slower while it does (fitted on the 6x-faster async blog's peak dip and
    torchtitan PR #1287's logs): 0.558 + 0.141 + 0.139 x 66.4 s = 9.93 s, 0.55%. Without the
    interference it is the copy alone."""
    row = worked(shipped, **ASYNC)
    bytes_per_node = 6.4936e12 / 128
    assert row["snapshot_s"] == pytest.approx(bytes_per_node / 358.66e9, rel=1e-9)
    assert (
        row["background_s"]
        == pytest.approx(row["write_s"])
        == pytest.approx(6.4936e12 / 100e9 + 1.5)
    )
    # the optimum cadence weighs what a checkpoint costs, its interference included (not the 0.25 s stop alone)
    assert row["lost_per_checkpoint_s"] == pytest.approx(row["stall_s"])
    assert row["young_interval_s"] == pytest.approx(
        math.sqrt(2 * row["stall_s"] * row["cluster_mtbf_s"])
    )
    assert row["stall_s"] == pytest.approx(
        0.558 + bytes_per_node / 358.66e9 + 0.139 * row["background_s"], rel=1e-9
    )
    assert row["overhead_pct"] < worked(shipped, **SYNC)["overhead_pct"] / 2
    assert row["backpressure_s"] == 0 and row["host_memory_ok"]
    pinned = _row(
        strategy="async", params=405.85e9, grads_bytes_per_param=2.0
    )  # no fixed cost, no interference
    assert (
        pinned["stall_s"] == pytest.approx(bytes_per_node / 358.66e9, rel=1e-9) == pinned["d2h_s"]
    )


def test_mlperf_storage_llama3_70b_size(shipped, frame):
    """MLPerf Storage v2 Llama3-70B: 69,882,617,856 params x 14 B = 978,356,649,984 bytes
    (calibration.yaml mlperf_storage_v2_llama3_70b_size)."""
    row = frame[(frame["model"] == "mlperf-llama3-70b") & (frame["recipe"] == "adamw-bf16")].iloc[0]
    assert row["params"] == 69_882_617_856
    assert row["ckpt_bytes"] == 978_356_649_984


def test_bloom_176b_size_and_overhead(frame):
    """BLOOM-176B: 176e9 x 14 B = 2.464e12 bytes; a 40 s stall every 3 h = 0.37%
    (calibration.yaml bloom176b_sync_checkpoint_jeanzay)."""
    row = frame[(frame["model"] == "bloom-176b") & (frame["recipe"] == "adamw-bf16")].iloc[0]
    assert row["ckpt_bytes"] == 2.464e12
    overhead = COLUMNS["overhead_pct"].fn(stall_s=40.0, interval_s=3 * 3600.0)
    assert round(overhead, 2) == 0.37


def test_bloom_stages_heaviest_and_lightest_rank(frame):
    """BLOOM-176B, TP4 PP12, 70 layers, hidden 14,336, vocab 250,880: a layer holds
    (176e9 - 2 x 250,880 x 14,336) / 70 = 2.4116e9 parameters. The first and last stages hold
    ceil(70/12) = 6 layers and the embedding or output layer (3.597e9); the lightest middle stage
    floor(70/12) = 5 layers. Its ZeRO-1 ranks write weights in full and a share of the rest over the
    data-parallel replicas (whole ones: 21 in 1,024 GPUs, as planners round; the 16 left over stand idle)."""
    row = frame[(frame["model"] == "bloom-176b") & (frame["recipe"] == "adamw-bf16")].iloc[0]
    embedding, layer = 250_880 * 14_336, (176e9 - 2 * 250_880 * 14_336) / 70
    assert row["stage_params_max"] == math.ceil(6 * layer + embedding)  # whole parameters
    assert row["stage_params_min"] == math.floor(5 * layer)
    assert (
        row["stage_bytes_first"]
        == row["stage_bytes_last"]
        == pytest.approx((6 * layer + embedding) * 14)
    )
    assert row["stage_bytes_middle"] == pytest.approx(5 * layer * 14)
    dp = row["gpus"] // 48  # whole replicas: 1,024 GPUs hold 21 of 48, and 16 GPUs stand idle
    assert row["dp_ranks"] == dp == 21 and row["training_gpus"] == 1008 and row["idle_gpus"] == 16
    assert row["bytes_per_gpu_min"] == pytest.approx(5 * layer / 4 * (2 + 12 / dp))
    assert row["bytes_per_gpu_min"] < row["bytes_per_gpu_max"]
    assert (frame["bytes_per_gpu_min"] <= frame["bytes_per_gpu_max"] * (1 + 1e-12)).all()
    unpiped = frame[frame["model"] == "llama3-8b"].iloc[0]  # PP1: one stage, no middle
    assert (
        unpiped["stage_bytes_middle"] == 0
        and unpiped["bytes_per_gpu_min"] == unpiped["bytes_per_gpu_max"]
    )


@pytest.mark.parametrize("mtbf_h, published_min", [(24, 117), (6, 57), (0.25, 9.1)])
def test_daly_published_optima(mtbf_h, published_min):
    """Daly (2006) fig. 3-5: checkpoint 5 min, MTBF 24 h -> 117 min; 6 h -> 57 min; 15 min -> 9.1 min
    (calibration.yaml daly_2006_formula_and_validation; tolerance 0.5 min)."""
    got = COLUMNS["daly_interval_s"].fn(
        lost_per_checkpoint_s=np.array([300.0]), durable_mtbf_s=np.array([mtbf_h * 3600.0])
    )[0]
    assert abs(got / 60 - published_min) <= 0.5


def test_daly_is_mtbf_when_cost_exceeds_twice_mtbf():
    """Daly: for d >= 2M the optimum is M."""
    got = COLUMNS["daly_interval_s"].fn(
        lost_per_checkpoint_s=np.array([5000.0]), durable_mtbf_s=np.array([2000.0])
    )[0]
    assert got == 2000.0


def test_young_close_to_daly_for_small_cost(shipped):
    """Young's sqrt(2dM) and Daly's higher-order optimum agree to first order when d << M."""
    row = worked(shipped, **SYNC)
    assert row["young_interval_s"] == pytest.approx(
        math.sqrt(2 * row["lost_per_checkpoint_s"] * row["cluster_mtbf_s"])
    )
    assert row["lost_per_checkpoint_s"] == row["checkpoint_cost_s"]  # sync: no background persist
    assert row["daly_interval_s"] == pytest.approx(row["young_interval_s"], rel=0.02)


def test_async_backpressure_when_persist_outlasts_interval():
    """An async write longer than the interval makes the next checkpoint wait for it."""
    row = _row(strategy="async", interval_s=60.0, tier_write_GBps=10.0)
    assert row["background_s"] > 60
    assert row["backpressure_s"] == pytest.approx(row["background_s"] - 60)
    assert row["stall_s"] == pytest.approx(row["snapshot_s"] + row["backpressure_s"])


def test_replica0_counts_only_replica_0s_ranks_as_a_nodes_writers():
    """replica0, tp1 pp4 on 8-GPU nodes: replica 0 is 4 ranks on one node, each writing a quarter of
    the checkpoint (balanced stages). That node writes the checkpoint once, not twice (8 x a quarter):
    its NIC, copy and host memory carry 4 ranks' bytes, and the copy runs 4 GPUs wide."""
    row = _row(sharding="replica0", tp=1.0, pp=4.0, strategy="async")
    assert row["writers_on_node"] == 4 and row["gpus_on_node"] == 8 and row["nodes_writing"] == 1
    assert row["bytes_per_gpu_max"] == pytest.approx(row["ckpt_bytes"] / 4)
    assert row["bytes_per_node"] == pytest.approx(row["ckpt_bytes"])
    assert row["d2h_GBps"] == pytest.approx(min(4 * BASE["d2h_gpu_GBps"], row["d2h_node_GBps"]))
    assert row["host_memory_needed_bytes"] == pytest.approx(row["ckpt_bytes"])
    wide = _row(
        sharding="replica0", tp=2.0, pp=8.0
    )  # 16 ranks over two nodes: each node's 8 GPUs write
    assert wide["writers_on_node"] == 8 and wide["nodes_writing"] == 2
    assert wide["bytes_per_node"] == pytest.approx(wide["ckpt_bytes"] / 2)
    sharded = _row(tp=1.0, pp=4.0)  # fully sharded: every GPU of every node writes its share
    assert sharded["writers_on_node"] == 8 and sharded["bytes_per_node"] == pytest.approx(
        sharded["ckpt_bytes"] / 128
    )


def test_async_needs_host_memory_for_its_buffers():
    """Async stages bytes_per_node x buffers in host memory; too little memory fails the target."""
    row = _row(strategy="async", host_memory_bytes=10e9, buffers=2.0)
    assert row["host_memory_needed_bytes"] == pytest.approx(2 * row["bytes_per_node"])
    assert not row["host_memory_ok"] and not row["meets_target"]


def test_required_bandwidth_meets_the_target_exactly():
    """A tier with exactly the required aggregate bandwidth lands exactly on the target overhead."""
    first = _row(strategy="sync")
    again = _row(strategy="sync", tier_write_GBps=first["required_write_GBps"])
    assert again["overhead_pct"] == pytest.approx(first["target_overhead_pct"], rel=1e-9)


def test_unreachable_target_when_the_copy_to_host_alone_misses_it():
    """If the GPU->host copy alone exceeds the target, no storage bandwidth helps: inf."""
    row = _row(strategy="sync", d2h_node_GBps=0.01, d2h_gpu_GBps=0.01)
    assert math.isinf(row["required_write_GBps"])


def test_run_length_from_6ND():
    """Compute time = 6 x active params x tokens / (GPUs x peak x MFU); MoE uses active params."""
    row = _row(
        params=671e9,
        active_params=37e9,
        tokens=14.8e12,
        gpus=2048.0,
        peak_TFLOPS=989.0,
        mfu_pct=40.0,
    )
    assert row["compute_s"] == pytest.approx(6 * 37e9 * 14.8e12 / (2048 * 989e12 * 0.4))
    assert row["ckpt_bytes"] == pytest.approx(671e9 * row["bytes_per_param"])
    assert row["run_days"] == pytest.approx(row["compute_s"] * (1 + row["waste_pct"] / 100) / 86400)


def test_tiered_lands_on_nvme_then_drains():
    """Tiered: the stall is the copy to host; NVMe landing and the drain run in the background."""
    row = _row(strategy="tiered")
    assert row["stall_s"] == row["d2h_s"] == row["snapshot_s"]
    assert row["background_s"] == pytest.approx(row["nvme_s"] + row["write_s"])
    assert row["nvme_needed_bytes"] == row["bytes_per_node"]


def test_local_nvme_tier_skips_the_nic():
    """Node-local NVMe is written without crossing the storage NIC, at the node's drive speed."""
    row = _row(
        tier_kind="local_nvme",
        storage_nic_GBps=0.001,
        tier_write_GBps=math.inf,
        tier_node_write_GBps=math.inf,
        nvme_write_GBps=26.0,
    )
    assert row["nic_s"] == 0
    assert row["tier_share_GBps"] == 26.0


BASE = {i.name: i.default for i in INPUTS.values() if i.default is not None} | dict(
    model="m",
    recipe="r",
    sku="s",
    tier="t",
    strategy="sync",
    tier_kind="parallel_fs",
    gpus=1024.0,
    interval_s=1800.0,
    params=405.85e9,
    active_params=405.85e9,
    tokens=15.6e12,
    weights_bytes_per_param=2.0,
    master_bytes_per_param=4.0,
    optimizer_bytes_per_param=8.0,
    grads_bytes_per_param=0.0,
    gpus_per_node=8.0,
    peak_TFLOPS=989.0,
    d2h_gpu_GBps=55.0,
    d2h_node_GBps=358.66,
    host_memory_bytes=2e12,
    storage_nic_GBps=100.0,
    peer_nic_GBps=100.0,
    nvme_write_GBps=26.0,
    nvme_capacity_bytes=30.72e12,
    usd_per_gpu_hour=4.916,
    gpu_mtbf_s=50677 * 3600.0,
    tier_write_GBps=100.0,
    tier_node_write_GBps=20.0,
    usd_per_tb_month=23.0,
    target_overhead_pct=1.0,
    mfu_pct=40.0,
    restart_s=600.0,
    retention=3.0,
    buffers=1.0,
    sharding="fully_sharded",
    tp=1.0,
    pp=1.0,
    layers=0.0,
    hidden=0.0,
    vocab=0.0,
    writer_GBps=math.inf,
    sync_fixed_s=0.0,
    async_fixed_s=0.0,
    tiered_fixed_s=0.0,
    async_slowdown_pct=0.0,
    staging_gpu_GBps=55.0,
)  # the bandwidth-only model: pinned staging, no fitted term


def _row(**changes):
    traits = trait_values(
        changes.get("strategy", BASE["strategy"])
    )  # the strategy's, as the table declares them
    values = {
        k: np.array([v], dtype=bool if INPUTS[k].unit == "bool" else None)
        for k, v in {**BASE, **traits, **changes}.items()
    }
    return {k: v[0] for k, v in compute(values).items()}


# ---- issue 14: the terms published measurements need, each by hand ----


def test_writers_share_a_node_sub_linearly():
    """writer_scaling 45%: one writer 1.5 GB/s, eight 1.5 x (1 + 7 x 0.45) = 6.225 GB/s; the heaviest
    rank is never faster than one writer."""
    row = _row(writer_GBps=1.5, writer_scaling_pct=45.0)
    assert row["writers_GBps"] == pytest.approx(1.5 * (1 + 7 * 0.45))
    assert row["writer_s"] == pytest.approx(row["bytes_per_node"] / (1.5 * 4.15 * 1e9))
    one = _row(writer_GBps=1.5, writer_scaling_pct=45.0, gpus=1.0, gpus_per_node=8.0)
    assert one["writers_GBps"] == 1.5
    linear = _row(writer_GBps=1.5)  # 100%, the declared default: eight writers, eight times one
    assert linear["writers_GBps"] == pytest.approx(12.0)


def test_coordination_grows_with_ranks_and_sits_in_the_persist():
    """0.01 s per rank on 1,024 ranks: 10.24 s added to every persist. Sync waits for it; async runs it
    in the background."""
    row = _row(coordination_per_rank_s=0.01)
    assert row["coordination_s"] == pytest.approx(10.24)
    assert row["write_s"] == pytest.approx(10.24 + row["tier_s"])
    assert row["stall_s"] == pytest.approx(row["d2h_s"] + row["write_s"])
    big = _row(coordination_per_rank_s=0.01, gpus=4096.0)
    assert (
        big["coordination_s"] == pytest.approx(40.96)
        and big["bytes_per_node"] < row["bytes_per_node"]
    )
    asy = _row(coordination_per_rank_s=0.01, strategy="async", coordination_blocks=False)
    assert asy["stall_s"] == pytest.approx(asy["snapshot_s"]) and asy[
        "background_s"
    ] == pytest.approx(row["write_s"])
    budget = _row(coordination_per_rank_s=0.01)  # the target's budget leaves the coordination out
    assert budget["write_budget_s"] == pytest.approx(0.01 * 1800 - budget["d2h_s"] - 10.24)


def test_async_snapshot_at_the_staging_rate_plus_its_fixed_cost():
    """Async stages a node's 50.7 GB at 8 x 5 GB/s = 40 GB/s (pageable memory), not the pinned 358.66:
    0.2 s fixed + 1.268 s."""
    row = _row(strategy="async", staging_kind="pageable", staging_gpu_GBps=5.0, async_fixed_s=0.2)
    node = 405.85e9 * 14 / 128
    assert row["staging_GBps"] == 40.0
    assert row["stall_s"] == pytest.approx(0.2 + node / 40e9)
    capped = _row(
        strategy="async", staging_kind="pageable", staging_gpu_GBps=100.0
    )  # the node's GPU->host total still caps it
    assert capped["staging_GBps"] == 358.66


def test_restore_by_recovery_class_feeds_the_waste_by_hand():
    """1,024 GPUs, 405.85B x 14 B = 5.682 TB; tier read 200 GB/s, per node 40 GB/s (NIC 100 GB/s);
    host->GPU 358.66 GB/s per node (44.39 GB per node):
      from the tier: max(5.682e12 / 200e9, 44.39e9 / 40e9) + 44.39e9 / 358.66e9 = 28.41 + 0.124 s
      from host memory: 0.124 s
    Async with 75% host-recoverable: restore = 0.75 x 0.124 + 0.25 x 28.53 = 7.225 s; sync keeps no
    host copy, so all of its restarts read the tier: 28.53 s. Rework adds the restore to
    interval/2 + restart per MTBF, and the optimal interval (Daly's, on cost and MTBF) does not move:
    the restore is paid once per failure whatever the cadence, so only the waste at it rises."""
    ckpt, node = 405.85e9 * 14, 405.85e9 * 14 / 128
    tier_s = max(ckpt / 200e9, node / 40e9) + node / 358.66e9
    host_s = node / 358.66e9
    args = dict(tier_read_GBps=200.0, tier_node_read_GBps=40.0, host_recoverable_pct=75.0)
    asy = _row(strategy="async", **args)
    assert asy["restore_tier_s"] == pytest.approx(tier_s) and asy[
        "restore_host_s"
    ] == pytest.approx(host_s)
    assert asy["host_restore_pct"] == 75.0
    assert asy["restore_s"] == pytest.approx(0.75 * host_s + 0.25 * tier_s)
    mtbf = 50677 * 3600.0 / 1024
    assert asy["rework_pct"] == pytest.approx(
        100 * (900 + 600 + 0.75 * host_s + 0.25 * tier_s) / mtbf
    )
    syn = _row(strategy="sync", **args)
    assert syn["host_restore_pct"] == 0 and syn["restore_s"] == pytest.approx(tier_s)
    none = _row(strategy="async", **{**args, "host_recoverable_pct": 0.0})
    assert none["optimal_interval_s"] == asy["optimal_interval_s"]

    def waste(restore_s):  # at the optimal cadence: (overhead + failures) / (1 - failures)
        tau = asy["optimal_interval_s"]
        failures = (900 * tau / 1800 + 600 + restore_s) / mtbf
        return 100 * (asy["lost_per_checkpoint_s"] / tau + failures) / (1 - failures)

    assert asy["optimal_waste_pct"] == pytest.approx(waste(0.75 * host_s + 0.25 * tier_s))
    assert none["optimal_waste_pct"] == pytest.approx(waste(tier_s))
    omitted = _row(
        strategy="async"
    )  # no read figures: the write bandwidth bought, the per-node write, the NIC
    assert omitted["read_GBps"] == 100.0 and omitted["node_read_GBps"] == 20.0


def test_restore_from_local_nvme_reads_the_drives():
    row = _row(
        tier_kind="local_nvme",
        tier_write_GBps=math.inf,
        tier_node_write_GBps=math.inf,
        nvme_read_GBps=48.0,
    )
    assert row["node_read_GBps"] == 48.0
    assert (
        _row(tier_kind="local_nvme", tier_write_GBps=math.inf, tier_node_write_GBps=math.inf)[
            "node_read_GBps"
        ]
        == 26.0
    )


def test_a_models_size_given_directly_replaces_the_recipe():
    """bytes_per_param 16 on a 14 B recipe: 16 B/param and 2 B/param of 'other'; checkpoint_size wins
    over both."""
    row = _row(model_bytes_per_param=16.0)
    assert row["bytes_per_param"] == 16.0 and row["ckpt_bytes"] == pytest.approx(405.85e9 * 16)
    assert row["other_bytes"] == pytest.approx(405.85e9 * 2)
    sized = _row(model_bytes_per_param=16.0, checkpoint_size_bytes=2.3e12)
    assert sized["ckpt_bytes"] == pytest.approx(2.3e12) and sized[
        "bytes_per_param"
    ] == pytest.approx(2.3e12 / 405.85e9)
    assert sized["bytes_per_node"] == pytest.approx(2.3e12 / 128)


def test_a_consolidated_copy_is_written_by_one_rank():
    """A bf16 consolidated copy of 405.85B weights (811.7 GB) beside a fully sharded 14 B/param state:
    the checkpoint grows by it, rank 0 writes all of it, so the heaviest rank and node carry it; the
    lightest rank does not."""
    row = _row(consolidated_bytes_per_param=2.0, writer_GBps=2.0)
    shard = 405.85e9 * 14 / 1024
    assert row["ckpt_bytes"] == pytest.approx(405.85e9 * 16)
    assert row["consolidated_bytes"] == pytest.approx(811.7e9)
    assert row["bytes_per_gpu_max"] == pytest.approx(shard + 811.7e9)
    assert row["bytes_per_gpu_min"] == pytest.approx(shard)
    assert row["bytes_per_node"] == pytest.approx(8 * shard + 811.7e9)
    assert row["writer_s"] == pytest.approx((shard + 811.7e9) / 2e9)  # one writer carries rank 0


# ---- issue 24: an engine's terms, each by hand ----


def test_an_engine_that_plans_before_training_resumes_stalls_for_it():
    """coordination_blocks yes (the default): an async save's 10.24 s of planning is in its stall and out of
    its background persist, and its budget requires snapshot + planning to meet the target."""
    asy = _row(coordination_per_rank_s=0.01, strategy="async")
    assert asy["blocking_coordination_s"] == pytest.approx(10.24)
    assert asy["stall_s"] == pytest.approx(asy["snapshot_s"] + 10.24)
    assert asy["write_s"] == pytest.approx(asy["tier_s"])  # planning already done
    tight = _row(
        coordination_per_rank_s=0.01, strategy="async", target_overhead_pct=0.5
    )  # 9 s < 10.24 s
    assert tight["write_budget_s"] == 0 and math.isinf(tight["required_write_GBps"])


def test_first_and_cached_coordination_constant_per_rank_and_squared():
    """First save: 40 s + 0.1 s x 1,024 + 1e-5 s x 1,024^2 = 40 + 102.4 + 10.486 = 152.9 s. With cached
    plans, later saves: 1.5 s + 0.001 s x 1,024 = 2.524 s, which every steady-state save pays."""
    terms = dict(
        coordination_constant_s=40.0, coordination_per_rank_s=0.1, coordination_per_rank2_s=1e-5
    )
    first = _row(**terms)
    assert first["first_coordination_s"] == pytest.approx(40 + 102.4 + 1e-5 * 1024**2)
    assert (
        first["coordination_s"] == first["first_coordination_s"]
    )  # nothing cached: every save plans anew
    cached = _row(**terms, cached_constant_s=1.5, cached_per_rank_s=0.001)
    assert cached["first_coordination_s"] == first["first_coordination_s"]
    assert cached["coordination_s"] == pytest.approx(2.524)
    assert cached["write_s"] == pytest.approx(2.524 + cached["tier_s"])


def test_files_per_rank_and_their_metadata_sit_in_the_persist():
    """Two files a rank at 0.05 s each: 0.1 s on every persist; in a sync budget too."""
    row = _row(files_per_rank=2.0, per_file_s=0.05)
    assert row["metadata_s"] == pytest.approx(0.1)
    assert row["write_s"] == pytest.approx(0.1 + row["tier_s"])
    assert row["write_budget_s"] == pytest.approx(18 - row["d2h_s"] - 0.1)


def test_overlap_hides_a_share_of_the_staging_copy():
    """90% of the copy behind the next forward and backward pass: a tenth of it is waited for; sync, which
    streams through, hides nothing."""
    plain, hidden = _row(strategy="async"), _row(strategy="async", overlap_pct=90.0)
    assert hidden["snapshot_s"] == pytest.approx(0.1 * plain["snapshot_s"])
    assert _row(overlap_pct=90.0)["snapshot_s"] == _row()["snapshot_s"]


def test_shared_memory_staging_at_the_engines_own_rate_capped_by_the_link():
    """An engine staging into shared memory at 4.11 GB/s a GPU: 8 x 4.11 = 32.9 GB/s a node, whatever the
    SKU's staging figure; a faster engine rate than the link's is capped at d2h_per_gpu."""
    row = _row(
        strategy="async",
        staging_kind="shared_memory",
        engine_staging_gpu_GBps=4.11,
        staging_gpu_GBps=20.0,
    )
    assert row["staging_rate_GBps"] == 4.11 and row["staging_GBps"] == pytest.approx(8 * 4.11)
    assert row["snapshot_s"] == pytest.approx(405.85e9 * 14 / 128 / (8 * 4.11e9))
    fast = _row(strategy="async", staging_kind="pageable", engine_staging_gpu_GBps=80.0)
    assert fast["staging_rate_GBps"] == 55.0


def test_replicated_state_every_replica_writes_its_own_copy():
    """optimizer_sharded (ZeRO-1), 1,024 GPUs, tp 8, pp 8: 16 replicas. An engine without dedup has each of
    the 15 further replicas write the weights again (2 B/param): the tier takes 405.85e9 x (14 + 15 x 2)
    bytes; the checkpoint itself (what a restore reads) is unchanged, capacity counts what was written."""
    layout = dict(sharding="optimizer_sharded", tp=8.0, pp=8.0)
    once, every = _row(**layout), _row(**layout, replicated="every")
    assert once["written_bytes"] == once["ckpt_bytes"] == pytest.approx(405.85e9 * 14)
    assert every["written_bytes"] == pytest.approx(405.85e9 * (14 + 15 * 2))
    assert every["tier_s"] == pytest.approx(every["written_bytes"] / 100e9)
    assert every["capacity_needed_bytes"] / once["capacity_needed_bytes"] == pytest.approx(44 / 14)


def test_a_fully_parallel_save_spreads_replica0s_state_over_the_replicas():
    """replica0 with tp 1, pp 4 on 1,024 GPUs: 256 replicas. Alone, replica 0's 4 ranks write a quarter of
    the checkpoint each; an engine that balances the save has every rank write 1/1,024 of it, so every
    node writes and the heaviest rank carries 1/256 of what it did."""
    layout = dict(sharding="replica0", tp=1.0, pp=4.0)
    alone, spread = _row(**layout), _row(**layout, replicated="balanced")
    assert (
        alone["bytes_per_gpu_max"] == pytest.approx(405.85e9 * 14 / 4)
        and alone["nodes_writing"] == 1
    )
    assert spread["save_sharding"] == "balanced" and spread["nodes_writing"] == 128
    assert spread["bytes_per_gpu_max"] == pytest.approx(405.85e9 * 14 / 1024)
    assert spread["written_bytes"] == alone["written_bytes"]


def test_an_engine_that_consolidates_writes_a_copy_of_the_weights():
    """An engine writing a consolidated copy adds the weights once more in their dtype (2 B/param), written
    by one rank, unless the recipe already names one."""
    row = _row(engine_consolidates=True)
    assert row["consolidated_bytes"] == pytest.approx(405.85e9 * 2)
    assert row["ckpt_bytes"] == pytest.approx(405.85e9 * 16)
    named = _row(engine_consolidates=True, consolidated_bytes_per_param=4.0)
    assert named["consolidated_bytes"] == pytest.approx(405.85e9 * 4)


def test_a_job_far_beyond_the_engines_largest_case_is_an_extrapolation():
    """Any use beyond the largest case is flagged, with its factor: terms that rest on cases up to 1,856
    ranks at 16,384 GPUs are 8.83x beyond; 32 ranks' terms at 1,024 GPUs 32x; at or within it 1x."""
    far = _row(gpus=16384.0, largest_case_ranks=1856.0)
    assert far["extrapolated"] and far["beyond_largest_case_x"] == pytest.approx(16384 / 1856)
    assert _row(largest_case_ranks=32.0)["extrapolated"]
    assert _row(largest_case_ranks=32.0)["beyond_largest_case_x"] == pytest.approx(1024 / 32)
    within = _row(largest_case_ranks=1024.0)
    assert not within["extrapolated"] and within["beyond_largest_case_x"] == 1
    assert not _row()["extrapolated"]  # no case stated: never flagged


def test_a_layout_that_does_not_divide_trains_on_whole_replicas_and_pays_for_the_idle_gpus():
    """TP4 x PP12 (48 GPUs a replica) on 1,024 GPUs: 21 replicas, 1,008 GPUs train and hold the state,
    16 stand idle. The shards, the ranks that coordinate, the compute and the failures are the 1,008's;
    the GPU-hours paid are the 1,024's."""
    row = _row(tp=4.0, pp=12.0, coordination_per_rank_s=0.01)
    assert (row["dp_ranks"], row["training_gpus"], row["idle_gpus"]) == (21, 1008, 16)
    assert row["bytes_per_gpu"] == pytest.approx(405.85e9 * 14 / 1008)
    assert row["coordination_s"] == pytest.approx(0.01 * 1008)
    assert row["compute_s"] == pytest.approx(6 * 405.85e9 * 15.6e12 / (1008 * 989e12 * 0.4))
    assert row["cluster_mtbf_s"] == pytest.approx(50677 * 3600.0 / 1008)
    assert row["run_usd"] == pytest.approx(1024 * row["run_days"] * 24 * 4.916)
    whole = _row(tp=4.0, pp=8.0)  # 32 divides 1,024: nothing idle
    assert whole["idle_gpus"] == 0 and whole["training_gpus"] == 1024
