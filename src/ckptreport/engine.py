"""The engine: the plan's cross product as a pandas frame, every column computed vectorised.

It knows nothing of files or formats. ``scenarios(inputs)`` returns one row per model x recipe x SKU
x tier x strategy x GPU count x interval, with the input columns (``columns.INPUTS``), the derived
columns (``columns.COLUMNS``) and the basis of each bandwidth used (``columns.SOURCE_COLUMNS``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .columns import COLUMNS, INPUTS
from .load import Inputs, dimensions
from . import schema
from .schema import TIER_KINDS

@dataclass(frozen=True)
class Dropped:
    reason: str
    rows: int


def compute(values: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Evaluate every column definition over arrays of inputs; returns inputs and columns."""
    env = dict(values)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for col in COLUMNS.values():
            env[col.name] = col.fn(*(env[p] for p in col.params))
    return env


def _basis(inputs: Inputs, section: str, name: str, field: str) -> str:
    prov = inputs.prov.get((section, name, field))
    return prov.basis if prov else "input"


def model_inputs(m: schema.Model) -> dict[str, object]:
    """A model's input columns, in the engine's units (tp, pp 1 and layers, hidden, vocab 0 if not given)."""
    def count(q, default):
        return q.value if q is not None else default

    return {"params": m.params.value, "active_params": (m.active_params or m.params).value,
            "tokens": m.tokens.value, "sharding": m.sharding, "tp": count(m.tp, 1.0), "pp": count(m.pp, 1.0),
            "layers": count(m.layers, 0.0), "hidden": count(m.hidden, 0.0), "vocab": count(m.vocab, 0.0)}


def recipe_inputs(r: schema.Recipe) -> dict[str, float]:
    return {"weights_bytes_per_param": r.weights, "master_bytes_per_param": r.master or 0.0,
            "optimizer_bytes_per_param": float(sum(r.optimizer)), "grads_bytes_per_param": r.grads or 0.0}


def sku_inputs(s: schema.Sku) -> dict[str, float]:
    node = s.d2h_per_node.value if s.d2h_per_node else s.gpus_per_node.value * s.d2h_per_gpu.value
    return {
        "gpus_per_node": s.gpus_per_node.value,
        "peak_TFLOPS": s.peak_bf16.value / 1e12,
        "d2h_gpu_GBps": s.d2h_per_gpu.value / 1e9,
        "d2h_node_GBps": node / 1e9,
        "host_memory_bytes": s.host_memory.value,
        "storage_nic_GBps": s.storage_nic.value / 1e9,
        "nvme_write_GBps": s.local_nvme.write.value / 1e9 if s.local_nvme else 0.0,
        "nvme_capacity_bytes": s.local_nvme.capacity.value if s.local_nvme else 0.0,
        "usd_per_gpu_hour": s.usd_per_gpu_hour.value,
        "gpu_mtbf_s": s.gpu_mtbf.value,
    }


def tier_inputs(t: schema.Tier) -> dict[str, object]:
    """A tier's input columns; inf where unbounded, NaN where unpriced."""
    return {
        "tier_kind": t.kind,
        "tier_write_GBps": _tier_aggregate(t) / 1e9,
        "tier_node_write_GBps": (t.per_node_write.value if t.per_node_write else math.inf) / 1e9,
        "usd_per_tb_month": t.usd_per_tb_month.value if t.usd_per_tb_month else math.nan,
    }


def global_inputs(plan: schema.Plan) -> dict[str, float]:
    """The plan's globals, shared by every scenario."""
    return {
        "target_overhead_pct": plan.target_overhead.value * 100,
        "mfu_pct": plan.mfu.value * 100,
        "restart_s": plan.restart.value,
        "retention": plan.retention.value,
        "buffers": plan.buffers.value,
        "writer_GBps": plan.writer_bandwidth.value / 1e9 if plan.writer_bandwidth else math.inf,
        "sync_fixed_s": plan.fixed_cost.sync.value,
        "async_fixed_s": plan.fixed_cost.async_.value,
        "tiered_fixed_s": plan.fixed_cost.tiered.value,
        "async_slowdown_pct": plan.async_slowdown.value * 100,
    }


