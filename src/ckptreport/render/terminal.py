"""What the commands print: the build's summary, calibrate's cases, diff's comparison, sensitivity's
tornado and break-evens, the Monte Carlo summary and explain's arithmetic. Each formats data the
compute stage produced (a ``Report``, a diff dict, a ``Sensitivity``, a ``Sampled``, an explanation);
every table goes through ``table``. Text from the inputs is shown with ``printable`` (an escape
sequence in a name is shown, never acted on)."""

from __future__ import annotations

import math
import textwrap

from ..answer.types import NEEDS_PRICE, RECOMMENDED, option_label
from ..model import display


def table(
    header: list[str] | None,
    rows: list[list[str]],
    align: str = "",
    indent: str = "",
    minimum: tuple[int, ...] = (),
) -> list[str]:
    """Rows of cells as lines: each column as wide as its widest cell or header (and at least its
    ``minimum``), two spaces apart, left aligned (or as ``align`` says per column: '<' or '>'); the
    header and a line of dashes (none when ``header`` is None), then the rows; no line ends in
    spaces."""
    count = len(header) if header is not None else len(rows[0]) if rows else 0
    widths = [
        max(
            len(header[i]) if header is not None else 0,
            *(len(r[i]) for r in rows),
            minimum[i] if i < len(minimum) else 0,
        )
        for i in range(count)
    ]
    fmt = "  ".join(f"{{:{align[i] if i < len(align) else '<'}{w}}}" for i, w in enumerate(widths))
    lines = [] if header is None else [fmt.format(*header), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*r) for r in rows]
    return [(indent + line).rstrip() for line in lines]


def _usd(v) -> str:
    return display.value(math.nan if v is None else v, "usd")


def _pct(v) -> str:
    return display.value(math.nan if v is None else v, "pct")


def decisions(report) -> str:
    """The decision for each job at its scale: the option, its cadence, the bandwidth and purchase,
    ETTR, how likely it is to meet the target, and the sentences every output carries."""
    if not report.decisions:
        return ""
    from .decision import bought_text, cadence, facts, sentences

    first = facts(report.decisions[0])
    head = (
        f"The decision, for each job at its scale: the cheapest option (storage, strategy, engine and "
        f"cadence) meeting the {_pct(first['target_pct'])} target in at least "
        f"{_pct(first['confidence_pct'])} of {first['draws']:,} draws of every uncertain input "
        "(README: The decision)"
    )
    cols = [
        "job",
        "GPUs",
        "sku",
        "recommended",
        "cadence",
        "bought",
        "purchase",
        "ETTR",
        "meets target",
        "total over the run",
    ]
    rows, notes = [], []
    for d in report.decisions:
        f = facts(d)
        p = f["pick"]
        b = f["bought"]
        rows.append(
            [
                f["job"],
                f"{f['gpus']:,}",
                f["sku"],
                p["option"] if f["status"] == RECOMMENDED else f"- ({p['option']})",
                cadence(p).removeprefix("every "),
                bought_text(p["bought_GBps"]),
                f"{_usd(b['purchase_usd'])} (cluster)"
                if b
                else (_usd(p["purchase_usd"]) if p["purchase_usd"] else "rented"),
                _pct(p["ettr_pct"]),
                f"{_pct(p['p_meets_pct'])} of draws",
                _usd(p["total_usd"]) if not b else f"{_usd(p['gpu_lost_usd'])} (GPU time)",
            ]
        )
        notes += [f"{f['job']}:"] + [
            textwrap.fill(line, 100, initial_indent="  ", subsequent_indent="    ")
            for line in sentences(f)
        ]
    return "\n".join([head, "", *table(cols, rows, align="<><<<>>>><"), "", *notes])


