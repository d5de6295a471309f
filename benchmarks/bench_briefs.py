"""Seconds per PDF brief on this machine, for the shipped defaults (one brief per model), and every
brief laid out serially against worker processes, in the same run.

    python benchmarks/bench_briefs.py

Reports the time to format each brief's context (from the compute stage's data: charts, words),
render its HTML, and lay it out as PDF with WeasyPrint; the first brief also pays for importing
WeasyPrint, so it is reported apart. Then all the briefs as the build writes them
(``brief.write_all``): in this process one after another (``workers=0``, the baseline), and by the
default pool of worker processes (one per core, at most one per brief). Nothing here asserts a time.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path


def main() -> int:
    # imported here, not at the top: a spawned worker re-imports this file, and should pay only for
    # what a worker of `ckptreport build` imports (WeasyPrint)
    from ckptreport.answer.report import compute
    from ckptreport.base.paths import shipped_models
    from ckptreport.base.workers import cores
    from ckptreport.read.load import load
    from ckptreport.render import brief, pdf

    t = time.perf_counter()
    report = compute(load(shipped_models()))
    print(
        f"compute stage (scenarios, summary, every brief's data): {time.perf_counter() - t:.2f} s"
    )
    meta = {
        "ckptreport_version": "bench",
        "input_hash": report.inputs.input_hash,
        "build_time": "2000-01-01T00:00:00Z",
    }
    times = []
    with tempfile.TemporaryDirectory() as tmp:
        for data in report.briefs:
            spec = data.spec
            t = time.perf_counter()
            ctx = brief.context(data, report, meta, "A4")
            t_ctx = time.perf_counter() - t
            html = brief.render_html(ctx)
            t_html = time.perf_counter() - t - t_ctx
            pdf.write_pdf(html, Path(tmp) / f"{spec.name}.pdf")
            total = time.perf_counter() - t
            times.append(total)
            print(
                f"{spec.name:<20} {total:5.2f} s  (context {t_ctx:.2f}, html {t_html:.2f}, "
                f"pdf {total - t_ctx - t_html:.2f})"
            )
    warm = times[1:] or times
    print(
        f"first brief {times[0]:.2f} s (imports); the others: mean {sum(warm) / len(warm):.2f} s, "
        f"max {max(warm):.2f} s per brief"
    )
    every = {}
    with tempfile.TemporaryDirectory() as tmp:
        for name, workers in (
            ("serial, this process", 0),
            (f"{cores()} core(s), default pool", None),
        ):
            t = time.perf_counter()
            brief.write_all(Path(tmp) / name.replace(" ", "_"), report, meta, workers=workers)
            every[name] = time.perf_counter() - t
    serial = every["serial, this process"]
    for name, s in every.items():
        print(
            f"all {len(report.briefs)} briefs, {name:<28} {s:5.2f} s  x{s / serial:.2f} of serial"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
