"""PDF briefs for hardware purchase proposals: a few pages a director reads in five minutes.

One brief per model (its summary SKU, every tier of the plan) and one per ``briefs:`` entry of the
plan. Everything a brief shows was computed in the compute stage (``report.BriefData``: its rows, the
recommendation, the tier comparison, the waste curves, the provenance of each input); this module
only formats it, into jinja2 templates from ``templates/`` (autoescaped; an undefined variable is an
error) rendered by WeasyPrint. Charts are vector SVG with their text kept as text. The renderer
fetches nothing: every URL is refused.
"""

from __future__ import annotations

import io
import math
import re
from concurrent.futures import as_completed
from pathlib import Path

import jinja2
import pandas as pd
from markupsafe import Markup

from .. import display, rule, units
from ..paths import templates_dir
from . import pdf
from ..report import BriefData, Report


# ---- charts: vector SVG, text kept as text ------------------------------------------------------

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


def size_chart(row: pd.Series) -> Markup:
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


def waste_chart(data: BriefData) -> Markup:
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(3.6, 2.2))
    rec = data.pick.row
    on = data.rows[(data.rows["sku"] == rec["sku"]) & (data.rows["tier"] == rec["tier"])]
    for strategy, color in (("sync", "#c0504d"), ("async", "#2f6db5")):
        if strategy not in data.curves:
            continue
        intervals_s, waste = data.curves[strategy]
        ax.plot(intervals_s / 60, waste, color=color, label=strategy)
        row = on[on["strategy"] == strategy].iloc[0]
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


def _short(text: str, n: int = 22) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def chain_svg(env: jinja2.Environment, row: pd.Series) -> Markup:
    f = display.of
    boxes = [("GPU HBM", [f"{int(row['writers_on_node'])} GPUs x {f('bytes_per_gpu_max', row['bytes_per_gpu_max'])}"]),
             ("host DRAM", [f"{f('host_memory_bytes', row['host_memory_bytes'])} per node"])]
    arrows = [("GPU -> host", f("d2h_GBps", row["d2h_GBps"]), f("d2h_s", row["d2h_s"]), "d2h") if row["strategy"] == "sync"
              else ("staged to host", f("staging_GBps", row["staging_GBps"]), f("snapshot_s", row["snapshot_s"]), "d2h")]
    boxes.append(("writers", [f"{int(row['writers_on_node'])} x {f('writer_GBps', row['writer_GBps'])}"]))
    arrows.append(("serialise", f("writers_GBps", row["writers_GBps"]), f("writer_s", row["writer_s"]), "writer"))
    if row["strategy"] == "tiered":
        boxes.append(("local NVMe", [f"{f('nvme_write_GBps', row['nvme_write_GBps'])} write"]))
        arrows.append(("to NVMe", f("nvme_write_GBps", row["nvme_write_GBps"]), f("nvme_s", row["nvme_s"]), "nvme"))
    if row["tier_kind"] != "local_nvme":
        boxes.append(("storage NIC", [f"{f('storage_nic_GBps', row['storage_nic_GBps'])} per node"]))
        arrows.append(("host -> NIC", f("storage_nic_GBps", row["storage_nic_GBps"]), f("nic_s", row["nic_s"]), "nic"))
    boxes.append((_short(str(row["tier"])), [f"{f('tier_share_GBps', row['tier_share_GBps'])} per node",
                                             f"of {f('tier_write_GBps', row['tier_write_GBps'])} total"]))
    arrows.append(("into the tier", f("tier_share_GBps", row["tier_share_GBps"]), f("tier_s", row["tier_s"]), "tier"))
    n = len(boxes)
    bw, gap, h = 120, 84, 66
    width = n * bw + (n - 1) * gap + 10
    out_boxes = [{"x": 5 + i * (bw + gap), "y": 30, "w": bw, "h": h, "title": t, "lines": lines}
                 for i, (t, lines) in enumerate(boxes)]
    out_arrows = []
    for i, (label, bandwidth, time, hop) in enumerate(arrows):
        bottleneck = hop == row["bottleneck"]
        x1 = out_boxes[i]["x"] + bw + 4
        out_arrows.append({"x1": x1, "x2": x1 + gap - 8, "y": 30 + h / 2, "label": label, "bandwidth": bandwidth,
                           "time": time, "bottleneck": bottleneck, "color": "#b3261e" if bottleneck else "#333"})
    svg = env.get_template("chain.svg.j2").render(width=width, height=30 + h + 40, boxes=out_boxes, arrows=out_arrows)
    return Markup(svg)


