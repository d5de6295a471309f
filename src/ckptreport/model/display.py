"""How a column's value reads, by its declared unit (``units.COLUMN_UNITS``). Shared by the terminal,
the workbook and the briefs."""

from __future__ import annotations

from ..read.inputs import INPUTS
from ..read.units import COLUMN_UNITS, Unit
from .columns import COLUMNS


def declared(name: str):
    """The column's or input's declaration (unit, number format, how infinity reads)."""
    return COLUMNS.get(name) or INPUTS.get(name)


def unit_of(name: str) -> str:
    d = declared(name)
    return d.unit if d is not None else "label"


def unit(name: str) -> Unit:
    return COLUMN_UNITS[unit_of(name)]


def value(v, unit_key: str, digits: int = 3, infinite: str = "unbounded") -> str:
    """'6.49 TB', '359 GB/s', '65.1 s', '3.62%', '$4,740,809', '405.85B', '16 B/param'."""
    return COLUMN_UNITS[unit_key].show(v, digits, infinite)


def of(name: str, v, digits: int = 3) -> str:
    """A column's value; an infinite bandwidth reads as its declaration says ('unbounded', 'unreachable')."""
    d = declared(name)
    return value(v, unit_of(name), digits, d.infinite if d is not None else "unbounded")


def excel_format(name: str) -> str | None:
    """The spreadsheet number format of a column in a table."""
    d = declared(name)
    if d is None:
        return None
    return COLUMN_UNITS[d.unit].excel_format(d.infinite, d.excel)


def plain_format(name: str) -> str | None:
    """The number format of an input's bare value, its unit in the next column (Assumptions)."""
    d = declared(name)
    return COLUMN_UNITS[d.unit].plain_format(d.infinite) if d is not None else None
