"""``out/report.html``: the planning review in a browser, one self-contained file.

What it shows was computed in the compute stage (``Report``, its ``page.Page``): the headline and
the summary (the cells the terminal prints, by the same functions), per model and SKU a section (the
option recommended and its runner-up, the checkpoint chain, the best engine of each tier and
strategy, the purchase curve, the tornado, how sure the answer is), the cross product as a table that
sorts and filters, and every input with its basis, file:line and source. This module formats it into
``templates/report.html.j2`` (autoescaped; an undefined variable is an error).

Self-contained: the stylesheet and the script are inlined, the charts are inline SVG, the table's
rows are JSON in a data block (``<`` written as ``\\u003c``, so no input can close it). A
Content-Security-Policy forbids every fetch, and allows only this page's own script and style by
their SHA-256. The script writes input strings with ``textContent`` only: a model named
``<img src=x onerror=...>`` is shown, never run.
"""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path
from typing import TYPE_CHECKING

import jinja2
import numpy as np
import pandas as pd
from markupsafe import Markup

from ..answer.types import option_label
from ..model import display
from ..read import units
from ..read.inputs import ENTITY_COLUMN, INPUTS, PLAN, STRATEGY_ENTITY, of
from ..read.provenance import provenance
from ..read.strategies import BACKGROUND, BASELINE
from . import charts, page_charts, svg, terminal, whatif
from .chain import chain_svg
from .cluster import page_rows
from .columnar import table_data
from .env import environment, templates_dir

if TYPE_CHECKING:
    from ..answer.types import Report


