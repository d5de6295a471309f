"""The charts, each described once as data: its axes, lines, bars, markers and legend, built from what
the compute stage put in the report. ``svg.draw`` writes any of them as SVG, for the briefs
(WeasyPrint lays the SVG out) and the review page alike, so the two cannot draw a chart differently.
A description holds figures and text only; names from the inputs stay text (the drawer escapes them).

The charts: the checkpoint's size by component, waste against the interval, the purchase curve and
the tornado.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..model import display
from ..read.strategies import BASELINE, COMPARED

if TYPE_CHECKING:
    import pandas as pd

    from ..answer.types import BriefData, Swing

BLUE, RED, GREEN, GREY, LIGHT, PURPLE = (
    "#2f6db5",
    "#c0504d",
    "#6f8f2f",
    "#777777",
    "#9fc5e8",
    "#8064a2",
)
TORNADO_BARS = 8  # the inputs a tornado shows, largest swing first
LABEL_CHARS = 42  # a tornado's input names are cut to this many characters


@dataclass(frozen=True)
class Axis:
    """An axis from ``lo`` to ``hi`` (a log axis: positive), its title, and its ticks (value, text)."""

    title: str
    lo: float
    hi: float
    log: bool = False
    ticks: tuple[tuple[float, str], ...] = ()


@dataclass(frozen=True)
class Line:
    """A series of points joined, each point dotted; named in the legend unless ``name`` is empty."""

    name: str
    points: tuple[tuple[float, float], ...]
    color: str
    dash: str | None = None


@dataclass(frozen=True)
class Marker:
    """A point marked with a diamond (an optimum)."""

    x: float
    y: float
    color: str
    name: str = ""


@dataclass(frozen=True)
class Guide:
    """A vertical line across the plot at ``x`` (the interval chosen, a tornado's base)."""

    x: float
    color: str = GREY
    dash: str | None = "2 3"
    name: str = ""


@dataclass(frozen=True)
class LineChart:
    title: str  # what the chart shows, in words (the SVG's title: a screen reader's, a tooltip)
    x: Axis
    y: Axis
    lines: tuple[Line, ...]
    markers: tuple[Marker, ...] = ()
    guides: tuple[Guide, ...] = ()
    width: int = 640
    height: int = 262
    left: int = 64  # room for the y axis' ticks and title


@dataclass(frozen=True)
class Segment:
    """One bar, or one part of a stacked bar: from ``start`` to ``end`` on the x axis; ``tip`` a tooltip,
    ``label`` the text written beside its end."""

    start: float
    end: float
    color: str
    tip: str = ""
    label: str = ""


@dataclass(frozen=True)
class Row:
    label: str  # written left of the bars
    segments: tuple[Segment, ...]


@dataclass(frozen=True)
class BarChart:
    title: str
    x: Axis
    rows: tuple[Row, ...]
    legend: tuple[tuple[str, str], ...] = ()  # (color, name)
    guides: tuple[Guide, ...] = ()
    width: int = 680
    left: int = 290  # room for the rows' labels


Chart = LineChart | BarChart


# ---- axes ------------------------------------------------------------------------------------------


def ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """About ``n`` round values from ``lo`` to ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / n
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if m * step >= raw)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def rounded_up(v: float) -> float:
    """The first round tick at or above ``v`` (an axis' end)."""
    t = ticks(0.0, v * 1.25 or 1.0)
    return next((x for x in t if x >= v * (1 - 1e-9)), v)


def log_ticks(lo: float, hi: float) -> list[float]:
    """1, 2, 5 times each power of ten from ``lo`` to ``hi``."""
    out = []
    for e in range(math.floor(math.log10(lo)), math.ceil(math.log10(hi)) + 1):
        out += [m * 10.0**e for m in (1, 2, 5) if lo <= m * 10.0**e <= hi * (1 + 1e-9)]
    return out


def usd(v: float) -> str:
    """A dollar tick: $1.2M, $350k, $40."""
    a = abs(v)
    if a >= 1e6:
        return f"${v / 1e6:,.1f}M"
    if a >= 1e3:
        return f"${v / 1e3:,.0f}k"
    return f"${v:,.0f}"


def _number(v: float) -> str:
    return f"{v:,.3g}"


def finite(v) -> bool:
    return v is not None and v == v and math.isfinite(v)


# ---- the charts ------------------------------------------------------------------------------------


def purchase(
    points: pd.DataFrame, optimum: int | None, strategy: str, what: str
) -> LineChart | None:
    """Monthly cost against the write bandwidth bought (log axis): storage rising, GPU time lost
    falling and their total for the recommended strategy; the baseline's total (sync) dashed; the
    optimum marked. ``points``: ``Purchase.points`` (one row per tier and strategy)."""
    rows = [
        dict(r, label=i)
        for i, r in zip(points.index, points.to_dict("records"))
        if finite(r["total_usd_month"]) and 0 < r["tier_bought_GBps"] < math.inf
    ]
    if not rows:
        return None
    xs = sorted({round(float(r["tier_bought_GBps"]), 6) for r in rows})
    lo, hi = xs[0], xs[-1]
    if hi / lo < 1 + 1e-9:
        lo, hi = lo / math.sqrt(10), hi * math.sqrt(10)
    values = [
        float(r[c])
        for r in rows
        for c in ("storage_usd_month", "lost_gpu_usd_month", "total_usd_month")
        if finite(r[c])
    ]
    top = rounded_up(max(values + [1.0]) * 1.04)
    step = max(1, math.ceil(len(xs) / 6))
    x = Axis(
        "write bandwidth bought (GB/s)",
        lo,
        hi,
        log=True,
        ticks=tuple((v, _number(v)) for v in xs[::step]),
    )
    y = Axis("$ per month", 0.0, top, ticks=tuple((v, usd(v)) for v in ticks(0.0, top)))

    def of(s: str, column: str) -> tuple[tuple[float, float], ...]:
        mine = sorted((r for r in rows if r["strategy"] == s), key=lambda r: r["tier_bought_GBps"])
        return tuple(
            (float(r["tier_bought_GBps"]), float(r[column])) for r in mine if finite(r[column])
        )

    lines = [
        Line(name, of(strategy, column), color)
        for column, color, name in (
            ("storage_usd_month", GREEN, "storage"),
            ("lost_gpu_usd_month", RED, f"GPU time lost ({strategy})"),
            ("total_usd_month", BLUE, f"total ({strategy})"),
        )
    ]
    if strategy != BASELINE:
        lines.append(Line(f"total ({BASELINE})", of(BASELINE, "total_usd_month"), GREY, "5 3"))
    best = next((r for r in rows if r["label"] == optimum), None)
    markers = (
        ()
        if best is None
        else (
            Marker(
                float(best["tier_bought_GBps"]),
                float(best["total_usd_month"]),
                BLUE,
                f"optimum: {best['tier']}",
            ),
        )
    )
    return LineChart(
        f"Monthly cost against the bandwidth bought, over {what}",
        x,
        y,
        tuple(line for line in lines if line.points),
        markers,
        height=196,
    )


def units_curve(f: dict) -> LineChart | None:
    """A cluster's purchase (``render.cluster.facts``): its storage over the life, the GPU time its
    jobs lose and their sum against the units of the chosen product, at every count the search
    tried; the optimum and the fewest units that meet every target marked."""
    c = f["choice"]
    pts = [p for p in f["curve"] if finite(p["total_usd"])]
    if c is None or len(pts) < 2:
        return None
    lo, hi = pts[0]["units"], pts[-1]["units"]
    values = [p[k] for p in pts for k in ("storage_life_usd", "gpu_lost_usd", "total_usd")]
    top = rounded_up(max(values + [1.0]) * 1.04)
    x = log_axis(f"{c['unit']} of {c['tier']} bought", lo, hi, "{:,.0f}")
    y = Axis(
        "$ over the storage's life", 0.0, top, ticks=tuple((v, usd(v)) for v in ticks(0.0, top))
    )
    lines = tuple(
        Line(name, tuple((float(p["units"]), float(p[k])) for p in pts), color)
        for k, color, name in (
            ("storage_life_usd", GREEN, "storage"),
            ("gpu_lost_usd", RED, "GPU time lost"),
            ("total_usd", BLUE, "total"),
        )
    )
    markers = [Marker(float(c["units"]), float(c["total_usd"]), BLUE, f"optimum: {c['units']:,}")]
    least = f["least"]
    if least is not None and least["units"] != c["units"]:
        markers.append(
            Marker(
                float(least["units"]),
                float(least["total_usd"]),
                GREY,
                f"fewest: {least['units']:,}",
            )
        )
    return LineChart(
        f"{f['cluster']}: cost over the storage's life against the {c['unit']} bought",
        x,
        y,
        lines,
        tuple(markers),
        height=196,
    )


def log_axis(title: str, lo: float, hi: float, label: str = "{:g}") -> Axis:
    """A log axis from ``lo`` to ``hi``, its ticks at 1, 2 and 5 of each decade written by ``label``."""
    return Axis(
        title, lo, hi, log=True, ticks=tuple((v, label.format(v)) for v in log_ticks(lo, hi))
    )


def waste_axes(lo: float, hi: float, top: float) -> tuple[Axis, Axis]:
    """A waste curve's axes: the interval in minutes (log) from ``lo`` to ``hi``, waste to ``top``."""
    x = log_axis("checkpoint interval (min)", lo, hi)
    return x, Axis(
        "waste (% of compute)", 0.0, top, ticks=tuple((v, f"{v:g}%") for v in ticks(0.0, top))
    )


def waste(data: BriefData) -> LineChart | None:
    """Waste (checkpoint stalls and rework after failures) against the interval, on a log axis of
    minutes, for each compared strategy (sync, async) at its best engine; each optimum marked, the
    interval planned a dotted line. Above four times the worst optimum the curves run off the top: the
    choice is made near the optima."""
    curves = [(s, data.curves[s], data.curve_rows[s]) for s in COMPARED if s in data.curves]
    if not curves:
        return None
    rec = data.pick.row
    minutes = [float(m) / 60 for _, (intervals_s, _), _ in curves for m in intervals_s]
    lo, hi = min(minutes), max(minutes)
    everything = [float(v) for _, (_, w), _ in curves for v in w if finite(v)]
    optima = [float(r["optimal_waste_pct"]) for *_, r in curves if finite(r["optimal_waste_pct"])]
    top = max(everything + [0.0])
    if optima:
        top = min(top, 4 * max(max(optima), 0.25))
    top = top * 1.05 or 1.0
    x, y = waste_axes(lo, hi, top)
    colors = dict(zip(COMPARED, (RED, BLUE)))
    lines, markers = [], []
    for strategy, (intervals_s, w), row in curves:
        color = colors.get(strategy, PURPLE)
        lines.append(
            Line(
                f"{strategy} ({row['engine']})",
                tuple((float(i) / 60, float(v)) for i, v in zip(intervals_s, w) if finite(v)),
                color,
            )
        )
        if finite(row["optimal_interval_s"]) and finite(row["optimal_waste_pct"]):
            markers.append(
                Marker(
                    float(row["optimal_interval_s"]) / 60, float(row["optimal_waste_pct"]), color
                )
            )
    markers[-1:] = [Marker(m.x, m.y, m.color, "optimum") for m in markers[-1:]]
    guide = Guide(
        float(rec["interval_s"]) / 60,
        name=f"planned: every {display.of('interval_s', rec['interval_s'])}",
    )
    return LineChart(
        f"Waste against the checkpoint interval, {rec['sku']} / {rec['tier']}",
        x,
        y,
        tuple(lines),
        tuple(markers),
        (guide,),
        width=360,
        height=206,
        left=52,
    )


def ettr(data: BriefData) -> LineChart | None:
    """ETTR (the share of the wall clock that trains, each at its optimal cadence) against the GPU
    count, on a log axis from a thousand to a hundred thousand GPUs, for each strategy of the brief's
    ETTR curves (``briefs.ettr_curves``); the job's own GPUs a dotted line."""
    curves = data.ettr_curves
    if not curves:
        return None
    xs = [float(g) for _, gpus, _ in curves.values() for g in gpus]
    ys = [float(v) for *_, e in curves.values() for v in e if finite(v)]
    lo, hi = min(xs), max(xs)
    bottom = max(0.0, 10 * math.floor(min(ys + [100.0]) / 10))
    x = log_axis("GPUs (log)", lo, hi, "{:,.0f}")
    y = Axis("ETTR (%)", bottom, 100.0, ticks=tuple((v, f"{v:g}%") for v in ticks(bottom, 100.0)))
    colors = {"sync": RED, "async": BLUE, "replica_recovery": GREEN}
    lines = tuple(
        Line(
            f"{strategy} ({engine})",
            tuple((float(g), float(v)) for g, v in zip(gpus, e) if finite(v)),
            colors.get(strategy, PURPLE),
            None if strategy == str(data.pick.row["strategy"]) else "4 3",
        )
        for strategy, (engine, gpus, e) in curves.items()
    )
    rec = data.pick.row
    guide = Guide(float(rec["gpus"]), name=f"this job: {float(rec['gpus']):,.0f} GPUs")
    return LineChart(
        f"ETTR against the GPU count, {rec['model']} on {rec['sku']} / {rec['tier']}",
        x,
        y,
        lines,
        (),
        (guide,),
        width=640,
        height=230,
        left=52,
    )


def size(row: pd.Series) -> BarChart | None:
    """The checkpoint's size by component, one stacked bar in TB."""
    parts = [
        ("weights", "weights_bytes", BLUE),
        ("master", "master_bytes", RED),
        ("optimizer", "optimizer_bytes", GREEN),
        ("grads", "grads_bytes", PURPLE),
        ("consolidated copy", "consolidated_bytes", GREY),
        ("other", "other_bytes", LIGHT),
    ]
    at, segments, legend = 0.0, [], []
    for name, column, color in parts:
        tb = float(row[column]) / 1e12
        if tb > 0:
            segments.append(Segment(at, at + tb, color, f"{name}: {tb:.2f} TB"))
            legend.append((color, f"{name} {tb:.2f} TB"))
            at += tb
    if not segments:
        return None
    end = rounded_up(at)
    x = Axis("TB (1e12 bytes)", 0.0, end, ticks=tuple((v, f"{v:g}") for v in ticks(0.0, end)))
    return BarChart(
        "Checkpoint size by component",
        x,
        (Row("", tuple(segments)),),
        tuple(legend),
        width=340,
        left=12,
    )


def tornado(base: dict, swings: list[Swing]) -> BarChart | None:
    """The cost over the run of the option recommended at each input's low (light) and high (dark)
    end, the others held, around the base (the vertical line); a * marks an end where the
    recommendation changes. The inputs that move the answer most on top."""
    shown = [w for w in swings if math.isfinite(w.swing("total_usd"))][:TORNADO_BARS]
    at = base.get("total_usd")
    if not shown or not finite(at):
        return None
    ends = [v for w in shown for v in (w.low["total_usd"], w.high["total_usd"])] + [at]
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.22 or abs(at) * 0.05 or 1.0  # room for each end's label beside its bar
    rows = []
    for w in shown:
        name = (
            w.param.label
            if len(w.param.label) <= LABEL_CHARS
            else w.param.label[: LABEL_CHARS - 1] + "…"
        )
        segments = []
        for end, color in (("low", LIGHT), ("high", BLUE)):
            v = getattr(w, end)["total_usd"]
            flips = getattr(w, end)["option"] != base["option"]
            tip = f"at its {end} ({w.param.end_text(end)}): {display.value(v, 'usd')}" + (
                f", recommends {getattr(w, end)['option']}" if flips else ""
            )
            segments.append(
                Segment(at, v, color, tip, w.param.end_text(end) + (" *" if flips else ""))
            )
        rows.append(Row(name, tuple(segments)))
    x = Axis(
        f"cost over the run, base {display.value(at, 'usd')} (light: low end, dark: high end)",
        lo - pad,
        hi + pad,
        ticks=tuple((v, usd(v)) for v in ticks(lo - pad, hi + pad, 3)),
    )
    return BarChart(
        "Cost over the run at each input's low and high end",
        x,
        tuple(rows),
        guides=(Guide(at, "#222222", None),),
    )


def brief_tornado(data: BriefData) -> BarChart | None:
    """A brief's tornado: its recommendation's base and swings (``Robustness``)."""
    return tornado(data.robust.base, data.robust.swings) if data.robust is not None else None


def short(text: str, n: int = 22) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"
