"""The review page's table as JSON a script reads: each column with its unit and words, text as a
dictionary and codes, numbers to 8 significant digits (or a dictionary when few repeat), and the
long runs of the cross product's labels and flags as runs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..model import display


def _number(v: float, exact: bool = False):
    if v != v:
        return None
    if math.isinf(v):
        return "__inf__" if v > 0 else "__-inf__"
    return v if exact else float(f"{v:.8g}")


def encoded_column(name: str, values: pd.Series, exact: bool = False) -> dict:
    """One column: its unit, and its values (text as a dictionary and codes; numbers to 8
    significant digits, or every digit when ``exact`` (the page's live model computes from them),
    or as a dictionary when a few repeat)."""
    unit = display.unit_of(name)
    doc = getattr(display.declared(name), "doc", "") or "a key of the scenario"
    out = {
        "name": name,
        "unit": unit,
        "doc": doc,
        "infinite": getattr(display.declared(name), "infinite", "unbounded"),
    }
    if unit == "label" or values.dtype == object or isinstance(values.dtype, pd.CategoricalDtype):
        codes, uniques = pd.factorize(values.astype(str), sort=False)
        return {**out, "unit": "label", "dict": [str(u) for u in uniques], **_ints("codes", codes)}
    if unit == "bool":
        return {**out, **_ints("values", values.to_numpy(bool).astype(int))}
    arr = values.to_numpy(float)
    uniques, codes = np.unique(arr, return_inverse=True)
    if len(uniques) <= len(arr) // 4:
        return {**out, "dict": [_number(float(v), exact) for v in uniques], **_ints("codes", codes)}
    return {**out, "values": [_number(v, exact) for v in arr.tolist()]}


def runs(ints: np.ndarray) -> list[int]:
    """A sequence of whole numbers as its runs, flat: value, length, value, length, ... (the cross
    product's labels and flags come in long runs: a fifth of the page's bytes as plain lists)."""
    ints = np.asarray(ints, dtype=np.int64)
    if not len(ints):
        return []
    starts = np.flatnonzero(np.r_[True, ints[1:] != ints[:-1]])
    lengths = np.diff(np.r_[starts, len(ints)])
    return np.column_stack([ints[starts], lengths]).ravel().tolist()


def _ints(key: str, ints: np.ndarray) -> dict:
    """``key``: the list, or ``runs``: its runs when they are shorter (the page's script expands them)."""
    flat = runs(ints)
    return {"runs": flat} if len(flat) < len(ints) // 2 else {key: np.asarray(ints).tolist()}


def table_data(table: pd.DataFrame) -> dict:
    index = table.index.to_numpy(np.int64)
    return {
        "rows": len(table),
        "index_steps": runs(np.diff(index, prepend=0)),  # the row numbers, as runs of their steps
        "columns": [encoded_column(c, table[c]) for c in table.columns],
    }
