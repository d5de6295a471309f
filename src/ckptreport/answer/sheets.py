"""What the workbook holds beyond the summary: its Scenarios rows when not all fit (the lowest-waste
intervals of each group, chosen as a streamed plan goes by too), the overhead-by-tier chart's rows and
the Cadence sheet's grids."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.axes import Point
from ..model.evaluate import compute as compute_columns
from ..read.inputs import INPUTS
from ..read.validated import Inputs
from .recommend import headline_rows

GROUP = [
    "model",
    "recipe",
    "sku",
    "tier",
    "engine",
    "strategy",
    "gpus",
]  # a group: every interval of one system


def per_group(limit: int, rows: int, intervals: int) -> int:
    """Rows per group the workbook keeps when not all fit: every group holds one row per interval."""
    return max(1, limit // max(rows // max(intervals, 1), 1))


def workbook_rows(
    frame: pd.DataFrame,
    named: set[int],
    limit: int,
    intervals: int,
    rows: int | None = None,
    selected: pd.Index | None = None,
) -> tuple[pd.Index, str]:
    """The rows the workbook holds: all if they fit; else the lowest-waste intervals of each group,
    always with the rows the summary names (its candidates and purchase curves). Returns them and a
    note saying what was left out. A streamed plan (``rows`` in all) passes the rows ``selected``
    as it went (``Selection``): the same rows the whole frame would give."""
    rows = len(frame) if rows is None else rows
    if rows <= limit:
        return frame.index, ""
    each = per_group(limit, rows, intervals)
    if selected is None:
        rank = frame.groupby(GROUP, observed=True, sort=False)["waste_pct"].rank(method="first")
        keep = (rank <= each).to_numpy()
    else:
        keep = frame.index.isin(selected)
    must = frame.index.isin(sorted(named))
    whole = int((keep | must).sum())
    if whole > limit:  # more groups than rows: the lowest waste overall
        best = (
            frame[keep & ~must]
            .sort_values("waste_pct", kind="stable")
            .head(max(limit - must.sum(), 0))
        )
        keep = frame.index.isin(best.index)
    kept = frame.index[keep | must]
    what = (
        f"the {each} lowest-waste interval(s) of each model x recipe x SKU x tier x engine x strategy x GPU count"
        if whole <= limit
        else f"the lowest-waste rows overall (one interval of every group needs workbook_rows = {whole:,})"
    )
    note = (
        f"Scenarios holds {len(kept):,} of {rows:,} rows (workbook_rows = {limit:,}): {what}, and the "
        "summary's rows. Every row is in scenarios.parquet."
    )
    return kept, note


class Selection:
    """The workbook's rows of a streamed plan, kept as the chunks go by: per group, the
    ``per_group`` lowest-waste rows so far (ties to the earlier row, as ``rank(method="first")``)."""

    def __init__(self, limit: int, rows: int, intervals: int):
        self.per_group = per_group(limit, rows, intervals)
        self.kept: pd.DataFrame | None = None

    def add(self, chunk: pd.DataFrame) -> None:
        self.kept = lowest_waste(
            chunk if self.kept is None else concat([self.kept, chunk]), self.per_group
        )


def lowest_waste(frame: pd.DataFrame, per_group: int) -> pd.DataFrame:
    """Per group, the ``per_group`` lowest-waste rows of ``frame`` (ties to the earlier row): what a
    piece of a streamed plan keeps for the workbook, and ``Selection`` keeps of the pieces so far."""
    rank = frame.groupby(GROUP, observed=True, sort=False)["waste_pct"].rank(method="first")
    return frame[(rank <= per_group).to_numpy()]


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Frames of one plan stacked, their text columns kept categorical (each chunk has its own
    categories: they are united)."""
    frames = [f for f in frames if f is not None]
    if len(frames) == 1:
        return frames[0]
    out = {}
    for name in frames[0].columns:
        if isinstance(frames[0][name].dtype, pd.CategoricalDtype):
            every = [
                list(f[name].cat.categories) for f in frames
            ]  # the plan's axes: the same, in plan order
            cats = (
                every[0]
                if all(c == every[0] for c in every)
                else sorted(set().union(*every), key=str)
            )
            out[name] = pd.Categorical(
                np.concatenate([f[name].astype(object).to_numpy() for f in frames]), categories=cats
            )
        else:
            out[name] = np.concatenate([f[name].to_numpy() for f in frames])
    return pd.DataFrame(out, index=np.concatenate([f.index.to_numpy() for f in frames]), copy=False)


def tier_overview(inputs: Inputs, frame: pd.DataFrame, point: Point, kept: pd.Index) -> list:
    """Per tier, the rows (by strategy) of the summary's model and SKU at the summary point: what the
    workbook's overhead-by-tier chart shows (rows the workbook holds only)."""
    rows = headline_rows(frame, inputs, point)
    rows = rows[(rows["model"] == point.model) & (rows["sku"] == point.sku) & rows.index.isin(kept)]
    out = []
    for tier in frame["tier"].cat.categories:
        here = rows[rows["tier"] == tier]
        if not here.empty:  # a tier of another site: not an option for this SKU
            out.append((str(tier), {str(s): int(i) for i, s in zip(here.index, here["strategy"])}))
    return out


# The Cadence sheet's intervals (minutes): each summary pick's waste is recomputed over them
CADENCE_GRID_MIN = (
    1,
    2,
    3,
    5,
    7,
    10,
    15,
    20,
    25,
    30,
    40,
    50,
    60,
    75,
    90,
    120,
    150,
    180,
    240,
    300,
    360,
    480,
    600,
    720,
)


def cadence_grids(frame: pd.DataFrame, labels: list[int]) -> dict[int, dict[str, np.ndarray]]:
    """Every column of each scenario of ``labels`` recomputed at each interval of CADENCE_GRID_MIN
    (the figures the Cadence sheet's formulas compute, stored with them as their results), in one
    evaluation of every scenario x interval (the model is row-wise: a row depends on its own inputs)."""
    if not labels:
        return {}
    seconds = np.array([60.0 * m for m in CADENCE_GRID_MIN])
    k = len(seconds)
    rows = frame.loc[list(labels)]  # each input in its column's dtype, repeated once per interval
    cols = compute_columns(
        {n: np.repeat(rows[n].to_numpy(), k) for n in INPUTS if n in rows}
        | {"interval_s": np.tile(seconds, len(labels))}
    )
    return {
        label: {name: np.asarray(v)[j * k : (j + 1) * k] for name, v in cols.items()}
        for j, label in enumerate(labels)
    }
