"""Property tests of the engine's physics: more bandwidth never lengthens anything, a sized tier
buys what the target needs, async never stalls more than sync, a bigger model never has a smaller
checkpoint. Rows are drawn as whole valid input rows (``strategies``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings

from ckptreport.model.evaluate import compute

from rows import _f, arrays, rows_strategy

# When a property fails, hypothesis's pytest plugin imports libcst (hypothesis.extra._patching) to
# suggest a patch, and libcst's import of mypy_extensions.TypedDict warns; with filterwarnings=error
# that warning turns the failure report into a pytest INTERNALERROR. Ignore that one warning only.
pytestmark = pytest.mark.filterwarnings(
    "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
)

HOPS = (
    "d2h_gpu_GBps",
    "d2h_node_GBps",
    "storage_nic_GBps",
    "tier_write_GBps",
    "tier_node_write_GBps",
    "nvme_write_GBps",
    "writer_GBps",
    "staging_gpu_GBps",
    "tier_read_GBps",
    "tier_node_read_GBps",
    "nvme_read_GBps",
)
TIMES = ("d2h_s", "write_s", "stall_s", "checkpoint_cost_s")
REL = 1e-12  # "never longer", allowing for rounding in the last bits
SETTINGS = settings(max_examples=40, deadline=None)


def assert_not_longer(after: np.ndarray, before: np.ndarray, what: str) -> None:
    assert not np.isnan(before).any() and not np.isnan(after).any(), what
    bad = ~(after <= before * (1 + REL))
    assert not bad.any(), f"{what}: {after[bad]} > {before[bad]}"


# ---- the engine's physics -----------------------------------------------------------------------


@SETTINGS
@given(rows=rows_strategy, factor=_f(1, 100))
def test_more_bandwidth_never_lengthens_anything(rows, factor):
    """Raising any one hop's bandwidth (GPU->host per GPU or per node, storage NIC, tier aggregate,
    tier per node, local NVMe) by a factor >= 1 never makes d2h_s, write_s, stall_s or
    checkpoint_cost_s longer, for any strategy and tier kind (inf bandwidths included), with the
    storage bought held fixed (a per-TiB tier sized by the plan buys less when a faster hop leaves
    the write more time: that is the sizing working, see test_a_sized_tier_buys_what_the_target_needs)."""
    values = arrays(rows)
    before = compute(values)
    values["tier_capacity_bytes"] = np.where(
        before["sized_per_TiB"], before["provisioned_bytes"], values["tier_capacity_bytes"]
    )
    before = compute(values)
    for hop in HOPS:
        after = compute({**values, hop: values[hop] * factor})
        for col in TIMES:
            assert_not_longer(after[col], before[col], f"{col} after {hop} x {factor}")


@SETTINGS
@given(rows=rows_strategy)
def test_a_sized_tier_buys_what_the_target_needs(rows):
    """A per-TiB tier sized by the plan holds the retained checkpoints and, when the target is
    reachable, gives at least the bandwidth the target requires (unless a request ceiling caps it)."""
    env = compute(arrays(rows))
    sized = env["sized_per_TiB"]
    assert (
        env["provisioned_bytes"][sized] >= env["capacity_needed_bytes"][sized] * (1 - REL)
    ).all()
    reachable = (
        sized & np.isfinite(env["required_write_GBps"]) & ~np.isfinite(env["request_ceiling_GBps"])
    )
    assert (
        env["tier_bought_GBps"][reachable] >= env["required_write_GBps"][reachable] * (1 - REL)
    ).all()


@SETTINGS
@given(rows=rows_strategy)
def test_async_never_blocks_longer_than_sync_and_tiered_never_costs_more(rows):
    """For the same row and the same storage, what async blocks training for (stall_s less the
    interference of its background write) is at most sync's stall_s (the persist moves off the
    critical path and only its overrun of the interval is waited for), and tiered checkpoint_cost_s <=
    sync's (rows that may be tiered: the SKU has NVMe and the tier is remote). A per-TiB tier sized by
    the plan buys less bandwidth for async (enough to drain within the interval), so it is compared
    at the size sync buys. Async stages at its own rate (drawn no slower than a writer): the claim holds
    while the snapshot fits in the interval; a snapshot longer than the interval that also waits for
    an overrunning persist can stall longer than sync (a degenerate plan the target rejects anyway).
    The interference is left out because it can tip the total: staging as slow as a writer (0.25 GB/s)
    with training slowed 26% while the write runs stalls 0.00252 s against sync's 0.0025 s (found by
    hypothesis); that is the cost async_slowdown declares, not a fault of the blocking path."""
    values = arrays(rows)
    n = len(rows)
    sync = compute({**values, "strategy": np.full(n, "sync")})
    fixed = np.where(
        sync["sized_per_TiB"], sync["provisioned_bytes"], values["tier_capacity_bytes"]
    )
    asyn = compute({**values, "strategy": np.full(n, "async"), "tier_capacity_bytes": fixed})
    fits = asyn["snapshot_s"] <= values["interval_s"]
    blocking = asyn["stall_s"] - asyn["interference_s"]
    assert_not_longer(
        blocking[fits], sync["stall_s"][fits], "async stall_s less its interference vs sync"
    )
    tierable = (values["nvme_write_GBps"] > 0) & (values["tier_kind"] != "local_nvme")
    tiered = compute({**values, "strategy": np.full(n, "tiered")})
    assert_not_longer(
        tiered["checkpoint_cost_s"][tierable],
        sync["checkpoint_cost_s"][tierable],
        "tiered checkpoint_cost_s vs sync",
    )


@SETTINGS
@given(rows=rows_strategy, factor=_f(1, 1000))
def test_bigger_model_never_has_a_smaller_checkpoint(rows, factor):
    """More parameters (same recipe) never give a smaller ckpt_bytes (a checkpoint_size given directly
    stays what it is, to the last bit's rounding)."""
    values = arrays(rows)
    small = compute(values)["ckpt_bytes"]
    big = compute({**values, "params": values["params"] * factor})["ckpt_bytes"]
    assert (big >= small * (1 - REL)).all()


@SETTINGS
@given(rows=rows_strategy)
def test_no_time_is_negative_even_with_fewer_gpus_than_pipeline_stages(rows):
    """A row whose GPUs are fewer than its pipeline stages (the loader refuses it, an API caller
    may not) still gives no negative time: each tensor is held by at least one rank, so the pairwise
    validation of the first save's plan is never below zero (it was -2.2 us, found by the property
    above in a fresh-clone CI run)."""
    values = arrays(rows)
    values["pp"] = values["gpus"] * 2
    out = compute(values)
    for col in (*TIMES, "validation_s", "first_coordination_s", "coordination_s"):
        got = out[col]
        assert not (got[~np.isnan(got)] < 0).any(), f"{col}: {got[got < 0]}"
