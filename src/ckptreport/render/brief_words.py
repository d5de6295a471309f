"""What a brief's template quotes, formatted from its data: the rows of its tables (tiers, SKUs,
strategies), the figures its prose quotes, what its 'How sure this is' says, and its appendix of
sources. Figures only: the sentences are the template's (``brief.html.j2``)."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import pandas as pd

from ..answer.types import NEEDS_PRICE, RECOMMENDED
from ..model import display
from ..read import units
from ..read.strategies import BACKGROUND

if TYPE_CHECKING:
    from ..answer.types import BriefData


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


def tier_rows(data: BriefData) -> list[dict]:
    out = []
    for line in data.tiers:
        sync, asyn = line.sync, line.asyn
        any_row = sync if sync is not None else asyn
        out.append(
            {
                "tier": line.tier,
                "write": display.of("write_s", any_row["write_s"]),
                "sync": _overhead(sync),
                "async": _overhead(asyn),  # the template's columns: strategies.COMPARED
                "total": _total(asyn if asyn is not None else sync),
                "sync_ok": bool(sync is not None and sync["meets_target"]),
                "async_ok": bool(asyn is not None and asyn["meets_target"]),
                "required": display.of("required_write_GBps", sync["required_write_GBps"])
                if sync is not None
                else "n/a",
                "restore": display.of(
                    "restore_s", (asyn if asyn is not None else sync)["restore_s"]
                ),
                "storage": _storage(any_row),
                "recommended": line.recommended,
            }
        )
    return out


def sku_rows(data: BriefData) -> list[dict]:
    pct = lambda v: display.value(v, "pct")  # noqa: E731
    return [
        {
            "sku": sku,
            "option": f"{p.row['tier']}, {p.row['strategy']}, {p.row['engine']}"
            + ("" if p.meets else " (misses target)"),
            "overhead": pct(p.row["overhead_pct"]),
            "waste": pct(p.row["waste_pct"]),
            "run": display.of("run_usd", p.row["run_usd"]),
            "storage": _storage(p.row),
            "recommended": sku == data.pick.row["sku"],
        }
        for sku, p in data.skus
    ]


def strategy_rows(data: BriefData) -> list[dict]:
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
            needs.append(
                f"{display.of('host_memory_needed_bytes', r['host_memory_needed_bytes'])} host memory a node "
                f"(of {display.of('host_memory_bytes', r['host_memory_bytes'])})"
            )
        if r["copies_to_peers"]:
            needs.append(f"{display.of('peer_s', r['peer_s'])} a checkpoint to copy to its peer(s)")
        if r["min_replicas"] > 1:
            needs.append(
                f"{int(r['dp_ranks']):,} data-parallel replicas (at least {int(r['min_replicas'])})"
            )
        more = (
            r["storage_usd_month"] - base.row["storage_usd_month"]
        )  # what its storage costs beyond async's
        out.append(
            {
                "strategy": strategy,
                "option": f"{r['tier']}, {r['engine']}" + ("" if p.meets else " (misses target)"),
                "overhead": display.value(r["overhead_pct"], "pct"),
                "bought": display.of("tier_bought_GBps", r["tier_bought_GBps"]),
                "storage": _storage(r),
                "total": _total(r),
                "needs": "; ".join(needs) or "nothing beyond the tier",
                "versus": ""
                if p is base or pd.isna(more)
                else ("+" if more > 0 else "\u2212") + display.value(abs(more), "usd"),
                "recommended": p.index == data.pick.index,
            }
        )
    return out


# The figures of an option the brief's prose quotes (templates/brief.html.j2), by how each reads
SHOWN = (
    "ckpt_bytes",
    "interval_s",
    "target_overhead_pct",
    "tier_bought_GBps",
    "provisioned_bytes",
    "usd_per_gpu_hour",
    "stall_s",
    "required_write_GBps",
    "required_node_write_GBps",
    "tier_share_GBps",
    "write_s",
    "coordination_s",
    "restore_host_s",
    "read_GBps",
    "restore_tier_s",
    "restore_s",
    "capacity_needed_bytes",
    "host_memory_needed_bytes",
    "host_memory_bytes",
)  # as its column reads


DOLLARS = (
    "storage_usd_month",
    "lost_gpu_usd_month",
    "total_usd",
    "storage_run_usd",
    "capacity_usd_month",
    "bandwidth_usd_month",
    "requests_usd_month",
    "waste_usd",
)


SHARES = ("overhead_pct", "rework_pct", "host_restore_pct")


def _figures(row: pd.Series) -> dict:
    """One option's figures as the prose quotes them: '6.49 TB', '$4,740', '3.62%'."""
    out = {name: display.of(name, row[name]) for name in SHOWN}
    out |= {name: display.value(row[name], "usd") for name in DOLLARS}
    out |= {name: display.value(row[name], "pct") for name in SHARES}
    out |= {k: str(row[k]) for k in ("strategy", "tier", "sku", "bottleneck", "engine")}
    out |= {"stages_snapshot": bool(row["stages_snapshot"])}
    out |= {
        "extrapolated": bool(row["extrapolated"]),
        "beyond": display.of("beyond_largest_case_x", row["beyond_largest_case_x"]),
        "largest_case": display.of("largest_case_ranks", row["largest_case_ranks"]),
    }
    out |= {
        "gpus": f"{int(row['gpus']):,}",
        "retention": str(int(row["retention"])),
        "sized_for_bandwidth": row["sized_for"] == "bandwidth",
        "prefixes_needed": row["prefixes_needed"] > 0,
    }
    if out["prefixes_needed"]:
        out |= {
            "prefixes": str(int(row["prefixes_needed"])),
            "puts_per_ckpt": f"{int(row['puts_per_ckpt']):,}",
        }
    return out


