"""What the review page (out/report.html) costs and how fast it opens, on the shipped defaults, in
one run:

    python benchmarks/bench_html.py [--repeat 3] [--loads 5]

* the build with the page against the same build with ``--no-html``, interleaved, medians of
  ``--repeat`` runs of the real command (the review asks: at most 10% longer), for the full build
  and for the bare one (no workbook, no briefs), where the page's own cost shows undiluted;
* the page's size (the review asks: at most 5 MB);
* headless Chromium (Selenium, chromium-driver) opening the page from disk: the navigation timing's
  ``loadEventEnd`` and the moment the table's first rows are drawn, medians of ``--loads`` loads
  (the review asks: ``load`` under 2 s).

Figures, not pass/fail: nothing is asserted.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

VARIANTS = {
    "full": [],
    "full --no-html": ["--no-html"],
    "bare + page": ["--no-workbook", "--no-briefs"],
    "bare": ["--no-workbook", "--no-briefs", "--no-html"],
}


def once(flags: list[str], out: Path) -> float:
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ckptreport.cli", "build", "--out", str(out), "-q", *flags],
        check=True,
        capture_output=True,
        env={"PATH": "/usr/bin:/bin", "SOURCE_DATE_EPOCH": "1700000000"},
    )
    return time.perf_counter() - t


def load_times(page: Path, loads: int) -> tuple[list[float], list[float]]:
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    o = Options()
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        o.add_argument(arg)
    driver = webdriver.Chrome(service=Service(shutil.which("chromedriver")), options=o)
    driver.set_window_size(1280, 800)
    load, ready = [], []
    try:
        for _ in range(loads):
            driver.get("about:blank")
            driver.get(page.as_uri())
            t = driver.execute_script(
                "const n = performance.getEntriesByType('navigation')[0];"
                "return [n.loadEventEnd, n.domContentLoadedEventEnd];"
            )
            load.append(t[0] / 1000)
            ready.append(t[1] / 1000)
    finally:
        driver.quit()
    return load, ready


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--loads", type=int, default=5)
    args = ap.parse_args()
    times: dict[str, list[float]] = {name: [] for name in VARIANTS}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(args.repeat):
            for name, flags in VARIANTS.items():
                times[name].append(once(flags, Path(tmp) / f"{name}-{i}".replace(" ", "_")))
        med = {name: statistics.median(runs) for name, runs in times.items()}
        for name, runs in times.items():
            print(
                f"{name:<16} median {med[name]:6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in runs)})"
            )
        print(
            f"full build with the page / without: {med['full'] / med['full --no-html']:.3f}x (review: <= 1.10x)"
        )
        print(f"bare build with the page / without: {med['bare + page'] / med['bare']:.3f}x")
        page = Path(tmp) / "full-0" / "report.html"
        print(f"report.html: {page.stat().st_size / 1e6:.2f} MB (review: <= 5 MB)")
        if shutil.which("chromedriver"):
            load, ready = load_times(page, args.loads)
            print(
                f"headless Chromium, from disk: load {statistics.median(load):.3f} s, DOMContentLoaded (the table "
                f"drawn) {statistics.median(ready):.3f} s, medians of {args.loads} (review: load < 2 s)"
            )
        else:
            print(
                "headless Chromium: chromedriver not found (apt-get install chromium chromium-driver)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
