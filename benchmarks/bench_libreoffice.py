"""How long LibreOffice takes to open and recalculate the workbook, as finance would open it.

    python benchmarks/bench_libreoffice.py [--repeat 3] [--xlsx OTHER.xlsx ...]

Builds the shipped defaults twice in the same run (``--no-briefs``): as shipped (the plan's
``workbook_rows``), and with every scenario in the workbook (``--workbook-rows 1000000``), the
baseline. Each workbook is opened by LibreOffice Calc through its own API (``tests/lo_uno.py``, run
by the system Python that has ``python3-uno``), in a fresh profile each time:

- ``open``: loading the file, its cached values kept (what a reader sees at once);
- ``recalc``: then Data > Calculate > Recalculate Hard (every formula computed again);
- ``open+recalc``: the two together, the issue's figure (at most 8 s on a 2-core machine);
- ``always``: loading with LibreOffice set to recalculate on load, as the tests' profile does.

LibreOffice's own start (about a second) is reported apart. ``--xlsx`` adds other workbooks (for
example one built by an older commit, for a before/after). Medians of ``--repeat`` runs; ratios
against the all-rows baseline of the same run. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DRIVER = REPO / "tests" / "lo_uno.py"


def uno_python() -> str:
    for candidate in ("/usr/bin/python3", shutil.which("python3") or ""):
        if (
            candidate
            and subprocess.run([candidate, "-c", "import uno"], capture_output=True).returncode == 0
        ):
            return candidate
    sys.exit("no Python with LibreOffice's UNO bridge: install python3-uno (make system-deps)")


def once(py: str, xlsx: Path, recalc_on_load: str, tmp: Path) -> dict[str, float]:
    script = {
        "file": str(xlsx),
        "profile": str(tempfile.mkdtemp(dir=tmp)),
        "recalc_on_load": recalc_on_load,
        "actions": [] if recalc_on_load == "always" else [{"op": "recalc"}],
    }
    path = tmp / "script.json"
    path.write_text(json.dumps(script))
    done = subprocess.run([py, str(DRIVER), str(path)], capture_output=True, text=True, timeout=900)
    if done.returncode:
        sys.exit(f"LibreOffice failed on {xlsx}: {done.stderr[-2000:]}")
    return json.loads(done.stdout)["seconds"]


def measure(py: str, xlsx: Path, repeat: int, tmp: Path) -> dict[str, float]:
    runs = [once(py, xlsx, "never", tmp) for _ in range(repeat)]
    always = [once(py, xlsx, "always", tmp)["load"] for _ in range(repeat)]
    med = {k: statistics.median(r[k] for r in runs) for k in ("start", "load", "0:recalc")}
    return {
        "start": med["start"],
        "open": med["load"],
        "recalc": med["0:recalc"],
        "open+recalc": statistics.median(r["load"] + r["0:recalc"] for r in runs),
        "always": statistics.median(always),
    }


def facts(xlsx: Path) -> tuple[int, int, float]:
    """Scenarios rows, formula cells in the whole workbook, file MiB."""
    rows = formulas = 0
    with zipfile.ZipFile(xlsx) as z:
        for name in z.namelist():
            if name.startswith("xl/worksheets/sheet"):
                data = z.read(name)
                formulas += data.count(b"<f>") + data.count(b"<f ")
                if b"<tableParts" in data and b"scenario_id" in data[:20000]:
                    rows = data.count(b"<row ") - 2
    return rows, formulas, xlsx.stat().st_size / 2**20


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--xlsx", type=Path, nargs="*", default=[])
    args = ap.parse_args()
    py = uno_python()
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        books = {}
        for label, extra in (
            ("all rows (baseline)", ["--workbook-rows", "1000000"]),
            ("as shipped", []),
        ):
            out = tmp / label.split()[0]
            subprocess.run(
                [
                    sys.executable,
                    "-m",
                    "ckptreport.cli",
                    "build",
                    "--no-briefs",
                    "-q",
                    "--out",
                    str(out),
                    *extra,
                ],
                check=True,
                cwd=REPO,
                capture_output=True,
            )
            books[label] = out / "ckptreport.xlsx"
        for path in args.xlsx:
            books[str(path)] = path
        results = {
            label: (facts(path), measure(py, path, args.repeat, tmp))
            for label, path in books.items()
        }
    base = results["all rows (baseline)"][1]["open+recalc"]
    print(f"LibreOffice, median of {args.repeat} (seconds; LibreOffice's own start apart)")
    print(
        f"{'workbook':<24}{'rows':>8}{'formulas':>11}{'MiB':>7}{'start':>7}{'open':>7}{'recalc':>8}"
        f"{'open+recalc':>13}{'always':>8}{'ratio':>7}{'ms/row':>8}"
    )
    for label, ((rows, formulas, mib), m) in results.items():
        print(
            f"{label[-24:]:<24}{rows:>8,}{formulas:>11,}{mib:>7.1f}{m['start']:>7.2f}{m['open']:>7.2f}"
            f"{m['recalc']:>8.2f}{m['open+recalc']:>13.2f}{m['always']:>8.2f}{m['open+recalc'] / base:>7.2f}"
            f"{1000 * m['open+recalc'] / max(rows, 1):>8.2f}"
        )


if __name__ == "__main__":
    main()
