"""The charts of a brief, as vector SVG with their text kept as text (matplotlib): the checkpoint's
size by component, waste against the interval, the purchase curve and the tornado. Each draws what
the compute stage put in the brief's data; names from the inputs are drawn as plain text (no
mathtext: '$x$' stays literal)."""

from __future__ import annotations

import io
import math
import re
from typing import TYPE_CHECKING

from markupsafe import Markup

from ..strategies import BASELINE, COMPARED

if TYPE_CHECKING:
    import pandas as pd

    from ..report import BriefData


def _svg(fig, prefix: str) -> Markup:
    """The figure as inline SVG, its ids prefixed so that two charts on a page cannot collide."""
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None, "Creator": None})
    plt.close(fig)
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r'\bid="([^"]+)"', rf'id="{prefix}-\1"', text)
    text = re.sub(r'(url\(#|href="#)', rf"\1{prefix}-", text)
    return Markup(text)  # matplotlib escapes every text it writes; no input string is drawn here


def _mpl():
    import matplotlib

    matplotlib.use("Agg")
    matplotlib.rcParams.update({"svg.fonttype": "none", "svg.hashsalt": "ckptreport", "font.size": 8,
                                "font.family": "DejaVu Sans"})
    import matplotlib.pyplot as plt

    return plt


def size(row: pd.Series) -> Markup:
    plt = _mpl()
    parts = [("weights", "weights_bytes"), ("master", "master_bytes"), ("optimizer", "optimizer_bytes"),
             ("grads", "grads_bytes")]
    fig, ax = plt.subplots(figsize=(3.4, 1.3))
    left = 0.0
    colors = ["#2f6db5", "#c0504d", "#9bbb59", "#8064a2"]
    for (label, col), color in zip(parts, colors):
        tb = row[col] / 1e12
        if tb > 0:
            ax.barh([0], [tb], left=left, color=color, label=f"{label} {tb:.2f} TB")
            left += tb
    ax.set_yticks([])
    ax.set_xlabel("TB (1e12 bytes)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.45), ncol=2, frameon=False, fontsize=7)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    return _svg(fig, "size")


def waste(data: BriefData) -> Markup:
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(3.6, 2.2))
    rec = data.pick.row
    for strategy, color in zip(COMPARED, ("#c0504d", "#2f6db5")):
        if strategy not in data.curves:
            continue
        intervals_s, waste = data.curves[strategy]
        row = data.curve_rows[strategy]
        ax.plot(intervals_s / 60, waste, color=color, label=f"{strategy} ({row['engine']})")
        ax.plot([row["optimal_interval_s"] / 60], [row["optimal_waste_pct"]], marker="D", color=color,
                markersize=5, linestyle="none")
    ax.axvline(rec["interval_s"] / 60, color="#777", linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.xaxis.set_major_formatter(lambda v, _: f"{v:g}")  # plain numbers: no mathtext to lay out
    ax.xaxis.set_minor_formatter(lambda v, _: "")
    ax.set_xlabel("checkpoint interval (min)")
    ax.set_ylabel("waste (% of compute)")
    ax.legend(frameon=False, fontsize=7)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return _svg(fig, "waste")


def short(text: str, n: int = 22) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def purchase(data: BriefData) -> Markup:
    """Monthly cost against bandwidth bought: storage rising, GPU time lost falling, their total; the
    recommended strategy solid, sync dashed; the optimum marked."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6.4, 1.9))
    points, opt = data.purchase.points, data.purchase.optimum
    strategy = str(data.pick.row["strategy"])
    for s, style in ((strategy, "-"), (BASELINE, "--")):
        mine = points[points["strategy"] == s]
        if mine.empty or (s == BASELINE and s == strategy and style == "--"):
            continue
        x = mine["tier_bought_GBps"].to_numpy(float)
        if s == strategy:
            ax.plot(x, mine["storage_usd_month"], style, color="#9bbb59", marker="o", markersize=3,
                    label="storage")
            ax.plot(x, mine["lost_gpu_usd_month"], style, color="#c0504d", marker="o", markersize=3,
                    label=f"GPU time lost ({s})")
            ax.plot(x, mine["total_usd_month"], style, color="#2f6db5", marker="o", markersize=3, label=f"total ({s})")
        else:
            ax.plot(x, mine["total_usd_month"], style, color="#777", marker="o", markersize=3, label=f"total ({s})")
    if opt is not None:
        ax.plot([points.loc[opt, "tier_bought_GBps"]], [points.loc[opt, "total_usd_month"]], marker="D",
                color="#2f6db5", markersize=7, linestyle="none", label="optimum")
    ax.set_xscale("log")
    ticks = sorted(set(points["tier_bought_GBps"].round(6)))
    ax.set_xticks(ticks, [f"{t:,.3g}" for t in ticks])
    ax.minorticks_off()
    ax.set_xlabel("write bandwidth bought (GB/s)")
    ax.set_ylabel("$ per month")
    ax.yaxis.set_major_formatter(lambda v, _: f"${v:,.0f}")
    ax.legend(frameon=False, fontsize=6, ncol=2)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return _svg(fig, "purchase")


TORNADO_BARS = 8  # the inputs a brief's tornado shows, largest swing first


def tornado(data: BriefData) -> Markup | None:
    """The cost over the run of the option recommended at each input's low (light) and high (dark)
    end, the others held, around the base (the line): the inputs that move the answer most on top."""
    robust = data.robust
    swings = [w for w in robust.swings if math.isfinite(w.swing("total_usd"))][:TORNADO_BARS]
    if not swings:
        return None
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6.4, 0.35 + 0.3 * len(swings)))
    base = robust.base["total_usd"]
    for y, w in enumerate(reversed(swings)):
        for end, color in (("low", "#9fc5e8"), ("high", "#2f6db5")):
            value = getattr(w, end)["total_usd"]
            ax.barh(y, value - base, left=base, color=color, height=0.6, label=f"at its {end}" if y == 0 else None)
            shown = w.param.end_text(end)
            ax.annotate(shown + (" *" if getattr(w, end)["option"] != robust.base["option"] else ""),
                        (value, y), xytext=(3 if value >= base else -3, 0), textcoords="offset points",
                        ha="left" if value >= base else "right", va="center", fontsize=6, parse_math=False)
    ax.axvline(base, color="#333", linewidth=0.8)
    ax.set_yticks(range(len(swings)), [short(w.param.label, 40) for w in reversed(swings)],
                  parse_math=False)  # names from the inputs are text: '$x$' is not typeset
    ax.xaxis.set_major_formatter(lambda v, _: f"${v / 1e6:,.1f}M" if abs(v) >= 1e6 else f"${v / 1e3:,.0f}k")
    ax.set_xlabel("cost over the run of the option recommended (storage + GPU time lost)")
    lo = min(min(w.low["total_usd"], w.high["total_usd"]) for w in swings)
    hi = max(max(w.low["total_usd"], w.high["total_usd"]) for w in swings)
    pad = (hi - lo) * 0.18 or base * 0.05
    ax.set_xlim(lo - pad, hi + pad)
    ax.legend(frameon=False, fontsize=6, loc="lower right")
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return _svg(fig, "tornado")
