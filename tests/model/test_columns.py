"""columns.py: every column's definition read two ways, as numpy computes it and as the expression
tree explain and the workbook print, agrees with itself on drawn rows; and each column's unit is
the one its name says."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import given, settings

from ckptreport.model import display
from ckptreport.model.columns import COLUMNS
from ckptreport.model.evaluate import compute
from ckptreport.model.expr import Var, evaluate, render
from ckptreport.render.workbook.assumptions import CONSTANTS

from rows import arrays, rows_strategy

pytestmark = pytest.mark.filterwarnings(
    "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning"
)  # see test_properties


TREES = {name: col.fn(*(Var(p) for p in col.params)) for name, col in COLUMNS.items()}


def _scalar(v):
    if isinstance(v, np.str_ | str):
        return str(v)
    if isinstance(v, np.bool_ | bool):
        return bool(v)
    return float(v)


@settings(max_examples=25, deadline=None)
@given(rows=rows_strategy)
def test_symbolic_form_of_every_column_equals_its_numeric_form(rows):
    """For every column in COLUMNS, the expression tree built from its definition (what explain
    and the workbook print), evaluated with one row's values, equals what numpy computed for that
    row (rel 1e-9; labels and bools equal; a non-finite numpy value must be non-finite there too)."""
    env = compute(arrays(rows))
    for i in range(len(rows)):
        row = {k: _scalar(v[i]) for k, v in env.items()}
        for name, col in COLUMNS.items():
            expected, got = row[name], evaluate(TREES[name], row)
            where = f"{name} row {i}: tree {got!r}, numpy {expected!r}"
            if col.unit == "label":
                assert got == expected, where
            elif col.unit == "bool":
                assert bool(got) == expected, where
            elif math.isfinite(expected):
                assert math.isclose(float(got), expected, rel_tol=1e-9), where
            else:
                assert not math.isfinite(float(got)), where


def _excel_to_python(formula: str) -> str:
    """The printed Excel formula as a Python expression (functions become the helpers below)."""
    out = re.sub(r"(?<![<>])=(?!=)", "==", formula)
    out = out.replace("<>", "!=").replace("^", "**")
    return re.sub(
        r"\b(MIN|MAX|SQRT|IF|ROUNDUP|ROUNDDOWN|AND|OR|ISNA|ISNUMBER|NOT)\(",
        lambda m: f"_{m.group(1)}(",
        out,
    )


_XL = {
    "_MIN": min,
    "_MAX": max,
    "_SQRT": math.sqrt,
    "_IF": lambda c, a, b: a if c else b,
    "_ROUNDUP": lambda x, _: (
        math.ceil(x) if math.isfinite(x) else x
    ),  # IF is lazy in a spreadsheet, not here
    "_ROUNDDOWN": lambda x, _: math.floor(x) if math.isfinite(x) else x,
    "_AND": lambda *x: all(x),
    "_OR": lambda *x: any(x),
    "_ISNA": lambda x: math.isnan(x),
    "_ISNUMBER": lambda x: not math.isnan(x),
    "_NOT": lambda x: not x,
    **{c.name: float(c) for c in CONSTANTS},
}  # the workbook's defined names for its constants


@settings(max_examples=50, deadline=None)
@given(rows=rows_strategy)
def test_printed_excel_formula_computes_the_same_as_numpy(rows):
    """The formula text the workbook writes (operator precedence, brackets, constants) evaluates, as
    text, to the numpy value: a printing bug (a/(b*c) printed as a/b*c) cannot hide behind the tree.
    In a workbook a percentage is a fraction: every _pct value goes in and comes out divided by 100."""
    env = compute(arrays(rows))
    for i in range(len(rows)):
        row = {
            k: _scalar(v[i]) / 100 if display.unit_of(k) == "pct" else _scalar(v[i])
            for k, v in env.items()
        }
        for name, col in COLUMNS.items():
            text = render(TREES[name], lambda n: f"v[{n!r}]")
            with np.errstate(all="ignore"):
                got = eval(
                    _excel_to_python(text),
                    {
                        **_XL,
                        "v": {
                            k: (np.float64(x) if isinstance(x, float) else x)
                            for k, x in row.items()
                        },
                    },
                )
            expected = row[name]
            where = f"{name} row {i}: {text} -> {got!r}, numpy {expected!r}"
            tie = name in ("meets_target", "recommendable") and math.isclose(
                row["overhead_pct"], row["target_overhead_pct"], rel_tol=1e-12
            )  # a tier bought to the target
            if col.unit in ("label", "bool") and not tie:
                assert got == expected, where
            elif math.isfinite(expected):
                assert math.isclose(float(got), expected, rel_tol=1e-9, abs_tol=1e-300), (
                    where
                )  # /100 may underflow a subnormal
            else:
                assert float(got) >= 1e280 or not math.isfinite(float(got)), where


# ---- names carry units -------------------------------------------------------------------------

SUFFIX = {
    "_bytes": "bytes",
    "_s": "s",
    "_pct": "pct",
    "_usd": "usd",
    "_days": "days",
    "_GBps": "GBps",
    "_TFLOPS": "TFLOPS",
}


@pytest.mark.parametrize("name", list(COLUMNS))
def test_a_column_is_in_the_unit_its_name_says(name):
    """A name ending in a unit is in that unit (a price per GB/s is dollars); a duration, a bandwidth
    and a day count end in theirs, bytes, dollars and percentages name theirs somewhere."""
    unit = COLUMNS[name].unit
    for suffix, its in SUFFIX.items():
        if name.endswith(suffix) and not (suffix == "_GBps" and "usd" in name):
            assert unit == its, name
    if unit in ("s", "GBps", "days"):
        assert name.endswith(f"_{unit}"), name
    if unit in ("bytes", "usd", "pct"):
        assert unit in name.split("_"), name


# ---- a few columns by hand ---------------------------------------------------------------------


def _one(**inputs) -> dict:
    """Every column of one row: a DGX-A100-like node (calibration.BASE) with ``inputs`` over it."""
    from ckptreport.answer.calibration import predict_many

    return predict_many([inputs])[0]


def test_the_worked_example_by_hand():
    """405B parameters x 16 bytes = 6.48 TB; over a 100 GB/s tier from 128 nodes (nothing else
    limiting) the write takes 64.8 s; every 30 minutes that is 3.6% of the run."""
    r = _one(
        params=405e9,
        weights_bytes_per_param=2.0,
        master_bytes_per_param=4.0,
        optimizer_bytes_per_param=8.0,
        grads_bytes_per_param=2.0,
        gpus=1024.0,
        tier_write_GBps=100.0,
        storage_nic_GBps=math.inf,
        writer_GBps=math.inf,
        coordination_per_rank_s=0.0,
        d2h_gpu_GBps=math.inf,
        d2h_node_GBps=math.inf,
        sync_fixed_s=0.0,
        interval_s=1800.0,
    )
    assert r["ckpt_bytes"] == 405e9 * 16
    assert r["write_s"] == pytest.approx(64.8)
    assert r["overhead_pct"] == pytest.approx(100 * r["stall_s"] / 1800)
    assert r["overhead_pct"] == pytest.approx(3.6)


def test_dalys_optimum_by_hand():
    """Daly (2006): sqrt(2 d M) [1 + sqrt(d / 2M) / 3 + (d / 2M) / 9] - d for d < 2M, else M."""
    fn = COLUMNS["daly_interval_s"].fn
    d, mtbf = 300.0, 86400.0
    x = d / (2 * mtbf)
    assert fn(np.array([d]), np.array([mtbf]))[0] == pytest.approx(
        math.sqrt(2 * d * mtbf) * (1 + math.sqrt(x) / 3 + x / 9) - d
    )
    assert fn(np.array([3 * mtbf]), np.array([mtbf]))[0] == pytest.approx(mtbf)