def _table(entities: list, fn) -> dict[str, np.ndarray]:
    rows = [fn(e) for e in entities]
    return {k: np.asarray([r[k] for r in rows], dtype=None if isinstance(rows[0][k], str) else float)
            for k in rows[0]} if rows else {}


def _entity_tables(inputs: Inputs, dims: dict[str, list]):
    """Per-entity arrays of input values, indexed like the dimension lists."""
    tiers = [inputs.tiers[t] for t in dims["tier"]]
    model_t = _table([inputs.models[m] for m in dims["model"]], model_inputs)
    sku_t = _table([inputs.skus[s] for s in dims["sku"]], sku_inputs)
    tier_t = _table(tiers, tier_inputs)
    tier_t.pop("tier_kind")
    sku_src = {
        "d2h_source": [_basis(inputs, "skus", n, "d2h_per_node" if inputs.skus[n].d2h_per_node else "d2h_per_gpu")
                       for n in dims["sku"]],
        "nic_source": [_basis(inputs, "skus", n, "storage_nic") for n in dims["sku"]],
        "nvme_source": [_basis(inputs, "skus", n, "local_nvme.write") if inputs.skus[n].local_nvme else "none"
                        for n in dims["sku"]],
    }
    tier_src = [_tier_basis(inputs, n) for n in dims["tier"]]
    return model_t, sku_t, sku_src, tier_t, tier_src, tiers


def _tier_aggregate(tier) -> float:
    if tier.write is not None:
        return tier.write.value
    if tier.write_per_TiB is not None:
        return tier.write_per_TiB.value * tier.capacity.value / 2**40
    return math.inf


def _tier_basis(inputs: Inputs, name: str) -> str:
    tier = inputs.tiers[name]
    fields = [f for f in ("write", "write_per_TiB", "per_node_write") if getattr(tier, f) is not None]
    bases = sorted({_basis(inputs, "tiers", name, f) for f in fields})
    return "+".join(bases) if bases else "sku"  # local_nvme without a cap: the SKU's drives


def cross_product(inputs: Inputs) -> tuple[dict[str, np.ndarray], dict[str, list[str]], list[Dropped]]:
    """Index arrays for every plan combination, with combinations that cannot exist removed."""
    dims = dimensions(inputs)
    shape = tuple(len(v) for v in dims.values())
    idx = dict(zip(dims, np.unravel_index(np.arange(math.prod(shape), dtype=np.int64), shape)))
    skus = [inputs.skus[s] for s in dims["sku"]]
    tiers = [inputs.tiers[t] for t in dims["tier"]]
    has_nvme = np.array([s.local_nvme is not None for s in skus])[idx["sku"]]
    local = np.array([t.kind == "local_nvme" for t in tiers])[idx["tier"]]
    strategies = np.array(dims["strategy"])[idx["strategy"]]
    tiered = strategies == "tiered"
    rules = [
        ("tiered needs a remote tier to drain to (the tier is node-local NVMe)", tiered & local),
        ("the SKU has no local NVMe (tiered strategy or local_nvme tier)", ~has_nvme & (tiered | local)),
    ]
    keep = np.ones(len(strategies), dtype=bool)
    dropped = []
    for reason, mask in rules:
        n = int((mask & keep).sum())
        if n:
            dropped.append(Dropped(reason, n))
        keep &= ~mask
    idx = {k: v[keep] for k, v in idx.items()}
    return idx, dims, dropped


def _recipe_codes(inputs: Inputs, dims, idx) -> tuple[np.ndarray, list[str]]:
    if dims["recipe"] != [None]:
        return idx["recipe"], list(dims["recipe"])
    names = sorted({inputs.models[m].recipe for m in dims["model"]})
    per_model = np.array([names.index(inputs.models[m].recipe) for m in dims["model"]])
    return per_model[idx["model"]], names


