"""How sure one decision is: a summary line's sensitivity (its tornado and break-evens) and a brief's
robustness (those, and a Monte Carlo band of its recommendation)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..types import NONE, Param, Robustness, Sensitivity
from .breakeven import break_even
from .evaluator import METRICS, Evaluator, judge
from .ranges import BLOCK, block_draws, quantiles
from .tornado import _options, tornado


def line_rows(report, line: int) -> pd.DataFrame:
    """The options of summary line ``line`` (frame rows), in the frame's order."""
    return report.frame.loc[sorted(report.candidates[line])]


def sensitivity(report, params: list[Param], line: int) -> Sensitivity:
    rows = line_rows(report, line)
    ev = Evaluator(rows, params)
    base, swings = tornado(rows, params, ev=ev)
    head = report.summary.iloc[line]
    return Sensitivity(
        {k: head[k] for k in ("model", "sku", "recipe", "gpus", "interval_s")},
        base,
        swings,
        break_even(rows, params, ev=ev),
    )


def as_dict(s: Sensitivity) -> dict:
    """For --json and the manifest: finite numbers or null."""
    from ...read.units import json_number

    def point(d: dict) -> dict:
        return {"option": d["option"], **{m: json_number(d[m]) for m in METRICS}}

    return {
        "line": {k: (v.item() if hasattr(v, "item") else v) for k, v in s.line.items()},
        "base": point(s.base),
        "swings": [
            {
                "input": w.param.label,
                "file": w.param.prov.file,
                "line": w.param.prov.line,
                "basis": w.param.prov.basis,
                "low": w.param.low,
                "value": w.param.value,
                "high": w.param.high,
                "distribution": w.param.distribution,
                "at_low": point(w.low),
                "at_high": point(w.high),
                "flips": w.flips,
            }
            for w in s.swings
        ],
        "break_even": [
            {"input": b.param.label, "direction": b.direction, "value": b.value, "to": b.to}
            for b in s.breaks
        ],
    }


BRIEF_SAMPLES = 1000  # draws behind a brief's P10/P50/P90 (seed 1): a second on the largest brief


def draws(
    rows: pd.DataFrame | None,
    params: list[Param],
    samples: int = BRIEF_SAMPLES,
    seed: int = 1,
    columns=None,
    ev: Evaluator | None = None,
    kept: list[int] | None = None,
):
    """The draws a decision among ``rows`` is judged on: every uncertain input that touches them drawn
    ``samples`` times (seeded), the rows re-evaluated at each (by ``ev`` when given: the rows' evaluator
    over ``params``); returns the inputs drawn and the columns (each of shape draws x rows), or
    ``([], None)`` when no uncertain input touches the rows. ``kept``: the params drawn (positions),
    when ``ev`` is a part of the rows whose whole decides them (each input's stream is its position
    among them: a part draws what the whole draws)."""
    ev = ev or Evaluator(rows, params)
    kept = ev.touching() if kept is None else kept
    touching = [params[j] for j in kept]
    if not touching:
        return touching, None
    return touching, ev.only(kept).run(_drawn(touching, samples, seed), columns)


def _drawn(touching: list[Param], samples: int, seed: int) -> np.ndarray:
    """The ``samples`` seeded draws of the params ``touching`` a decision (every block of them). The
    same draws are judged many times (each round of a cadence's search, each break-even), so the
    last few are kept, read-only, by what defines them: each param's distribution in its place."""
    key = (
        tuple(
            (p.distribution, p.value, p.low, p.high, p.first.floor, p.first.ceiling)
            for p in touching
        ),
        samples,
        seed,
    )
    got = _DRAWN.get(key)
    if got is None:
        got = block_draws(touching, seed, 0, -(-samples // BLOCK), samples)
        got.flags.writeable = False
        while len(_DRAWN) >= 16:
            _DRAWN.pop(next(iter(_DRAWN)))
        _DRAWN[key] = got
    return got


_DRAWN: dict[tuple, np.ndarray] = {}  # _drawn's last draws, by what defines them


def robustness(
    rows: pd.DataFrame, params: list[Param], samples: int = BRIEF_SAMPLES, seed: int = 1
) -> Robustness:
    """The tornado, break-even values and a Monte Carlo band of one decision among ``rows`` (a brief's
    options, every one of them a candidate), re-evaluated by the model's columns."""
    ev = Evaluator(rows, params)
    base, swings = tornado(rows, params, ev=ev)
    breaks = break_even(rows, params, ev=ev)
    wins: dict[str, float] = {}
    meets: tuple[float, ...] = ()
    quant: dict[str, dict[str, float | None]] = {
        m: {"p10": None, "p50": None, "p90": None} for m in METRICS
    }
    kept = ev.touching()
    touching = [params[j] for j in kept]
    if touching:  # judged a chunk of the draws at a time: memory bounded whatever the options
        values = _drawn(touching, samples, seed)
        labels = [*_options(rows), NONE]
        at = [i for i in range(len(rows)) if labels[i] == base["option"]][:1]
        judged = judge(
            ev.only(kept), values, [np.arange(len(rows))], [*METRICS, "meets_target"], at
        )
        for code, count in zip(*np.unique(judged.chosen[0], return_counts=True)):
            wins[labels[int(code)]] = int(count) / samples
        meets = tuple(float(v) for v in judged.sums["meets_target"] / samples)
        if at:
            quant = {m: quantiles(judged.fixed[m][:, 0]) for m in METRICS}
    return Robustness(
        touching,
        base,
        swings,
        breaks,
        samples if touching else 0,
        seed,
        dict(sorted(wins.items(), key=lambda kv: (-kv[1], kv[0]))),
        quant,
        meets,
    )
