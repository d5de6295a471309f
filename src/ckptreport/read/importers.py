"""Convert other tools' machine-readable output into measured files.

- fio ``--output-format=json``: sequential write bandwidth of one host (jobs summed); into a tier
  (``--tier``) it is that tier's per-node write, else the host's local NVMe write.
- IOR JSON summary (``-O summaryFormat=JSON``): the write phase's mean bandwidth (MiB/s); across
  several nodes it is the tier's aggregate write, on one node its per-node write.
- ``nvbandwidth -j``: device_to_host_memcpy_ce gives the per-GPU copy to pinned host memory (median
  over GPUs), all_to_host_memcpy_ce the whole node's (the sum, every GPU copying at once).
"""

from __future__ import annotations

import json
import math
import re
import statistics
from pathlib import Path

from ..base.errors import InputError, Problem
from ..base.safeio import read_regular
from . import measured
from .units import COLUMN_UNITS

GBps = COLUMN_UNITS["GBps"].scale  # nvbandwidth reports GB/s (1e9 B/s)

MAX_BYTES = 64 * 2**20  # tool outputs are small; a larger file is not one


def _json(path: Path) -> dict:
    shown = str(path)
    raw = read_regular(path, shown, MAX_BYTES)
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError as e:
        raise InputError(Problem(shown, 0, 0, "", f"not UTF-8 text (byte {e.start})")) from None
    except json.JSONDecodeError as e:
        raise InputError(Problem(shown, e.lineno, e.colno, "", f"not JSON: {e.msg}")) from None
    except RecursionError:
        raise InputError(
            Problem(shown, 0, 0, "", "JSON nested too deeply to be a tool's output")
        ) from None
    if not isinstance(data, dict):
        raise InputError(Problem(shown, 1, 1, "", "expected a JSON object"))
    return data


def _bad(path: Path, key: str, message: str) -> InputError:
    return InputError(Problem(str(path), 0, 0, key, message))


def _positive(path: Path, key: str, value) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value <= 0
    ):
        raise _bad(path, key, f"expected a positive number, got {_shown(value)}")
    return float(value)


def _count(path: Path, key: str, value) -> int:
    """A positive whole number, as a JSON number or as ASCII digits."""
    if isinstance(value, str) and re.fullmatch(r"[0-9]{1,12}", value.strip()):
        value = int(value.strip())
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or value != int(value)
        or not 0 < value < 1e12
    ):
        raise _bad(path, key, f"expected a whole number of at least 1, got {_shown(value)}")
    return int(value)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def fio(path: Path, sku: str, tier: str | None = None, host: str | None = None) -> dict:
    data = _json(path)
    jobs = data.get("jobs")
    if not isinstance(jobs, list) or not jobs:
        raise _bad(path, "jobs", "no jobs: is this fio --output-format=json output?")
    samples, writers, directory = [], 0, None
    for i, job in enumerate(jobs):
        if not isinstance(job, dict) or not isinstance(job.get("write"), dict):
            raise _bad(path, f"jobs[{i}].write", "missing: the job did not write")
        if job.get("error"):
            raise _bad(path, f"jobs[{i}].error", f"fio reported error {job['error']!r}")
        samples.append(_positive(path, f"jobs[{i}].write.bw_bytes", job["write"].get("bw_bytes")))
        options = job.get("job options") or {}
        if not isinstance(options, dict):
            raise _bad(path, f"jobs[{i}].job options", "expected a JSON object of fio's options")
        writers += _count(path, f"jobs[{i}].job options.numjobs", options.get("numjobs", 1))
        found = options.get("directory") or options.get("filename")
        directory = directory or (str(found) if found is not None else None)
    opts = jobs[0].get("job options") or {}
    method = (
        f"{data.get('fio version', 'fio')} sequential write: rw={opts.get('rw', '?')}, bs={opts.get('bs', '?')}, "
        f"{writers} job(s), end_fsync={opts.get('end_fsync', '0')}, direct={opts.get('direct', '0')}; "
        f"bandwidth summed over {len(samples)} job entr{'y' if len(samples) == 1 else 'ies'}"
    )
    metric = {
        "value": sum(samples),
        "samples": samples,
        "method": method,
        "writers": writers,
        "path": directory,
    }
    if tier:
        metric["tier"] = tier
    name = "tier_write_per_node" if tier else "local_nvme_write"
    return measured.document(
        host or path.stem,
        f"{data.get('fio version', 'fio')} (imported by ckptreport)",
        sku,
        {name: metric},
    )


