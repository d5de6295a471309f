"""expr.py: one definition read three ways, as numbers, as an Excel formula and as the formula a
planner reads in explain."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ckptreport.model.expr import (
    GB,
    INFINITY,
    PERCENT,
    Named,
    Var,
    ceil,
    evaluate,
    excel_number,
    floor,
    largest,
    maximum,
    minimum,
    render,
    sqrt,
    where,
)

cell = {"a": "A3", "b": "B3", "c": "C3"}.get


def excel(tree) -> str:
    return render(tree, lambda n: cell(n, n))


def text(tree) -> str:
    return render(tree, lambda n: n, style="text")


a, b, c = Var("a"), Var("b"), Var("c")


def test_brackets_only_where_precedence_needs_them():
    assert excel(a / (b * c)) == "A3/(B3*C3)"
    assert excel(a / b * c) == "A3/B3*C3"
    assert excel(a - (b + c)) == "A3-(B3+C3)"
    assert excel((a + b) * c) == "(A3+B3)*C3"
    assert excel(a + b * c) == "A3+B3*C3"
    assert excel(0 - a) == "-A3"


def test_functions_print_as_the_spreadsheet_and_the_planner_read_them():
    assert excel(minimum(a, b)) == "MIN(A3,B3)" and text(minimum(a, b)) == "min(a, b)"
    assert (
        excel(where(a > b, a, 0)) == "IF(A3>B3,A3,0)"
        and text(where(a > b, a, 0)) == "if(a > b, a, 0)"
    )
    assert excel(ceil(a)) == "ROUNDUP(A3,0)" and text(ceil(a)) == "ceil(a)"
    assert excel(floor(a)) == "ROUNDDOWN(A3,0)" and text(sqrt(a)) == "sqrt(a)"
    assert excel(largest(d2h=a, tier=b)) == 'IF(A3>=MAX(A3,B3),"d2h","tier")'
    assert text(largest(d2h=a, tier=b)) == "the largest of d2h a, tier b"


def test_named_constants_are_names_and_scales_drop_out_of_the_planners_formula():
    per = Named(60.0, "SECONDS_PER_MINUTE")
    assert excel(a / per) == "A3/SECONDS_PER_MINUTE"
    assert excel(a / GB) == "A3/BYTES_PER_GB" and text(a / GB) == "a"
    assert excel(a * 1e300 * 1e300) == "A3*1E+300*1E+300"
    assert excel(a + math.inf) == f"A3+{INFINITY}" and text(a + math.inf) == "a + ∞"


def test_a_percentage_is_a_fraction_in_the_workbook_and_whole_percents_elsewhere():
    assert excel(100 * a / b * PERCENT) == "100*A3/B3"
    assert excel(a > PERCENT) == "A3>1" and text(a > PERCENT) == "a > 100%"


def test_numbers_in_a_cell():
    assert (
        excel_number(3.0) == "3" and excel_number(0.25) == "0.25" and excel_number(1e-9) == "1E-09"
    )
    assert excel_number(math.inf) == excel_number(1e290)


def test_a_definition_computes_with_arrays_and_its_tree_with_scalars_alike():
    def overhead(stall, interval):
        return where(interval > 0, 100 * stall / interval, math.inf)

    stall, interval = np.array([65.0, 1.0]), np.array([1800.0, 0.0])
    with np.errstate(divide="ignore"):
        numbers = overhead(stall, interval)
    tree = overhead(Var("stall"), Var("interval"))
    for i in range(2):
        assert evaluate(tree, {"stall": stall[i], "interval": interval[i]}) == pytest.approx(
            numbers[i]
        )
    assert numbers[0] == pytest.approx(3.6111, rel=1e-4) and numbers[1] == math.inf


def test_maximum_and_largest_on_arrays():
    assert list(maximum(np.array([1.0, 5.0]), np.array([2.0, 3.0]))) == [2.0, 5.0]
    assert list(largest(d2h=np.array([1.0, 5.0]), tier=np.array([2.0, 5.0]))) == [
        "tier",
        "d2h",
    ]  # a tie: the first


def test_what_a_definition_cannot_use_is_refused():
    with pytest.raises(TypeError):
        excel(a + object())
