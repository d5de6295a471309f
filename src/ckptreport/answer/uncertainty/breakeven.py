"""Break-even: the value of each uncertain input, nearest its own on either side, at which the
recommendation flips, found on the model itself."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...read.inputs import INPUTS
from ..types import BreakEven, Param
from .evaluator import Evaluator, judge
from .ranges import base_values
from .tornado import _option


def _span(p: Param) -> tuple[float, float]:
    """How far a break-even is looked for: a factor of 10 either side of the value (or the range, if
    wider), never past what its key allows (``Member.floor``, ``.ceiling``: a share within 0-100%).
    Beyond what the other shares of its whole leave, a share is held there (``Evaluator``): no
    break-even is found past it."""
    low, high = min(p.low, p.value / 10), max(p.high, p.value * 10)
    if INPUTS[p.input].unit == "pct":
        high = min(high, 100.0)
    return max(low, 0.0, p.first.floor), min(high, p.first.ceiling)


def break_even(
    rows: pd.DataFrame,
    params: list[Param],
    grid: int = 48,
    rounds: int = 6,
    points: int = 32,
    ev: Evaluator | None = None,
) -> list[BreakEven]:
    """Per uncertain input touching ``rows``, the nearest value above and below its own at which the
    pick changes, found on the model itself (each within a factor of 10): a grid of ``grid`` points
    each way, then ``rounds`` of ``points`` evenly between the last value that keeps the pick and the
    first that changes it (the bracket shrinks ``points + 1`` times a round: 6 rounds of 32, 1.3e9,
    as fine as 30 bisection steps). Every input's grid is one evaluation, and so is each round."""
    ev = ev or Evaluator(rows, params)
    used = ev.touching()
    base = base_values(params)[0]
    everything = np.arange(len(rows))

    def pick_at(js: list[int], xs: np.ndarray) -> np.ndarray:
        values = np.repeat(base[None, :], len(js), axis=0)
        values[np.arange(len(js)), js] = xs
        return judge(ev, values, [everything]).chosen[0]  # a chunk of the points at a time

    start = int(pick_at([0], base[:1])[0]) if params else -1
    searches = []  # (param position, direction, the grid's values)
    for j in used:
        p = params[j]
        lo_end, hi_end = _span(p)
        for direction, end in (("above", hi_end), ("below", lo_end)):
            if (direction == "above" and end <= p.value) or (
                direction == "below" and end >= p.value
            ):
                continue
            if p.value > 0 and end > 0:
                xs = p.value * (end / p.value) ** (np.arange(1, grid + 1) / grid)
            else:
                xs = p.value + (end - p.value) * np.arange(1, grid + 1) / grid
            searches.append((j, direction, xs))
    if not searches:
        return []
    got = pick_at(
        [j for j, _, xs in searches for _ in xs], np.concatenate([xs for *_, xs in searches])
    )
    brackets = []  # (j, direction, inside, outside, the pick outside)
    for k, (j, direction, xs) in enumerate(searches):
        row = got[k * grid : (k + 1) * grid]
        changed = np.flatnonzero(row != start)
        if len(changed):
            c = int(changed[0])
            brackets.append(
                [j, direction, params[j].value if c == 0 else xs[c - 1], xs[c], int(row[c])]
            )
    fractions = np.arange(1, points + 1) / (points + 1)
    for _ in range(rounds if brackets else 0):
        xs = np.concatenate([b[2] + (b[3] - b[2]) * fractions for b in brackets])
        now = pick_at([b[0] for b in brackets for _ in fractions], xs).reshape(
            len(brackets), points
        )
        for b, picked, tried in zip(brackets, now, xs.reshape(len(brackets), points)):
            moved = np.flatnonzero(picked != start)
            c = int(moved[0]) if len(moved) else points  # the first point that changes the pick
            b[2], b[3], b[4] = (
                (tried[c - 1] if c else b[2]),
                (tried[c] if c < points else b[3]),
                (int(picked[c]) if c < points else b[4]),
            )
    return [
        BreakEven(params[j], direction, float(outside), _option(rows, to))
        for j, direction, _, outside, to in brackets
    ]
