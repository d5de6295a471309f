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


def _ranked(rows: pd.DataFrame) -> tuple[np.ndarray, str]:
    """``ranked`` as positions in ``rows``."""
    order, count, status = rule.rank(
        *rule.of({c: rows[c].to_numpy() for c in rule.COLUMNS.values()})
    )
    return order[:count], STATUSES[int(status)]


def ranked(rows: pd.DataFrame) -> tuple[pd.Index, str]:
    """Candidate options (their labels in ``rows``), best first, and the status of the first, by the
    one rule (``rule.rank``)."""
    order, status = _ranked(rows)
    return rows.index[order], status


def recommend(rows: pd.DataFrame) -> Pick | None:
    """The option chosen among ``rows`` (see ``ranked``); None when there are no rows. Rows are
    taken by position and columns read as arrays: a summary calls this per line and strategy, and
    a row of a wide frame is the costly part (``rows`` has unique labels, as the frame's)."""
    if rows.empty:
        return None
    order, status = _ranked(rows)
    best = rows.iloc[order[0]]
    runner = other = None
    if status == RECOMMENDED:
        tiers, engines = rows["tier"].to_numpy(), rows["engine"].to_numpy()
        elsewhere = order[tiers[order] != best["tier"]]
        runner = rows.iloc[elsewhere[0]] if len(elsewhere) else None
        others = order[engines[order] != best["engine"]]
        other = rows.iloc[others[0]] if len(others) else None
    waiting = (
        rows["tier_durable"].to_numpy(bool)
        & rows["meets_target"].to_numpy(bool)
        & rows["total_usd"].isna().to_numpy()
    )
    return Pick(
        int(rows.index[order[0]]),
        best,
        status,
        runner,
        tuple(dict.fromkeys(str(t) for t in rows["tier"].to_numpy()[waiting])),
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