def words(data: BriefData) -> dict:
    """What the headline, the recommendation (an economic argument, in paragraphs) and the
    requirements say, figure by figure; the sentences are the template's."""
    pick, usd = data.pick, lambda v: display.value(v, "usd")
    w = {
        "model": data.spec.model,
        "gpus": f"{data.spec.gpus:,}",
        "status": pick.status,
        "recommended": pick.status == RECOMMENDED,
        "needs_price": pick.status == NEEDS_PRICE,
        "rec": _figures(pick.row),
        "unpriced": ", ".join(pick.unpriced),
        "runner": None,
        "step": None,
        "assumed": "; ".join(f"{name} {value}" for name, value in data.assumed),
    }
    if pick.runner_up is not None:
        w["runner"] = {**_figures(pick.runner_up), "extra": usd(pick.runner_up_extra_usd)}
    w["other"] = (
        None
        if pick.other_engine is None
        else {**_figures(pick.other_engine), "extra": usd(pick.other_engine_extra_usd)}
    )
    step, optimum = data.purchase.next_step, data.purchase.optimum
    if step is not None and optimum is not None:
        opt = data.purchase.points.loc[optimum]
        w["step"] = {
            "tier": str(step["tier"]),
            "bought": display.of("tier_bought_GBps", step["tier_bought_GBps"]),
            "more": usd(step["storage_usd_month"] - opt["storage_usd_month"]),
            "saved": usd(opt["lost_gpu_usd_month"] - step["lost_gpu_usd_month"]),
        }
    return w


def robust_words(data: BriefData) -> dict:
    """What the brief's 'How sure this is' says: the band, the share of draws, the break-evens."""
    r = data.robust
    f = display.of
    if not r.params:
        return {"inputs": 0}
    q = r.quantiles

    def trio(m: str) -> str:
        if q[m]["p50"] is None:
            return "not priced"
        return ", ".join(f"P{p} {f(m, q[m][f'p{p}'])}" for p in (10, 50, 90))

    option = r.base["option"]
    nearest = sorted(
        r.breaks, key=lambda b: abs(math.log(max(b.value, 1e-300) / max(b.param.value, 1e-300)))
    )
    return {
        "inputs": len(r.params),
        "samples": f"{r.samples:,}",
        "seed": r.seed,
        "option": option,
        "share": f"{r.wins.get(option, 0.0):.0%}",
        "others": [
            {"option": name, "share": f"{s:.0%}"} for name, s in r.wins.items() if name != option
        ],
        "month": trio("total_usd_month"),
        "run": trio("total_usd"),
        "overhead": trio("overhead_pct"),
        "breaks": [
            {
                "input": b.param.label,
                "above": b.direction == "above",
                "value": f(b.param.input, b.value),
                "to": b.to,
            }
            for b in nearest
        ],
        "widened": [
            {
                "input": p.label,
                "factor": f"{p.first.widened:.3g}",
                "range": f"{p.end_text('low')} to {p.end_text('high')}",
            }
            for p in r.params
            if p.first.widened > 1
        ],
    }


