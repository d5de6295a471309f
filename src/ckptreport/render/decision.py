"""What every output says of a decision (taken in the compute stage: ``answer.decide``): its figures
(named with their units) and its sentences, one source for the terminal, the brief, the review page,
the workbook's Jobs sheet and the manifest, so the same option shows the same figures everywhere."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from ..answer.types import Decision, option_label
from ..model import display

NOT_MOVED = ("restart_share_pct", "replica_share_pct")  # what no storage bought shortens


def moved(p: dict) -> tuple[float, float, float, float]:
    """Of an option's lost wall clock: what the storage bought moves (stall, interference, rework,
    restore) and what it does not (restart, a dropped replica's rejoin), as shares (%) and dollars of
    its GPU time lost over the run."""
    shares = p["shares_pct"]
    kept = sum(shares[k] or 0.0 for k in NOT_MOVED)
    lost = sum(v or 0.0 for v in shares.values())
    gone = lost - kept
    usd = p.get("gpu_lost_usd") or 0.0
    return gone, kept, usd * gone / lost if lost else 0.0, usd * kept / lost if lost else 0.0


SHARES = {
    "stop_share_pct": "checkpoint stall",
    "interference_share_pct": "interference",
    "rework_share_pct": "rework",
    "restart_share_pct": "restart",
    "restore_share_pct": "restore",
    "replica_share_pct": "dropped replicas",
}  # what takes the wall clock that does not train, in the order explain adds them (a zero replica
# share, every strategy but replica_recovery's, is not shown)


def _f(v) -> float | None:
    """A finite float, else None (a figure that is unbounded or not priced)."""
    try:
        v = float(v)
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _label(row: pd.Series) -> str:
    return option_label(row["strategy"], row["tier"], row["engine"])


def option_facts(row: pd.Series) -> dict:
    """One option's figures as the decision shows them."""
    return {
        "option": _label(row),
        "strategy": str(row["strategy"]),
        "tier": str(row["tier"]),
        "engine": str(row["engine"]),
        "interval_s": _f(row["interval_s"]),
        "durable_interval_s": _f(row["interval_s"] * row["durable_every_saves"]),
        "bought_GBps": _f(row["tier_bought_GBps"]),
        "required_GBps": _f(row["required_write_GBps"]),
        "overhead_pct": _f(row["overhead_pct"]),
        "ettr_pct": _f(row["ettr_pct"]),
        "shares_pct": {k: _f(row[k]) for k in SHARES},
        "p_meets_pct": _f(row.get("p_meets_pct")),
        "purchase_usd": _f(row["purchase_usd"]),
        "support_usd_year": _f(row["support_usd_year"]),
        "life_s": _f(row["life_s"]),
        "storage_usd_month": _f(row["storage_usd_month"]),
        "lost_gpu_usd_month": _f(row["lost_gpu_usd_month"]),
        "total_usd_month": _f(row["total_usd_month"]),
        "total_usd": _f(row["total_usd"]),
        "gpu_lost_usd": _f(row["waste_usd"]),
        "run_days": _f(row["run_days"]),
        "storage_run_usd": _f(row["storage_run_usd"]),
        "run_outlives_storage": bool(row["run_outlives_storage"]),
        "implausible": str(row["implausible"]),
        "stall_s": _f(row["stall_s"]),
        "cluster_mtbf_s": _f(row["cluster_mtbf_s"]),
    }


def facts(d: Decision) -> dict:
    """The decision's figures: the job, the pick, its runner-up, the cheapest option when it is not the
    pick, and the pick at each cluster size."""
    pick, job = d.pick, d.job
    runner = pick.runner_up
    return {
        "job": job.name,
        "model": job.model,
        "sku": job.sku,
        "gpus": job.gpus,
        "recipe": job.recipe,
        "title": job.title,
        "source": job.source,
        "declared": job.declared,
        "status": pick.status,
        "confidence_pct": d.confidence_pct,
        "reached": d.reached,
        "target_pct": _f(pick.row["target_overhead_pct"]),
        "draws": d.robust.samples,
        "seed": d.robust.seed,
        "pick": option_facts(pick.row),
        "runner_up": None
        if runner is None
        else {
            **option_facts(runner),
            "extra_usd": _f(pick.runner_up_extra_usd),
        },
        "cheapest": None
        if d.cheapest is None
        else {
            **option_facts(d.cheapest),
            "saves_usd": _f(pick.row["total_usd"] - d.cheapest["total_usd"]),
        },
        "scale": [{"gpus": g, **({} if row is None else option_facts(row))} for g, row in d.scale],
        "bought": None if d.bought is None else dataclasses.asdict(d.bought),
    }


CAUSE = {
    "stall above the interval": lambda p: (
        f"a checkpoint stalls training {_every(p['stall_s'])}, longer than the interval of "
        f"{_every(p['interval_s'])} (lengthen the interval, or check the tier's bandwidth)"
    ),
    "failures faster than recovery": lambda p: (
        f"the job fails every {_every(p['cluster_mtbf_s'])} (gpu_mtbf over its GPUs), sooner than it "
        "restarts, restores and redoes its work (check gpu_mtbf and restart)"
    ),
}  # each impossible figure, and the inputs that cause it


def _pct(v) -> str:
    return display.value(math.nan if v is None else v, "pct")


def _usd(v) -> str:
    return display.value(math.nan if v is None else v, "usd")


def _every(s) -> str:
    return display.value(s, "s")


def cadence(o: dict) -> str:
    """'every 2.8 min' (and the durable save's cadence where only some saves reach the tier)."""
    words = f"every {_every(o['interval_s'])}"
    if o["durable_interval_s"] and o["durable_interval_s"] != o["interval_s"]:
        words += f", durable every {_every(o['durable_interval_s'])}"
    return words


def bought_text(gbps: float | None) -> str:
    """The bandwidth bought, or what a tier with no stated limit buys (an unbounded figure)."""
    return "no stated bandwidth limit" if gbps is None else display.value(gbps, "GBps")


def headline(f: dict) -> str:
    """The decision in one sentence."""
    p = f["pick"]
    target = _pct(f["target_pct"])
    if f["status"] != "recommended":
        return (
            f"{f['job']}: no option meets the {target} target on {f['gpus']:,} GPUs of {f['sku']}; "
            f"closest: {p['option']} ({_pct(p['overhead_pct'])})."
        )
    return (
        f"{f['job']} on {f['gpus']:,} GPUs of {f['sku']}: {p['option']}, {cadence(p)}, "
        f"{bought_text(p['bought_GBps'])} bought; ETTR {_pct(p['ettr_pct'])}; meets the "
        f"{target} target in {_pct(p['p_meets_pct'])} of {f['draws']:,} draws."
    )


def sentences(f: dict, purchase: bool = True) -> list[str]:
    """What a reader must be told beside the headline: how sure, the cheaper option's risk, the
    purchase (unless ``purchase`` is False: shown beside), the run against the storage's life, and any
    figure outside what can exist."""
    p, target, conf = f["pick"], _pct(f["target_pct"]), _pct(f["confidence_pct"])
    out = []
    if f["status"] == "recommended":
        if f["reached"]:
            out.append(
                f"It meets the {target} target in {_pct(p['p_meets_pct'])} of the draws of every "
                f"uncertain input, at least the plan's confidence of {conf}."
            )
        else:
            out.append(
                f"No option meets the {target} target in {conf} of the draws (the plan's confidence): "
                f"this is the cheapest that meets it at the base figures, and it meets it in only "
                f"{_pct(p['p_meets_pct'])}."
            )
    c = f["cheapest"]
    if c is not None:
        out.append(
            f"The cheapest at the base figures, {c['option']} {cadence(c)}, costs "
            f"{_usd(c['saves_usd'])} less over the run but meets the {target} target in only "
            f"{_pct(c['p_meets_pct'])} of the draws."
        )
    r, b = f["runner_up"], f.get("bought")
    if r is not None and b is not None:
        extra = r["extra_usd"]
        out.append(
            f"On the cluster's runner-up, {b['runner_label']} (purchase "
            f"{_usd(b['runner_purchase_usd'])}): {r['option']} {cadence(r)}, "
            + (
                f"{_usd(extra)} more over the run for this job"
                if extra >= 0
                else f"{_usd(-extra)} less over the run for this job (more for the cluster)"
            )
            + f", meets the target in {_pct(r['p_meets_pct'])} of the draws."
        )
    elif r is not None:
        out.append(
            f"Runner-up: {r['option']} {cadence(r)}, {_usd(r['extra_usd'])} more over the run, "
            f"meets the target in {_pct(r['p_meets_pct'])} of the draws."
        )
    if b is not None:
        share = (
            f"its {_pct(b['share_pct'])} share of the bandwidth (its saves coincide with the others')"
            if b["share_pct"] < 99.95
            else "the whole bandwidth"
            + (" (the jobs' saves take turns)" if b["mode"] == "staggered" else "")
        )
        out.append(
            f"Storage: bought for the cluster {b['cluster']} ({', '.join(b['jobs'])}): {b['label']}, "
            f"purchase {_usd(b['purchase_usd'])} for all its jobs, {_usd(b['storage_life_usd'])} over "
            f"its {display.value(b['life_s'], 's')} life; this job has {share}."
        )
    elif purchase and p["purchase_usd"]:
        years = display.value(p["life_s"], "s") if p["life_s"] else "its life"
        out.append(
            f"Purchase: {_usd(p['purchase_usd'])} (capacity and bandwidth), support "
            f"{_usd(p['support_usd_year'])} a year, spread over {years}: {_usd(p['storage_usd_month'])} "
            f"a month, {_usd(p['storage_run_usd'])} over the run's "
            f"{display.value(p['run_days'], 'count')} days."
        )
    if p["run_outlives_storage"]:
        out.append(
            f"The run ({display.value(p['run_days'], 'count')} days) outlives the storage's "
            f"{display.value(p['life_s'], 's')} life: its monthly figure buys it again."
        )
    if p["implausible"] != "none":
        out.append(f"Impossible figure: {p['implausible']}: {CAUSE[p['implausible']](p)}.")
    return out


def shown(d: Decision, purchase_sentence: bool = True) -> dict:
    """The decision's figures as text, as the brief's first page and the review page show them."""
    f = facts(d)
    p = f["pick"]

    def v(value, unit: str) -> str:
        """A figure as text; one that is not known (an unpriced tier's cost) says so."""
        return "not priced" if value is None else display.value(value, unit)

    def scale_row(s: dict) -> dict:
        there = "option" in s
        return {
            "gpus": f"{s['gpus']:,}",
            "option": s.get("option", "none"),
            "cadence": cadence(s) if there else "",
            "bought": bought_text(s["bought_GBps"]) if there else "",
            "p_meets": v(s["p_meets_pct"], "pct") if there else "",
            "ettr": v(s["ettr_pct"], "pct") if there else "",
            "own": s["gpus"] == f["gpus"],
        }

    gone, kept, gone_usd, kept_usd = moved(p)
    b = f["bought"]
    purchase = _purchase_text(p, b, v)
    return {
        "job": f["job"],
        "source": f["source"] or "",
        "headline": headline(f),
        "cluster": b["cluster"] if b else "",
        "moved": f"{v(gone, 'pct')} of the wall clock, {v(gone_usd, 'usd')} of GPU time over the run "
        "(stall, interference, rework, restore)",
        "unmoved": f"{v(kept, 'pct')}, {v(kept_usd, 'usd')} (restart after a failure: only a "
        "recovery engine shortens it)",
        "sentences": sentences(f, purchase=purchase_sentence),
        "option": p["option"],
        "meets": f["status"] == "recommended",
        "warn": f["status"] != "recommended" or not f["reached"],
        "cadence": cadence(p),
        "bought": bought_text(p["bought_GBps"]),
        "required": display.of("required_write_GBps", p["required_GBps"] or math.inf),
        "purchase": purchase,
        "purchase_cell": (
            f"{v(b['purchase_usd'], 'usd')} ({b['cluster']}, all its jobs)"
            if b is not None
            else (v(p["purchase_usd"], "usd") if p["purchase_usd"] else "none (rented)")
        ),
        "support": v(p["support_usd_year"], "usd") if p["purchase_usd"] and b is None else "",
        "life": v(p["life_s"], "s") if p["life_s"] else "",
        "month": v(p["storage_usd_month"], "usd"),
        "run_days": v(p["run_days"], "count"),
        # a job of a cluster: its GPU time lost; its storage is the cluster's purchase (no share of
        # a purchase of its own, which it does not make)
        "total": v(p["total_usd"], "usd") if b is None else v(p["gpu_lost_usd"], "usd"),
        "total_is": "checkpointing costs" if b is None else "checkpointing loses, in GPU time,",
        "total_cell": v(p["total_usd"], "usd")
        if b is None
        else f"{v(p['gpu_lost_usd'], 'usd')} (GPU time)",
        "ettr": v(p["ettr_pct"], "pct"),
        "shares": [
            (label, v(p["shares_pct"][k], "pct"))
            for k, label in SHARES.items()
            if k != "replica_share_pct" or p["shares_pct"][k]
        ],
        "p_meets": v(p["p_meets_pct"], "pct"),
        "confidence": v(f["confidence_pct"], "pct"),
        "draws": f"{f['draws']:,}",
        "target": v(f["target_pct"], "pct"),
        "scale": [scale_row(s) for s in f["scale"]],
    }


def _purchase_text(p: dict, b: dict | None, v) -> str:
    """The purchase as the brief's first page states it: the option's own, or (a job of a cluster)
    the cluster's, for all its jobs, with its runner-up's purchase price."""
    if b is None:
        return v(p["purchase_usd"], "usd") if p["purchase_usd"] else "none (rented)"
    runner = (
        f". Runner-up: {b['runner_label']}, purchase {v(b['runner_purchase_usd'], 'usd')}"
        if b["runner_label"]
        else ""
    )
    return (
        f"{v(b['purchase_usd'], 'usd')} for {b['label']}: the storage of the cluster "
        f"{b['cluster']}, for all its jobs ({', '.join(b['jobs'])}); "
        f"{v(b['storage_life_usd'], 'usd')} over its {v(b['life_s'], 's')} life with support, power "
        "and space" + runner
    )