def summary(report) -> str:
    """The build's summary: the decision per job, then per model and SKU (the cross product at the
    summary point, for exploration) the best tier per strategy, and the recommended option with what
    it costs a month, the runner-up and what it rests on."""
    table_ = report.summary
    jobs = "\n\n".join(x for x in (clusters(report), decisions(report)) if x)
    if table_.empty:
        return (
            jobs + "\n\n" if jobs else ""
        ) + "No scenario at the summary's cluster size and cadence."
    plan = report.inputs.plan
    target = _pct(plan.target_overhead.value * 100)
    head = (
        "Explore: every model and SKU at the plan's summary point (not a job), "
        f"the cheapest durable tier meeting the {target} target at {report.point.gpus:,.0f} GPUs, every "
        f"{display.of('interval_s', report.point.interval_s)} (overhead in brackets; '-' none meets it: closest "
        "shown)\nrecommended: of the options meeting the target, durable and priced, the lowest cost over the run "
        "(storage + GPU time lost; README: The recommendation); * rests on an assumed price"
    )
    strategies = list(plan.strategies)
    cols = [
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
    rows, assumed, unpriced, warned = [], {}, {}, False
    for r in table_.to_dict("records"):
        cells = [r["model"], r["sku"], display.value(r["ckpt_bytes"], "bytes")]
        for s in strategies:
            cell, warn = strategy_cell(r, s)
            cells.append(cell)
            warned = warned or warn
        cells += option_cells(r)
        if r["option_status"] == RECOMMENDED:
            for name in r["assumed_prices"]:
                assumed.setdefault(name, []).append(r["option_tier"])
        for tier in r["needs_price"]:
            unpriced.setdefault(tier, None)
        rows.append(cells)
    lines = ([jobs, ""] if jobs else []) + [head, "", *table(cols, rows)]
    if assumed:
        lines += [
            "",
            "* assumed prices: "
            + "; ".join(
                f"{name} ({', '.join(dict.fromkeys(tiers))})" for name, tiers in assumed.items()
            ),
        ]
    if unpriced:
        lines += [
            "",
            "needs a price (meets the target, not ranked until priced): " + ", ".join(unpriced),
        ]
    if warned:
        lines += [
            "",
            "! training would stall longer than it trains: the checkpoint takes longer than the interval",
        ]
    return "\n".join(lines)


def strategy_cell(r: dict, s: str) -> tuple[str, bool]:
    """A summary line's best tier for strategy ``s``, and whether it stalls longer than it trains."""
    if not isinstance(r[f"{s}_tier"], str):  # no row: the strategy is impossible on this SKU
        return "n/a", False
    if r[f"{s}_meets"]:
        return f"{r[f'{s}_tier']} ({_pct(r[f'{s}_overhead_pct'])})", False
    warn = "!" if r[f"{s}_overhead_pct"] > 100 else ""
    return f"- ({r[f'{s}_tier']} {_pct(r[f'{s}_overhead_pct'])}{warn})", bool(warn)


def option_cells(r: dict) -> list[str]:
    """The recommended option, bought, storage and GPU time a month, and the runner-up."""
    option = option_label(r["option_strategy"], r["option_tier"], r["option_engine"])
    if r["option_status"] != RECOMMENDED:
        return [
            f"{r['option_status']}: {r['option_tier']}"
            if r["option_status"] == NEEDS_PRICE
            else f"- ({option})",
            "",
            "",
            "",
            "",
        ]
    runner = r["runner_up_tier"]
    return [
        option + (" *" if r["assumed_prices"] else ""),
        display.of("tier_bought_GBps", r["option_bought_GBps"]),
        _usd(r["option_storage_usd_month"]),
        _usd(r["option_lost_gpu_usd_month"]),
        f"{runner} (+{_usd(r['runner_up_extra_usd'])})" if isinstance(runner, str) else "none",
    ]


CALIBRATION_COLUMNS = [
    "case",
    "engine",
    "published",
    "predicted",
    "error",
    "tolerance",
    "verdict",
    "role",
]


def _cited(i: dict) -> str:
    """An input's basis (with its date and region), place and source: 'spec, hardware.yaml:31 — ...'."""
    where = f"{i['file']}:{i['line']}" if i["line"] else (i["file"] or "this scenario")
    src = f" — {i['source']}" if i["source"] else ""
    dated = ", ".join(filter(None, [i.get("date"), i.get("region")]))
    ranged = f" [range {i['range']}]" if i.get("range") else ""
    return i["basis"] + (f" ({dated})" if dated else "") + f", {where}{ranged}{src}"


def explanation(e: dict) -> str:
    """explain's arithmetic (``explain.explain_row``): the headline, every input with its basis,
    place and source, then every step with its formula, the values substituted and the result."""
    s = e["scenario"]
    lines = [
        f"{s['model']} ({s['recipe']}) on {s['gpus']:,} GPUs of {s['sku']}, tier {s['tier']}, "
        f"{s['strategy']} with {s['engine']}, every {display.value(s['interval_s'], 's')}",
        "",
    ]
    lines += textwrap.wrap(e["headline"], 100, initial_indent="  ", subsequent_indent="  ") + [""]
    lines.append("Inputs (basis, file:line in the models directory — source)")
    lines += table(
        None,
        [[i["name"], i["display"], _cited(i)] for i in e["inputs"]],
        align="<>",
        indent="  ",
        minimum=(0, 14),
    )
    section = None
    for st in e["steps"]:
        if st["section"] != section:
            section = st["section"]
            lines += ["", section]
        lines.append(f"  {st['name']}: {st['doc']}")
        lines.append(f"    = {st['formula']}")
        if st["substituted"] != st["display"]:
            lines.append(f"    = {st['substituted']}")
        lines.append(f"    = {st['display']}")
    return "\n".join(lines)


def clusters(report) -> str:
    """The terminal's words for every cluster's purchase."""
    from .cluster import cells, facts, sentences

    bought = getattr(report, "clusters", [])
    if not bought:
        return ""
    fs = [facts(cp) for cp in bought]
    head = (
        "The purchase, for each cluster: the storage product and number of units that cost least over "
        "the storage's life (purchase, support, power, space, and the GPU time lost by every job it "
        f"serves), every job meeting its target in at least {_pct(fs[0]['confidence_pct'])} of the "
        "draws (README: The purchase for a cluster)"
    )
    cols = [
        "cluster",
        "GPUs",
        "buy",
        "write",
        "purchase",
        "storage over life",
        "GPU time lost",
        "total",
        "runner-up (its purchase)",
    ]
    rows, notes = [], []
    for f in fs:
        row = cells(f)
        rows.append(
            [f["cluster"], f"{f['gpus']:,}"]
            + [row[k] for k in ("buy", "write", "purchase", "life", "lost", "total", "runner")]
        )
        notes += [f"{f['cluster']} ({', '.join(f['jobs'])}):"] + [
            textwrap.fill(line, 100, initial_indent="  ", subsequent_indent="    ")
            for line in sentences(f)
        ]
    return "\n".join([head, "", *table(cols, rows, align="<><>>>>><"), "", *notes])
