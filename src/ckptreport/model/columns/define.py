"""How a column is defined: ``Column``, the registry ``COLUMNS`` (in the order of definition, which is
the order of evaluation), the ``column`` decorator and ``section``, and the named constants the
formulas use."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass

from ...read.inputs import INPUTS
from ...read.units import COLUMN_UNITS
from ..expr import Named

DAYS_PER_MONTH = 365.25 / 12  # storage is priced per month; a run lasts days
SECONDS_PER_MONTH = Named(DAYS_PER_MONTH * 86400.0, "SECONDS_PER_MONTH")
MONTHS_PER_YEAR = Named(12.0, "MONTHS_PER_YEAR")
# A figure meets its target within a billionth of it: an option sized to land on the target exactly lands
# on it up to the last bits of the arithmetic, which two spreadsheets (and numpy) round alike only so far.
WITHIN_TARGET = Named(1 + 1e-9, "WITHIN_TARGET")


@dataclass(frozen=True)
class Column:
    name: str
    unit: str  # a key of units.COLUMN_UNITS: bytes, s, GBps, pct, usd, days, count, B/param, label, bool
    doc: str
    fn: Callable
    params: tuple[str, ...]
    section: str
    excel: str | None = None  # a number format of its own, else the unit's
    infinite: str = "unbounded"  # how an infinite value reads


COLUMNS: dict[str, Column] = {}


_section = ["Size"]


def section(title: str) -> None:
    """Start a group of columns (explain and the README print them under this title)."""
    _section[0] = title


def column(unit: str, *, excel: str | None = None, infinite: str = "unbounded"):
    """Register the decorated function as the definition of the column it is named after."""

    def register(fn: Callable) -> Callable:
        params = tuple(inspect.signature(fn).parameters)
        for p in params:
            if p not in INPUTS and p not in COLUMNS:
                raise NameError(
                    f"{fn.__name__} reads {p!r}, which is neither an input nor an earlier column"
                )
        if fn.__name__ in INPUTS or fn.__name__ in COLUMNS:
            raise NameError(f"column {fn.__name__!r} is defined twice")
        if unit not in COLUMN_UNITS:
            raise NameError(
                f"{fn.__name__}: unknown unit {unit!r}; known: {', '.join(COLUMN_UNITS)}"
            )
        doc = " ".join((inspect.getdoc(fn) or "").split())
        COLUMNS[fn.__name__] = Column(
            fn.__name__, unit, doc, fn, params, _section[0], excel, infinite
        )
        return fn

    return register
