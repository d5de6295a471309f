"""How sure one decision is: a summary line's sensitivity (its tornado and break-evens) and a brief's
robustness (those, and a Monte Carlo band of its recommendation)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..types import NONE, Param, Robustness, Sensitivity
from .breakeven import break_even
from .evaluator import METRICS, RANK_COLUMNS, Evaluator, picks
from .ranges import BLOCK, block_draws, quantiles
from .tornado import _option, tornado


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
):
    """The draws a decision among ``rows`` is judged on: every uncertain input that touches them drawn
    ``samples`` times (seeded), the rows re-evaluated at each (by ``ev`` when given: the rows' evaluator
    over ``params``); returns the inputs drawn and the columns (each of shape draws x rows), or
    ``([], None)`` when no uncertain input touches the rows."""
    ev = ev or Evaluator(rows, params)
    kept = [j for j in range(len(params)) if ev.touches(j)]
    touching = [params[j] for j in kept]
    if not touching:
        return touching, None
    values = block_draws(touching, seed, 0, -(-samples // BLOCK), samples)
    return touching, ev.only(kept).run(values, columns)


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
    touching, cols = draws(rows, params, samples, seed, RANK_COLUMNS + METRICS, ev=ev)
    if touching:
        (chosen,) = picks(cols, [np.arange(len(rows))])
        labels = [_option(rows, int(i)) for i in range(len(rows))] + [NONE]
        for code, count in zip(*np.unique(chosen, return_counts=True)):
            wins[labels[int(code)]] = int(count) / samples
        meets = tuple(float(v) for v in np.asarray(cols["meets_target"], dtype=float).mean(axis=0))
        at = [i for i in range(len(rows)) if _option(rows, i) == base["option"]]
        if at:
            quant = {m: quantiles(cols[m][:, at[0]]) for m in METRICS}
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