# ---- the brief ----------------------------------------------------------------------------------

def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(templates_dir())),
                              autoescape=jinja2.select_autoescape(["html", "j2", "svg"], default=True),
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def _storage(row: pd.Series) -> str:
    if pd.isna(row["storage_usd_month"]):
        return "not priced"
    return display.of("storage_usd_month", row["storage_usd_month"])


def _overhead(row: pd.Series | None) -> str:
    """An overhead as the tier table shows it; above 100% it is marked: the stall outlasts the interval."""
    if row is None:
        return "n/a"
    shown = display.value(row["overhead_pct"], "pct")
    return shown + " (stall > interval)" if row["stalls_more_than_trains"] else shown


def _total(row: pd.Series) -> str:
    if not row["tier_durable"]:
        return "not durable"
    if pd.isna(row["total_usd_month"]):
        return rule.NEEDS_PRICE
    return display.of("total_usd_month", row["total_usd_month"])


def _tier_rows(data: BriefData) -> list[dict]:
    out = []
    for line in data.tiers:
        sync, asyn = line.sync, line.asyn
        any_row = sync if sync is not None else asyn
        out.append({
            "tier": line.tier, "write": display.of("write_s", any_row["write_s"]),
            "sync": _overhead(sync), "async": _overhead(asyn),
            "total": _total(asyn if asyn is not None else sync),
            "sync_ok": bool(sync is not None and sync["meets_target"]),
            "async_ok": bool(asyn is not None and asyn["meets_target"]),
            "required": display.of("required_write_GBps", sync["required_write_GBps"]) if sync is not None else "n/a",
            "restore": display.of("restore_s", (asyn if asyn is not None else sync)["restore_s"]),
            "storage": _storage(any_row), "recommended": line.recommended,
        })
    return out


def _sku_rows(data: BriefData) -> list[dict]:
    pct = lambda v: display.value(v, "pct")  # noqa: E731
    return [{"sku": sku, "option": f"{p.row['tier']}, {p.row['strategy']}" + ("" if p.meets else " (misses target)"),
             "overhead": pct(p.row["overhead_pct"]), "waste": pct(p.row["waste_pct"]),
             "run": display.of("run_usd", p.row["run_usd"]), "storage": _storage(p.row),
             "recommended": sku == data.pick.row["sku"]} for sku, p in data.skus]


