"""PDF briefs for hardware purchase proposals: a few pages a director reads in five minutes.

One brief per model (its summary SKU, every tier of the plan) and one per ``briefs:`` entry of the
plan. Everything a brief shows was computed in the compute stage (``answer.types.BriefData``: its rows, the
recommendation, the tier comparison, the waste curves, the provenance of each input); this module
only formats it, into jinja2 templates from ``templates/`` (autoescaped; an undefined variable is an
error) rendered by WeasyPrint; the prose is the template's, the figures it quotes are formatted here.
Charts (``charts``) are vector SVG with their text kept as text. The renderer fetches nothing: every
URL is refused.
"""

from __future__ import annotations

import math
import re
from concurrent.futures import as_completed
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import pandas as pd
from markupsafe import Markup

from ..model import display
from ..read import units
from .env import environment, templates_dir
from ..read.strategies import BACKGROUND, COMPARED
from . import charts, pdf, svg
from ..answer.types import NEEDS_PRICE, RECOMMENDED

if TYPE_CHECKING:
    from ..answer.types import BriefData, Report


# ---- the chain: an SVG template, its figures from the recommended row ----------------------------

def chain_svg(env: jinja2.Environment, row: pd.Series) -> Markup:
    f = display.of
    boxes = [("GPU HBM", [f"{int(row['writers_on_node'])} GPUs x {f('bytes_per_gpu_max', row['bytes_per_gpu_max'])}"]),
             ("host DRAM", [f"{f('host_memory_bytes', row['host_memory_bytes'])} per node"])]
    arrows = [("GPU -> host", f("d2h_GBps", row["d2h_GBps"]), f("d2h_s", row["d2h_s"]), "d2h") if not row["stages_snapshot"]
              else ("staged to host", f("staging_GBps", row["staging_GBps"]), f("snapshot_s", row["snapshot_s"]), "d2h")]
    boxes.append(("writers", [f"{int(row['writers_on_node'])} x {f('writer_GBps', row['writer_GBps'])}"]))
    arrows.append(("serialise", f("writers_GBps", row["writers_GBps"]), f("writer_s", row["writer_s"]), "writer"))
    if row["lands_on_nvme"]:
        boxes.append(("local NVMe", [f"{f('nvme_write_GBps', row['nvme_write_GBps'])} write"]))
        arrows.append(("to NVMe", f("nvme_write_GBps", row["nvme_write_GBps"]), f("nvme_s", row["nvme_s"]), "nvme"))
    if row["tier_kind"] != "local_nvme":
        boxes.append(("storage NIC", [f"{f('storage_nic_GBps', row['storage_nic_GBps'])} per node"]))
        arrows.append(("host -> NIC", f("storage_nic_GBps", row["storage_nic_GBps"]), f("nic_s", row["nic_s"]), "nic"))
    boxes.append((charts.short(str(row["tier"])), [f"{f('tier_share_GBps', row['tier_share_GBps'])} per node",
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
        return NEEDS_PRICE
    return display.of("total_usd_month", row["total_usd_month"])


def _tier_rows(data: BriefData) -> list[dict]:
    out = []
    for line in data.tiers:
        sync, asyn = line.sync, line.asyn
        any_row = sync if sync is not None else asyn
        out.append({
            "tier": line.tier, "write": display.of("write_s", any_row["write_s"]),
            "sync": _overhead(sync), "async": _overhead(asyn),  # the template's columns: strategies.COMPARED
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
    return [{"sku": sku, "option": f"{p.row['tier']}, {p.row['strategy']}, {p.row['engine']}"
             + ("" if p.meets else " (misses target)"),
             "overhead": pct(p.row["overhead_pct"]), "waste": pct(p.row["waste_pct"]),
             "run": display.of("run_usd", p.row["run_usd"]), "storage": _storage(p.row),
             "recommended": sku == data.pick.row["sku"]} for sku, p in data.skus]


def _strategy_rows(data: BriefData) -> list[dict]:
    """Each planned strategy's best option on the recommended SKU, what it needs beyond the tier
    (host memory, peers, replicas), and what it buys against async's (or the first strategy's)."""
    if not data.strategies:
        return []
    picks = dict(data.strategies)
    base = picks.get(BACKGROUND) or next(iter(picks.values()))
    out = []
    for strategy, p in data.strategies:
        r = p.row
        needs = []
        if r["host_memory_needed_bytes"] > 0:
            needs.append(f"{display.of('host_memory_needed_bytes', r['host_memory_needed_bytes'])} host memory a node "
                         f"(of {display.of('host_memory_bytes', r['host_memory_bytes'])})")
        if r["copies_to_peers"]:
            needs.append(f"{display.of('peer_s', r['peer_s'])} a checkpoint to copy to its peer(s)")
        if r["min_replicas"] > 1:
            needs.append(f"{int(r['dp_ranks']):,} data-parallel replicas (at least {int(r['min_replicas'])})")
        more = r["storage_usd_month"] - base.row["storage_usd_month"]  # what its storage costs beyond async's
        out.append({"strategy": strategy, "option": f"{r['tier']}, {r['engine']}" + ("" if p.meets else " (misses target)"),
                    "overhead": display.value(r["overhead_pct"], "pct"), "bought": display.of("tier_bought_GBps", r["tier_bought_GBps"]),
                    "storage": _storage(r), "total": _total(r), "needs": "; ".join(needs) or "nothing beyond the tier",
                    "versus": "" if p is base or pd.isna(more) else
                    ("+" if more > 0 else "\u2212") + display.value(abs(more), "usd"),
                    "recommended": p.index == data.pick.index})
    return out


# The figures of an option the brief's prose quotes (templates/brief.html.j2), by how each reads
SHOWN = ("ckpt_bytes", "interval_s", "target_overhead_pct", "tier_bought_GBps", "provisioned_bytes", "usd_per_gpu_hour",
         "stall_s", "required_write_GBps", "required_node_write_GBps", "tier_share_GBps", "write_s", "coordination_s",
         "restore_host_s", "read_GBps", "restore_tier_s", "restore_s", "capacity_needed_bytes", "host_memory_needed_bytes",
         "host_memory_bytes")  # as its column reads
DOLLARS = ("storage_usd_month", "lost_gpu_usd_month", "total_usd", "storage_run_usd", "capacity_usd_month",
           "bandwidth_usd_month", "requests_usd_month", "waste_usd")
SHARES = ("overhead_pct", "rework_pct", "host_restore_pct")


def _figures(row: pd.Series) -> dict:
    """One option's figures as the prose quotes them: '6.49 TB', '$4,740', '3.62%'."""
    out = {name: display.of(name, row[name]) for name in SHOWN}
    out |= {name: display.value(row[name], "usd") for name in DOLLARS}
    out |= {name: display.value(row[name], "pct") for name in SHARES}
    out |= {k: str(row[k]) for k in ("strategy", "tier", "sku", "bottleneck", "engine")}
    out |= {"stages_snapshot": bool(row["stages_snapshot"])}
    out |= {"extrapolated": bool(row["extrapolated"]), "largest_case": display.of("largest_case_ranks",
                                                                                     row["largest_case_ranks"])}
    out |= {"gpus": f"{int(row['gpus']):,}", "retention": str(int(row["retention"])),
            "sized_for_bandwidth": row["sized_for"] == "bandwidth", "prefixes_needed": row["prefixes_needed"] > 0}
    if out["prefixes_needed"]:
        out |= {"prefixes": str(int(row["prefixes_needed"])), "puts_per_ckpt": f"{int(row['puts_per_ckpt']):,}"}
    return out


def _words(data: BriefData) -> dict:
    """What the headline, the recommendation (an economic argument, in paragraphs) and the
    requirements say, figure by figure; the sentences are the template's."""
    pick, usd = data.pick, lambda v: display.value(v, "usd")
    w = {"model": data.spec.model, "gpus": f"{data.spec.gpus:,}", "status": pick.status,
         "recommended": pick.status == RECOMMENDED, "needs_price": pick.status == NEEDS_PRICE,
         "rec": _figures(pick.row), "unpriced": ", ".join(pick.unpriced), "runner": None, "step": None,
         "assumed": "; ".join(f"{name} {value}" for name, value in data.assumed)}
    if pick.runner_up is not None:
        w["runner"] = {**_figures(pick.runner_up), "extra": usd(pick.runner_up_extra_usd)}
    w["other"] = None if pick.other_engine is None else {**_figures(pick.other_engine),
                                                         "extra": usd(pick.other_engine_extra_usd)}
    step, optimum = data.purchase.next_step, data.purchase.optimum
    if step is not None and optimum is not None:
        opt = data.purchase.points.loc[optimum]
        w["step"] = {"tier": str(step["tier"]), "bought": display.of("tier_bought_GBps", step["tier_bought_GBps"]),
                     "more": usd(step["storage_usd_month"] - opt["storage_usd_month"]),
                     "saved": usd(opt["lost_gpu_usd_month"] - step["lost_gpu_usd_month"])}
    return w


def _robust_words(data: BriefData) -> dict:
    """What the brief's 'How sure this is' says: the band, the share of draws, the break-evens."""
    r = data.robust
    f = display.of
    if not r.params:
        return {"inputs": 0}
    q = r.quantiles
    trio = lambda m: ", ".join(f"P{p} {f(m, q[m][f'p{p}'])}" for p in (10, 50, 90)) if q[m]["p50"] is not None \
        else "not priced"  # noqa: E731
    option = r.base["option"]
    nearest = sorted(r.breaks, key=lambda b: abs(math.log(max(b.value, 1e-300) / max(b.param.value, 1e-300))))
    return {"inputs": len(r.params), "samples": f"{r.samples:,}", "seed": r.seed, "option": option,
            "share": f"{r.wins.get(option, 0.0):.0%}",
            "others": [{"option": name, "share": f"{s:.0%}"} for name, s in r.wins.items() if name != option],
            "month": trio("total_usd_month"), "run": trio("total_usd"), "overhead": trio("overhead_pct"),
            "breaks": [{"input": b.param.label, "above": b.direction == "above", "value": f(b.param.input, b.value),
                        "to": b.to} for b in nearest],
            "widened": [{"input": p.label, "factor": f"{p.first.widened:.3g}",
                         "range": f"{p.end_text('low')} to {p.end_text('high')}"}
                        for p in r.params if p.first.widened > 1]}


def _provenance(data: BriefData, measured) -> tuple[list[dict], dict, list[dict]]:
    """The appendix: every input with its basis and source, which bandwidths were measured."""
    rec = data.pick.row
    inputs = data.explanation["inputs"]
    sources, first_with = [], {}
    for i in inputs:
        if i["basis"] in ("scenario", "default", "definition"):  # the option itself, omitted keys, its strategy's traits
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
    if rec["lands_on_nvme"] or rec["tier_kind"] == "local_nvme":
        hops["local NVMe"] = bases.get("nvme_write_GBps", "n/a")
    note = {"hops": [{"hop": h, "basis": b} for h, b in hops.items()],
            "mine": ", ".join(h for h, b in hops.items() if b.startswith("measured on"))}
    bw = lambda v: units.fmt(v, "bandwidth")  # noqa: E731
    rows = [{"hop": f"{m.section}.{m.name}.{m.field}", "spec": bw(m.spec) if m.spec else "n/a",
             "median": bw(m.median), "minimum": bw(m.minimum), "hosts": len(set(m.hosts)),
             "ratio": f"{m.ratio:.0%}" if m.ratio else "n/a", "flag": m.flag or "ok"} for m in measured]
    return sources, note, rows


def context(data: BriefData, report: Report, meta: dict[str, str], paper: str) -> dict:
    """Everything the template shows, formatted from the brief's data."""
    env = environment()
    rec, spec = data.pick.row, data.spec
    f = display.of
    sources, bandwidths, measured_rows = _provenance(data, report.inputs.measured.values())
    skus = _sku_rows(data)
    built = meta["build_time"]
    return {
        "title": spec.title or f"Checkpoint storage for {spec.model}", "model": spec.model,
        "version": meta["ckptreport_version"], "built": built, "built_date": built[:10],
        "input_hash": meta["input_hash"][:16], "css": Markup(_css(paper)),
        "paper_class": "letter" if paper == "Letter" else "a4", "w": _words(data), "rec": {
            "sku": str(rec["sku"]), "tier": str(rec["tier"]), "strategy": str(rec["strategy"]),
            "meets": data.pick.meets},
        "params": f("params", rec["params"]), "active": f("active_params", rec["active_params"]),
        "tokens": f("tokens", rec["tokens"]), "recipe": str(rec["recipe"]),
        "bytes_per_param": f("bytes_per_param", rec["bytes_per_param"]), "ckpt": f("ckpt_bytes", rec["ckpt_bytes"]),
        "per_gpu": f("bytes_per_gpu", rec["bytes_per_gpu"]), "per_node": f("bytes_per_node", rec["bytes_per_node"]),
        "gpus": f"{spec.gpus:,}", "mfu": f("mfu_pct", rec["mfu_pct"]),
        "idle": f"{int(rec['idle_gpus']):,}" if rec["idle_gpus"] else "", "replicas": f"{int(rec['dp_ranks']):,}",
        "training": f"{int(rec['training_gpus']):,}",
        "compute_days": display.value(rec["compute_s"] / units.COLUMN_UNITS["days"].scale, "days"),
        "mtbf": f("cluster_mtbf_s", rec["cluster_mtbf_s"]),
        "interval": f("interval_s", rec["interval_s"]), "target": f("target_overhead_pct", rec["target_overhead_pct"]),
        "size_svg": svg.draw(charts.size(rec)), "waste_svg": svg.draw(charts.waste(data)),
        "chain_svg": chain_svg(env, rec), "purchase_what": data.purchase.what,
        "purchase_svg": svg.draw(charts.purchase(data.purchase.points, data.purchase.optimum, str(rec["strategy"]),
                                                 data.purchase.what)),
        "tornado_svg": svg.draw(charts.brief_tornado(data)), "robust": _robust_words(data),
        "host_recoverable": display.value(data.pick.row["host_recoverable_pct"], "pct"),
        "tiers": _tier_rows(data), "skus": skus if len(skus) > 1 else [], "strategies": _strategy_rows(data),
        "compared": COMPARED,
        "sources": sources, "bandwidths": bandwidths,
        "measured": measured_rows, "calibration": report.calibration.rows,
        "held_out": _held_out(report.calibration.summary),
    }


def _held_out(s: dict) -> dict:
    """The calibration summary's counts, and the held-out errors of times, async stalls and restores."""
    return {**{k: s[k] for k in ("passed", "scored", "fit_cases", "lacks")},
            "errors": [{"what": what, "median": f"{st['median_abs_error']:.1%}", "worst": f"{st['worst_abs_error']:.1%}"}
                       for what, st in s["held_out"].items() if st["cases"] and what != "sizes"]}


def _css(paper: str) -> str:
    css = (templates_dir() / "brief.css").read_text()
    return css.replace("size: A4;", "size: letter;", 1) if paper == "Letter" else css


def render_html(ctx: dict) -> str:
    return environment().get_template("brief.html.j2").render(**{k: v for k, v in ctx.items()
                                                                  if not k.startswith("_")})


class Briefs:
    """Briefs being written: their HTML was rendered here; the PDFs are laid out by ``pdf.Pool``."""

    def __init__(self, pool: pdf.Pool, jobs: list, progress):
        self.pool, self.jobs, self.progress = pool, jobs, progress
        self.refused: dict[str, list[str]] = {}

    def wait(self) -> list[Path]:
        """Wait for every PDF; returns their paths. A missing WeasyPrint or Pango is a clean error."""
        from ..base.progress import task

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
    from ..base.errors import InputError

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
_CHART = re.compile(r'<svg xmlns="http://www.w3.org/2000/svg" [^>]*class="chart".*?</svg>', re.S)


def normalized_html(html: str) -> str:
    """HTML with the charts' bodies and the stylesheet elided: golden files pin our markup and words;
    the charts' points are pinned by their own tests (tests/render/test_svg.py), and
    render/templates/brief.css is not copied into every file."""
    html = re.sub(r"<style>.*?</style>", "<style>/* templates/brief.css */</style>", html, flags=re.S)
    return _CHART.sub("<svg><!-- chart: charts.py, drawn by svg.py --></svg>", html)


def golden_html(report: Report) -> dict[str, str]:
    return {f"{data.spec.name}.html": normalized_html(render_html(context(data, report, GOLDEN_META, "A4")))
            for data in report.briefs}
