"""Chains the stages: load -> engine -> write. Everything is computed before anything is written,
and every file lands by rename, so a failed build leaves the previous outputs untouched."""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
import math
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from . import __version__
from .errors import InputError, Problem
from .load import load
from .paths import resolve_models, shipped_models  # noqa: F401  (part of build's interface)
from .quantity import Q
from .report import Report, compute as compute_report

Progress = Callable[[str], None]


def build_time() -> dt.datetime:
    """SOURCE_DATE_EPOCH when set (reproducible builds), else now."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        try:
            return dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        except ValueError:
            raise InputError(f"SOURCE_DATE_EPOCH must be whole seconds since 1970, got {epoch!r}") from None
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


@dataclass
class Result:
    report: Report
    models_dir: Path
    out_dir: Path
    written: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    refused: dict[str, list[str]] = field(default_factory=dict)  # per brief: URLs its renderer refused

    @property
    def inputs(self):
        return self.report.inputs

    @property
    def frame(self) -> pd.DataFrame:
        return self.report.frame

    @property
    def dropped(self):
        return self.report.dropped


def compute(models_dir: Path, progress: Progress = lambda _: None,
            measured_paths: list | None = None, workbook_rows: int | None = None) -> tuple[Report, dict]:
    """Load and validate the inputs, then compute everything the outputs show."""
    seconds = {}
    t = time.perf_counter()
    progress(f"loading {models_dir}")
    inputs = load(models_dir)
    if measured_paths:
        from . import measured

        inputs = measured.apply(inputs, measured_paths)
    if workbook_rows is not None:
        plan = inputs.plan.model_copy(update={"workbook_rows": Q(float(workbook_rows), str(workbook_rows), "count")})
        inputs = dataclasses.replace(inputs, plan=plan)
    seconds["load"] = time.perf_counter() - t
    t = time.perf_counter()
    report = compute_report(inputs)
    seconds["engine"] = time.perf_counter() - t
    progress(f"computed {len(report.frame):,} scenarios in {seconds['engine']:.2f} s")
    return report, seconds


def _table(frame: pd.DataFrame, meta: dict[str, str]) -> pa.Table:
    table = pa.Table.from_pandas(frame, preserve_index=False)
    return table.replace_schema_metadata({**(table.schema.metadata or {}),
                                         **{k.encode(): v.encode() for k, v in meta.items()}})


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _num(v) -> float | None:
    """A number for JSON: None for unknown or unbounded."""
    return float(v) if v is not None and math.isfinite(float(v)) else None


def manifest(report: Report, meta: dict[str, str], files: dict[str, str]) -> dict:
    """What was built from what: provenance, the recommendations every output names, file hashes."""
    s = report.summary
    return {
        **meta,
        "inputs": report.inputs.files,
        "rows": len(report.frame),
        "dropped": [{"reason": d.reason, "rows": d.rows} for d in report.dropped],
        "measured": [{"hop": f"{m.section}.{m.name}.{m.field}", "basis": m.basis, "median_Bps": m.median,
                      "min_Bps": m.minimum, "spec_Bps": m.spec, "flag": m.flag, "files": sorted(set(m.files))}
                     for m in report.inputs.measured.values()],
        "recommendations": [{"model": r["model"], "recipe": r["recipe"], "sku": r["sku"], "gpus": r["gpus"],
                             "interval_s": r["interval_s"], "tier": r["option_tier"],
                             "strategy": r["option_strategy"], "status": r["option_status"],
                             "meets_target": bool(r["option_meets"]), "bought_GBps": _num(r["option_bought_GBps"]),
                             "storage_usd_month": _num(r["option_storage_usd_month"]),
                             "lost_gpu_usd_month": _num(r["option_lost_gpu_usd_month"]),
                             "total_usd": _num(r["option_total_usd"]),
                             "runner_up": None if not isinstance(r["runner_up_tier"], str) else {
                                 "tier": r["runner_up_tier"], "strategy": r["runner_up_strategy"],
                                 "extra_usd": _num(r["runner_up_extra_usd"])},
                             "assumed_prices": r["assumed_prices"], "needs_price": r["needs_price"]}
                            for r in s.to_dict("records")],
        "briefs": [{"name": b.spec.name, "model": b.spec.model, "gpus": b.spec.gpus, "interval_s": b.spec.interval_s,
                    **b.pick.option, "status": b.pick.status, "meets_target": b.pick.meets,
                    "assumed_prices": [name for name, _ in b.assumed], "needs_price": list(b.pick.unpriced)}
                   for b in report.briefs],
        "files": files,
    }


def write(result: Result, progress: Progress = lambda _: None, workbook: bool = True, briefs: bool = True,
          paper: str | None = None) -> None:
    """Write every output into a staging directory beside ``out``, then switch it in at once
    (``publish``): a failed or killed build leaves the previous outputs as they were."""
    from .publish import Publisher
    from .render import brief as render_brief
    from .render import workbook as render_workbook

    report = result.report
    when = build_time()
    publisher = Publisher(result.out_dir, progress)
    with publisher as staging:
        meta = {"ckptreport_version": __version__, "input_hash": report.inputs.input_hash,
                "build_time": when.isoformat().replace("+00:00", "Z")}
        t = time.perf_counter()
        table = _table(report.frame, meta)
        pq.write_table(table, staging / "scenarios.parquet", compression="zstd")
        pacsv.write_csv(_table(csv_safe(report.frame), meta), staging / "scenarios.csv")  # 10x pandas' speed
        t_b = time.perf_counter()
        pending = render_brief.start(staging / "briefs", report, meta, paper, progress) if briefs else None
        try:  # the workbook is written here while worker processes lay the briefs out
            if workbook:
                rows = min(len(report.frame), int(report.inputs.plan.workbook_rows.value))
                progress(f"writing the workbook ({rows:,} scenario rows of formulas)")
                t_wb = time.perf_counter()
                result.notes += render_workbook.write(staging / "ckptreport.xlsx", report, meta, when)
                result.seconds["workbook"] = time.perf_counter() - t_wb
            if pending is not None:
                pending.wait()
                result.refused = pending.refused
                result.seconds["briefs"] = time.perf_counter() - t_b
        finally:
            if pending is not None:
                pending.close()
        files = {str(p.relative_to(staging).as_posix()): _sha256(p) for p in sorted(staging.rglob("*")) if p.is_file()}
        doc = manifest(report, meta, files)
        (staging / "manifest.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        kept = publisher.commit()
    out = publisher.out
    result.written = [out / name for name in sorted({f.split("/")[0] for f in files} | {"manifest.json"})]
    result.seconds["write"] = time.perf_counter() - t
    progress(f"wrote {', '.join(str(p) for p in result.written)}"
             + (f"; kept {len(kept)} file(s) of yours in {out}" if kept else ""))


def csv_safe(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame for the CSV: text that a spreadsheet would read as a formula (starting with = + - @,
    a tab or a carriage return) gets a leading apostrophe, as OWASP advises; numbers are untouched.
    The Parquet keeps the names as they are."""
    out = frame.copy(deep=False)
    for name in frame.columns:
        column = frame[name]
        if isinstance(column.dtype, pd.CategoricalDtype):
            texts = column.cat.categories
        elif column.dtype == object:
            texts = column.unique()
        else:
            continue
        if any(isinstance(v, str) and v[:1] in FORMULA_STARTS for v in texts):
            out[name] = column.astype(object).map(lambda v: "'" + v if isinstance(v, str) and v[:1] in FORMULA_STARTS
                                                  else v)
    return out


FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def build(models: str | Path | None, out: str | Path, progress: Progress = lambda _: None,
          workbook: bool = True, workbook_rows: int | None = None, briefs: bool = True,
          paper: str | None = None, measured: list | None = None) -> Result:
    """Load, compute, write. ``workbook_rows`` overrides the plan's limit on workbook rows;
    ``measured`` names measured files or directories whose figures replace the spec."""
    models_dir = resolve_models(models)
    report, seconds = compute(models_dir, progress, measured, workbook_rows)
    result = Result(report, models_dir, Path(out), seconds=seconds)
    write(result, progress, workbook, briefs, paper)
    return result


def init(target: str | Path, force: bool = False) -> list[Path]:
    """Copy the shipped models out as a starting point."""
    target = Path(target)
    source = shipped_models()
    files = sorted(source.glob("*.yaml"))
    clashes = [target / f.name for f in files if (target / f.name).exists()]
    if clashes and not force:
        raise InputError(Problem(str(target), 0, 0, "", "already holds "
                                 + ", ".join(c.name for c in clashes) + "; pass --force to overwrite"))
    target.mkdir(parents=True, exist_ok=True)
    written = []
    for f in files:
        shutil.copyfile(f, target / f.name)
        written.append(target / f.name)
    return written


# ---- golden HTML of the briefs (tests/golden/briefs): python -m ckptreport.build --golden DIR ----

def golden(out: Path) -> list[Path]:
    """Write the rendered HTML of every brief of the shipped defaults, normalised (see
    ``render.brief.normalized_html``), for the golden test to compare with."""
    from .render import brief as render_brief

    report = compute_report(load(shipped_models()))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.html"):
        old.unlink()
    written = []
    for name, html in render_brief.golden_html(report).items():
        (out / name).write_text(html)
        written.append(out / name)
    return written


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "--golden":
        raise SystemExit("usage: python -m ckptreport.build --golden DIR")
    for path in golden(Path(sys.argv[2])):
        print(f"wrote {path}")