def ior(path: Path, sku: str, tier: str, host: str | None = None) -> dict:
    data = _json(path)
    summary = data.get("summary")
    if not isinstance(summary, list):
        raise _bad(path, "summary", "no summary: run IOR with -O summaryFormat=JSON")
    writes = [s for s in summary if isinstance(s, dict) and s.get("operation") == "write"]
    if not writes:
        raise _bad(path, "summary", "no write phase (operation: write) in the summary")
    w = writes[0]
    mean = _positive(path, "summary[write].bwMeanMIB", w.get("bwMeanMIB")) * 2**20
    tasks = _count(path, "summary[write].numTasks", w.get("numTasks"))
    per_node = _count(path, "summary[write].tasksPerNode", w.get("tasksPerNode", tasks))
    if per_node > tasks:
        raise _bad(
            path,
            "summary[write].tasksPerNode",
            f"{per_node} tasks per node, more than the {tasks} tasks",
        )
    nodes = max(1, tasks // per_node)
    samples = [
        _positive(path, "summary[write].bwMinMIB", w.get("bwMinMIB", w["bwMeanMIB"])) * 2**20,
        _positive(path, "summary[write].bwMaxMIB", w.get("bwMaxMIB", w["bwMeanMIB"])) * 2**20,
    ]
    method = (
        f"IOR {data.get('Version', '')} {w.get('API', '')} write: {tasks} tasks on {nodes} node(s), "
        f"block {w.get('blockSize', '?')} B, transfer {w.get('transferSize', '?')} B, "
        f"{w.get('repetitions', '?')} repetition(s); mean of bwMeanMIB (MiB/s); samples are min and max"
    ).strip()
    metric = {
        "value": mean,
        "samples": samples,
        "method": method,
        "tier": tier,
        "writers": tasks,
        "nodes": nodes,
    }
    name = "tier_write" if nodes > 1 else "tier_write_per_node"
    machine = str(data.get("Machine", "")).split()
    return measured.document(
        host or (machine[1] if len(machine) > 1 else path.stem),
        f"IOR {data.get('Version', '')} (imported by ckptreport)".replace("  ", " "),
        sku,
        {name: metric},
    )


def _matrix(path: Path, case: dict) -> list[float]:
    values = []
    matrix = case.get("bandwidth_matrix")
    if not isinstance(matrix, list) or not matrix:
        raise _bad(
            path, f"{case.get('name')}.bandwidth_matrix", "expected a non-empty list of rows"
        )
    for r, row in enumerate(matrix):
        if not isinstance(row, list):
            raise _bad(
                path, f"{case.get('name')}.bandwidth_matrix[{r}]", "expected a row of values"
            )
        for c, v in enumerate(row):
            if v in ("N/A", None):
                continue
            try:
                x = float(v)
            except (TypeError, ValueError):
                raise _bad(
                    path, f"{case.get('name')}.bandwidth_matrix[{r}][{c}]", f"not a number: {v!r}"
                ) from None
            values.append(_positive(path, f"{case.get('name')}.bandwidth_matrix[{r}][{c}]", x))
    return values


def nvbandwidth(path: Path, sku: str, host: str | None = None) -> dict:
    data = _json(path)
    root = data.get("nvbandwidth")
    if not isinstance(root, dict) or not isinstance(root.get("testcases"), list):
        raise _bad(path, "nvbandwidth.testcases", "missing: is this `nvbandwidth -j` output?")
    cases = {
        c["name"]: c
        for c in root["testcases"]
        if isinstance(c, dict) and isinstance(c.get("name"), str)
    }
    metrics, skipped, gpus = {}, [], 0
    version = f"nvbandwidth {_shown(root.get('version', ''))} (driver {_shown(root.get('Driver Version', '?'))})"
    one = cases.get("device_to_host_memcpy_ce")
    if one and one.get("status") == "Passed":
        gbps = _matrix(path, one)
        gpus = len(gbps)
        if gbps:
            metrics["d2h_per_gpu"] = {
                "value": statistics.median(gbps) * GBps,
                "samples": [g * GBps for g in gbps],
                "method": f"{version} device_to_host_memcpy_ce: copy engine, each GPU alone "
                "to pinned host memory; median over GPUs",
            }
    else:
        skipped.append("device_to_host_memcpy_ce: not in the file or not Passed")
    every = cases.get("all_to_host_memcpy_ce")
    if every and every.get("status") == "Passed":
        gbps = _matrix(path, every)
        if gbps:
            metrics["d2h_per_node"] = {
                "value": sum(gbps) * GBps,
                "samples": [g * GBps for g in gbps],
                "method": f"{version} all_to_host_memcpy_ce: every GPU copying to host at "
                "once; sum over GPUs",
            }
    else:
        skipped.append("all_to_host_memcpy_ce: not in the file or not Passed")
    if not metrics:
        raise _bad(
            path,
            "nvbandwidth.testcases",
            "no passed device_to_host_memcpy_ce or all_to_host_memcpy_ce test",
        )
    return measured.document(
        host or path.stem,
        version,
        sku,
        metrics,
        gpus={"model": "unknown", "count": gpus},
        skipped=skipped,
    )
