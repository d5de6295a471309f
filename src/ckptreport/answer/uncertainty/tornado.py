"""One input at a time: the tornado of a summary line (each uncertain input at its low and its high, the
others held) and the sweeps of one option that the workbook's Sensitivity sheet recomputes."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..types import NONE, Param, Sweep, Swing, option_label
from .evaluator import METRICS, Evaluator, hits, judge
from .ranges import base_values


def _option(rows: pd.DataFrame, pos: int) -> str:
    if pos < 0:
        return NONE
    r = rows.iloc[pos]
    return option_label(r["strategy"], r["tier"], r["engine"])


def _options(rows: pd.DataFrame) -> list[str]:
    """Every row's option label (``_option`` of each), read column by column, not row by row."""
    return [
        option_label(s, t, e) for s, t, e in zip(rows["strategy"], rows["tier"], rows["engine"])
    ]


def _at(labels: list[str], at: dict[str, np.ndarray], draw: int, pos: int) -> dict:
    """The pick ``pos`` of one draw and its metrics (``at``: each metric at each draw's pick)."""
    out = {"option": labels[pos] if pos >= 0 else NONE}
    for m in METRICS:
        out[m] = float(at[m][draw]) if pos >= 0 else None
    return out


def tornado(
    rows: pd.DataFrame, params: list[Param], rank_by: str = "total_usd", ev: Evaluator | None = None
) -> tuple[dict, list[Swing]]:
    """One summary line's options (``rows``, in the frame's order): the base pick, and per uncertain
    input that touches them its swing, largest first by ``rank_by``. ``ev``: the rows' Evaluator,
    when the caller has one."""
    ev = ev or Evaluator(rows, params)
    return _tornadoes(rows, ev, [np.arange(len(rows))], rank_by)[0]


def tornadoes(
    frame: pd.DataFrame, lines: list[list[int]], params: list[Param], rank_by: str = "total_usd"
) -> list[tuple[dict, list[Swing]]]:
    """``tornado`` of every summary line at once (``lines``: each line's options, frame rows): one
    evaluation of the model's columns over all their rows, each line decided on its own rows. The
    same answer as one ``tornado`` per line (``line_rows``), at a fraction of the cost."""
    if not lines:
        return []
    rows = frame.loc[[i for line in lines for i in sorted(line)]]
    starts = np.cumsum([0, *(len(line) for line in lines)])
    return _tornadoes(
        rows,
        Evaluator(rows, params),
        [np.arange(a, b) for a, b in zip(starts[:-1], starts[1:])],
        rank_by,
    )


def _tornadoes(
    rows: pd.DataFrame, ev: Evaluator, groups: list[np.ndarray], rank_by: str
) -> list[tuple[dict, list[Swing]]]:
    params = ev.params
    used = ev.touching()
    base = base_values(params)[0]
    values = [base]
    for j in used:
        for end in ("low", "high"):
            v = base.copy()
            v[j] = getattr(params[j], end)
            values.append(v)
    judged = judge(ev, np.array(values), groups, METRICS)  # a chunk of the ends at a time
    labels = _options(rows)
    out = []
    for n, (g, chosen) in enumerate(zip(groups, judged.chosen)):
        cols = {m: judged.at[m][n] for m in METRICS}  # each end's metrics at its pick
        at_base = _at(labels, cols, 0, int(chosen[0]))
        swings = []
        for k, j in enumerate(used):
            if not any(hits(rows_j, g) for rows_j in ev.member_rows[j]):
                continue  # an input of another line's entities
            lo, hi = 1 + 2 * k, 2 + 2 * k
            low, high = (
                _at(labels, cols, lo, int(chosen[lo])),
                _at(labels, cols, hi, int(chosen[hi])),
            )
            swings.append(
                Swing(
                    params[j],
                    low,
                    high,
                    low["option"] != at_base["option"] or high["option"] != at_base["option"],
                )
            )
        swings.sort(
            key=lambda s: (
                -s.swing(rank_by) if math.isfinite(s.swing(rank_by)) else -math.inf,
                s.param.label,
            )
        )
        out.append((at_base, swings))
    return out


def sweeps(row: pd.DataFrame, params: list[Param]) -> list[Sweep]:
    """The sweep of each uncertain input that ``row`` (one frame row) reads, largest swing first, as
    the terminal and the brief rank a tornado."""
    ev = Evaluator(row, params)
    base = base_values(params)[0]
    out = []
    for j in ev.touching():
        p = params[j]
        member = next(m for m, rows_j in zip(p.members, ev.member_rows[j]) if len(rows_j))
        values = np.repeat(base[None, :], 2, axis=0)
        values[:, j] = [p.low, p.high]
        cols = {k: v[:, 0] for k, v in ev.run(values).items()}
        low, high = (
            float(v) for v in cols["total_usd"]
        )  # Python floats: an unpriced end is nan, silently
        out.append(Sweep(p, member, cols, abs(high - low)))
    out.sort(key=lambda b: (-b.swing if math.isfinite(b.swing) else math.inf, b.param.label))
    return out
