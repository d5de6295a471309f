"""quantity.py: what a key of a models file may hold: a figure with its unit, perhaps with its
source and range; a name; free text."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ckptreport.read.quantity import Name, Quantity, Strict, Text, name_problem


class Entry(Strict):
    write: Quantity("bandwidth")
    gpus: Quantity("count", integer=True) | None = None
    share: Quantity("percent", maximum=1.0) | None = None
    name: Name | None = None
    note: Text | None = None


def entry(**keys) -> Entry:
    return Entry.model_validate({"write": "100 GB/s", **keys})


def error(**keys) -> str:
    with pytest.raises(ValidationError) as e:
        entry(**keys)
    return e.value.errors()[0]["msg"]


def test_a_figure_keeps_what_was_written_and_its_value_in_base_units():
    q = entry().write
    assert (q.value, q.text, q.kind, q.uncertain) == (100e9, "100 GB/s", "bandwidth", False)


def test_a_sourced_figure_and_its_range():
    q = entry(
        write={
            "value": "100 GB/s",
            "low": "50 GB/s",
            "high": "150 GB/s",
            "basis": "assumption",
            "source": "a guess",
            "date": "2026-05",
            "driver": "flash",
        }
    ).write
    assert (q.low, q.high, q.distribution, q.driver, q.basis, q.date) == (
        50e9,
        150e9,
        "triangular",
        "flash",
        "assumption",
        "2026-05",
    )
    assert q.range_text() == "50 GB/s to 150 GB/s (triangular, driver flash)"


@pytest.mark.parametrize(
    "write, says",
    [
        ({"value": "1 GB/s", "speed": "x"}, "unknown key(s) 'speed'"),
        ({"source": "x"}, "'value' is missing"),
        ({"value": "1 GB/s", "basis": "rumour"}, "basis must be one of"),
        ({"value": "1 GB/s", "date": "last May"}, "date must be a year, month or day"),
        ({"value": "1 GB/s", "low": "2 GB/s"}, "a range gives both low and high"),
        ({"value": "1 GB/s", "low": "2 GB/s", "high": "3 GB/s"}, "expected low <= value <= high"),
        (
            {"value": "1 GB/s", "low": "0.5 GB/s", "high": "3 GB/s", "distribution": "normal"},
            "distribution must be one of",
        ),
        ({"value": "1 GB/s", "driver": "flash"}, "a driver goes with a range"),
        ({"value": "1 GB/s", "low": "0.5 GB", "high": "3 GB/s"}, "low: expected a bandwidth"),
        ("0 GB/s", "expected a bandwidth greater than 0"),
    ],
)
def test_what_a_figure_may_not_hold(write, says):
    assert says in error(write=write)


def test_whole_numbers_take_no_range_and_ceilings_hold():
    assert "expected a whole number" in error(gpus="10.5")
    assert "takes one figure, not a range" in error(gpus={"value": "8", "low": "4", "high": "16"})
    assert "at most 100%" in error(share="120%")
    assert entry(gpus="1024").gpus.value == 1024


def test_names_and_free_text_are_printable():
    assert name_problem("dgx-h100") is None
    assert "printable" in name_problem("a\x1b[31mb")
    assert "spaces" in name_problem(" padded")
    assert "at most 100" in name_problem("x" * 101)
    assert "printable" in error(name="bad\x07")
    assert entry(note="two\nlines\tand a tab").note == "two\nlines\tand a tab"
    assert "printable" in error(note="an \x1b[2J escape")


# ---- issue 25: every key's plausible range, both sides of each bound ------------------------------


def _written(value: float, kind: str) -> str:
    """A figure as a user writes it, in the kind's base unit (a percentage in percent)."""
    unit = {
        "bytes": " B",
        "bandwidth": " B/s",
        "duration": " s",
        "flops": " FLOPS",
        "count": "",
    }.get(kind)
    if kind == "percent":
        return f"{value * 100!r}%"
    if kind == "usd":
        return f"${value!r}"
    return f"{value!r}{unit}"


def _plausible_keys():
    from ckptreport.read import schema
    from ckptreport.read.inputs import INPUTS
    from ckptreport.read.quantity import Kind, plausible_of

    out = [(name, i.type) for name, i in INPUTS.items() if plausible_of(i.type)]
    for key in ("gpus", "intervals"):  # the plan's lists: each item's type
        out.append((f"plan.{key}", schema.Plan.model_fields[key].annotation.__args__[0]))
    return [
        (name, t, next(m.key for m in t.__metadata__ if isinstance(m, Kind))) for name, t in out
    ]


@pytest.mark.parametrize(
    "name, annotation, kind", _plausible_keys(), ids=lambda v: v if isinstance(v, str) else ""
)
def test_each_key_refuses_a_figure_beyond_its_plausible_range_and_takes_its_bounds(
    name, annotation, kind
):
    """mfu 1e-300% or a GPU-hour of $4,916 is a typo, not a plan: each key with a plausible range refuses
    a figure 1% beyond either bound, naming the range, and takes the bounds themselves."""
    from pydantic import TypeAdapter

    from ckptreport.read import units
    from ckptreport.read.quantity import plausible_of

    adapter = TypeAdapter(annotation)
    bounds = plausible_of(annotation)
    low, high = units.parse(bounds.low, kind), units.parse(bounds.high, kind)
    for inside in (low, high):
        assert adapter.validate_python(_written(inside, kind)).value == pytest.approx(
            inside, rel=1e-12
        ), name
    for outside in (low / 1.01, high * 1.01):
        if kind == "count" and outside < 1:
            continue  # below 1 a count is refused as a count (greater than 0, a whole number)
        with pytest.raises(ValidationError) as e:
            adapter.validate_python(_written(outside, kind))
        msg = e.value.errors()[0]["msg"]
        assert f"from {bounds.low} to {bounds.high}" in msg or f"at most {bounds.high}" in msg, (
            name,
            msg,
        )
