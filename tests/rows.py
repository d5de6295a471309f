"""Hypothesis strategies shared by the property suites: whole valid input rows (every name in
``inputs.INPUTS``), drawn many at a time and evaluated the way ``engine.scenarios`` evaluates a plan.

"Valid" follows the rules the loader and ``plan.cross_product`` enforce: a SKU without local NVMe has
0 NVMe write and capacity and is never paired with the tiered strategy or a local_nvme tier; a
local_nvme tier has no aggregate write (inf) and is never tiered; any other tier has at least one
finite write figure.
"""

from __future__ import annotations

import math

import numpy as np
from hypothesis import strategies as st

from ckptreport.read.inputs import INPUTS, trait_values

LABEL_INPUTS = {name for name, c in INPUTS.items() if c.unit == "label"}
ROWS = 40  # rows per drawn batch


def _f(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


@st.composite
def input_row(draw) -> dict[str, object]:
    """One valid scenario row, in the engine's units (GB/s, s, bytes, pct)."""
    has_nvme = draw(st.booleans())
    tier_kind = draw(
        st.sampled_from(
            ["parallel_fs", "cloud_fs", "object_store", "local_nvme"]
            if has_nvme
            else ["parallel_fs", "cloud_fs", "object_store"]
        )
    )
    strategies = (
        ["sync", "async", "tiered"] if has_nvme and tier_kind != "local_nvme" else ["sync", "async"]
    )
    strategies += ["peer_memory", "differential", "replica_recovery", "jit"]
    host_recoverable = draw(_f(0, 100))
    per_tib, capacity = math.nan, math.nan
    if tier_kind == "local_nvme":
        tier_write = math.inf
        tier_node = draw(st.one_of(st.just(math.inf), _f(0.1, 200)))
    elif tier_kind == "cloud_fs" and draw(
        st.booleans()
    ):  # per TiB: a fixed size, or sized by the plan
        per_tib, capacity = draw(_f(0.1, 1.0)), draw(st.one_of(st.just(math.nan), _f(2**40, 2**50)))
        tier_write = math.inf if math.isnan(capacity) else per_tib * capacity / 2**40
        tier_node = draw(st.one_of(st.just(math.inf), _f(0.1, 1000)))
    else:
        tier_write = draw(st.one_of(st.just(math.inf), _f(0.1, 1e5)))
        tier_node = (
            draw(_f(0.1, 1000))
            if math.isinf(tier_write)
            else draw(st.one_of(st.just(math.inf), _f(0.1, 1000)))
        )
    params = draw(_f(1e6, 2e13))
    layers = float(draw(st.integers(0, 200)))
    hidden = draw(_f(0, 3e4)) if layers else 0.0
    vocab = draw(_f(0, 3e5)) if layers else 0.0
    if 2 * vocab * hidden >= params:  # the embeddings are part of the parameters
        vocab = hidden = 0.0
    sync_fixed = draw(_f(0, 60))
    bought = draw(st.booleans())  # bought storage (capex over a life) or rented
    d2h_gpu = draw(_f(1, 1000))
    writer = draw(st.one_of(st.just(math.inf), _f(0.05, 50)))
    # async stalls no more than sync while its staging copy is no slower than a writer (pinned: d2h)
    staging = d2h_gpu if math.isinf(writer) else draw(_f(writer, max(writer, 1000)))
    strategy = draw(st.sampled_from(strategies))
    return {
        "model": "m",
        "recipe": "r",
        "sku": "s",
        "tier": "t",
        "engine": "e",
        "strategy": strategy,
        **trait_values(strategy),  # its traits, as the strategy table declares them
        "gpus": float(draw(st.integers(1, 200_000))),
        "interval_s": draw(_f(60, 1e6)),
        "params": params,
        "active_params": params * draw(_f(0.01, 1)),
        "tokens": draw(_f(1e9, 1e14)),
        "weights_bytes_per_param": draw(st.sampled_from([0.5, 1.0, 2.0, 4.0])),
        "master_bytes_per_param": draw(st.sampled_from([0.0, 2.0, 4.0])),
        "optimizer_bytes_per_param": draw(st.sampled_from([0.0, 1.0, 4.0, 8.0, 16.0])),
        "grads_bytes_per_param": draw(st.sampled_from([0.0, 2.0, 4.0])),
        "gpus_per_node": float(draw(st.integers(1, 72))),
        "peak_TFLOPS": draw(_f(10, 5000)),
        "d2h_gpu_GBps": d2h_gpu,
        "staging_gpu_GBps": staging,
        "d2h_node_GBps": draw(_f(1, 5000)),
        "host_memory_bytes": draw(_f(1e10, 1e13)),
        "storage_nic_GBps": draw(_f(0.1, 1000)),
        "nvme_write_GBps": draw(_f(0.5, 200)) if has_nvme else 0.0,
        "nvme_capacity_bytes": draw(_f(1e11, 1e14)) if has_nvme else 0.0,
        "usd_per_gpu_hour": draw(_f(0.1, 20)),
        "gpu_mtbf_s": draw(_f(1e5, 1e9)),
        "tier_kind": tier_kind,
        "tier_write_GBps": tier_write,
        "tier_node_write_GBps": tier_node,
        "tier_write_per_TiB_GBps": per_tib,
        "tier_capacity_bytes": draw(st.one_of(st.just(math.nan), _f(1e12, 1e15)))
        if math.isnan(per_tib)
        else capacity,
        "usd_per_tb_month": draw(st.one_of(st.just(math.nan), _f(0, 1000))),  # nan: unpriced tier
        "target_overhead_pct": draw(_f(0.01, 100)),
        "mfu_pct": draw(_f(1, 100)),
        "restart_s": draw(_f(0, 1e4)),
        "retention": float(draw(st.integers(1, 10))),
        "buffers": float(draw(st.integers(1, 4))),
        "sharding": draw(st.sampled_from(["fully_sharded", "optimizer_sharded", "replica0"])),
        "tp": float(draw(st.sampled_from([1, 2, 4, 8]))),
        "pp": float(draw(st.sampled_from([1, 2, 4, 8, 16]))),
        "layers": layers,
        "hidden": hidden,
        "vocab": vocab,
        "writer_GBps": writer,
        "writer_scaling_pct": draw(_f(0, 100)),
        "coordination_per_rank_s": draw(st.one_of(st.just(0.0), _f(0, 0.1))),
        "coordination_constant_s": draw(st.one_of(st.just(0.0), _f(0, 100))),
        "coordination_per_rank2_s": draw(st.one_of(st.just(0.0), st.just(0.0), _f(0, 1e-6))),
        "per_write_item_s": draw(st.one_of(st.just(0.0), _f(0, 1e-3))),
        "per_chunk_pair_s": draw(st.one_of(st.just(0.0), _f(0, 1e-6))),
        "tensors_per_layer": float(draw(st.integers(1, 1000))),
        "cached_constant_s": draw(st.one_of(st.just(math.nan), _f(0, 5))),
        "cached_per_rank_s": draw(st.one_of(st.just(0.0), _f(0, 0.01))),
        "coordination_blocks": draw(st.booleans()),
        "files_per_rank": float(draw(st.integers(1, 4))),
        "per_file_s": draw(st.one_of(st.just(0.0), _f(0, 0.1))),
        "staging_kind": draw(st.sampled_from(["pinned", "pageable", "shared_memory"])),
        "engine_staging_gpu_GBps": draw(st.one_of(st.just(math.nan), st.just(staging))),
        "replicated": draw(st.sampled_from(["replica0", "balanced", "every"])),
        "engine_consolidates": draw(st.booleans()),
        "overlap_pct": draw(st.one_of(st.just(0.0), _f(0, 100))),
        "largest_case_ranks": draw(st.one_of(st.just(math.inf), _f(8, 2000))),
        "host_recoverable_pct": host_recoverable,
        "node_loss_pct": draw(_f(0, 100 - host_recoverable)),
        "peer_nic_GBps": draw(_f(0.1, 1000)),
        "peer_replicas": float(draw(st.integers(1, 4))),
        "durable_every": float(draw(st.integers(1, 24))),
        "full_every": float(draw(st.integers(1, 12))),
        "diff_fraction_pct": draw(_f(0.01, 100)),
        "jit_overhead_pct": draw(st.one_of(st.just(0.0), _f(0, 1))),
        "replica_confined_pct": draw(st.one_of(st.just(0.0), _f(0, 99))),
        "replica_reform_s": draw(_f(1, 3600)),
        "batch_tokens": draw(st.one_of(st.just(math.nan), _f(1e3, 1e9))),
        "model_bytes_per_param": draw(st.one_of(st.just(math.nan), _f(0.5, 32))),
        "checkpoint_size_bytes": draw(
            st.one_of(st.just(math.nan), st.just(math.nan), _f(1e9, 1e14))
        ),
        "consolidated_bytes_per_param": draw(st.sampled_from([0.0, 0.0, 2.0])),
        "tier_read_GBps": draw(st.one_of(st.just(math.nan), _f(0.1, 1e5))),
        "tier_node_read_GBps": draw(st.one_of(st.just(math.nan), _f(0.1, 1000))),
        "nvme_read_GBps": draw(st.one_of(st.just(math.nan), _f(0.5, 200)))
        if has_nvme
        else math.nan,
        "sync_fixed_s": sync_fixed,
        "async_fixed_s": draw(_f(0, sync_fixed)),  # a snapshot's set-up never exceeds a full sync's
        "tiered_fixed_s": draw(_f(0, sync_fixed)),
        "async_slowdown_pct": draw(_f(0, 50)),
        "site": "on-prem",
        "tier_durable": tier_kind != "local_nvme" and draw(st.booleans()),
        "tier_family": "f",
        "tier_min_capacity_bytes": draw(st.one_of(st.just(0.0), _f(1e12, 1e14))),
        "usd_per_GBps_month": draw(st.one_of(st.just(0.0), _f(0, 2000))),
        "capex_usd_per_tb": draw(_f(10, 500)) if bought else math.nan,
        "capex_usd_per_GBps": draw(_f(0, 50_000)) if bought else 0.0,
        "life_s": draw(_f(1 * 365.25 * 86400, 10 * 365.25 * 86400)) if bought else math.nan,
        "support_pct": draw(_f(0, 20)),
        "usd_per_1k_puts": draw(_f(0, 0.01)),
        "part_size_bytes": draw(st.one_of(st.just(math.inf), _f(1e6, 1e9))),
        "puts_per_s_per_prefix": draw(st.one_of(st.just(math.inf), _f(100, 1e4))),
        "prefixes": float(draw(st.integers(1, 8))),
        "headroom_pct": draw(_f(0, 50)),
        "confidence_pct": draw(_f(1, 100)),
    }


rows_strategy = st.lists(input_row(), min_size=1, max_size=ROWS)


def arrays(rows: list[dict[str, object]]) -> dict[str, np.ndarray]:
    assert set(rows[0]) == set(INPUTS)
    return {
        name: np.asarray(
            [r[name] for r in rows],
            dtype=None if name in LABEL_INPUTS else bool if INPUTS[name].unit == "bool" else float,
        )
        for name in INPUTS
    }
