"""The review page's charts of one section beyond the briefs': each engine's stall as the cluster
grows, and the recommended option's cadence curve, described as data for the one SVG drawer
(``render/svg.py``), as ``charts`` describes the briefs'."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..model import display
from .charts import (
    BLUE,
    GREEN,
    GREY,
    LIGHT,
    PURPLE,
    RED,
    Axis,
    Guide,
    Line,
    LineChart,
    Marker,
    finite,
    log_axis,
    rounded_up,
    ticks,
    waste_axes,
)

if TYPE_CHECKING:
    import pandas as pd

ENGINE_COLORS = (BLUE, RED, GREEN, PURPLE, GREY, LIGHT)


def stall_by_gpus(rows: pd.DataFrame, rec: pd.Series) -> LineChart | None:
    """Each engine's stall per checkpoint against the GPU count (a log axis) for the recommended
    option's model, SKU, tier and interval, each engine under the recommended strategy where it runs
    it, else the first it runs of async and sync (``rows``: one strategy per engine): solid within the
    published cases its terms rest on, dashed beyond them (``extrapolated``), the recommended first."""
    here = rows[rows["gpus"].to_numpy(float) > 0].sort_values("gpus", kind="stable")
    if here["gpus"].nunique() < 2:
        return None
    engines = sorted(here["engine"].astype(str).unique(), key=lambda e: e != str(rec["engine"]))
    stalls = [float(v) for v in here["stall_s"] if finite(v) and v > 0]
    if not stalls:
        return None
    lo, hi = (
        float(here["gpus"].min()) / 1.25,
        float(here["gpus"].max()) * 1.25,
    )  # room for end ticks
    x = log_axis("GPUs (log)", lo, hi, "{:,.0f}")
    if max(stalls) > 20 * min(stalls):  # engines orders of magnitude apart: a log axis
        y = log_axis("stall per checkpoint (s, log)", min(stalls) / 1.5, max(stalls) * 1.5)
    else:
        top = rounded_up(max(stalls) * 1.1)
        y = Axis(
            "stall per checkpoint (s)",
            0.0,
            top,
            ticks=tuple((v, f"{v:g}") for v in ticks(0.0, top)),
        )
    lines = []
    for k, engine in enumerate(engines):
        mine = here[here["engine"].astype(str) == engine]
        kept = [
            ((float(g), float(v)), bool(b))
            for g, v, b in zip(mine["gpus"], mine["stall_s"], mine["extrapolated"])
            if finite(v) and v > 0
        ]
        if not kept:
            continue
        points = [p for p, _ in kept]
        first = next((i for i, (_, b) in enumerate(kept) if b), len(kept))
        color = ENGINE_COLORS[k % len(ENGINE_COLORS)]
        name = f"{engine} ({mine['strategy'].iloc[0]})"
        lines.append(Line(name, tuple(points[: max(first, 1)]), color))
        if first < len(points):  # from the last size within its cases onward
            lines.append(Line("", tuple(points[max(first - 1, 0) :]), color, "4 3"))
    return LineChart(
        f"Stall per checkpoint against the GPU count, {rec['model']} on {rec['sku']} / {rec['tier']}: "
        "each engine, dashed beyond its largest published case",
        x,
        y,
        tuple(lines),
        (),
        (Guide(float(rec["gpus"]), name=f"this line: {float(rec['gpus']):,.0f} GPUs"),),
        width=640,
        height=230,
        left=60,
    )


def cadence(rec: pd.Series, intervals_s, waste_pct) -> LineChart | None:
    """The recommended option's waste against its checkpoint interval (log minutes): its optimum
    marked, the interval the line is planned at a dotted line."""
    points = [(float(i) / 60, float(w)) for i, w in zip(intervals_s, waste_pct) if finite(w)]
    if len(points) < 2:
        return None
    best = (
        float(rec["optimal_waste_pct"])
        if finite(rec["optimal_waste_pct"])
        else min(p[1] for p in points)
    )
    top = min(max(p[1] for p in points), 4 * max(best, 0.25)) * 1.05
    lo, hi = points[0][0], points[-1][0]
    x, y = waste_axes(lo, hi, top)
    markers = ()
    if finite(rec["optimal_interval_s"]) and finite(rec["optimal_waste_pct"]):
        markers = (Marker(float(rec["optimal_interval_s"]) / 60, best, BLUE, "optimum"),)
    planned = Guide(
        float(rec["interval_s"]) / 60,
        name=f"planned: every {display.of('interval_s', rec['interval_s'])}",
    )
    return LineChart(
        f"Waste against the checkpoint interval, {rec['strategy']} to {rec['tier']} with {rec['engine']}",
        x,
        y,
        (
            Line(
                f"{rec['strategy']} ({rec['engine']})",
                tuple(p for p in points if p[1] <= top),
                BLUE,
            ),
        ),
        markers,
        (planned,),
        width=640,
        height=220,
        left=52,
    )
