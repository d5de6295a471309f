"""Rows of the scenario frame re-evaluated with the uncertain figures set to other values, by the same
column definitions as the frame (``evaluate.compute``), and the option the one rule picks in each draw."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...model import rule
from ...model.evaluate import compute
from ...read.inputs import ENTITY_COLUMN, INPUTS, PLAN
from ...read.strategies import read_only_by
from ..types import Param
from .ranges import follow

METRICS = [
    "overhead_pct",
    "stall_s",
    "waste_pct",
    "total_usd_month",
    "total_usd",
]  # what a draw reports


class Evaluator:
    """Rows of the scenario frame (``rows``: their input columns) re-evaluated with the uncertain figures
    set to other values: ``run(values)`` with ``values`` of shape (draws, params) in each param's
    unit gives every column, shape (draws, rows). A param's other members follow its first
    (``follow``); the inputs derived from a member move in proportion to it."""

    def __init__(self, rows: pd.DataFrame, params: list[Param]):
        self.params = params
        self.n = len(rows)
        self.base = {
            k: (
                rows[k].astype(str).to_numpy(object)
                if INPUTS[k].unit == "label"
                else rows[k].to_numpy(bool if INPUTS[k].unit == "bool" else float)
            )
            for k in INPUTS
        }
        self.masks = []  # per param: per member, the rows it applies to (only a layered strategy's, its inputs)
        strategy = rows["strategy"].astype(str).to_numpy()
        only = read_only_by()  # an input only some strategies read moves their rows only
        for p in params:
            self.masks.append(
                [
                    (
                        np.ones(self.n, bool)
                        if m.section == PLAN
                        else rows[ENTITY_COLUMN[m.section]].astype(str).to_numpy() == m.name
                    )
                    & (np.isin(strategy, only[m.input]) if m.input in only else True)
                    for m in p.members
                ]
            )

    def touches(self, j: int) -> bool:
        return any(m.any() for m in self.masks[j])

    def run(self, values: np.ndarray, columns: list[str] | None = None) -> dict[str, np.ndarray]:
        draws = values.shape[0]
        env = {k: np.tile(v, draws) for k, v in self.base.items()}
        for j, p in enumerate(self.params):
            for member, mask in zip(p.members, self.masks[j]):
                if not mask.any():
                    continue
                y = follow(p, member, values[:, j])
                scale = (
                    y / member.value if member.value else np.ones(draws)
                )  # a zero: its dependents stay 0
                for column, base in ((member.input, member.value), *member.dependents):
                    moved = y if column == member.input else base * scale
                    env[column].reshape(draws, self.n)[:, mask] = moved[:, None]
        out = compute(env)
        keep = columns or list(out)
        return {k: np.asarray(out[k]).reshape(draws, self.n) for k in keep}


RANK_COLUMNS = list(rule.COLUMNS.values())  # what the rule reads of each draw


def picks(cols: dict[str, np.ndarray], groups: list[np.ndarray]) -> list[np.ndarray]:
    """Per group of row positions (a summary line's options, in the frame's order), the position
    the rule (``rule.rank``) picks in each draw (shape (draws,)), -1 when no option is recommendable
    (the line's status is then 'needs a price' or 'closest')."""
    out = []
    for g in groups:
        order, _, status = rule.rank(*rule.of({c: cols[c][:, g] for c in RANK_COLUMNS}))
        out.append(np.where(status == 0, np.asarray(g)[order[:, 0]], -1))
    return out
