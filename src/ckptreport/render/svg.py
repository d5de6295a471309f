"""The one chart drawer: any chart ``charts`` describes, written as SVG directly. The briefs
(WeasyPrint lays SVG out) and the review page use it alike. A chart is a few lines, bars and labels:
written here they take well under a millisecond each, their text stays text (selectable, searchable,
sharp in print and in a PNG of the page), and every string is escaped (a name from the inputs is
data, never markup). The SVG scales to its figure's width (its ``viewBox``); text is 9 to 11 units,
about 8 pt across a page of A4.
"""

from __future__ import annotations

import math

from markupsafe import Markup, escape

from .charts import Axis, BarChart, Chart, LineChart

TEXT, MUTED, FAINT = "#222222", "#555555", "#e4e4e4"
LEGEND_X = 8  # a legend starts at the chart's left edge, under the axis' title


def _n(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


class _Plot:
    """A plot area inside a fixed viewBox."""

    def __init__(
        self,
        width: float,
        height: float,
        left: float,
        right: float,
        top: float,
        bottom: float,
        title: str,
    ):
        self.w, self.h, self.x0, self.x1, self.y0, self.y1 = (
            width,
            height,
            left,
            width - right,
            top,
            height - bottom,
        )
        self.parts = [
            f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {_n(width)} {_n(height)}" role="img" '
            f'class="chart" font-family="DejaVu Sans, sans-serif" font-size="10" fill="{MUTED}">',
            f"<title>{escape(title)}</title>",
        ]

    def text(
        self,
        x: float,
        y: float,
        s: str,
        anchor: str = "start",
        size: int = 11,
        fill: str = TEXT,
        rotate: bool = False,
    ) -> None:
        turn = f' transform="rotate(-90 {_n(x)} {_n(y)})"' if rotate else ""
        # what the chart's element already says (10-point muted text from its start) is not repeated
        how = "" if anchor == "start" else f' text-anchor="{anchor}"'
        how += "" if size == 10 else f' font-size="{size}"'
        how += "" if fill == MUTED else f' fill="{fill}"'
        self.parts.append(f'<text x="{_n(x)}" y="{_n(y)}"{how}{turn}>{escape(s)}</text>')

    def line(
        self, x1, y1, x2, y2, stroke: str = "#333333", width: float = 1.0, dash: str | None = None
    ) -> None:
        self.parts.append(
            f'<line x1="{_n(x1)}" y1="{_n(y1)}" x2="{_n(x2)}" y2="{_n(y2)}" stroke="{stroke}"'
            + ("" if width == 1 else f' stroke-width="{width}"')
            + (f' stroke-dasharray="{dash}"' if dash else "")
            + "/>"
        )

    def polyline(
        self, points, stroke: str, dash: str | None = None, dots: list | None = None
    ) -> None:
        pts = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        self.parts.append(
            f'<polyline points="{pts}" fill="none" stroke="{stroke}" stroke-width="1.8"'
            + (f' stroke-dasharray="{dash}"' if dash else "")
            + "/>"
        )
        self.parts += [
            f'<circle cx="{_n(x)}" cy="{_n(y)}" r="2.5" fill="{stroke}"/>' for x, y in dots or []
        ]

    def diamond(self, x: float, y: float, color: str, r: float = 7) -> None:
        self.parts.append(
            f'<path d="M{_n(x)},{_n(y - r)} L{_n(x + r)},{_n(y)} L{_n(x)},{_n(y + r)} '
            f'L{_n(x - r)},{_n(y)} Z" fill="none" stroke="{color}" stroke-width="2"/>'
        )

    def rect(self, x, y, w, h, fill: str, title: str = "") -> None:
        inner = f"<title>{escape(title)}</title>" if title else ""
        self.parts.append(
            f'<rect x="{_n(x)}" y="{_n(y)}" width="{_n(max(w, 0.5))}" height="{_n(h)}" '
            f'fill="{fill}">{inner}</rect>'
        )

    def legend(self, entries: list[tuple[str, str, str | None]], y: float) -> None:
        """Entries (color, name, style: a dash, 'diamond', 'box' or None for a line), wrapped to rows."""
        lx, ly = LEGEND_X, y
        for color, name, style in entries:
            width = 28 + 6.2 * len(name)
            if lx + width > self.w and lx > LEGEND_X:
                lx, ly = LEGEND_X, ly + 16
            if style == "diamond":
                self.parts.append(
                    f'<path d="M{_n(lx + 8)},{_n(ly - 5)} l5,5 l-5,5 l-5,-5 Z" fill="none" '
                    f'stroke="{color}" stroke-width="2"/>'
                )
            elif style == "box":
                self.rect(lx + 2, ly - 5, 12, 10, color)
            else:
                self.line(lx, ly, lx + 16, ly, color, 2, style)
            self.text(lx + 20, ly + 4, name, size=10)
            lx += width

    def done(self) -> Markup:
        return Markup("".join(self.parts) + "</svg>\n")  # a figure's caption on a line of its own


def _legend_rows(names: list[str], width: float) -> int:
    rows, lx = 1, LEGEND_X
    for name in names:
        w = 28 + 6.2 * len(name)
        if lx + w > width and lx > LEGEND_X:
            rows, lx = rows + 1, LEGEND_X
        lx += w
    return rows


def _scale(axis: Axis, a: float, b: float):
    """The map from the axis' values to ``a`` .. ``b`` (log or linear)."""
    if axis.log:
        lo, hi = math.log10(axis.lo), math.log10(axis.hi)
        return lambda v: a + (math.log10(v) - lo) / (hi - lo) * (b - a)
    return lambda v: a + (v - axis.lo) / ((axis.hi - axis.lo) or 1.0) * (b - a)


def _clipped(points: list[tuple[float, float]], top: float) -> list[list[tuple[float, float]]]:
    """A line's points in runs that stay at or under ``top``, each cut where it crosses it."""
    runs, run = [], []
    for k, (x, y) in enumerate(points):
        if y <= top:
            if not run and k and points[k - 1][1] > top:
                px, py = points[k - 1]
                run.append((px + (x - px) * (py - top) / (py - y), top))
            run.append((x, y))
        elif run:
            px, py = run[-1]
            run.append((px + (x - px) * (top - py) / (y - py), top))
            runs.append(run)
            run = []
    if run:
        runs.append(run)
    return runs


def draw(chart: Chart | None) -> Markup | None:
    """The chart as SVG (None draws nothing)."""
    if chart is None:
        return None
    return _lines(chart) if isinstance(chart, LineChart) else _bars(chart)


def _lines(c: LineChart) -> Markup:
    entries = [(line.color, line.name, line.dash) for line in c.lines if line.name]
    entries += [(m.color, m.name, "diamond") for m in c.markers if m.name]
    entries += [(g.color, g.name, g.dash or None) for g in c.guides if g.name]
    rows = _legend_rows([e[1] for e in entries], c.width) if entries else 0
    p = _Plot(
        c.width,
        c.height + 16 * max(rows - 1, 0),
        c.left,
        16,
        14,
        62 + 16 * max(rows - 1, 0),
        c.title,
    )
    X, Y = _scale(c.x, p.x0, p.x1), _scale(c.y, p.y1, p.y0)
    for v, text in c.y.ticks:
        p.line(p.x0, Y(v), p.x1, Y(v), FAINT)
        p.text(p.x0 - 6, Y(v) + 4, text, "end", 10, MUTED)
    for v, text in c.x.ticks:
        p.line(X(v), p.y1, X(v), p.y1 + 4, MUTED)
        p.text(X(v), p.y1 + 16, text, "middle", 10, MUTED)
    p.line(p.x0, p.y1, p.x1, p.y1, MUTED)
    p.line(p.x0, p.y0, p.x0, p.y1, MUTED)
    p.text((p.x0 + p.x1) / 2, p.y1 + 30, c.x.title, "middle", 10, "#333333")
    p.text(12, (p.y0 + p.y1) / 2, c.y.title, "middle", 10, "#333333", rotate=True)
    for g in c.guides:
        if c.x.lo <= g.x <= c.x.hi:
            p.line(X(g.x), p.y0, X(g.x), p.y1, g.color, 1, g.dash)
    for line in c.lines:
        inside = [(x, y) for x, y in line.points if c.x.lo <= x <= c.x.hi]
        for run in _clipped(inside, c.y.hi):
            at = [(X(x), Y(y)) for x, y in run]
            dots = [
                (X(x), Y(y)) for x, y in run if (x, y) in line.points and len(line.points) <= 12
            ]
            p.polyline(at, line.color, line.dash, dots)
    for m in c.markers:
        if c.x.lo <= m.x <= c.x.hi and m.y <= c.y.hi:
            p.diamond(X(m.x), Y(m.y), m.color)
    if entries:
        p.legend(entries, p.h - 10 - 16 * (rows - 1))
    return p.done()


def _bars(c: BarChart) -> Markup:
    rows = _legend_rows([name for _, name in c.legend], c.width) if c.legend else 0
    row_h = 24
    body = row_h * len(c.rows)
    height = 10 + body + 40 + (16 * rows + 6 if rows else 0)
    p = _Plot(c.width, height, c.left, 14, 10, height - 10 - body, c.title)
    X = _scale(c.x, p.x0, p.x1)
    for k, row in enumerate(c.rows):
        y = p.y0 + row_h * k
        if row.label:
            p.text(p.x0 - 8, y + 15, row.label, "end", 10)
        for s in row.segments:
            a, b = sorted((X(s.start), X(s.end)))
            p.rect(a, y + 4, b - a, 15, s.color, s.tip)
            if s.label:
                right = s.end >= s.start
                p.text(
                    X(s.end) + (4 if right else -4),
                    y + 15,
                    s.label,
                    "start" if right else "end",
                    9,
                    "#333333",
                )
    for g in c.guides:
        p.line(X(g.x), p.y0 - 4, X(g.x), p.y0 + body, g.color, 1.2, g.dash)
    axis = p.y0 + body + 6
    p.line(p.x0, axis - 4, p.x1, axis - 4, MUTED)
    for v, text in c.x.ticks:
        p.line(X(v), axis - 6, X(v), axis - 2, MUTED)
        p.text(X(v), axis + 10, text, "middle", 10, MUTED)
    p.text((p.x0 + p.x1) / 2, axis + 26, c.x.title, "middle", 10, "#333333")
    if c.legend:
        p.legend([(color, name, "box") for color, name in c.legend], axis + 44)
    return p.done()
