"""The review page's live model: the column definitions read a fourth way, as JavaScript
(``expr.javascript``, from the one definition, as the workbook's formulas are), and every input of
each section's options with every digit, so that the page recomputes a section's figures from an
edited input and re-ranks its options by the rule, as the evaluator would."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..model.columns import COLUMNS
from ..model.expr import Var, javascript
from ..read.inputs import ENTITY_COLUMN, INPUTS
from .columnar import encoded_column, runs


def script() -> str:
    """``CKPT_MODEL``: each column in the order of evaluation, as [name, function of a row's values]."""
    lines = [
        f"  [{name!r}, function (v) {{ return {javascript(c.fn(*(Var(p) for p in c.params)))}; }}]"
        for name, c in COLUMNS.items()
    ]
    return HELPER + "var CKPT_MODEL = [\n" + ",\n".join(lines) + "\n];\n"


HELPER = """// ckptreport's column definitions, generated from src/ckptreport/model/columns (expr.javascript)
function L(names, vals) {  // the name of the largest (first wins a tie; as numpy's argmax, a NaN first)
  var best = 0;
  for (var i = 0; i < vals.length; i++) {
    if (vals[i] !== vals[i]) { return names[i]; }
    if (vals[i] > vals[best]) { best = i; }
  }
  return names[best];
}
"""


def data(frame: pd.DataFrame, candidates: list[list[int]]) -> dict:
    """Every input of the rows of every section's options (each section's positions among them, in
    the frame's order, the order the rule breaks ties in), and the entity each input belongs to."""
    rows = np.array(sorted({i for line in candidates for i in line}), dtype=np.int64)
    at = {int(r): k for k, r in enumerate(rows)}
    table = frame.loc[rows, list(INPUTS)]
    return {
        "index_steps": runs(np.diff(rows, prepend=0)),
        "inputs": [encoded_column(name, table[name], exact=True) for name in INPUTS],
        "entity": {n: ENTITY_COLUMN.get(i.entity) for n, i in INPUTS.items()},
        "sections": [sorted(at[int(i)] for i in line) for line in candidates],
        "units": {n: c.unit for n, c in COLUMNS.items()},  # how the page writes a recomputed figure
        "infinite": {n: c.infinite for n, c in COLUMNS.items()},
    }
