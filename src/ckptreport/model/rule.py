"""The one rule that picks an option, on numpy arrays: the summary and the briefs apply it to frame
rows (``report.ranked``), the tornado, break-even search and Monte Carlo to thousands of draws at
once (``answer.uncertainty.evaluator.picks``). Both call ``rank``, so they cannot disagree.

Recommendable options (meeting the target, feasible, durable, priced) rank by the least cost over
the run (``total_usd``: storage plus GPU time lost), then the smaller system (bandwidth bought), then
the lower overhead. When none is recommendable but durable options meet the target without a price:
those, smaller system first ("needs a price"). Else the durable options (all, when none is durable)
by the lowest overhead ("closest"). Ties keep the rows' order."""

from __future__ import annotations

import numpy as np

# The columns the rule reads, by the names ``rank`` takes them
COLUMNS = {
    "recommendable": "recommendable",
    "durable": "tier_durable",
    "meets": "meets_target",
    "total": "total_usd",
    "bought": "tier_bought_GBps",
    "overhead": "overhead_pct",
}


def rank(
    recommendable: np.ndarray,
    durable: np.ndarray,
    meets: np.ndarray,
    total: np.ndarray,
    bought: np.ndarray,
    overhead: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The options along the last axis, best first: ``order`` (positions, candidates first),
    ``count`` (how many are candidates) and ``status`` (a code into STATUSES), each per leading index
    (one decision per draw)."""
    ok, durable = np.asarray(recommendable, dtype=bool), np.asarray(durable, dtype=bool)
    unpriced = durable & np.asarray(meets, dtype=bool)
    status = np.where(ok.any(axis=-1), 0, np.where(unpriced.any(axis=-1), 1, 2))
    fallback = np.where(durable.any(axis=-1, keepdims=True), durable, True)
    candidates = (ok, unpriced, fallback)
    keys = (
        (total, bought, overhead),
        (bought, overhead, 0.0),
        (overhead, bought, 0.0),
    )  # by status, first key first
    if (
        status == status.flat[0]
    ).all():  # one status for every decision (the usual case): no per-draw choice
        candidate, chosen = candidates[int(status.flat[0])], keys[int(status.flat[0])]
    else:
        s = status[..., None]
        candidate = np.where(s == 0, ok, np.where(s == 1, unpriced, fallback))
        chosen = tuple(np.where(s == 0, k0, np.where(s == 1, k1, k2)) for k0, k1, k2 in zip(*keys))
    position = np.broadcast_to(np.arange(ok.shape[-1]), ok.shape)
    first, second, third = (np.broadcast_to(k, ok.shape) for k in chosen)
    order = np.lexsort((position, third, second, first, ~candidate), axis=-1)
    return order, candidate.sum(axis=-1), status


def of(columns) -> tuple[np.ndarray, ...]:
    """``rank``'s arguments from a mapping of column name to array (a frame, or evaluated draws)."""
    return tuple(np.asarray(columns[c]) for c in COLUMNS.values())
