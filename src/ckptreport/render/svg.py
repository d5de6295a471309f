"""The review page's charts as SVG written here: the purchase curve and the tornado of every summary
line. The briefs draw theirs with matplotlib (``charts``), at about 60 ms a chart; the page has two
per line, 120 for the shipped defaults, which would add seconds to a build the page may lengthen by
a tenth. These charts are a few lines, bars and labels: written directly they take well under a
millisecond each, their text stays text (selectable, searchable, sharp in print) and every string
is escaped (a name from the inputs is data, never markup).
"""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from .. import display
from ..strategies import BASELINE

BLUE, RED, GREEN, GREY, LIGHT = "#2f6db5", "#c0504d", "#6f8f2f", "#777777", "#9fc5e8"


def _n(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


class _Plot:
    """A plot area in a fixed viewBox, the page scales it to its width."""

    def __init__(self, width: int, height: int, left: int, right: int, top: int, bottom: int, title: str):
        self.w, self.h, self.x0, self.x1, self.y0, self.y1 = width, height, left, width - right, top, height - bottom
        self.parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {width} {height}" role="img" '
                      f'class="chart" font-family="DejaVu Sans, sans-serif" font-size="11">',
                      f"<title>{escape(title)}</title>"]

    def text(self, x: float, y: float, s: str, anchor: str = "start", size: int = 11, fill: str = "#222",
             weight: str = "normal") -> None:
        self.parts.append(f'<text x="{_n(x)}" y="{_n(y)}" text-anchor="{anchor}" font-size="{size}" fill="{fill}"'
                          + (f' font-weight="{weight}"' if weight != "normal" else "") + f">{escape(s)}</text>")

    def line(self, x1, y1, x2, y2, stroke="#333", width=1.0, dash: str | None = None) -> None:
        self.parts.append(f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}" '
                          f'stroke-width="{width}"' + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")

    def polyline(self, points, stroke: str, dash: str | None = None) -> None:
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self.parts.append(f'<polyline points="{pts}" fill="none" stroke="{stroke}" stroke-width="1.8"'
                          + (f' stroke-dasharray="{dash}"' if dash else "") + "/>")
        self.parts += [f'<circle cx="{_n(x)}" cy="{_n(y)}" r="2.5" fill="{stroke}"/>' for x, y in points]

    def rect(self, x, y, w, h, fill: str, title: str | None = None) -> None:
        inner = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0.5))}" height="{_n(h)}" '
                          f'fill="{fill}">{inner}</rect>')

    def done(self) -> Markup:
        return Markup("".join(self.parts) + "</svg>")


