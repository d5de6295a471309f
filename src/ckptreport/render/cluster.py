"""The purchase for a cluster as every output shows it: one dict of plain figures (``facts``: the
manifest records it, the terminal, the workbook and the briefs read it) and the terminal's words."""

from __future__ import annotations

import math

from ..answer.types import SECONDS_PER_YEAR, STAGGERED, TOGETHER, ClusterPurchase, UnitsAt
from ..model import display
from .decision import bought_text


def _f(v) -> float | None:
    return None if v is None or (isinstance(v, float) and not math.isfinite(v)) else float(v)


def _gpu_days(j) -> float:
    return 0.0 if j.row is None else float(j.row["gpus"]) * float(j.row["run_days"])


def point_facts(p: UnitsAt | None) -> dict | None:
    """A product at a count, as plain figures. Each job's cost is its GPU time lost plus the storage's
    cost over its life charged by the jobs' GPU-days (its GPUs x its run's days, a share of all)."""
    if p is None:
        return None
    days = sum(_gpu_days(j) for j in p.jobs)
    return {
        "tier": p.tier,
        "units": p.units,
        "unit": p.unit_name,
        "label": p.label,
        "mode": p.mode,
        "write_GBps": _f(p.write_GBps),
        "read_GBps": _f(p.read_GBps),
        "beyond_published": p.beyond_published,
        "purchase_usd": _f(p.purchase_usd),
        "running_usd_year": _f(p.running_usd_year),
        "yearly_usd": {k: _f(v) for k, v in p.yearly_usd.items()},
        "capacity_bytes": _f(p.capacity_bytes),
        "storage_life_usd": _f(p.storage_life_usd),
        "gpu_lost_usd": _f(p.gpu_lost_usd),
        "moved_usd": _f(p.moved_usd),
        "not_moved_usd": _f(p.not_moved_usd),
        "total_usd": _f(p.total_usd),
        "meets_targets": p.feasible,
        "jobs": [
            {
                "job": j.job,
                "share_pct": 100.0 * j.share,
                "meets": j.meets,
                **(
                    {}
                    if j.row is None
                    else {
                        "strategy": str(j.row["strategy"]),
                        "engine": str(j.row["engine"]),
                        "interval_s": _f(j.row["interval_s"]),
                        "ettr_pct": _f(j.row["ettr_pct"]),
                        "p_meets_pct": _f(j.row["p_meets_pct"]),
                        "gpu_lost_usd": _f(j.row["waste_usd"]),
                        "storage_share_usd": _f(p.storage_life_usd * _gpu_days(j) / days)
                        if days
                        else None,
                        "cost_usd": _f(
                            float(j.row["waste_usd"]) + p.storage_life_usd * _gpu_days(j) / days
                        )
                        if days
                        else None,
                    }
                ),
            }
            for j in p.jobs
        ],
    }


def facts(cp: ClusterPurchase) -> dict:
    """Every figure of a cluster's purchase (what the manifest records and the outputs print)."""
    rows = [
        {
            **r,
            "total_usd": r["purchase_usd"] + r["running_usd"],
            "present_usd": (r["purchase_usd"] + r["running_usd"]) * r["factor"],
        }
        for r in cp.schedule
    ]
    pay = cp.payback()
    return {
        "cluster": cp.cluster,
        "title": cp.title,
        "sku": cp.sku,
        "gpus": cp.gpus,
        "jobs": list(cp.jobs),
        "overlaps": {k: list(v) for k, v in cp.overlaps.items()},
        "life_years": cp.life_s / SECONDS_PER_YEAR,
        "discount_pct": cp.discount_pct,
        "usd_per_kwh": cp.usd_per_kwh,
        "usd_per_rack_unit_month": cp.usd_per_rack_unit_month,
        "confidence_pct": cp.confidence_pct,
        "choice": point_facts(cp.choice),
        "runner_up": point_facts(cp.runner_up),
        "least": point_facts(cp.least),
        "reference_units": cp.reference_units,
        "payback": None if pay is None else {"more_units": pay[0], "months": pay[1]},
        "products": [point_facts(p) for p in cp.products],
        "unpriced": list(cp.unpriced),
        "curve": [
            {
                "units": p.units,
                "storage_life_usd": _f(p.storage_life_usd),
                "gpu_lost_usd": _f(p.gpu_lost_usd),
                "total_usd": _f(p.total_usd),
                "meets_targets": p.feasible,
            }
            for p in cp.curve
        ],
        "schedule": rows,
        "present_value_usd": sum(r["present_usd"] for r in rows),
        **_product(cp),
    }


def _product(cp: ClusterPurchase) -> dict:
    """The chosen product's unit price and running costs (what the workbook's inputs hold)."""
    p, c = cp.product, cp.choice
    if p is None or c is None:
        return {}
    apart = not p.owned and math.isnan(p.capacity_per_unit_bytes) and not math.isnan(p.usd_per_tb)
    return {
        "unit_price_usd": _f(p.unit_price_usd) or 0.0,
        "unit_price_basis": {
            "stated": "unit.price",
            "derived": "the unit's write at capex_usd_per_GBps",
            "owned": "owned: nothing to buy",
        }.get(p.unit_price_basis, p.unit_price_basis),
        "usd_per_tb": _f(p.usd_per_tb) if apart else None,
        "support_pct": 100.0 * p.support_pct,
        "support_usd_year": p.support_usd_year,
        "power_W": p.power_W,
        "rack_units": p.rack_units,
    }


