"""quantity.py: what a key of a models file may hold: a figure with its unit, perhaps with its
source and range; a name; free text."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from ckptreport.quantity import Name, Quantity, Strict, Text, name_problem


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
    q = entry(write={"value": "100 GB/s", "low": "50 GB/s", "high": "150 GB/s", "basis": "assumption",
                     "source": "a guess", "date": "2026-05", "driver": "flash"}).write
    assert (q.low, q.high, q.distribution, q.driver, q.basis, q.date) == (50e9, 150e9, "triangular", "flash",
                                                                          "assumption", "2026-05")
    assert q.range_text() == "50 GB/s to 150 GB/s (triangular, driver flash)"


@pytest.mark.parametrize("write, says", [
    ({"value": "1 GB/s", "speed": "x"}, "unknown key(s) 'speed'"),
    ({"source": "x"}, "'value' is missing"),
    ({"value": "1 GB/s", "basis": "rumour"}, "basis must be one of"),
    ({"value": "1 GB/s", "date": "last May"}, "date must be a year, month or day"),
    ({"value": "1 GB/s", "low": "2 GB/s"}, "a range gives both low and high"),
    ({"value": "1 GB/s", "low": "2 GB/s", "high": "3 GB/s"}, "expected low <= value <= high"),
    ({"value": "1 GB/s", "low": "0.5 GB/s", "high": "3 GB/s", "distribution": "normal"}, "distribution must be one of"),
    ({"value": "1 GB/s", "driver": "flash"}, "a driver goes with a range"),
    ({"value": "1 GB/s", "low": "0.5 GB", "high": "3 GB/s"}, "low: expected a bandwidth"),
    ("0 GB/s", "expected a bandwidth greater than 0"),
])
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
