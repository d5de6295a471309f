"""Peak memory of judging one summary line against the number of its options: 10 to 10,000.

    python benchmarks/bench_options.py [--options 10 100 1000 10000] [--samples 1000]

A plan of one model, SKU, cluster size, cadence, engine and strategy, whose options are N copies of
one storage tier (each its own name), is judged as a build and `ckptreport sensitivity` judge it:
the job's decision (each option's cadence solved, its chance over 1,000 draws, the robust cadence),
then the summary line's tornado, break-evens and Monte Carlo band (``robustness``), each in a child
process of its own; its peak is the child's maximum RSS. The baseline, in the same run, is the same
child loading the same models and computing their frame, without judging (the inputs alone grow
with N: 10,000 tiers are 10,000 validated entries). Reported: each peak, the judging's own memory
(peak less baseline) and that against the 10-option one. Before the judging was chunked
(draws x options at most ``evaluator.CELLS`` at once), 2,003 tiers ran out of memory at 7 GB.
Nothing is asserted.
"""

from __future__ import annotations

import argparse
import copy
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from ckptreport.base.paths import shipped_models

CHILD = r"""
import json, resource, sys, time
from ckptreport.read.load import load
from ckptreport.model.evaluate import scenarios
t = time.perf_counter()
inputs = load(sys.argv[1])
frame, _ = scenarios(inputs)
if sys.argv[2] == "judge":
    from ckptreport.answer.report import compute
    from ckptreport.answer.uncertainty import robustness
    report = compute(inputs, needs=frozenset())  # the job's decision: cadence, chance, robustness
    rows = robustness.line_rows(report, 0)
    r = robustness.robustness(rows, report.params, samples=int(sys.argv[3]))
    s = robustness.sensitivity(report, report.params, 0)
print(json.dumps({"options": len(frame), "seconds": time.perf_counter() - t,
                  "peak_MiB": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def plan_of(models: Path, options: int) -> None:
    """One line whose options are ``options`` copies of pfs-100."""
    storage = yaml.safe_load((models / "storage.yaml").read_text())
    tier = storage["tiers"]["pfs-100"]
    short = {  # its sources shortened: 10,000 copies stay inside an input file's 8 MiB
        k: {**v, "source": "as pfs-100"} if isinstance(v, dict) and "source" in v else v
        for k, v in tier.items()
        if k != "description"
    }
    storage["tiers"] = {f"pfs-{i:05d}": copy.deepcopy(short) for i in range(options)}  # no aliases
    (models / "storage.yaml").write_text(
        yaml.safe_dump(storage, sort_keys=False, default_flow_style=None)
    )
    plan = yaml.safe_load((models / "plan.yaml").read_text())
    plan.update(
        models=["llama3-405b"],
        skus=["dgx-h100"],
        gpus=[1024],
        intervals=["30 min"],
        strategies=["async"],
        engines=["dcp-async-cached"],
        max_rows="20M",
    )
    plan["summary"] = {
        "gpus": 1024,
        "interval": "30 min",
        "model": "llama3-405b",
        "sku": "dgx-h100",
    }
    for key in ("jobs", "briefs"):
        plan.pop(key, None)
    (models / "plan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))


def child(models: Path, mode: str, samples: int) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(models), mode, str(samples)],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(done.stderr[-3000:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--options", type=int, nargs="+", default=[10, 100, 1000, 10000])
    parser.add_argument("--samples", type=int, default=1000)
    args = parser.parse_args()
    first = None
    print(
        f"{'options':>8} {'judged s':>9} {'peak MiB':>9} {'bare MiB':>9} {'judging MiB':>12} {'x 10':>6}"
    )
    with tempfile.TemporaryDirectory() as tmp:
        for n in args.options:
            models = Path(tmp) / f"m{n}"
            shutil.copytree(shipped_models(), models)
            plan_of(models, n)
            bare = child(models, "bare", args.samples)
            judged = child(models, "judge", args.samples)
            own = judged["peak_MiB"] - bare["peak_MiB"]
            first = first or own
            print(
                f"{judged['options']:>8,} {judged['seconds']:>9.1f} {judged['peak_MiB']:>9.0f} "
                f"{bare['peak_MiB']:>9.0f} {own:>12.0f} {own / first:>6.2f}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