def scenarios(inputs: Inputs) -> tuple[pd.DataFrame, list[Dropped]]:
    """The full scenario frame for a validated plan."""
    idx, dims, dropped = cross_product(inputs)
    n = len(idx["model"])
    model_t, sku_t, sku_src, tier_t, tier_src, tiers = _entity_tables(inputs, dims)
    recipe_codes, recipe_names = _recipe_codes(inputs, dims, idx)
    recipe_t = _table([inputs.recipes[r] for r in recipe_names], recipe_inputs)
    values: dict[str, np.ndarray] = {
        "gpus": np.asarray(dims["gpus"], dtype=float)[idx["gpus"]],
        "interval_s": np.asarray(dims["interval_s"], dtype=float)[idx["interval_s"]],
        "strategy": np.asarray(dims["strategy"])[idx["strategy"]],
        "tier_kind": np.asarray([t.kind for t in tiers])[idx["tier"]],
    }
    for k, v in model_t.items():
        values[k] = v[idx["model"]]
    for k, v in recipe_t.items():
        values[k] = v[recipe_codes]
    for k, v in sku_t.items():
        values[k] = v[idx["sku"]]
    for k, v in tier_t.items():
        values[k] = v[idx["tier"]]
    for k, v in global_inputs(inputs.plan).items():
        values[k] = np.full(n, v)
    env = compute(values)

    cat = pd.Categorical.from_codes
    frame: dict[str, object] = {
        "model": cat(idx["model"], dims["model"]),
        "recipe": cat(recipe_codes, recipe_names),
        "sku": cat(idx["sku"], dims["sku"]),
        "tier": cat(idx["tier"], dims["tier"]),
        "strategy": cat(idx["strategy"], dims["strategy"]),
        "gpus": env["gpus"].astype(np.int64),
    }
    for name in INPUTS:
        if name not in frame:
            frame[name] = env[name]
    frame["tier_kind"] = _categorical(env["tier_kind"], TIER_KINDS)
    frame["sharding"] = _categorical(env["sharding"], ("fully_sharded", "optimizer_sharded", "replica0"))
    for name, col in COLUMNS.items():
        value = env[name]
        if col.unit == "label":
            value = _categorical(value)
        elif col.unit == "count":
            value = value.astype(np.int64)
        frame[name] = value
    for key in ("d2h_source", "nic_source", "nvme_source"):
        frame[key] = _cat_take(sku_src[key], idx["sku"])
    # The tier's figure, or for a local_nvme tier the SKU's drives; a local tier crosses no NIC.
    pair = idx["sku"] * len(dims["tier"]) + idx["tier"]
    local = [t.kind == "local_nvme" for t in tiers]
    frame["tier_source"] = _cat_take([sku_src["nvme_source"][s] if local[t] and tier_src[t] == "sku" else tier_src[t]
                                      for s in range(len(dims["sku"])) for t in range(len(dims["tier"]))], pair)
    frame["nic_source"] = _cat_take(["none" if local[t] else sku_src["nic_source"][s]
                                     for s in range(len(dims["sku"])) for t in range(len(dims["tier"]))], pair)
    return pd.DataFrame(frame, copy=False), dropped  # no copy: consolidating 80 columns costs more than computing them


def _categorical(values: np.ndarray, categories=None) -> pd.Categorical:
    """A categorical from an array of strings, without hashing a million of them."""
    cats = np.unique(values[:: max(1, len(values) // 4096)]) if categories is None else np.asarray(sorted(categories))
    codes = np.searchsorted(cats, values)
    codes = np.minimum(codes, len(cats) - 1)
    missing = cats[codes] != values
    if missing.any():  # a label the sample did not catch: fall back to the exact way
        return pd.Categorical(values)
    return pd.Categorical.from_codes(codes, cats)


def _cat_take(table: list[str], codes: np.ndarray) -> pd.Categorical:
    cats = sorted(set(table))
    lookup = np.array([cats.index(v) for v in table])
    return pd.Categorical.from_codes(lookup[codes], cats)