def sources(data: BriefData, measured) -> tuple[list[dict], dict, list[dict]]:
    """The appendix: every input with its basis and source, which bandwidths were measured."""
    rec = data.pick.row
    inputs = data.explanation["inputs"]
    sources, first_with = [], {}
    for i in inputs:
        if i["basis"] in (
            "scenario",
            "default",
            "definition",
        ):  # the option itself, omitted keys, its strategy's traits
            continue
        dated = ", ".join(filter(None, [i.get("date"), i.get("region")]))
        text = i["source"] or ""
        if text and text in first_with:  # a long citation once: later rows point back to it
            text = f"as for {first_with[text]}"
        elif text:
            first_with[text] = i["name"]
        sources.append(
            {
                "name": i["name"],
                "display": i["display"],
                "basis": i["basis"] + (f" ({dated})" if dated else ""),
                "source": " ".join(
                    filter(None, [text, f"({i['file']}:{i['line']})" if i["line"] else ""])
                ),
            }
        )
    omitted = [
        f"{i['name']} ({i['source'].removeprefix('omitted: ')})"
        for i in inputs
        if i["basis"] == "default"
    ]
    if omitted:
        sources.append(
            {
                "name": "omitted keys",
                "display": "",
                "basis": "default",
                "source": "at their declared defaults: " + "; ".join(omitted),
            }
        )
    bases = {i["name"]: i["source"] if i["basis"] == "default" else i["basis"] for i in inputs}
    hops = {
        "GPU->host": bases.get("d2h_node_GBps", "n/a"),
        "storage NIC": bases.get("storage_nic_GBps", "n/a"),
        "tier": bases.get("tier_write_GBps", "n/a"),
        "tier per node": bases.get("tier_node_write_GBps", "n/a"),
    }
    if rec["lands_on_nvme"] or rec["tier_kind"] == "local_nvme":
        hops["local NVMe"] = bases.get("nvme_write_GBps", "n/a")
    note = {
        "hops": [{"hop": h, "basis": b} for h, b in hops.items()],
        "mine": ", ".join(h for h, b in hops.items() if b.startswith("measured on")),
    }
    bw = lambda v: units.fmt(v, "bandwidth")  # noqa: E731
    rows = [
        {
            "hop": f"{m.section}.{m.name}.{m.field}",
            "spec": bw(m.spec) if m.spec else "n/a",
            "median": bw(m.median),
            "minimum": bw(m.minimum),
            "hosts": len(set(m.hosts)),
            "ratio": f"{m.ratio:.0%}" if m.ratio else "n/a",
            "flag": m.flag or "ok",
        }
        for m in measured
    ]
    return sources, note, rows


def held_out(s: dict) -> dict:
    """The calibration summary's counts, and the held-out errors of times, async stalls and restores."""
    return {
        **{k: s[k] for k in ("passed", "scored", "fit_cases", "lacks", "within", "predicted")},
        "every_median": f"{s['every_time']['median_abs_error']:.1%}",
        "every_worst": f"{s['every_time']['worst_abs_error']:.1%}",
        "errors": [
            {
                "what": what,
                "median": f"{st['median_abs_error']:.1%}",
                "worst": f"{st['worst_abs_error']:.1%}",
            }
            for what, st in s["held_out"].items()
            if st["cases"] and what != "sizes"
        ],
        "by_engine": [
            f"{e} {st['cases']} (median {st['median_abs_error']:.1%})"
            if st["cases"]
            else f"{e} none"
            for e, st in s["held_out_by_engine"].items()
        ],
    }


def ettr_ends(data) -> list[dict]:
    """Each strategy's ETTR at the ends of the brief's ETTR curve, for the chart's caption
    (templates/ettr_caption.j2)."""
    return [
        {
            "strategy": strategy,
            "engine": engine,
            "first": display.value(ettr[0], "pct"),
            "last": display.value(ettr[-1], "pct"),
            "low": f"{gpus[0]:,.0f}",
            "high": f"{gpus[-1]:,.0f}",
        }
        for strategy, (engine, gpus, ettr) in data.ettr_curves.items()
    ]
