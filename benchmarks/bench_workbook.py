"""Workbook speed and memory for a ~100,000-row plan, against openpyxl's write-only mode dumping the
same cell values, in the same run.

    python benchmarks/bench_workbook.py [--rows-target 100000]

Each variant runs in its own process (peak RSS is per process): ckptreport's workbook (formulas,
styles, five sheets, charts) and the baseline (one write-only sheet of the frame's values). Both hold
the same scenario frame. Reported: seconds to write, peak RSS, and the ratios. Nothing is asserted.
"""

from __future__ import annotations

import dataclasses
import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))


def computed(rows_target: int):
    """The compute stage's report for a plan of about ``rows_target`` rows, every row in the workbook."""
    from bench_engine import big_inputs
    from ckptreport.report import compute
    from ckptreport.schema import Q

    inputs = big_inputs(rows_target)
    plan = inputs.plan.model_copy(update={"workbook_rows": Q(1e6, "1M", "count")})
    return compute(dataclasses.replace(inputs, plan=plan))


def run_variant(variant: str, rows_target: int, out: Path) -> dict:
    report = computed(rows_target)
    frame = report.frame
    t = time.perf_counter()
    if variant == "ckptreport":
        from ckptreport.render import workbook

        workbook.write(out, report, {"ckptreport_version": "bench", "input_hash": report.inputs.input_hash,
                                     "build_time": "bench"})
    else:
        import openpyxl

        wb = openpyxl.Workbook(write_only=True)
        ws = wb.create_sheet("Scenarios")
        ws.append(list(frame.columns))
        columns = [frame[c].astype(str).to_numpy() if frame[c].dtype.kind not in "fiub" else
                   frame[c].to_numpy().tolist() for c in frame.columns]
        for row in zip(*columns):
            ws.append([v if not isinstance(v, float) or abs(v) < 1e300 else 1e300 for v in row])
        wb.save(out)
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    return {"variant": variant, "rows": len(frame), "cells": len(frame) * len(frame.columns), "seconds": seconds,
            "peak_rss_MiB": peak, "bytes": out.stat().st_size}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows-target", type=int, default=100_000)
    ap.add_argument("--variant", choices=["ckptreport", "baseline"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.variant:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(run_variant(args.variant, args.rows_target, Path(tmp) / "w.xlsx")))
        return 0
    results = {}
    for variant in ("baseline", "ckptreport"):
        done = subprocess.run([sys.executable, __file__, "--variant", variant, "--rows-target", str(args.rows_target)],
                              check=True, capture_output=True, text=True)
        results[variant] = json.loads(done.stdout.strip().splitlines()[-1])
    base, ours = results["baseline"], results["ckptreport"]
    print(f"rows: {ours['rows']:,}  (frame columns: {ours['cells'] // ours['rows']})")
    for r in (base, ours):
        print(f"{r['variant']:<11} {r['seconds']:7.1f} s  peak RSS {r['peak_rss_MiB']:7.0f} MiB  "
              f"{r['bytes'] / 2**20:6.1f} MiB file")
    print(f"ratio ckptreport / openpyxl write-only: time x{ours['seconds'] / base['seconds']:.2f}, "
          f"peak memory x{ours['peak_rss_MiB'] / base['peak_rss_MiB']:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
