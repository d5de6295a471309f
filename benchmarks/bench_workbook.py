"""The Scenarios sheet writer against openpyxl's write-only mode writing the same cells, and the whole
workbook, for a ~100,000-row plan, in the same run.

    python benchmarks/bench_workbook.py [--rows-target 100000]

Three variants, each in a process of its own (peak RSS is per process), each from the same compute
stage and the same Scenarios column definitions (``workbook.scenarios.write``, not timed):

- ``openpyxl``: openpyxl write-only appends every Scenarios row, each formula written out for its row
  and each text as text (no styles, no cached values: the least openpyxl can be asked to do), and
  saves the one-sheet workbook: the floor a library gives;
- ``sheetxml``: ckptreport's streaming writer (``sheetxml.rows_xml``) writes the same rows, as shared
  formulas with the engine's values cached, into a deflated package member;
- ``workbook``: the whole workbook as ``ckptreport build`` writes it (ten sheets, styles, charts,
  Cadence streamed too), for scale.

Reported: seconds, rows per second, peak RSS, file size, and the ratios against openpyxl. The issue's
targets: the Scenarios writer at least 8x faster than openpyxl, and at least 10,000 rows per second.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

META = {"ckptreport_version": "bench", "input_hash": "bench", "build_time": "bench"}


def computed(rows_target: int):
    """The compute stage's report for a plan of about ``rows_target`` rows, every row in the workbook."""
    from bench_engine import big_inputs

    from ckptreport.answer.report import compute
    from ckptreport.read.quantity import Q

    inputs = big_inputs(rows_target)
    plan = inputs.plan.model_copy(update={"workbook_rows": Q(1e6, "1M", "count")})
    return compute(dataclasses.replace(inputs, plan=plan))


def scenario_columns(report):
    """The Scenarios sheet's anchor (``Table``): each column and what its rows hold, exactly as the
    workbook defines them."""
    from openpyxl import Workbook

    from ckptreport.render.workbook import SHEETS, assumptions, scenarios
    from ckptreport.render.workbook.book import Context, Sheet

    ctx = Context(report, META)
    wb = Workbook(write_only=True)
    sheets = {title: Sheet(wb, title) for title in SHEETS}
    assumed = assumptions.write(sheets["Assumptions"], ctx)
    return scenarios.write(sheets["Scenarios"], ctx, assumed)


def with_openpyxl(table, out: Path) -> None:
    import openpyxl

    from ckptreport.render.workbook.scenarios import FIRST

    names = [n for n, _ in table.columns]
    cells = []  # per column, a function of (row position, row number) -> the cell openpyxl gets
    for _, what in table.columns:
        if what.get("text") is not None:
            cells.append(lambda i, r, t=what["text"]: str(t[i]))
        elif what.get("numbers") is not None:  # a key column: a number per row
            cells.append(lambda i, r, n=what["numbers"]: float(n[i]))
        elif what.get("formulas") is not None:
            cells.append(lambda i, r, f=what["formulas"]: "=" + str(f[i]))
        else:
            cells.append(lambda i, r, p=what["parts"]: "=" + str(r).join(p))
    wb = openpyxl.Workbook(write_only=True)
    ws = wb.create_sheet("Scenarios")
    ws.append(["All scenarios."])
    ws.append(names)
    for i in range(len(table.rows)):
        r = FIRST + i
        ws.append([cell(i, r) for cell in cells])
    wb.save(out)


def with_sheetxml(table, out: Path) -> None:
    from ckptreport.render import sheetxml
    from ckptreport.render.workbook.scenarios import FIRST

    columns = [sheetxml.Column(table.letters[n], 0, **what) for n, what in table.columns]
    header = sheetxml.row_xml(2, [(table.letters[n], 0, n) for n, _ in table.columns])
    with (
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=sheetxml.LEVEL) as package,
        package.open("xl/worksheets/sheet1.xml", "w", force_zip64=True) as dst,
    ):
        dst.write(
            b'<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>'
        )
        dst.write(header.encode())
        for chunk in sheetxml.rows_xml(columns, FIRST, len(table.rows)):
            dst.write(chunk)
        dst.write(b"</sheetData></worksheet>")


def run_variant(variant: str, rows_target: int, out: Path) -> dict:
    report = computed(rows_target)
    table = scenario_columns(report) if variant != "workbook" else None
    t = time.perf_counter()
    if variant == "workbook":
        from ckptreport.render import workbook

        workbook.write(out, report, META)
    elif variant == "openpyxl":
        with_openpyxl(table, out)
    else:
        with_sheetxml(table, out)
    seconds = time.perf_counter() - t
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB -> MiB on Linux
    rows = len(report.workbook_index)
    return {
        "variant": variant,
        "rows": rows,
        "seconds": seconds,
        "peak_rss_MiB": peak,
        "bytes": out.stat().st_size,
    }


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--rows-target", type=int, default=100_000)
    ap.add_argument(
        "--variant", choices=["openpyxl", "sheetxml", "workbook"], help=argparse.SUPPRESS
    )
    args = ap.parse_args()
    if args.variant:
        with tempfile.TemporaryDirectory() as tmp:
            print(json.dumps(run_variant(args.variant, args.rows_target, Path(tmp) / "w.xlsx")))
        return 0
    results = {}
    for variant in ("openpyxl", "sheetxml", "workbook"):
        done = subprocess.run(
            [
                sys.executable,
                __file__,
                "--variant",
                variant,
                "--rows-target",
                str(args.rows_target),
            ],
            check=True,
            capture_output=True,
            text=True,
        )
        results[variant] = json.loads(done.stdout.strip().splitlines()[-1])
    base = results["openpyxl"]
    print(f"Scenarios rows: {base['rows']:,}")
    for r in results.values():
        print(
            f"{r['variant']:<9} {r['seconds']:7.2f} s  {r['rows'] / r['seconds']:9,.0f} rows/s  "
            f"peak RSS {r['peak_rss_MiB']:6.0f} MiB  {r['bytes'] / 2**20:6.1f} MiB file  "
            f"time x{r['seconds'] / base['seconds']:.3f} of openpyxl"
        )
    ours = results["sheetxml"]
    print(
        f"Scenarios writer: {base['seconds'] / ours['seconds']:.1f}x faster than openpyxl write-only "
        f"(target >= 8x), {ours['rows'] / ours['seconds']:,.0f} rows/s (target >= 10,000)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
