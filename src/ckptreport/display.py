"""How a column's value reads, by the unit in its name. Shared by the terminal, workbook and briefs."""

from __future__ import annotations

import math

from . import units
from .columns import COLUMNS, INPUTS


def unit_of(name: str) -> str:
    if name in COLUMNS:
        return COLUMNS[name].unit
    if name in INPUTS:
        return INPUTS[name].unit
    return "label"


def value(v, unit: str, digits: int = 3) -> str:
    """'6.49 TB', '359 GB/s', '65.1 s', '3.62%', '$4,740,809', '405.85B', '16 B/param'."""
    if unit in ("label",):
        return str(v)
    if unit == "bool":
        return "yes" if bool(v) else "no"
    v = float(v)
    if math.isnan(v):
        return "n/a"
    if unit == "bytes":
        return units.fmt(v, "bytes", digits)
    if unit == "s":
        return units.fmt(v, "duration", digits)
    if unit == "days":
        return f"{v:,.1f} days"
    if unit == "GBps":
        return units.fmt(v * 1e9, "bandwidth", digits)
    if unit == "bandwidth_Bps":
        return units.fmt(v, "bandwidth", digits)
    if unit == "TFLOPS":
        return units.fmt(v * 1e12, "flops", digits)
    if unit == "pct":
        return units.fmt(v / 100, "percent", digits)
    if unit == "usd":
        return units.fmt(v, "usd", digits)
    if unit == "B/param":
        return f"{v:g} B/param"
    if unit == "count":
        return f"{v:,.0f}" if abs(v) < 1e6 else units.fmt(v, "count", 5)
    return f"{v:g}"


def of(name: str, v, digits: int = 3) -> str:
    """A column's value; infinite bandwidth reads 'unbounded', an infinite requirement 'unreachable'."""
    if unit_of(name) == "GBps" and isinstance(v, float) and math.isinf(v):
        return "unreachable" if name.startswith("required") else "unbounded"
    return value(v, unit_of(name), digits)
