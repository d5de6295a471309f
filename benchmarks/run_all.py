"""Every benchmark, one after another, and their output written into the README (``make bench``).

    python benchmarks/run_all.py [README.md] [--only NAME ...]

Each benchmark runs in a process of its own and prints its figures, each against a floor or baseline
measured in the same run; a benchmark that checks its own result (the engine against bare numpy, the
Dask build's bytes against one worker's) says so in its output. Their output replaces what is between
the README's ``<!-- make bench: start -->`` and ``<!-- make bench: end -->`` lines, with the date and
the machine they ran on, each block as its benchmark finishes; with ``--only``, only those benchmarks'
blocks are replaced. A benchmark that fails stops the run with its error; the blocks written before
it stay.
"""

from __future__ import annotations

import argparse
import datetime as dt
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).parent

# (script, arguments, what it measures): the order make bench runs them in
BENCHMARKS = [
    (
        "bench_engine.py",
        [],
        "the evaluator against the same column definitions called bare (checks they agree)",
    ),
    (
        "bench_build.py",
        [],
        "the whole build against the bare build (no workbook, briefs or page), medians",
    ),
    (
        "bench_many_briefs.py",
        [],
        "a plan of 200 briefs, built whole, against the same plan without briefs",
    ),
    ("bench_briefs.py", [], "seconds per brief; the briefs serially against the worker processes"),
    (
        "bench_rebuild.py",
        [],
        "builds again in one process: on the worker pools it kept, against pools started afresh",
    ),
    (
        "bench_workbook.py",
        [],
        "the Scenarios sheet writer against openpyxl write-only, the same cells",
    ),
    (
        "bench_html.py",
        [],
        "the review page: the build with it against without, its size, Chromium's load",
    ),
    ("bench_startup.py", [], "--help, validate and explain against importing what they need"),
    (
        "bench_samples.py",
        ["--max", "10000"],
        "Monte Carlo: samples per second and peak memory against no samples",
    ),
    ("bench_large.py", [], "2M and 20M rows on this machine's cores: peak memory, rows per second"),
    (
        "bench_dask.py",
        [],
        "20M rows on a two-worker Dask LocalCluster against one worker, the same bytes",
    ),
    ("bench_libreoffice.py", [], "LibreOffice opening and recalculating the default workbook"),
]

START, END = "<!-- make bench: start -->", "<!-- make bench: end -->"


def machine() -> str:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    try:
        pages = os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        memory = f", {pages / 2**30:.0f} GiB of memory"
    except (ValueError, OSError, AttributeError):
        memory = ""
    return f"{cores} core(s) of {cpu}{memory}, Python {platform.python_version()}"


def run(script: str, args: list[str]) -> tuple[str, float]:
    t = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(HERE / script), *args], capture_output=True, text=True
    )
    seconds = time.perf_counter() - t
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-3000:] + done.stderr[-5000:])
        raise SystemExit(
            f"{script} failed (exit {done.returncode}); its block in the README is unchanged"
        )
    return done.stdout.rstrip(), seconds


def block(script: str, args: list[str], what: str, output: str, seconds: float) -> str:
    command = " ".join(["python", f"benchmarks/{script}", *args])
    return f"<!-- bench {script} -->\n**{what}** (`{command}`, {seconds:.0f} s):\n\n```text\n{output}\n```\n"


def _write(readme: Path, blocks: list[str]) -> None:
    """The section with these blocks, the date and the machine; the rest of the README as it is now."""
    intro = f"\nMeasured by `make bench` on {dt.date.today().isoformat()}, on {machine()}.\n\n"
    head, rest = readme.read_text().split(START, 1)
    tail = rest.split(END, 1)[1]
    readme.write_text(head + START + intro + "\n".join(blocks) + END + tail)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("readme", nargs="?", type=Path, default=HERE.parent / "README.md")
    parser.add_argument(
        "--only", nargs="*", default=None, help="only these benchmarks (e.g. bench_dask.py)"
    )
    args = parser.parse_args()
    text = args.readme.read_text()
    if START not in text or END not in text:
        raise SystemExit(f"{args.readme} has no {START} ... {END} section")
    body = text.split(START, 1)[1].split(END, 1)[0]
    blocks = {
        name: chunk
        for chunk, name in re.findall(r"(<!-- bench (\S+) -->.*?```\n)", body, flags=re.S)
    }
    for script, extra, what in BENCHMARKS:
        if args.only is not None and script not in args.only:
            continue
        print(f"running {script} ...", file=sys.stderr, flush=True)
        output, seconds = run(script, extra)
        print(output, file=sys.stderr, flush=True)
        blocks[script] = block(script, extra, what, output, seconds)
        _write(
            args.readme, [blocks[s] for s, _, _ in BENCHMARKS if s in blocks]
        )  # each as it lands
    print(f"wrote the benchmarks' figures into {args.readme}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