def _sha(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


def _json(obj) -> Markup:
    """JSON for a ``<script type="application/json">`` block: nothing in it can end the block or
    open a comment (``<``, ``>`` and ``&`` as escapes); NaN is null and infinity 1e999 (JSON.parse
    reads Infinity)."""
    text = json.dumps(obj, separators=(",", ":"), allow_nan=False, ensure_ascii=False)
    text = text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
    return Markup(text.replace('"__inf__"', "1e999").replace('"__-inf__"', "-1e999"))


# ---- the summary and the sections ----------------------------------------------------------------


def _option(r: pd.Series) -> str:
    return option_label(r["strategy"], r["tier"], r["engine"])


def _summary(report: Report) -> tuple[list[str], list[dict]]:
    strategies = list(report.inputs.plan.strategies)
    head = [
        "model",
        "sku",
        "checkpoint",
        *strategies,
        "recommended",
        "bought",
        "storage/month",
        "lost GPU/month",
        "runner-up (extra over the run)",
    ]
    rows = []
    for k, r in enumerate(report.summary.to_dict("records")):
        cells = [display.value(r["ckpt_bytes"], "bytes")] + [
            terminal.strategy_cell(r, s)[0] for s in strategies
        ]
        rows.append(
            {
                "line": k,
                "model": r["model"],
                "sku": r["sku"],
                "cells": cells + terminal.option_cells(r),
                "status": r["option_status"],
                "headline": report.headline == r["option_index"]
                and r["model"] == report.point.model
                and r["sku"] == report.point.sku,
            }
        )
    return head, rows


TIER_CELL = [
    "overhead_pct",
    "meets_target",
    "engine",
    "stall_s",
    "tier_durable",
    "total_usd_month",
    "write_s",
    "tier_bought_GBps",
]


def tier_cells(frame: pd.DataFrame, sections: list) -> dict[int, dict]:
    """The figures of every tier table's cells, read from the frame at once (not a row of every
    column per cell): frame row -> TIER_CELL values."""
    labels = sorted({label for s in sections for _, by in s.tiers for label in by.values()})
    rows = frame.loc[labels, TIER_CELL]
    return dict(zip(rows.index, rows.to_dict("records")))


def _tiers(at: dict[int, dict], section, strategies: list[str]) -> list[dict]:
    out = []
    for tier, by in section.tiers:
        cells = []
        for s in strategies:
            if s not in by:
                cells.append(None)
                continue
            r = at[by[s]]
            cells.append(
                {
                    "overhead": display.value(r["overhead_pct"], "pct"),
                    "meets": bool(r["meets_target"]),
                    "engine": str(r["engine"]),
                    "stall": display.of("stall_s", r["stall_s"]),
                    "total": "not durable"
                    if not r["tier_durable"]
                    else (
                        "needs a price"
                        if pd.isna(r["total_usd_month"])
                        else display.of("total_usd_month", r["total_usd_month"]) + " a month"
                    ),
                    "recommended": by[s] == section.option,
                }
            )
        any_row = at[next(iter(by.values()))]
        out.append(
            {
                "tier": tier,
                "write": display.of("write_s", any_row["write_s"]),
                "bought": display.of("tier_bought_GBps", any_row["tier_bought_GBps"]),
                "cells": cells,
            }
        )
    return out


def _sure(section, sampled_line: dict | None, sampled=None) -> dict:
    """How sure the answer is: which inputs' ranges change it (the tornado); where the model's brief
    or this build's --samples drew every uncertain input at once, the band and the share of draws."""
    flips = [
        {
            "input": w.param.label,
            "low": w.param.end_text("low"),
            "high": w.param.end_text("high"),
            "to": (w.low if w.low["option"] != section.base["option"] else w.high)["option"],
        }
        for w in section.swings
        if w.flips
    ]
    out = {"inputs": len(section.swings), "flips": flips, "band": None, "breaks": [], "draws": None}
    b = section.brief
    if b is not None and b.robust is not None and b.robust.params:
        r = b.robust
        out["band"] = _band(
            r.quantiles["total_usd_month"],
            f"{r.samples:,} draws (seed {r.seed}, the brief's)",
            r.wins.get(r.base["option"], 0.0),
        )
        out["breaks"] = [
            {
                "input": x.param.label,
                "side": x.direction,
                "value": display.of(x.param.input, x.value),
                "to": x.to,
            }
            for x in r.breaks
        ]
    if sampled_line is not None:
        wins = sampled_line["wins"]
        out["band"] = (
            _band(
                sampled_line["quantiles"]["total_usd_month"],
                f"this build's {sampled.samples:,} draws (--samples, seed {sampled.seed})",
                wins.get(sampled_line["option"], 0.0),
            )
            or out["band"]
        )
        out["draws"] = [{"option": o, "share": f"{s:.0%}"} for o, s in list(wins.items())[:4]]
    return out


def _band(q: dict, what: str, share: float) -> dict | None:
    if q["p50"] is None:
        return None
    return {
        "what": what,
        "p10": display.value(q["p10"], "usd"),
        "p50": display.value(q["p50"], "usd"),
        "p90": display.value(q["p90"], "usd"),
        "share": f"{share:.0%}",
    }


SCALE_KEYS = ["model", "sku", "tier", "recipe", "interval_s"]  # what a stall chart holds fixed


def _scale_index(frame: pd.DataFrame, options: list[int]) -> dict[tuple, np.ndarray]:
    """For each section's option, the positions of the frame's rows that share its SCALE_KEYS (one
    pass over the frame for every section's stall chart)."""
    keys = frame.loc[options, SCALE_KEYS].astype(str).drop_duplicates()
    wanted = set(map(tuple, keys.to_numpy()))
    table = frame[SCALE_KEYS].astype(str)
    groups = table.groupby(SCALE_KEYS, sort=False).indices
    return {k: v for k, v in groups.items() if k in wanted}


def _engines_at_scale(frame: pd.DataFrame, row: pd.Series, index: dict) -> pd.DataFrame:
    """The rows of ``row``'s model, SKU, recipe, tier and interval at every GPU count, each engine
    under ``row``'s strategy where it runs it, else async, else sync, else the first it runs (the page's
    stall chart)."""
    at = index.get(tuple(str(row[k]) for k in SCALE_KEYS), np.array([], dtype=np.int64))
    here = frame.iloc[at][["gpus", "engine", "strategy", "stall_s", "extrapolated"]]
    engines, strategies = (
        here["engine"].astype(str).to_numpy(),
        here["strategy"].astype(str).to_numpy(),
    )
    keep = np.zeros(len(here), dtype=bool)
    for engine in dict.fromkeys(engines):
        mine = engines == engine
        runs = [
            s for s in (str(row["strategy"]), BACKGROUND, BASELINE) if (strategies[mine] == s).any()
        ]
        keep |= mine & (strategies == (runs[0] if runs else strategies[mine][0]))
    return here[keep]


def _section(
    report: Report,
    section,
    by_line: dict,
    env: jinja2.Environment,
    cells: dict[int, dict],
    scale: dict,
    sampled=None,
) -> dict:
    frame = report.frame
    row = frame.loc[section.option]
    line = report.summary.iloc[section.line]
    strategies = list(report.inputs.plan.strategies)
    runner = None
    if isinstance(line["runner_up_tier"], str):
        runner = {
            "option": option_label(
                line["runner_up_strategy"], line["runner_up_tier"], line["runner_up_engine"]
            ),
            "extra": display.value(line["runner_up_extra_usd"], "usd"),
        }
    p = section.purchase
    stall = page_charts.stall_by_gpus(_engines_at_scale(frame, row, scale), row)
    cadence = section.cadence and page_charts.cadence(row, *section.cadence)
    return {
        "id": f"line-{section.line}",
        "stall_svg": stall and svg.draw(stall),
        "cadence_svg": cadence and svg.draw(cadence),
        "line": section.line,
        "model": section.model,
        "sku": section.sku,
        "status": line["option_status"],
        "option": _option(row),
        "meets": bool(row["meets_target"]),
        "runner": runner,
        "assumed": list(line["assumed_prices"]),
        "needs_price": list(line["needs_price"]),
        "figures": {
            k: display.of(k, row[k])
            for k in (
                "ckpt_bytes",
                "bytes_per_gpu",
                "bytes_per_node",
                "stall_s",
                "write_s",
                "overhead_pct",
                "waste_pct",
                "optimal_interval_s",
                "restore_s",
                "required_write_GBps",
                "tier_bought_GBps",
                "storage_usd_month",
                "lost_gpu_usd_month",
                "total_usd_month",
                "total_usd",
                "capacity_needed_bytes",
                "interval_s",
            )
        },
        "bottleneck": str(row["bottleneck"]),
        "gpus": f"{int(row['gpus']):,}",
        "recipe": str(row["recipe"]),
        "idle": int(row["idle_gpus"]),
        "extrapolated": bool(row["extrapolated"]),
        "beyond": display.of("beyond_largest_case_x", row["beyond_largest_case_x"]),
        "chain": chain_svg(env, row),
        "tiers": _tiers(cells, section, strategies),
        "strategies": strategies,
        "purchase": svg.draw(charts.purchase(p.points, p.optimum, str(row["strategy"]), p.what)),
        "purchase_what": p.what,
        "tornado": svg.draw(charts.tornado(section.base, section.swings)),
        "sure": _sure(section, by_line.get((section.model, section.sku)), sampled),
        "brief": None if section.brief is None else f"briefs/{section.brief.spec.name}.pdf",
        "sources": _row_sources(report, row),
    }


HOP_INPUTS = (
    ("GPU -> host", "d2h_node_GBps"),
    ("storage NIC", "storage_nic_GBps"),
    ("local NVMe", "nvme_write_GBps"),
    ("tier", "tier_write_GBps"),
    ("tier per node", "tier_node_write_GBps"),
    ("price of a GPU-hour", "usd_per_gpu_hour"),
    ("tier price a TB-month", "usd_per_tb_month"),
)


def _row_sources(report: Report, row: pd.Series) -> list[dict]:
    """Where the figures of the chain and the price came from, for this option's entities."""
    names = {section: str(row[column]) for section, column in ENTITY_COLUMN.items()}
    out = []
    for hop, name in HOP_INPUTS:
        prov = provenance(report.inputs, INPUTS[name], names)
        if prov is None:
            continue
        out.append(
            {
                "hop": hop,
                "value": display.of(name, row[name]),
                "basis": prov.basis,
                "where": f"{prov.file}:{prov.line}" if prov.line else prov.file,
                "source": prov.source or "",
            }
        )
    return out


# ---- the inputs ----------------------------------------------------------------------------------


def _inputs(report: Report) -> list[dict]:
    """Every entity of the build, each input with its value, basis, file:line and source."""
    inputs = report.inputs
    blocks = [(PLAN, PLAN)]
    for section, column in ENTITY_COLUMN.items():
        if (
            column in report.frame and section != STRATEGY_ENTITY
        ):  # a strategy's traits are definitions, not inputs
            blocks += [(section, str(n)) for n in report.frame[column].cat.categories]
    out = []
    for section, name in blocks:
        entity = inputs.entity(section, name)
        rows = []
        for inp in of(section):
            prov = provenance(inputs, inp, {section: name})
            m = inputs.measured.get((section, name, inp.key))
            rows.append(
                {
                    "input": inp.name,
                    "value": display.of(inp.name, inp.value(entity, name)),
                    "basis": prov.basis if prov else "input",
                    "where": (f"{prov.file}:{prov.line}" if prov.line else prov.file)
                    if prov
                    else "",
                    "source": (prov.source or "") if prov else "",
                    "dated": ", ".join(filter(None, [prov.date, prov.region])) if prov else "",
                    "measured": None
                    if m is None
                    else f"spec {display.of(inp.name, m.spec / inp.scale)}"
                    if m.spec
                    else "measured",
                }
            )
        out.append(
            {"id": f"in-{section}-{len(out)}", "section": section, "name": name, "rows": rows}
        )
    return out


def _measured(report: Report) -> list[dict]:
    return [
        {
            "hop": f"{m.section}.{m.name}.{m.field}",
            "median": units.fmt(m.median, m.unit),
            "spec": units.fmt(m.spec, m.unit) if m.spec else "n/a",
            "flag": m.flag or "ok",
            "basis": m.basis,
        }
        for m in report.inputs.measured.values()
    ]


# ---- the page ------------------------------------------------------------------------------------


def context(
    report: Report, meta: dict[str, str], links: list[tuple[str, str]], sampled=None
) -> dict:
    env = environment()
    page = report.page
    by_line = {}
    if sampled is not None:
        by_line = {(str(x["model"]), str(x["sku"])): x for x in sampled.lines}
    head, summary = _summary(report)
    plan = report.inputs.plan
    cells = tier_cells(report.frame, page.sections)
    scale = _scale_index(report.frame, [s.option for s in page.sections])
    sections = [_section(report, s, by_line, env, cells, scale, sampled) for s in page.sections]
    headline = next(
        (s for s in sections if s["model"] == report.point.model and s["sku"] == report.point.sku),
        None,
    )
    script = whatif.script() + (templates_dir() / "report.js").read_text()
    css = (templates_dir() / "report.css").read_text()
    data = table_data(page.table)
    return {
        "meta": meta,
        "built_date": meta["build_time"][:10],
        "input_hash": meta["input_hash"][:16],
        "gpus": f"{report.point.gpus:,.0f}",
        "interval": display.of("interval_s", report.point.interval_s),
        "target": display.value(plan.target_overhead.value * 100, "pct"),
        "head": head,
        "summary": summary,
        "sections": sections,
        "headline": headline,
        "links": links,
        "inputs": _inputs(report),
        "measured": _measured(report),
        "rows": f"{page.rows:,}",
        "shown": f"{len(page.table):,}",
        "all_shown": len(page.table) == page.rows,
        "columns": len(report.frame.columns),
        "table_columns": len(page.table.columns),
        "data": _json(data),
        "whatif": _json(whatif.data(report.frame, report.candidates)),
        "script": Markup(script),
        "css": Markup(css),
        "csp": f"default-src 'none'; script-src {_sha(script)}; style-src {_sha(css)}; img-src data:; "
        "base-uri 'none'; form-action 'none'; connect-src 'none'; font-src 'none'; object-src 'none'",
        "dropped": [{"rows": f"{d.rows:,}", "reason": d.reason} for d in report.dropped],
        "calibration": report.calibration.summary,
        "jobs": _jobs(report),
        "clusters": page_rows(report),
    }


def _jobs(report: Report) -> list[dict]:
    """The decision per job, as every output words it (``render.decision``), with its brief's ETTR
    against the GPU count (the chart the brief draws)."""
    from .brief_words import ettr_ends
    from .decision import shown

    briefs = {b.spec.name: b for b in report.briefs}
    out = []
    for d in report.decisions:
        brief = briefs.get(d.job.name)
        chart = None if brief is None else svg.draw(charts.ettr(brief))
        out.append({**shown(d), "ettr_svg": chart, "ettr_ends": brief and ettr_ends(brief)})
    return out


def render(report: Report, meta: dict[str, str], links: list[tuple[str, str]], sampled=None) -> str:
    return (
        environment().get_template("report.html.j2").render(**context(report, meta, links, sampled))
    )


def write(
    path: Path, report: Report, meta: dict[str, str], links: list[tuple[str, str]], sampled=None
) -> Path:
    """Write the page (``links``: the outputs of this build it links to, (label, relative path))."""
    path.write_text(render(report, meta, links, sampled), encoding="utf-8")
    return path
