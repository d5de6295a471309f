"""The plan's cross product as data the later stages hand on: the summary point a headline uses, and
the combinations left out with their reason. Types only: no computation."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Point:
    """The plan's summary point: the cluster size and cadence of the headline, and the model and SKU
    the workbook's chart and the per-model briefs use (``plan.summary``, else the first of each)."""

    gpus: float
    interval_s: float
    model: str
    sku: str


@dataclass(frozen=True)
class Dropped:
    reason: str
    rows: int
