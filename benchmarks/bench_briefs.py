"""Seconds per PDF brief on this machine, for the shipped defaults (one brief per model).

    python benchmarks/bench_briefs.py

Reports the time to compute each brief's context (engine run, charts), render its HTML, and lay it
out as PDF with WeasyPrint; the first brief also pays for importing matplotlib and WeasyPrint, so
it is reported apart. Nothing here asserts a time.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ckptreport.build import shipped_models
from ckptreport.engine import scenarios
from ckptreport.load import load
from ckptreport.render import brief


def main() -> int:
    inputs = load(shipped_models())
    frame, _ = scenarios(inputs)
    meta = {"ckptreport_version": "bench", "input_hash": inputs.input_hash, "build_time": "2000-01-01T00:00:00Z"}
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for spec in brief.specs(inputs, frame):
            t = time.perf_counter()
            ctx = brief.context(inputs, spec, meta, "A4")
            t_ctx = time.perf_counter() - t
            html = brief.render_html(ctx)
            t_html = time.perf_counter() - t - t_ctx
            brief.write_pdf(html, Path(tmp) / f"{spec.name}.pdf")
            total = time.perf_counter() - t
            times.append(total)
            print(f"{spec.name:<20} {total:5.2f} s  (context {t_ctx:.2f}, html {t_html:.2f}, pdf {total - t_ctx - t_html:.2f})")
    warm = times[1:] or times
    print(f"first brief {times[0]:.2f} s (imports); the others: mean {sum(warm) / len(warm):.2f} s, "
          f"max {max(warm):.2f} s per brief")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