def _words(data: BriefData) -> tuple[str, list[str], list[str]]:
    """The headline, the recommendation (an economic argument, in paragraphs) and the requirements."""
    pick, spec = data.pick, data.spec
    rec = pick.row
    f = display.of
    pct = lambda v: display.value(v, "pct")  # noqa: E731
    usd = lambda v: display.value(v, "usd")  # noqa: E731
    target = f("target_overhead_pct", rec["target_overhead_pct"])
    option = f"{rec['strategy']} checkpoints to {rec['tier']} on {rec['sku']}"
    bought = f("tier_bought_GBps", rec["tier_bought_GBps"])
    head = f"{spec.model}: a {f('ckpt_bytes', rec['ckpt_bytes'])} checkpoint every {f('interval_s', rec['interval_s'])} " \
           f"on {spec.gpus:,} GPUs. "
    if pick.status == rule.RECOMMENDED:
        headline = head + (f"Recommended: {option} ({bought} bought): {pct(rec['overhead_pct'])} of training stalled "
                           f"(target {target}); storage {usd(rec['storage_usd_month'])} a month, GPU time lost "
                           f"{usd(rec['lost_gpu_usd_month'])} a month.")
        words = [f"Choose {option}, buying {bought} of write bandwidth and "
                 f"{f('provisioned_bytes', rec['provisioned_bytes'])} of capacity"
                 + (" (sized for bandwidth: the target needs more TiB than the checkpoints)" if rec["sized_for"] ==
                    "bandwidth" else "") + ". "
                 f"Of the options that meet the {target} target, are feasible, durable and priced, it costs least "
                 f"over the run: {usd(rec['total_usd'])}, of which storage {usd(rec['storage_run_usd'])} "
                 f"({usd(rec['storage_usd_month'])} a month: capacity {usd(rec['capacity_usd_month'])}, bandwidth "
                 f"{usd(rec['bandwidth_usd_month'])}, requests {usd(rec['requests_usd_month'])}) and GPU time lost "
                 f"to checkpointing {usd(rec['waste_usd'])} (stalls {pct(rec['overhead_pct'])}, rework, restarts "
                 f"and restores {pct(rec['rework_pct'])} of training, at {f('usd_per_gpu_hour', rec['usd_per_gpu_hour'])} per "
                 f"GPU-hour)."]
        runner = pick.runner_up
        if runner is not None:
            words.append(f"Runner-up: {runner['strategy']} checkpoints to {runner['tier']} on {runner['sku']} "
                         f"({f('tier_bought_GBps', runner['tier_bought_GBps'])}), {usd(pick.runner_up_extra_usd)} "
                         f"more over the run (storage {usd(runner['storage_usd_month'])} and GPU time lost "
                         f"{usd(runner['lost_gpu_usd_month'])} a month).")
        else:
            words.append("No other tier meets the target with a price: there is no runner-up.")
    elif pick.status == rule.NEEDS_PRICE:
        headline = head + (f"Options meet the {target} target but none has a price: {', '.join(pick.unpriced)}. "
                           "Price them to get a recommendation.")
        words = [f"{', '.join(pick.unpriced)} meet the target, but their storage has no price in the inputs, so "
                 "they are not ranked. Give each a rent (usd_per_tb_month) or a purchase price (capex_usd_per_tb, "
                 "capex_usd_per_GBps, life)."]
    else:
        headline = head + (f"No candidate meets the {target} target; closest: {option} at "
                           f"{pct(rec['overhead_pct'])} of training stalled.")
        words = [f"No candidate meets the target. The closest is {option}: training stalls "
                 f"{f('stall_s', rec['stall_s'])} per checkpoint ({pct(rec['overhead_pct'])} of training)."]
    if pick.status == rule.RECOMMENDED and pick.unpriced:
        words.append(f"Not ranked, for want of a price: {', '.join(pick.unpriced)} (they meet the target).")
    if data.assumed:
        words.append("This rests on assumed prices, published for no such product: "
                     + "; ".join(f"{name} {value}" for name, value in data.assumed)
                     + " (the appendix gives each assumption's range and source).")
    step = data.purchase.next_step
    if step is not None and data.purchase.optimum is not None:
        opt = data.purchase.points.loc[data.purchase.optimum]
        saved = opt["lost_gpu_usd_month"] - step["lost_gpu_usd_month"]
        more = step["storage_usd_month"] - opt["storage_usd_month"]
        words.append(f"The next step up, {step['tier']} ({f('tier_bought_GBps', step['tier_bought_GBps'])}), costs "
                     f"{usd(more)} a month more in storage and saves {usd(saved)} a month of GPU time.")
    requirements = [
        f"Aggregate write bandwidth of {f('required_write_GBps', rec['required_write_GBps'])} to meet the target "
        f"({f('required_node_write_GBps', rec['required_node_write_GBps'])} per node) for {rec['strategy']}; "
        f"the tier gives each node {f('tier_share_GBps', rec['tier_share_GBps'])}.",
        f"The write itself takes {f('write_s', rec['write_s'])}, of which {f('coordination_s', rec['coordination_s'])} "
        f"coordinating {int(rec['gpus']):,} ranks; the bottleneck is "
        + (f"that coordination." if rec["bottleneck"] == "coordination" else f"the {rec['bottleneck']} hop."),
        f"After a failure: {pct(rec['host_restore_pct'])} of restarts read the copy in host memory "
        f"({f('restore_host_s', rec['restore_host_s'])}), the rest read the checkpoint back from {rec['tier']} "
        f"at {f('read_GBps', rec['read_GBps'])} ({f('restore_tier_s', rec['restore_tier_s'])}): "
        f"{f('restore_s', rec['restore_s'])} on average, counted in the rework.",
        f"Capacity for {int(rec['retention'])} checkpoints with headroom: "
        f"{f('capacity_needed_bytes', rec['capacity_needed_bytes'])}.",
    ]
    if rec["prefixes_needed"] > 0:
        requirements.append(f"Object store: {int(rec['puts_per_ckpt']):,} write requests per checkpoint; the target's "
                            f"bandwidth needs {int(rec['prefixes_needed'])} prefix(es) at the request-rate ceiling.")
    if rec["strategy"] != "sync":
        requirements.append(f"Host memory for staging: {f('host_memory_needed_bytes', rec['host_memory_needed_bytes'])} "
                            f"per node of {f('host_memory_bytes', rec['host_memory_bytes'])}.")
    return headline, words, requirements