def _ticks(lo: float, hi: float, n: int = 4) -> list[float]:
    """About ``n`` round values from ``lo`` to ``hi``."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or hi <= lo:
        return [lo] if math.isfinite(lo) else []
    raw = (hi - lo) / n
    step = 10 ** math.floor(math.log10(raw))
    step *= next(m for m in (1, 2, 2.5, 5, 10) if m * step >= raw)
    first = math.ceil(lo / step) * step
    return [first + k * step for k in range(int((hi - first) / step + 1e-9) + 1)]


def _usd(v: float) -> str:
    a = abs(v)
    if a >= 1e6:
        return f"${v / 1e6:,.1f}M"
    if a >= 1e3:
        return f"${v / 1e3:,.0f}k"
    return f"${v:,.0f}"


def purchase(points, optimum: int | None, strategy: str, what: str) -> Markup | None:
    """Monthly cost against the write bandwidth bought (log axis): storage rising, GPU time lost
    falling and their total for the recommended strategy; sync's total dashed; the optimum marked.
    ``points``: report.Purchase.points (one row per tier and strategy)."""
    rows = [dict(r, label=i) for i, r in zip(points.index, points.to_dict("records"))
            if r["total_usd_month"] == r["total_usd_month"] and 0 < r["tier_bought_GBps"] < math.inf]
    if not rows:
        return None
    p = _Plot(640, 262, 64, 16, 14, 78, f"Monthly cost against the bandwidth bought, over {what}")
    xs = [float(r["tier_bought_GBps"]) for r in rows]
    lx0, lx1 = math.log10(min(xs)), math.log10(max(xs))
    if lx1 - lx0 < 1e-9:
        lx0, lx1 = lx0 - 0.5, lx1 + 0.5
    ys = [float(r[c]) for r in rows for c in ("storage_usd_month", "lost_gpu_usd_month", "total_usd_month")]
    ymax = max([y for y in ys if y == y] + [1.0]) * 1.08
    X = lambda v: p.x0 + (math.log10(v) - lx0) / (lx1 - lx0) * (p.x1 - p.x0)  # noqa: E731
    Y = lambda v: p.y1 - v / ymax * (p.y1 - p.y0)  # noqa: E731
    for t in _ticks(0, ymax):
        p.line(p.x0, Y(t), p.x1, Y(t), "#e4e4e4")
        p.text(p.x0 - 6, Y(t) + 4, _usd(t), "end", 10, "#555")
    shown = sorted(set(round(v, 6) for v in xs))
    step = max(1, math.ceil(len(shown) / 6))
    for v in shown[::step]:
        p.line(X(v), p.y1, X(v), p.y1 + 4, "#555")
        p.text(X(v), p.y1 + 16, f"{v:,.3g}", "middle", 10, "#555")
    p.line(p.x0, p.y1, p.x1, p.y1, "#555")
    p.text((p.x0 + p.x1) / 2, p.y1 + 30, "write bandwidth bought (GB/s, log scale)", "middle", 10, "#333")
    legend = []

    def of(s: str) -> list[dict]:
        return sorted((r for r in rows if r["strategy"] == s), key=lambda r: r["tier_bought_GBps"])

    mine = of(strategy)
    for column, color, name in (("storage_usd_month", GREEN, "storage"),
                                ("lost_gpu_usd_month", RED, f"GPU time lost ({strategy})"),
                                ("total_usd_month", BLUE, f"total ({strategy})")):
        pts = [(X(r["tier_bought_GBps"]), Y(r[column])) for r in mine if r[column] == r[column]]
        if pts:
            p.polyline(pts, color)
            legend.append((color, name, None))
    if strategy != BASELINE:
        pts = [(X(r["tier_bought_GBps"]), Y(r["total_usd_month"])) for r in of(BASELINE)]
        if pts:
            p.polyline(pts, GREY, "5 3")
            legend.append((GREY, f"total ({BASELINE})", "5 3"))
    best = next((r for r in rows if r["label"] == optimum), None)
    if best is not None:
        x, y = X(float(best["tier_bought_GBps"])), Y(float(best["total_usd_month"]))
        p.parts.append(f'<path d="M{_n(x)},{_n(y - 7)} L{_n(x + 7)},{_n(y)} L{_n(x)},{_n(y + 7)} '
                       f'L{_n(x - 7)},{_n(y)} Z" fill="none" stroke="{BLUE}" stroke-width="2"/>')
        legend.append((BLUE, f"optimum: {best['tier']}", "diamond"))
    lx, ly = p.x0, p.h - 22
    for color, name, style in legend:
        width = 28 + 6.2 * len(name)
        if lx + width > p.w and lx > p.x0:
            lx, ly = p.x0, ly + 16
        if style == "diamond":
            p.parts.append(f'<path d="M{_n(lx + 7)},{_n(ly - 5)} l5,5 l-5,5 l-5,-5 Z" fill="none" stroke="{color}" '
                           'stroke-width="2"/>')
        else:
            p.line(lx, ly, lx + 16, ly, color, 2, style)
        p.text(lx + 20, ly + 4, name, size=10)
        lx += width
    return p.done()


TORNADO_BARS = 8  # the inputs a tornado shows, largest swing first (as the briefs)


def tornado(base: dict, swings: list, labels: int = 42) -> Markup | None:
    """The cost over the run of the option recommended at each input's low (light) and high (dark)
    end, the others held, around the base (the vertical line); a * marks an end where the
    recommendation changes."""
    shown = [w for w in swings if math.isfinite(w.swing("total_usd"))][:TORNADO_BARS]
    at = base.get("total_usd")
    if not shown or at is None or not math.isfinite(at):
        return None
    height = 30 + 24 * len(shown) + 34
    p = _Plot(680, height, 290, 10, 10, 44, "Cost over the run at each input's low and high end")
    ends = [v for w in shown for v in (w.low["total_usd"], w.high["total_usd"])] + [at]
    lo, hi = min(ends), max(ends)
    pad = (hi - lo) * 0.22 or abs(at) * 0.05 or 1.0  # room for each end's label beside its bar
    lo, hi = lo - pad, hi + pad
    X = lambda v: p.x0 + (v - lo) / (hi - lo) * (p.x1 - p.x0)  # noqa: E731
    for k, w in enumerate(shown):
        y = p.y0 + 24 * k
        name = w.param.label if len(w.param.label) <= labels else w.param.label[: labels - 1] + "…"
        p.text(p.x0 - 8, y + 15, name, "end", 10)
        for end, color in (("low", LIGHT), ("high", BLUE)):
            v = getattr(w, end)["total_usd"]
            flips = getattr(w, end)["option"] != base["option"]
            x0, x1 = sorted((X(at), X(v)))
            p.rect(x0, y + 4, x1 - x0, 15, color, f"at its {end} ({w.param.end_text(end)}): {display.value(v, 'usd')}"
                   + (f", recommends {getattr(w, end)['option']}" if flips else ""))
            right = v >= at
            p.text(X(v) + (4 if right else -4), y + 15, w.param.end_text(end) + (" *" if flips else ""),
                   "start" if right else "end", 9, "#333")
    p.line(X(at), p.y0 - 4, X(at), p.y0 + 24 * len(shown), "#222", 1.2)
    axis = p.y0 + 24 * len(shown) + 6
    for t in _ticks(lo, hi, 3):
        p.text(X(t), axis + 10, _usd(t), "middle", 10, "#555")
    p.text((p.x0 + p.x1) / 2, axis + 26, f"cost over the run, base {display.value(at, 'usd')} (light: low end, dark: "
           "high end)", "middle", 10, "#333")
    return p.done()
