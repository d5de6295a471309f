"""out/manifest.json: what was built from what (the tool's version, the inputs' hashes and values, the
build time), the decision per job, the recommendation every output names, what the briefs chose,
the Monte Carlo summary, and the hash of every file the build wrote."""

from __future__ import annotations

import hashlib
from pathlib import Path

from ..answer.types import Report
from ..read import units
from .cluster import facts as cluster_facts
from .decision import facts


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _measured(m) -> dict:
    """One measured hop: a bandwidth in bytes/s, an engine's measured interference a fraction."""
    figures = (
        {"median_Bps": m.median, "min_Bps": m.minimum, "spec_Bps": m.spec}
        if m.unit == "bandwidth"
        else {"median_fraction": m.median, "min_fraction": m.minimum, "shipped_fraction": m.spec}
    )
    return {
        "hop": f"{m.section}.{m.name}.{m.field}",
        "basis": m.basis,
        **figures,
        "flag": m.flag,
        "files": sorted(set(m.files)),
    }


def manifest(report: Report, meta: dict[str, str], files: dict[str, str]) -> dict:
    """What was built from what: provenance, the recommendations every output names, file hashes."""
    s = report.summary
    num = units.json_number
    return {
        **meta,
        "inputs": report.inputs.files,
        "input_values": {
            f: {k: list(v) for k, v in keys.items()} for f, keys in report.inputs.values.items()
        },
        "rows": report.rows,
        "dropped": [{"reason": d.reason, "rows": d.rows} for d in report.dropped],
        "measured": [_measured(m) for m in report.inputs.measured.values()],
        "recommendations": [
            {
                "model": r["model"],
                "recipe": r["recipe"],
                "sku": r["sku"],
                "gpus": r["gpus"],
                "interval_s": r["interval_s"],
                "tier": r["option_tier"],
                "strategy": r["option_strategy"],
                "engine": r["option_engine"],
                "status": r["option_status"],
                "meets_target": bool(r["option_meets"]),
                "overhead_pct": num(r["option_overhead_pct"]),
                "stall_s": num(r["option_stall_s"]),
                "required_GBps": num(r["option_required_GBps"]),
                "bought_GBps": num(r["option_bought_GBps"]),
                "storage_usd_month": num(r["option_storage_usd_month"]),
                "lost_gpu_usd_month": num(r["option_lost_gpu_usd_month"]),
                "total_usd_month": num(r["option_total_usd_month"]),
                "total_usd": num(r["option_total_usd"]),
                "runner_up": None
                if not isinstance(r["runner_up_tier"], str)
                else {
                    "tier": r["runner_up_tier"],
                    "strategy": r["runner_up_strategy"],
                    "engine": r["runner_up_engine"],
                    "extra_usd": num(r["runner_up_extra_usd"]),
                },
                "assumed_prices": r["assumed_prices"],
                "needs_price": r["needs_price"],
            }
            for r in s.to_dict("records")
        ],
        "decisions": [facts(d) for d in report.decisions],
        "clusters": [cluster_facts(cp) for cp in report.clusters],
        "briefs": [
            {
                "name": b.spec.name,
                "model": b.spec.model,
                "gpus": b.spec.gpus,
                "interval_s": b.spec.interval_s,
                **b.pick.option,
                "status": b.pick.status,
                "meets_target": b.pick.meets,
                "assumed_prices": [name for name, _ in b.assumed],
                "needs_price": list(b.pick.unpriced),
            }
            for b in report.briefs
        ],
        "files": files,
    }


def sampled_doc(s) -> dict:
    """The Monte Carlo summary the manifest records (and ``--json`` tools read)."""
    return {
        "samples": s.samples,
        "seed": s.seed,
        "inputs": [
            {
                "input": p.label,
                "low": p.low,
                "value": p.value,
                "high": p.high,
                "distribution": p.distribution,
                "file": p.prov.file,
                "line": p.prov.line,
                "figures": [m.label for m in p.members],
            }
            for p in s.params
        ],
        "lines": s.lines,
    }