def purchase_chart(data: BriefData) -> Markup:
    """Monthly cost against bandwidth bought: storage rising, GPU time lost falling, their total; the
    recommended strategy solid, sync dashed; the optimum marked."""
    plt = _mpl()
    fig, ax = plt.subplots(figsize=(6.4, 1.9))
    points, opt = data.purchase.points, data.purchase.optimum
    strategy = str(data.pick.row["strategy"])
    for s, style in ((strategy, "-"), ("sync", "--")):
        mine = points[points["strategy"] == s]
        if mine.empty or (s == "sync" and s == strategy and style == "--"):
            continue
        x = mine["tier_bought_GBps"].to_numpy(float)
        if s == strategy:
            ax.plot(x, mine["storage_usd_month"], style, color="#9bbb59", marker="o", markersize=3,
                    label="storage")
            ax.plot(x, mine["lost_gpu_usd_month"], style, color="#c0504d", marker="o", markersize=3,
                    label=f"GPU time lost ({s})")
            ax.plot(x, mine["total_usd_month"], style, color="#2f6db5", marker="o", markersize=3, label=f"total ({s})")
        else:
            ax.plot(x, mine["total_usd_month"], style, color="#777", marker="o", markersize=3, label="total (sync)")
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


def tornado_chart(data: BriefData) -> Markup | None:
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
    ax.set_yticks(range(len(swings)), [_short(w.param.label, 40) for w in reversed(swings)],
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


def _robust_words(data: BriefData) -> dict:
    """The brief's 'How sure is this' paragraph: the band, the share of draws, the break-evens."""
    r = data.robust
    f = display.of
    option = r.base["option"]
    if not r.params:
        return {"band": "Every figure this recommendation uses is taken as certain: no input it reads carries a "
                        "range, so there is no band or tornado. Give an input a range (low, high) to see one.",
                "holds": "", "inputs": 0}
    q = r.quantiles
    trio = lambda m: ", ".join(f"P{p} {f(m, q[m][f'p{p}'])}" for p in (10, 50, 90)) if q[m]["p50"] is not None         else "not priced"  # noqa: E731
    share = r.wins.get(option, 0.0)
    others = [f"{name} in {s:.0%}" for name, s in r.wins.items() if name != option]
    band = (f"Over {r.samples:,} draws of the {len(r.params)} uncertain inputs it reads, taken together (seed "
            f"{r.seed}), {option} is the recommendation in {share:.0%} of draws"
            + (f" ({'; '.join(others)})" if others else "") + f". Its total cost a month: {trio('total_usd_month')}; "
            f"over the run: {trio('total_usd')}; overhead: {trio('overhead_pct')}.")
    if r.breaks:
        parts = []
        for b in sorted(r.breaks, key=lambda b: abs(math.log(max(b.value, 1e-300) / max(b.param.value, 1e-300)))):
            word = "rises above" if b.direction == "above" else "falls below"
            parts.append(f"{b.param.label} {word} {f(b.param.input, b.value)} (then {b.to})")
        holds = "This recommendation holds unless " + "; or ".join(parts) + " (break-even values found on the engine)."
    else:
        holds = ("No uncertain input flips this recommendation within a factor of 10 of its value, each moved "
                 "alone (searched on the engine).")
    return {"band": band, "holds": holds, "inputs": len(r.params)}


def _provenance(data: BriefData, measured) -> tuple[list[dict], str, list[dict]]:
    """The appendix: every input with its basis and source, which bandwidths were measured."""
    rec = data.pick.row
    inputs = data.explanation["inputs"]
    sources, first_with = [], {}
    for i in inputs:
        if i["basis"] in ("scenario", "default"):
            continue
        dated = ", ".join(filter(None, [i.get("date"), i.get("region")]))
        text = i["source"] or ""
        if text and text in first_with:  # a long citation once: later rows point back to it
            text = f"as for {first_with[text]}"
        elif text:
            first_with[text] = i["name"]
        sources.append({"name": i["name"], "display": i["display"], "basis": i["basis"] + (f" ({dated})" if dated else ""),
                        "source": " ".join(filter(None, [text, f"({i['file']}:{i['line']})" if i["line"] else ""]))})
    omitted = [f"{i['name']} ({i['source'].removeprefix('omitted: ')})" for i in inputs if i["basis"] == "default"]
    if omitted:
        sources.append({"name": "omitted keys", "display": "", "basis": "default",
                        "source": "at their declared defaults: " + "; ".join(omitted)})
    bases = {i["name"]: i["source"] if i["basis"] == "default" else i["basis"] for i in inputs}
    hops = {"GPU->host": bases.get("d2h_node_GBps", "n/a"), "storage NIC": bases.get("storage_nic_GBps", "n/a"),
            "tier": bases.get("tier_write_GBps", "n/a"), "tier per node": bases.get("tier_node_write_GBps", "n/a")}
    if rec["strategy"] == "tiered" or rec["tier_kind"] == "local_nvme":
        hops["local NVMe"] = bases.get("nvme_write_GBps", "n/a")
    mine = [h for h, b in hops.items() if b.startswith("measured on")]
    note = ("Bandwidths used: " + ", ".join(f"{h} {b}" for h, b in hops.items()) + ". "
            + (f"Measured on your hosts: {', '.join(mine)}." if mine else
               "None of these were measured on your hosts (ckptreport probe, ckptreport import)."))
    bw = lambda v: units.fmt(v, "bandwidth")  # noqa: E731
    rows = [{"hop": f"{m.section}.{m.name}.{m.field}", "spec": bw(m.spec) if m.spec else "n/a",
             "median": bw(m.median), "minimum": bw(m.minimum), "hosts": len(set(m.hosts)),
             "ratio": f"{m.ratio:.0%}" if m.ratio else "n/a", "flag": m.flag or "ok"} for m in measured]
    return sources, note, rows


def context(data: BriefData, report: Report, meta: dict[str, str], paper: str) -> dict:
    """Everything the template shows, formatted from the brief's data."""
    env = _environment()
    rec, spec = data.pick.row, data.spec
    f = display.of
    headline, recommendation, requirements = _words(data)
    sources, bandwidth_note, measured_rows = _provenance(data, report.inputs.measured.values())
    skus = _sku_rows(data)
    built = meta["build_time"]
    return {
        "title": spec.title or f"Checkpoint storage for {spec.model}", "model": spec.model,
        "version": meta["ckptreport_version"], "built": built, "built_date": built[:10],
        "input_hash": meta["input_hash"][:16], "css": Markup(_css(paper)),
        "paper_class": "letter" if paper == "Letter" else "a4", "headline": headline, "rec": {
            "sku": str(rec["sku"]), "tier": str(rec["tier"]), "strategy": str(rec["strategy"]),
            "meets": data.pick.meets},
        "params": f("params", rec["params"]), "active": f("active_params", rec["active_params"]),
        "tokens": f("tokens", rec["tokens"]), "recipe": str(rec["recipe"]),
        "bytes_per_param": f("bytes_per_param", rec["bytes_per_param"]), "ckpt": f("ckpt_bytes", rec["ckpt_bytes"]),
        "per_gpu": f("bytes_per_gpu", rec["bytes_per_gpu"]), "per_node": f("bytes_per_node", rec["bytes_per_node"]),
        "gpus": f"{spec.gpus:,}", "mfu": f("mfu_pct", rec["mfu_pct"]),
        "compute_days": display.value(rec["compute_s"] / units.COLUMN_UNITS["days"].scale, "days"),
        "mtbf": f("cluster_mtbf_s", rec["cluster_mtbf_s"]),
        "interval": f("interval_s", rec["interval_s"]), "target": f("target_overhead_pct", rec["target_overhead_pct"]),
        "size_svg": size_chart(rec), "waste_svg": waste_chart(data), "chain_svg": chain_svg(env, rec),
        "purchase_svg": purchase_chart(data), "purchase_what": data.purchase.what,
        "tornado_svg": tornado_chart(data), "robust": _robust_words(data),
        "recovery_mix": f"{display.value(data.pick.row['host_recoverable_pct'], 'pct')} of failures restarting from the "
                        "copy an async or tiered save keeps in host memory (sync keeps none), the rest from the tier",
        "tiers": _tier_rows(data), "skus": skus if len(skus) > 1 else [], "recommendation": recommendation,
        "requirements": requirements, "sources": sources, "bandwidth_note": bandwidth_note,
        "measured": measured_rows, "calibration": report.calibration.rows,
        "calibration_summary": _calibration_summary(report.calibration.summary),
        "method": "size = params x bytes per param; time per hop = bytes per node / bandwidth per node; stall: "
                  "sync = copy + write, async and tiered = copy (+ wait if the write outlasts the interval); "
                  "overhead = stall / interval; waste adds (interval/2 + restart) / MTBF; optimum: Daly (2006); "
                  "the recommendation is the option meeting the target at the lowest cost over the run "
                  "(GPU-hours including waste, plus storage; unpriced storage ranks after priced).",
    }


def _calibration_summary(s: dict) -> str:
    held = s["held_out"]
    parts = [f"{what} {st['median_abs_error']:.1%} median, {st['worst_abs_error']:.1%} worst"
             for what, st in held.items() if st["cases"] and what != "sizes"]
    return (f"{s['passed']} of {s['scored']} scored cases within tolerance, {s['fit_cases']} of them used to fit the "
            f"free terms; on the cases held out of the fit: {'; '.join(parts)}; {s['lacks']} cases name a term the "
            "model lacks")


def _css(paper: str) -> str:
    css = (templates_dir() / "brief.css").read_text()
    return css.replace("size: A4;", "size: letter;", 1) if paper == "Letter" else css


def render_html(ctx: dict) -> str:
    return _environment().get_template("brief.html.j2").render(**{k: v for k, v in ctx.items()
                                                                  if not k.startswith("_")})


class Briefs:
    """Briefs being written: their HTML was rendered here; the PDFs are laid out by ``pdf.Pool``."""

    def __init__(self, pool: pdf.Pool, jobs: list, progress):
        self.pool, self.jobs, self.progress = pool, jobs, progress
        self.refused: dict[str, list[str]] = {}

    def wait(self) -> list[Path]:
        """Wait for every PDF; returns their paths. A missing WeasyPrint or Pango is a clean error."""
        from ..progress import task

        try:
            futures = {future: (name, path) for name, path, future in self.jobs}
            with task(self.progress, "briefs", len(futures)) as advance:
                for future in as_completed(futures):
                    name, path = futures[future]
                    try:
                        self.refused[name] = refused = future.result()
                    except pdf.NoRenderer as e:
                        raise _no_weasyprint(e) from None
                    advance(1, path.name)
                    if refused:
                        self.progress(f"{path.name}: refused to fetch {len(refused)} URL(s)")
            return [path for _, path, _ in self.jobs]
        finally:
            self.close()

    def close(self) -> None:
        """Stop: workers finish the brief in hand, the rest are cancelled (a failed build)."""
        self.pool.close(cancel=True)


def _no_weasyprint(e: BaseException):
    from ..errors import InputError

    return InputError(f"PDF briefs need WeasyPrint and the Pango library ({e}); on Debian: apt-get "
                      "install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0, or build with --no-briefs")


def start(out_dir: Path, report: Report, meta: dict[str, str], paper: str | None = None,
          progress=lambda _: None, workers: int | None = None) -> Briefs:
    """Render every brief's HTML and hand each to a pool of worker processes that lay the PDFs out
    (``workers``: how many, 0 for none; by default one per core, at most one per brief; on a
    2-core machine two workers beside the workbook beat one by about a fifth). Returns at once
    with the PDFs in progress: ``wait()`` for them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paper = paper or report.inputs.plan.paper
    if workers is None:
        cores = pdf.cores()
        workers = 0 if cores == 1 else min(len(report.briefs), cores)
    where = f"{workers} worker process(es)" if workers else "this process"
    progress(f"briefs: {len(report.briefs)} laid out as PDF by {where}, beside the rest of the build")
    pool = pdf.Pool(workers)
    jobs = []
    try:
        for data in report.briefs:
            html = render_html(context(data, report, meta, paper))
            path = out_dir / f"{data.spec.name}.pdf"
            jobs.append((data.spec.name, path, pool.submit(html, path)))
    except BaseException:
        pool.close(cancel=True)
        raise
    return Briefs(pool, jobs, progress)


def write_all(out_dir: Path, report: Report, meta: dict[str, str], paper: str | None = None,
              progress=lambda _: None, workers: int | None = None) -> list[Path]:
    """Write every brief and wait for them."""
    return start(out_dir, report, meta, paper, progress, workers).wait()


# ---- golden HTML (tests/golden/briefs): python -m ckptreport.render.brief --golden tests/golden/briefs ----

GOLDEN_META = {"ckptreport_version": "golden", "input_hash": "0" * 64, "build_time": "2000-01-01T00:00:00Z"}
_CHART = re.compile(r'<svg xmlns:xlink="http://www.w3.org/1999/xlink".*?</svg>', re.S)


def normalized_html(html: str) -> str:
    """HTML with matplotlib's chart bodies and the stylesheet elided: golden files pin our markup and
    words, not the plotting library's path data (which changes between its releases) nor a copy of
    templates/brief.css per file."""
    html = re.sub(r"<style>.*?</style>", "<style>/* templates/brief.css */</style>", html, flags=re.S)
    return _CHART.sub("<svg><!-- matplotlib chart --></svg>", html)


def golden_html(report: Report) -> dict[str, str]:
    return {f"{data.spec.name}.html": normalized_html(render_html(context(data, report, GOLDEN_META, "A4")))
            for data in report.briefs}
