"""The headline a planner reads first: per model and SKU, the cheapest durable tier that meets the
target, sync against async. A view of the scenario frame; renderers format it."""

from __future__ import annotations

import math

import pandas as pd

from .load import Inputs

_ORDER = ["storage_usd_month", "tier_write_GBps", "overhead_pct"]


def headline_rows(frame: pd.DataFrame, inputs: Inputs) -> pd.DataFrame:
    """Rows at the plan's summary cluster size and cadence, each model at its own recipe."""
    plan = inputs.plan
    gpus = (plan.summary.gpus if plan.summary else plan.gpus[0]).value
    interval = (plan.summary.interval if plan.summary else plan.intervals[0]).value
    own = frame["model"].map({m: inputs.models[m].recipe for m in frame["model"].cat.categories})
    rows = frame[(frame["gpus"] == gpus) & (frame["interval_s"] == interval)]
    own = own.loc[rows.index].astype(str)
    if (rows["recipe"].astype(str) == own).any():
        rows = rows[rows["recipe"].astype(str) == own]
    return rows


def cheapest(rows: pd.DataFrame) -> pd.Series | None:
    """The cheapest durable tier meeting the target: priced tiers by storage $/month, then unpriced
    tiers by the smaller aggregate write bandwidth (the smaller system). Node-local NVMe is not
    durable, so never recommended."""
    ok = rows[rows["meets_target"] & (rows["tier_kind"] != "local_nvme")]
    if ok.empty:
        return None
    return ok.sort_values(_ORDER, na_position="last", kind="stable").iloc[0]


def summary(frame: pd.DataFrame, inputs: Inputs) -> pd.DataFrame:
    """One row per model x SKU: checkpoint size, and per strategy the cheapest tier meeting the
    target with its overhead (or, when none does, the lowest overhead reached)."""
    rows = headline_rows(frame, inputs)
    out = []
    for (model, sku), group in rows.groupby(["model", "sku"], observed=True, sort=False):
        rec = {"model": model, "sku": sku, "recipe": group["recipe"].iloc[0],
               "gpus": int(group["gpus"].iloc[0]), "interval_s": float(group["interval_s"].iloc[0]),
               "ckpt_bytes": float(group["ckpt_bytes"].iloc[0])}
        for strategy in ("sync", "async", "tiered"):
            g = group[group["strategy"] == strategy]
            best = cheapest(g)
            if best is None and not g.empty:
                low = g[g["tier_kind"] != "local_nvme"]
                low = low if not low.empty else g
                best_any = low.sort_values("overhead_pct", kind="stable").iloc[0]
                rec[f"{strategy}_tier"] = None
                rec[f"{strategy}_overhead_pct"] = float(best_any["overhead_pct"])
                rec[f"{strategy}_closest_tier"] = str(best_any["tier"])
            else:
                rec[f"{strategy}_tier"] = None if best is None else str(best["tier"])
                rec[f"{strategy}_overhead_pct"] = math.nan if best is None else float(best["overhead_pct"])
                rec[f"{strategy}_closest_tier"] = None
        out.append(rec)
    return pd.DataFrame(out)
