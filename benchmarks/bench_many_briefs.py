"""A plan with 200 briefs, built whole by the real command, against the same plan without them, in
the same run.

    python benchmarks/bench_many_briefs.py [--briefs 200]

The shipped models with ``--briefs`` entries added to the plan's ``briefs:`` list (each model in
turn, at each of the plan's cluster sizes and intervals, on two SKUs and three tiers of its site),
built by ``ckptreport build`` in a process of its own; the baseline is ``--no-briefs`` on the same
plan. Reported: the seconds of each, the briefs' share, seconds per brief. The issue's bound: the
whole build under 3 minutes. Nothing is asserted.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ckptreport.base.paths import shipped_models
from ckptreport.read.load import load

PAIRS = [  # (SKUs, tiers) of one site each
    (["dgx-h100", "dgx-b200"], ["superpod-best", "superpod-better", "superpod-good"]),
]


def plan_with_briefs(target: Path, n: int) -> None:
    shutil.copytree(shipped_models(), target)
    inputs = load(target)
    models = list(inputs.plan.models or inputs.models)
    gpus = [int(q.value) for q in inputs.plan.gpus]
    intervals = [q.text for q in inputs.plan.intervals]
    lines = ["", "briefs:"]
    for k in range(n):
        skus, tiers = PAIRS[k % len(PAIRS)]
        lines += [
            f"  - name: brief-{k:03d}",
            f"    model: {models[k % len(models)]}",
            f"    skus: [{', '.join(skus)}]",
            f"    tiers: [{', '.join(tiers)}]",
            f"    gpus: {gpus[(k // len(models)) % len(gpus)]}",
            f"    interval: {intervals[(k // (len(models) * len(gpus))) % len(intervals)]}",
        ]
    plan = target / "plan.yaml"
    plan.write_text(plan.read_text() + "\n".join(lines) + "\n")


def once(models: Path, out: Path, *flags: str) -> float:
    t = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "ckptreport.cli",
            "build",
            "--models",
            str(models),
            "--out",
            str(out),
            "-q",
            *flags,
        ],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return time.perf_counter() - t


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--briefs", type=int, default=200)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        plan_with_briefs(tmp / "models", args.briefs)
        without = once(tmp / "models", tmp / "out-without", "--no-briefs")
        whole = once(tmp / "models", tmp / "out-whole")
        written = len(list((tmp / "out-whole" / "briefs").glob("*.pdf")))
    print(
        f"plan with {args.briefs} briefs ({written} PDFs written, one per job besides): build {whole:.1f} s"
    )
    print(
        f"the same plan --no-briefs: {without:.1f} s; the briefs add {whole - without:.1f} s, "
        f"{(whole - without) / written:.2f} s per brief; whole build / without briefs: {whole / without:.1f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
