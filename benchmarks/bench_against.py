"""The default build of this tree against the default build of an earlier commit, in the same run:
medians of interleaved runs of the real command, each in a process of its own, each on its own
shipped models (what a user of each version gets from `ckptreport build`).

    python benchmarks/bench_against.py --baseline aeca804 [--repeat 5]

The earlier commit is checked out into a temporary git worktree and run from its own ``src``.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def once(src: Path, models: Path, out: Path) -> float:
    """Seconds of one default build from ``src`` on ``models``."""
    t = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ckptreport.cli", "build", "--models", str(models)]
        + ["--out", str(out), "-q"],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONPATH": str(src)},
        cwd=out.parent,
    )
    return time.perf_counter() - t


def main() -> int:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--baseline", required=True, help="the commit to compare with")
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        base = Path(tmp) / "baseline"
        subprocess.run(
            ["git", "-C", str(REPO), "worktree", "add", "--detach", str(base), args.baseline],
            check=True,
            capture_output=True,
        )
        try:
            trees = {"baseline": base, "this tree": REPO}
            times: dict[str, list[float]] = {name: [] for name in trees}
            for i in range(args.repeat):
                for name, root in trees.items():
                    out = Path(tmp) / f"{name.replace(' ', '-')}-{i}" / "out"
                    out.parent.mkdir()
                    times[name].append(once(root / "src", root / "models", out))
        finally:
            subprocess.run(
                ["git", "-C", str(REPO), "worktree", "remove", "--force", str(base)],
                capture_output=True,
            )
    floor = statistics.median(times["baseline"])
    for name, runs in times.items():
        median = statistics.median(runs)
        print(
            f"{name:<10} median {median:6.2f} s  (runs: {', '.join(f'{t:.2f}' for t in runs)})  "
            f"x{median / floor:.2f} of the baseline ({args.baseline})"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