def _usd(v) -> str:
    return display.value(math.nan if v is None else v, "usd")


def _pct(v) -> str:
    return display.value(math.nan if v is None else v, "pct")


def sentences(f: dict) -> list[str]:
    """What a reader needs beside the table: each job's choice on it, how the jobs share it, the
    fewest units that meet, the runner-up's purchase, what the purchase moves and does not, the
    schedule's present value."""
    c = f["choice"]
    if c is None:
        return [
            "No product meets every job's target at the plan's confidence: none is recommended "
            "(buy more units than the most a product sells, or change a job's strategy or target)."
        ]
    out = []
    for j in c["jobs"]:
        out.append(
            f"{j['job']}: {j['strategy']} with {j['engine']} every "
            f"{display.of('interval_s', j['interval_s'])}, ETTR {_pct(j['ettr_pct'])}, meets its "
            f"target in {_pct(j['p_meets_pct'])} of the draws; costs {_usd(j['cost_usd'])} "
            f"({_usd(j['gpu_lost_usd'])} of GPU time lost, {_usd(j['storage_share_usd'])} of the "
            "storage by its GPU-days)"
            + (
                f" (its {_pct(j['share_pct'])} share of the bandwidth)"
                if j["share_pct"] < 99.95
                else ""
            )
            + "."
        )
    if c["mode"] == STAGGERED:
        out.append(
            "The jobs' training overlaps; their cadences are staggered so their saves take turns "
            "and each has the whole system (their saves together keep it busy less than all the time)."
        )
    elif c["mode"] == TOGETHER:
        out.append(
            "The jobs' training overlaps and their saves coincide: each writes at its checkpoint's "
            "share of the bandwidth."
        )
    if c["beyond_published"]:
        out.append(
            f"{c['units']:,} {c['unit']} is beyond the largest size a source published for "
            f"{c['tier']}: the bandwidth per unit is the largest's, an extrapolation."
        )
    least = f["least"]
    if least is not None and least["units"] < c["units"]:
        line = (
            f"The fewest units meeting every target: {least['label']}, purchase "
            f"{_usd(least['purchase_usd'])}, {_usd(least['total_usd'] - c['total_usd'])} more over "
            "the life"
        )
        if f["payback"]:
            line += (
                f"; the {f['payback']['more_units']:,} more units pay back in "
                f"{f['payback']['months']:,.1f} months of the jobs' GPU time"
            )
        out.append(line + ".")
    if f["reference_units"]:
        out.append(
            f"The product's reference design, sized by the cluster's nodes, would buy "
            f"{f['reference_units']:,} {c['unit']}."
        )
    r = f["runner_up"]
    if r is not None:
        out.append(
            f"Runner-up: {r['label']}, purchase {_usd(r['purchase_usd'])}, "
            f"{_usd(r['total_usd'] - c['total_usd'])} more over the life."
        )
    out.append(
        f"Of the jobs' GPU time lost ({_usd(c['gpu_lost_usd'])}), the purchase moves "
        f"{_usd(c['moved_usd'])} (stall, interference, rework, restore); it does not move "
        f"{_usd(c['not_moved_usd'])} (restart after a failure: only a recovery engine shortens it)."
    )
    years = f["life_years"]
    out.append(
        f"Purchase {_usd(c['purchase_usd'])}, then {_usd(c['running_usd_year'])} a year (support, "
        f"power, space) over {years:,.3g} years: {_usd(c['storage_life_usd'])}; present value "
        f"{_usd(f['present_value_usd'])} at a {_pct(f['discount_pct'])} discount rate (an assumption)."
    )
    if f["unpriced"]:
        out.append("Could serve but has no price (never ranked): " + ", ".join(f["unpriced"]) + ".")
    return out


def cells(f: dict) -> dict[str, str]:
    """A cluster's purchase as a table row reads it (the terminal's and the page's): what it buys,
    at what bandwidth and price, over the life, the GPU time lost, what the purchase moves and not,
    and the runner-up with its purchase price ('-' where nothing meets every target)."""
    c, r = f["choice"], f["runner_up"]
    if c is None:
        return dict.fromkeys(
            ("write", "purchase", "life", "lost", "total", "moved", "unmoved", "runner"), "-"
        ) | {"buy": "none meets every target"}
    return {
        "buy": c["label"],
        "write": bought_text(c["write_GBps"]),
        "purchase": _usd(c["purchase_usd"]),
        "life": _usd(c["storage_life_usd"]),
        "lost": _usd(c["gpu_lost_usd"]),
        "total": _usd(c["total_usd"]),
        "moved": _usd(c["moved_usd"]),
        "unmoved": _usd(c["not_moved_usd"]),
        "runner": f"{r['label']} ({_usd(r['purchase_usd'])})" if r else "-",
    }


def page_rows(report) -> list[dict]:
    """Each cluster's purchase as the page shows it: its row (``cells``) and the terminal's words."""
    out = []
    for cp in getattr(report, "clusters", []):
        f = facts(cp)
        out.append(
            {
                "cluster": f["cluster"],
                "jobs": ", ".join(f["jobs"]),
                **cells(f),
                "sentences": sentences(f),
            }
        )
    return out
