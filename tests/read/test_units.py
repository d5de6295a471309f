"""units.py: quantities parsed once at the boundary, printed for a planner, and read back."""

from __future__ import annotations

import math

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ckptreport.read import units

NUMERIC_KINDS = [k for k in units.KINDS if k != "dtype"]


@pytest.mark.parametrize("kind", NUMERIC_KINDS)
@settings(max_examples=200, deadline=None)
@given(v=st.floats(min_value=0, exclude_min=True, allow_nan=False, allow_infinity=False))
def test_fmt_exact_parses_back_to_the_same_float(kind, v):
    """fmt_exact's promise: parse(fmt_exact(v, kind), kind) == v exactly, for every finite positive
    float and every numeric kind (percent: to rel 1e-12, its text is v x 100, so below 1e300 where
    v x 100 is still a float)."""
    assume(kind != "percent" or v < 1e300)
    back = units.parse(units.fmt_exact(v, kind), kind)
    if kind == "percent":
        assert math.isclose(back, v, rel_tol=1e-12)
    else:
        assert back == v


@pytest.mark.parametrize("kind", ["bytes", "bandwidth", "duration", "flops", "count"])
@settings(max_examples=100, deadline=None)
@given(v=st.floats(min_value=0, max_value=1e300, exclude_min=True))
def test_fmt_parses_back_within_three_significant_digits(kind, v):
    """What fmt prints for a planner (3 significant digits, stepped units) parses back to within
    0.5% of the value. (Capped at 1e300: near the largest float, rounding up to 3 digits overflows by
    construction.)"""
    back = units.parse(units.fmt(v, kind), kind)
    assert abs(back - v) <= 0.005 * v


@pytest.mark.parametrize(
    "text, kind, value",
    [
        ("1 GiB", "bytes", 2**30),
        ("1 GB", "bytes", 1e9),
        ("400 Gb/s", "bandwidth", 50e9),
        ("2 x 400 Gb/s", "bandwidth", 100e9),
    ],
)
def test_decimal_and_binary_prefixes(text, kind, value):
    """GB is 1e9 bytes, GiB 2**30, Gb a gigabit (1/8 GB), and 'N x' multiplies a bandwidth."""
    assert units.parse(text, kind) == value


FAST = sorted(units._FAST.items())


@pytest.mark.parametrize("unit, kind_factor", FAST, ids=[u for u, _ in FAST])
@settings(max_examples=25, deadline=None)
@given(
    number=st.one_of(
        st.floats(min_value=1e-6, max_value=1e12).map(repr),
        st.integers(0, 10**9).map(str),
        st.sampled_from(["1.5", ".5", "3e2", "1E-3", "405.85", "0.1", "+7"]),
    )
)
def test_common_units_read_without_pint_as_pint_reads_them(unit, kind_factor, number):
    """The spellings read without pint (so that commands start at once) give exactly pint's value,
    with and without a space; the other kinds' units still go to pint and its messages."""
    kind, _ = kind_factor
    for text in (f"{number} {unit}", f"{number}{unit}"):
        assert units.parse(text, kind) == units._parse_with_pint(text, kind), text
    other = next(k for k in ("bytes", "duration") if k != kind)
    with pytest.raises(units.UnitError):
        units.parse(f"{number} {unit}", other)


def test_the_common_units_do_not_import_pint():
    import subprocess
    import sys

    code = (
        "import sys, ckptreport.read.units as u; u.parse('400 Gb/s', 'bandwidth'); u.parse('2 TiB', 'bytes'); "
        "u.parse('30 min', 'duration'); u.parse('989 TFLOPS', 'flops'); print('pint' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


@pytest.mark.parametrize(
    "text, kind, value",
    [
        ("30 min", "duration", 1800.0),
        ("1 h", "duration", 3600.0),
        ("2 d", "duration", 172800.0),
        ("405B", "count", 405e9),
        ("15.6T", "count", 15.6e12),
        ("40%", "percent", 0.4),
        ("989 TFLOPS", "flops", 989e12),
        ("2 TiB", "bytes", 2 * 2**40),
        ("100 GB/s", "bandwidth", 100e9),
    ],
)
def test_the_spellings_a_models_file_uses(text, kind, value):
    assert units.parse(text, kind) == pytest.approx(value, rel=1e-15)


@pytest.mark.parametrize(
    "text, kind",
    [
        ("400", "bandwidth"),
        ("5 GB", "bandwidth"),
        ("fast", "duration"),
        ("1e999 GB", "bytes"),
        ("", "bytes"),
    ],
)
def test_what_is_not_a_quantity_of_its_kind_is_refused_with_an_example(text, kind):
    with pytest.raises(units.UnitError) as e:
        units.parse(text, kind)
    assert "expected" in str(e.value) and units.KINDS[kind].example.split("'")[1] in str(e.value)


def test_json_numbers_are_finite_or_null():
    assert units.json_number(1.5) == 1.5
    assert units.json_number(math.inf) is None and units.json_number(math.nan) is None
