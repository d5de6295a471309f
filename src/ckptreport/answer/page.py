"""What the planning-review page (``out/report.html``) shows beyond the summary, computed here so
that its renderer (``render.html``) only formats: per summary line (a model on a SKU) its section
(the option the rule picks, the best engine of each tier and strategy, the purchase curve, the
tornado; a model's brief adds its Monte Carlo band and break-even values), and the cross product's
columns the page's table sorts and filters.

Sixty summary lines are sixty decisions: each is taken by the one rule (``rule.rank``), batched
over every line at once, and the sixty tornadoes are one evaluation of the model's columns
(``uncertainty.tornado.tornadoes``): the page costs the build a fraction of a second, not one brief's
worth of compute per line."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model import rule
from ..model.evaluate import curve
from .types import Page, Section
from .uncertainty import tornado

# The cross product's columns the page's table holds (every column is in scenarios.parquet/.csv):
# what a review sorts and filters on, keys first
TABLE_COLUMNS = (
    "model",
    "recipe",
    "sku",
    "gpus",
    "interval_s",
    "tier",
    "strategy",
    "engine",
    "ckpt_bytes",
    "bytes_per_gpu",
    "bytes_per_node",
    "stall_s",
    "write_s",
    "bottleneck",
    "overhead_pct",
    "meets_target",
    "waste_pct",
    "optimal_interval_s",
    "restore_s",
    "required_write_GBps",
    "tier_bought_GBps",
    "capacity_needed_bytes",
    "storage_usd_month",
    "lost_gpu_usd_month",
    "total_usd_month",
    "total_usd",
    "run_days",
    "ettr_pct",
    "implausible",
    "recommendable",
    "extrapolated",
    "idle_gpus",
)


PAGE_ROWS = 30_000  # the most rows the page's table embeds (~6 MB); a larger plan's page holds the workbook's


def best_per_group(
    cols: dict[str, np.ndarray], groups: list[np.ndarray]
) -> tuple[np.ndarray, np.ndarray]:
    """Per group of positions, the position the rule picks and its status code, all groups in one
    call of ``rule.rank``: the groups are padded into one array with entries that are never a
    candidate before a real option (not recommendable, not durable, their keys NaN, after every
    real option)."""
    width = max(len(g) for g in groups)
    at = np.full((len(groups), width), -1)
    for k, g in enumerate(groups):
        at[k, : len(g)] = g
    real = at >= 0
    take = np.where(real, at, 0)
    args = []
    for name, c in rule.COLUMNS.items():
        v = np.asarray(cols[c])[take]
        if name in ("recommendable", "durable", "meets"):
            args.append(np.where(real, v.astype(bool), False))
        else:
            args.append(np.where(real, v.astype(float), np.nan))
    order, _, status = rule.rank(*args)
    first = at[np.arange(len(groups)), order[:, 0]]
    assert (first >= 0).all()
    return first, status


def tier_table(
    frame: pd.DataFrame, lines: list[list[int]]
) -> list[list[tuple[str, dict[str, int]]]]:
    """Per summary line (its options' frame rows), per tier, the row the rule picks for each strategy
    among its engines."""
    labels = np.array([i for line in lines for i in sorted(line)], dtype=np.int64)
    rows = frame.loc[labels, ["tier", "strategy", *rule.COLUMNS.values()]]
    owner = np.repeat(np.arange(len(lines)), [len(line) for line in lines])
    key = pd.DataFrame(
        {
            "line": owner,
            "tier": rows["tier"].cat.codes.to_numpy(),
            "strategy": rows["strategy"].astype(str).to_numpy(),
        }
    )
    groups = list(key.groupby(["line", "tier", "strategy"], sort=True).indices.items())
    cols = {c: rows[c].to_numpy() for c in rule.COLUMNS.values()}
    first, _ = best_per_group(cols, [g for _, g in groups])
    out: list[dict[int, dict[str, int]]] = [{} for _ in lines]
    for ((line, tier, strategy), _), pos in zip(groups, first):
        out[line].setdefault(int(tier), {})[strategy] = int(labels[pos])
    names = frame["tier"].cat.categories
    return [[(str(names[t]), by[t]) for t in sorted(by)] for by in out]


def sections(
    frame: pd.DataFrame,
    summary: pd.DataFrame,
    candidates: list[list[int]],
    purchases: list,
    params: list,
    briefs: list,
) -> list[Section]:
    """Every summary line's section."""
    if summary.empty:
        return []
    tiers = tier_table(frame, candidates)
    tornadoes = tornado.tornadoes(frame, candidates, params)
    mine = {
        (b.spec.model, b.spec.skus[0]): b
        for b in briefs
        if b.spec.in_plan and len(b.spec.skus) == 1
    }
    out = []
    for k, line in enumerate(summary.to_dict("records")):
        base, swings = tornadoes[k]
        out.append(
            Section(
                k,
                line["model"],
                line["sku"],
                int(line["option_index"]),
                tiers[k],
                purchases[k],
                base,
                swings,
                mine.get((line["model"], line["sku"])),
                _cadence(frame.loc[int(line["option_index"])]),
            )
        )
    return out


CADENCE_S = np.geomspace(60, 12 * 3600, 24)  # a section's cadence curve: 1 min to 12 h


def _cadence(row: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """The option's waste at intervals from a minute to 12 h (the page's cadence curve)."""
    return CADENCE_S, np.asarray(curve(row, CADENCE_S)["waste_pct"], dtype=float)


def page(
    frame: pd.DataFrame,
    summary: pd.DataFrame,
    candidates: list[list[int]],
    purchases: list,
    params: list,
    briefs: list,
    rows: int,
    kept: pd.Index,
) -> Page:
    """The page's sections, and its table: every row of the plan up to PAGE_ROWS, else the rows the
    workbook holds (``kept``: the summary's, the briefs' and the best intervals of every system)."""
    table = frame if len(frame) <= PAGE_ROWS else frame.loc[kept[:PAGE_ROWS]]
    return Page(
        sections(frame, summary, candidates, purchases, params, briefs),
        table.loc[:, list(TABLE_COLUMNS)],
        rows,
    )
