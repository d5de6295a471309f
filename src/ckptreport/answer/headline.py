"""The headline of one summary line, as a manifest records it and ``ckptreport diff`` compares it:
each figure's key, how a reviewer calls it, its unit, and how its missing value reads."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Field:
    key: str  # in a manifest recommendation
    label: str
    unit: str  # units.COLUMN_UNITS key
    infinite: str = "unbounded"


# In the order a reviewer reads them. A missing figure (None in the manifest) is an infinite one: a
# bandwidth no tier reaches, a cost without a price.
FIELDS = [
    Field("overhead_pct", "overhead", "pct"),
    Field("stall_s", "stall per checkpoint", "s"),
    Field("required_GBps", "tier bandwidth needed", "GBps", "unreachable"),
    Field("bought_GBps", "bandwidth bought", "GBps"),
    Field("storage_usd_month", "storage a month", "usd", "not priced"),
    Field("lost_gpu_usd_month", "GPU time lost a month", "usd", "not priced"),
    Field("total_usd_month", "total a month", "usd", "not priced"),
    Field("total_usd", "total over the run", "usd", "not priced"),
]
TABLE = [
    "overhead_pct",
    "stall_s",
    "required_GBps",
    "total_usd_month",
]  # the figures diff's table shows
