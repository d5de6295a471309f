"""The one rule applied to rows of the frame: the option chosen among candidates (``recommend``), with
its status, runner-up, unpriced tiers and best other engine; the headline's rows; the assumed prices
an option rests on."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model import rule
from ..model.axes import Point
from ..model.plan import headline_recipe
from ..read.inputs import ENTITY_COLUMN, INPUTS
from ..read.provenance import provenance
from ..read.validated import Inputs
from .types import RECOMMENDED, STATUSES, Pick

RANK_BY = ["tier", "engine", "tier_kind", *rule.COLUMNS.values()]  # the columns recommend reads


PICKED_BY = ["tier", "engine", *rule.COLUMNS.values(), "tier_durable", "meets_target", "total_usd"]


def columns_of(rows: pd.DataFrame) -> dict[str, np.ndarray]:
    """The columns ``recommend`` reads, as arrays: read once by a caller choosing among many subsets
    of the same rows (a summary line's strategies)."""
    return {c: rows[c].to_numpy() for c in dict.fromkeys(PICKED_BY)}


def _ranked(cols: dict[str, np.ndarray]) -> tuple[np.ndarray, str]:
    """``ranked`` as positions in the rows ``cols`` holds."""
    order, count, status = rule.rank(*rule.of({c: cols[c] for c in rule.COLUMNS.values()}))
    return order[:count], STATUSES[int(status)]


def ranked(rows: pd.DataFrame) -> tuple[pd.Index, str]:
    """Candidate options (their labels in ``rows``), best first, and the status of the first, by the
    one rule (``rule.rank``)."""
    order, status = _ranked({c: rows[c].to_numpy() for c in rule.COLUMNS.values()})
    return rows.index[order], status


def recommend(
    rows: pd.DataFrame, at: np.ndarray | None = None, cols: dict[str, np.ndarray] | None = None
) -> Pick | None:
    """The option chosen among ``rows`` (see ``ranked``), or among the rows at positions ``at``
    (sorted) as among ``rows.iloc[at]``; None when there are none. Rows are taken by position and
    columns read as arrays (``cols``: ``columns_of(rows)``, when the caller has them): a summary calls
    this per line and strategy, and a row of a wide frame is the costly part (``rows`` has unique
    labels, as the frame's)."""
    cols = columns_of(rows) if cols is None else cols
    if at is not None:
        cols = {c: v[at] for c, v in cols.items()}
    if not len(cols["tier"]):
        return None
    order, status = _ranked(cols)
    where = order if at is None else at[order]  # the ranked options' positions in ``rows``
    best = rows.iloc[where[0]]
    runner = other = None
    if status == RECOMMENDED:
        tiers, engines = cols["tier"], cols["engine"]
        elsewhere = where[tiers[order] != best["tier"]]
        runner = rows.iloc[elsewhere[0]] if len(elsewhere) else None
        others = where[engines[order] != best["engine"]]
        other = rows.iloc[others[0]] if len(others) else None
    waiting = (
        cols["tier_durable"].astype(bool)
        & cols["meets_target"].astype(bool)
        & pd.isna(cols["total_usd"])
    )
    return Pick(
        int(rows.index[where[0]]),
        best,
        status,
        runner,
        tuple(dict.fromkeys(str(t) for t in cols["tier"][waiting])),
        other,
    )


def assumed_prices(inputs: Inputs, row) -> list[tuple[str, str]]:
    """The prices an option rests on whose basis is an assumption: (input, value as shown)."""
    from ..model import display

    names = {section: row[column] for section, column in ENTITY_COLUMN.items()}
    out = []
    for inp in INPUTS.values():
        if inp.price:
            prov = provenance(inputs, inp, names)
            if prov is not None and prov.basis == "assumption":
                out.append((inp.name, display.of(inp.name, row[inp.name])))
    return out


def headline_rows(frame: pd.DataFrame, inputs: Inputs, point: Point) -> pd.DataFrame:
    """Rows at the summary's cluster size and cadence, each model at its headline recipe."""
    rows = frame[(frame["gpus"] == point.gpus) & (frame["interval_s"] == point.interval_s)]
    recipe = rows["model"].map(
        {m: headline_recipe(inputs, m) for m in frame["model"].cat.categories}
    )
    return rows[rows["recipe"].astype(str) == recipe.astype(str)]
