"""Hostile input, tried as a hostile user would. Every case ends in one of two outcomes: ``ok`` (and
then nothing silently wrong: no negative times or counts, no formula in the CSV, no unprintable
name) or ``clean error`` (an InputError naming the place, exit 2 through the CLI). Anything else,
an internal error, a traceback, a hang, a partial output, fails the test.

Generated cases (hypothesis, seeded by the test names): mutations of the models files, of a measured
file, of fio / IOR / nvbandwidth JSON, and CLI arguments; hand cases: files that never end, FIFOs,
links, deep nesting, output-directory traps, killed and concurrent builds. Most go through the
loader and importers in-process; a sample of each kind through the real CLI and a full build.

Set CKPTREPORT_HOSTILE_LOG=FILE to append one JSON line per case (command, kind, outcome); ``make
test`` does, and prints the count per command and outcome at the end.
"""

from __future__ import annotations

import copy
import csv
import json
import math
import os
import re
import signal
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import numpy as np
import openpyxl
import pandas as pd
import pytest
import yaml
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ckptreport import diff as diff_mod
from ckptreport.answer.report import compute
from ckptreport.base.errors import InputError
from ckptreport.cli import main
from ckptreport.read import importers, measured
from ckptreport.read.load import load
from ckptreport.render.tables import csv_safe

from conftest import REPO, libreoffice, output_files

FIXTURES = REPO / "tests" / "fixtures" / "measured"
TINY_PLAN = {
    "models": ["llama3-8b"],
    "skus": ["dgx-h100", "aws-p5"],
    "tiers": ["superpod-good", "local-nvme", "s3-standard"],
    "engines": ["dcp-async-cached", "torch-save"],
    "gpus": ["64"],
    "intervals": ["30 min"],
    "target_overhead": "1%",
    "mfu": "40%",
    "restart": "10 min",
    "retention": "2",
    "buffers": "1",
}
CASES = settings(
    max_examples=int(os.environ.get("CKPTREPORT_HOSTILE_EXAMPLES", "300")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


# the command a kind of in-process case stands for (the loader and compute are build's and validate's)
COMMAND_OF = (
    ("models", "build"),
    ("file trap", "build"),
    ("measured file", "build --measured"),
    ("tool JSON", "import"),
    ("diff", "diff"),
    ("output directory", "build"),
    ("killed build", "build"),
    ("concurrent builds", "build"),
    ("cli: full build", "build"),
    ("cli: file trap", "validate"),
)


def _log(kind: str, outcome: str, command: str | None = None) -> None:
    """One case's outcome, for the count ``make test`` prints per command (conftest)."""
    path = os.environ.get("CKPTREPORT_HOSTILE_LOG")
    if path:
        if command is None:
            command = next((c for prefix, c in COMMAND_OF if kind.startswith(prefix)), kind)
        with open(path, "a") as f:
            f.write(json.dumps({"command": command, "kind": kind, "outcome": outcome}) + "\n")


def outcome(kind: str, fn) -> str:
    """'ok' or 'clean error'; anything else is returned as what went wrong (the test fails on it)."""
    try:
        fn()
        result = "ok"
    except InputError as e:
        assert e.problems and all(str(p) for p in e.problems)
        assert all(ch.isprintable() or ch == "\n" for ch in e.render()), e.render()
        result = "clean error"
    except AssertionError as e:
        result = f"silently wrong: {e}"
    except Exception as e:  # noqa: BLE001  (what the user would see as an internal error)
        result = f"internal error: {e!r}"
    _log(kind, result.split(":")[0])
    return result


# What the mutation tests' check (``sane``) reads: the frame, not the briefs' data or the workbook's
# rows (2.6x cheaper an example); the jobs' decisions are kept, so that a mutation that breaks only
# them is still caught. The base case below, and every build the CLI cases run on hostile files
# (test_hostile_command_lines, the build cases), still compute everything.
FRAME = frozenset({"decisions"})

_CHECKED: dict[str, BaseException | None] = {}  # this test process's outcomes, by input bytes


def _digest(files: list[Path]) -> str:
    """One hash of the names and bytes of ``files`` (files, and every file under directories)."""
    import hashlib

    digest = hashlib.sha256()
    for root in files:
        for f in sorted(root.rglob("*")) if root.is_dir() else [root]:
            if f.is_file():
                digest.update(f.name.encode() + b"\0" + f.read_bytes() + b"\0")
    return digest.hexdigest()


def checked(files: list[Path], check) -> None:
    """``check()`` (compute and judge), once per content of ``files`` (files and directories, by
    their bytes) in this test process: what compute gives is a function of its input files' bytes
    (a rebuild is the same bytes, test_build), so an example whose files are byte for byte an earlier
    one's is given that one's outcome again; its importing, writing and reading still run. Each
    reuse is logged (``make test`` prints how many)."""
    key = _digest(files)
    if key in _CHECKED:
        _log("reused", "reused", command="(an earlier example's outcome: the same input bytes)")
    else:
        try:
            check()
            _CHECKED[key] = None
        except Exception as e:  # noqa: BLE001  (replayed below, as the first example raised it)
            _CHECKED[key] = e
    if _CHECKED[key] is not None:
        raise _CHECKED[key]


def sane(report) -> None:
    """What 'ok' must mean: the numbers a planner reads are not nonsense, and no text in the CSV
    could run as a formula."""
    f = report.frame
    for name, column in f.items():  # by position: a look-up by name costs more than the check
        if column.dtype.kind in "fi" and (
            name.endswith(("_s", "_bytes", "_pct", "_GBps")) or name in ("nodes", "gpus")
        ):
            values = column.to_numpy(float)
            assert not (values[~np.isnan(values)] < 0).any(), f"{name} is negative"
        if column.dtype.kind == "i":
            assert (column.to_numpy() >= 0).all(), f"{name} overflowed"
    assert (f["ckpt_bytes"] > 0).all() and np.isfinite(f["ckpt_bytes"]).all()
    assert (f["gpus"] >= 1).all() and (f["nodes"] >= 1).all()
    for name in f.select_dtypes("category").columns:
        for value in f[name].cat.categories:
            assert str(value).isprintable(), f"{name}: {value!r}"
    for name, column in csv_safe(f).items():
        if column.dtype == object or isinstance(column.dtype, pd.CategoricalDtype):
            texts = column.astype(str).unique()
            assert not any(t and t[0] in "=+-@\t\r" for t in texts), (
                f"{name} holds a formula for a spreadsheet"
            )


# ---- hostile values -----------------------------------------------------------------------------

NUMBERS = [
    "0",
    "-1",
    "1e300",
    "1e-300",
    "1e309",
    "-0",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "1_000",
    "1,0",
    "0x10",
    "١٢",
    "²",
    "9" * 400,
    "0.0000001",
    "18446744073709551616",
    "1e15",
    "1e16",
    "3.5",
    "-3.5",
]
UNITS = [
    "",
    " ",
    "B",
    "GB",
    "GiB",
    "TB",
    "B/s",
    "GB/s",
    "Gb/s",
    "PB/s",
    "s",
    "min",
    "h",
    "y",
    "%",
    "$",
    "USD",
    "TFLOPS",
    "FLOPS",
    "x",
    "x 400 Gb/s",
    "GB/s/GB",
    "bf16",
    "K",
    "T",
    "B",
]
WEIRD = [
    "",
    " ",
    "~",
    "null",
    "yes",
    "no",
    "true",
    '=HYPERLINK("http://x","y")',
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
    "@SUM(1)",
    "\tTAB",
    "\rCR",
    "a\x00b",
    "\x1b[31mred",
    "\u202egnp.exe",
    "\ud800",
    "x" * 300,
    "y" * 40_000,
    "../../etc/passwd",
    '<img src="file:///etc/passwd">',
    "A & B <C>",
    "🙂",
    "a\nb",
    "'",
    '"',
    "{value: 1}",
    "[1, 2]",
    "*alias",
    "&anchor x",
    "!!python/object:os.system",
    "<<: *x",
]
scalars = st.one_of(
    st.sampled_from(WEIRD),
    st.sampled_from(NUMBERS),
    st.builds(lambda n, u: f"{n} {u}".strip(), st.sampled_from(NUMBERS), st.sampled_from(UNITS)),
    st.builds(
        lambda n, u: f"{n}{u}",
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.sampled_from(UNITS),
    ),
    st.text(max_size=12),
)
structures = st.one_of(
    st.none(),
    st.just([]),
    st.just({}),
    st.lists(scalars, max_size=3),
    st.dictionaries(
        st.sampled_from(["value", "basis", "source", "date", "region", "x"]), scalars, max_size=3
    ),
)
values = st.one_of(scalars, scalars, structures)


def _paths(data, prefix=()):
    """Every path into a nested structure: to leaves and to mapping keys."""
    out = [prefix]
    if isinstance(data, dict):
        for k, v in data.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(data, list):
        for i, v in enumerate(data):
            out += _paths(v, (*prefix, i))
    return out


def _set(data, path, value):
    obj = data
    for p in path[:-1]:
        obj = obj[p]
    obj[path[-1]] = copy.deepcopy(value)  # st.just hands out one object: never share it


@st.composite
def mutated(draw, base):
    """A copy of ``base`` with one to three hostile edits: a value replaced, a key renamed or removed,
    an unknown key added."""
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        action = draw(st.sampled_from(["value", "value", "value", "rename", "delete", "add"]))
        parent = data
        for p in path[:-1]:
            parent = parent[p]
        if action == "value":
            _set(data, path, draw(values))
        elif action == "rename" and isinstance(parent, dict):
            parent[draw(st.sampled_from(WEIRD + ["llama3-8b", "dgx-h100"]))] = parent.pop(path[-1])
        elif action == "delete" and isinstance(parent, dict):
            parent.pop(path[-1])
        elif action == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(WEIRD + ["bandwith", "write", "sites"]))] = copy.deepcopy(
                draw(values)
            )
    return data


def _dump(data) -> str:
    try:
        return yaml.safe_dump(data, allow_unicode=True, sort_keys=False)
    except (UnicodeEncodeError, yaml.YAMLError):
        return yaml.safe_dump(data, allow_unicode=False, sort_keys=False)


def _write(path: Path, text: str) -> None:
    path.write_bytes(text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text)


# ---- the models files ---------------------------------------------------------------------------


def _tiny_models() -> dict[str, dict]:
    """The shipped entities the tiny plan uses, as plain data, one dict per file."""

    def keep(name, section, names):
        data = yaml.safe_load((REPO / "models" / name).read_text())
        return {section: {k: v for k, v in data[section].items() if k in names}}

    models = keep("models.yaml", "models", TINY_PLAN["models"])
    models["recipes"] = keep("models.yaml", "recipes", ["adamw-bf16"])["recipes"]
    return {
        "models.yaml": {"recipes": models["recipes"], "models": models["models"]},
        "hardware.yaml": keep("hardware.yaml", "skus", TINY_PLAN["skus"]),
        "storage.yaml": keep("storage.yaml", "tiers", TINY_PLAN["tiers"]),
        "engines.yaml": keep("engines.yaml", "engines", TINY_PLAN["engines"]),
        "plan.yaml": dict(TINY_PLAN),
    }


TINY = _tiny_models()
# each tiny file's YAML, dumped once: an example writes the files it did not mutate as these bytes
# (PyYAML's pure-Python emitter took a fifth of a mutation test's time dumping them again)
TINY_TEXT = {name: _dump(data) for name, data in TINY.items()}


def _models_dir(tmp: Path, files: dict[str, dict]) -> Path:
    d = tmp / "models"
    d.mkdir(exist_ok=True)
    for name, data in files.items():
        _write(d / name, TINY_TEXT[name] if data is TINY.get(name) else _dump(data))
    return d


def test_the_tiny_models_are_valid(tmp_path):
    """The base every mutation starts from is itself valid, and builds."""
    assert outcome("models: base", lambda: sane(compute(load(_models_dir(tmp_path, TINY))))) == "ok"


@CASES
@given(data=st.data())
def test_mutated_models_files(tmp_path_factory, data):
    name = data.draw(st.sampled_from(sorted(TINY)))
    files = {**TINY, name: data.draw(mutated(TINY[name]))}
    d = _models_dir(tmp_path_factory.mktemp("m"), files)
    got = outcome(
        f"models: {name}", lambda: checked([d], lambda: sane(compute(load(d), needs=FRAME)))
    )
    assert got in ("ok", "clean error"), got


# ---- the purchase's keys: a cluster, its jobs, a tier's unit and what is owned ------------------

CLUSTERED = copy.deepcopy(TINY)
CLUSTERED["plan.yaml"]["clusters"] = [
    {
        "name": "c",
        "sku": "dgx-h100",
        "gpus": "128",
        "usd_per_kwh": "$0.10",
        "usd_per_rack_unit_month": "$20",
        "discount_rate": "8%",
    }
]
CLUSTERED["plan.yaml"]["jobs"] = [
    {"name": "a", "model": "llama3-8b", "sku": "dgx-h100", "gpus": "64", "cluster": "c"},
    {
        "name": "b",
        "model": "llama3-8b",
        "sku": "dgx-h100",
        "gpus": "64",
        "cluster": "c",
        "start": "1 d",
    },
]
CLUSTERED["storage.yaml"]["tiers"]["superpod-good"]["unit"].update(
    max=6, power_W=3000, rack_units=4
)
CLUSTERED["plan.yaml"]["tiers"] = [*TINY_PLAN["tiers"], "kept"]
CLUSTERED["storage.yaml"]["tiers"]["kept"] = {
    "kind": "parallel_fs",
    "write": "40 GB/s",
    "owned": 1,
    "support_usd_per_year": "$10,000",
}
CLUSTER_KEYS = ("clusters", "jobs", "unit", "owned", "support_usd_per_year", "kept")


def sane_purchase(report) -> None:
    """What 'ok' must mean for a purchase: counts within what is sold, no negative price or cost, the
    choice meets every target and costs no more than any other product's best that does."""
    sane(report)
    for cp in report.clusters:
        for p in cp.products:
            assert p.units >= 1 and p.purchase_usd >= 0 and p.running_usd_year >= 0, p
            assert p.storage_life_usd >= 0 and p.gpu_lost_usd >= 0, p
        if cp.choice is not None:
            assert cp.choice.feasible
            assert all(cp.choice.total_usd <= p.total_usd for p in cp.products if p.feasible)


@settings(CASES, max_examples=int(os.environ.get("CKPTREPORT_HOSTILE_PURCHASE_EXAMPLES", "40")))
@given(data=st.data())
def test_mutated_cluster_and_unit_keys(tmp_path_factory, data):
    """The purchase's keys mutated (in plan.yaml or storage.yaml, under a cluster, a job, a unit or an
    owned tier), the decisions and the purchase computed: ok, or a clean error at the key."""
    name = data.draw(st.sampled_from(["plan.yaml", "storage.yaml"]))
    base = CLUSTERED[name]
    inside = [p for p in _paths(base) if p and any(k in p for k in CLUSTER_KEYS)]
    path = data.draw(st.sampled_from(inside))
    changed = copy.deepcopy(base)
    action = data.draw(st.sampled_from(["value", "value", "delete"]))
    parent = changed
    for p in path[:-1]:
        parent = parent[p]
    if action == "delete" and isinstance(parent, dict):
        parent.pop(path[-1])
    else:
        _set(changed, path, data.draw(values))
    files = {**CLUSTERED, name: changed}
    d = _models_dir(tmp_path_factory.mktemp("c"), files)
    got = outcome(
        f"models: {name} (purchase)",
        lambda: checked([d], lambda: sane_purchase(compute(load(d), needs=FRAME))),
    )
    assert got in ("ok", "clean error"), got


def test_the_clustered_tiny_models_buy_for_both_jobs(tmp_path):
    d = _models_dir(tmp_path, CLUSTERED)
    report = compute(load(d), needs=FRAME)
    sane_purchase(report)
    [cp] = report.clusters
    assert cp.choice is not None and set(cp.jobs) == {"a", "b"}
    assert "kept" in {p.tier for p in cp.products}  # what is owned is an option, priced to run


@pytest.mark.parametrize(
    "raw, why",
    [
        (b"\xff\xfe plan", "not UTF-8"),
        ("[" * 20_000 + "]" * 20_000, "nested too deeply"),
        ("a: &x 1\nb: *x\n", "aliases"),
        ("a: !!python/object/apply:os.system ['true']\n", "tag"),
        ("<<: {a: 1}\n", "merge keys"),
        ("gpus: [64]\ngpus: [128]\n", "duplicate key"),
        ("- a\n- b\n", "expected a mapping"),
        ("\t- tabs\n", "YAML syntax error"),
        ('models: ["\\ud800"]\n', "printable|invalid Unicode character escape"),
        ("x: " + "y" * (9 * 2**20), "larger than"),
    ],
)
def test_raw_plan_files(tmp_path, raw, why):
    d = _models_dir(tmp_path, TINY)
    _write(d / "plan.yaml", raw)
    with pytest.raises(InputError, match=why):
        load(d)
    _log("models: raw bytes", "clean error")


# ---- files that are not files -------------------------------------------------------------------


def _trap(path: Path, kind: str) -> None:
    path.unlink(missing_ok=True)
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "dev-zero":
        path.symlink_to("/dev/zero")
    elif kind == "dev-urandom":
        path.symlink_to("/dev/urandom")
    elif kind == "directory":
        path.mkdir()
    elif kind == "link-loop":
        path.symlink_to(path)
    elif kind == "dangling":
        path.symlink_to(path.parent / "nowhere")


TRAPS = ["fifo", "dev-zero", "dev-urandom", "directory", "link-loop", "dangling"]


@pytest.mark.parametrize("kind", TRAPS)
@pytest.mark.parametrize("file", ["models.yaml", "plan.yaml", "measured", "fio.json"])
def test_files_that_never_end_or_are_not_files(tmp_path, kind, file):
    """In-process: each is refused at once, with the file named; no read of a device, no wait on a FIFO."""
    d = _models_dir(tmp_path, TINY)
    if file.endswith(".yaml"):
        _trap(d / file, kind)
        run = lambda: load(d)  # noqa: E731
    elif file == "measured":
        m = tmp_path / "m.yaml"
        _trap(m, kind)
        run = lambda: measured.apply(load(d), [m])  # noqa: E731
    else:
        j = tmp_path / "fio.json"
        _trap(j, kind)
        run = lambda: importers.fio(j, "dgx-h100")  # noqa: E731
    t = time.monotonic()
    got = outcome(f"file trap: {kind}", run)
    assert got == "clean error" and time.monotonic() - t < 10, got


@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
def test_the_cli_refuses_a_fifo_and_a_device_without_hanging(tmp_path, kind):
    """Through the real CLI, in a process of its own: exit 2 within a minute, the file named."""
    d = _models_dir(tmp_path, TINY)
    _trap(d / "storage.yaml", kind)
    done = subprocess.run(
        [sys.executable, "-m", "ckptreport.cli", "validate", "--models", str(d)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert (
        done.returncode == 2 and "storage.yaml" in done.stderr and "Traceback" not in done.stderr
    ), done.stderr
    _log("cli: file trap", "clean error")


# ---- measured files -----------------------------------------------------------------------------

MEASURED_BASE = yaml.safe_load(
    measured.dump(
        importers.nvbandwidth(FIXTURES / "nvbandwidth-h800.json", "dgx-h100"), "base.yaml"
    )
)


@CASES
@given(data=st.data())
def test_mutated_measured_files(tmp_path_factory, data):
    tmp = tmp_path_factory.mktemp("meas")
    d = _models_dir(tmp, TINY)
    path = tmp / "node.yaml"
    _write(path, _dump(data.draw(mutated(MEASURED_BASE))))
    got = outcome(
        "measured file",
        lambda: checked(
            [d, path], lambda: sane(compute(measured.apply(load(d), [path]), needs=FRAME))
        ),
    )
    assert got in ("ok", "clean error"), got


# ---- tool JSON ------------------------------------------------------------------------------------

TOOLS = {
    "fio": (json.loads((FIXTURES / "fio-seqwrite-4jobs.json").read_text()), {}),
    "ior": (
        json.loads((FIXTURES / "ior-write-4nodes.json").read_text()),
        {"tier": "superpod-good"},
    ),
    "nvbandwidth": (json.loads((FIXTURES / "nvbandwidth-h800.json").read_text()), {}),
}
json_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.sampled_from(NUMBERS + WEIRD),
    st.just([]),
    st.just({}),
    st.lists(st.integers(), max_size=3),
    st.just([[]]),
    st.just([["N/A"]]),
    st.just({"a": [1, {"b": None}]}),
)


@st.composite
def mutated_json(draw, base):
    data = copy.deepcopy(base)
    for _ in range(draw(st.integers(1, 3))):
        paths = [p for p in _paths(data) if p]
        if not paths:  # everything was removed already
            break
        path = draw(st.sampled_from(paths))
        parent = data
        for p in path[:-1]:
            parent = parent[p]
        if isinstance(parent, dict) and draw(st.booleans()) and draw(st.booleans()):
            parent.pop(path[-1])
        else:
            _set(data, path, draw(json_values))
    return data


@CASES
@given(data=st.data())
def test_mutated_tool_output(tmp_path_factory, data):
    """An importer returns a measured document or a clean error; what it returns is written, read back
    by build --measured's reader, and applied, without anything but a clean error."""
    tool = data.draw(st.sampled_from(sorted(TOOLS)))
    base, kwargs = TOOLS[tool]
    tmp = tmp_path_factory.mktemp("tool")
    src = tmp / f"{tool}.json"
    src.write_text(json.dumps(data.draw(mutated_json(base)), allow_nan=True))
    out = tmp / "measured" / "x.yaml"
    d = _models_dir(tmp, TINY)

    def run():
        doc = getattr(importers, tool)(src, "dgx-h100", **kwargs)
        measured.write(doc, out)
        measured.read([out])  # never a file the reader refuses
        checked([d, out], lambda: sane(compute(measured.apply(load(d), [out]), needs=FRAME)))

    got = outcome(f"tool JSON: {tool}", run)
    assert got in ("ok", "clean error"), got
    if got == "clean error":
        assert not out.exists() or measured.read([out])


@pytest.mark.parametrize(
    "tool, text",
    [
        ("fio", "[" * 100_000 + "]" * 100_000),
        (
            "ior",
            '{"summary": [{"operation": "write", "bwMeanMIB": 100, "numTasks": 0.5, "tasksPerNode": 0.5}]}',
        ),
        (
            "ior",
            '{"summary": [{"operation": "write", "bwMeanMIB": 100, "numTasks": "١٢", "tasksPerNode": 1}]}',
        ),
        ("fio", '{"jobs": [{"write": {"bw_bytes": 5}, "job options": {"numjobs": "²"}}]}'),
        (
            "nvbandwidth",
            '{"nvbandwidth": {"testcases": [{"name": "device_to_host_memcpy_ce", "status": "Passed", '
            '"bandwidth_matrix": 7}]}}',
        ),
        ("nvbandwidth", '{"nvbandwidth": {"testcases": [{"name": ["x"], "status": "Passed"}]}}'),
    ],
)
def test_tool_output_the_last_review_found(tmp_path, tool, text):
    src = tmp_path / "t.json"
    src.write_text(text)
    kwargs = {"tier": "superpod-good"} if tool == "ior" else {}
    got = outcome(f"tool JSON: {tool}", lambda: getattr(importers, tool)(src, "dgx-h100", **kwargs))
    assert got == "clean error", got


def test_import_refuses_a_write_for_a_local_nvme_tier_at_build(tmp_path):
    d = _models_dir(tmp_path, TINY)
    out = tmp_path / "ior.yaml"
    measured.write(
        importers.ior(FIXTURES / "ior-write-4nodes.json", "dgx-h100", tier="local-nvme"), out
    )
    with pytest.raises(InputError, match="node-local NVMe: it has no aggregate write"):
        measured.apply(load(d), [out])
    _log("measured file", "clean error")


# ---- the command line ---------------------------------------------------------------------------

args = st.lists(
    st.one_of(
        st.sampled_from(
            [
                "explain",
                "validate",
                "build",
                "import",
                "init",
                "probe",
                "calibrate",
                "--gpus",
                "--interval",
                "--strategy",
                "--recipe",
                "--models",
                "--json",
                "--out",
                "--paper",
                "--workbook-rows",
                "--measured",
                "-o",
                "--sku",
                "--tier",
                "fio",
                "ior",
                "nvbandwidth",
                "llama3-8b",
                "dgx-h100",
                "superpod-good",
                "64",
                "30min",
                "/dev/null/x",
                "/dev/zero",
                "-1h",
                "1e309 s",
                "NaN min",
                "0",
                "-5",
                "99999999999999",
            ]
        ),
        st.sampled_from(WEIRD[:20] + NUMBERS),
    ),
    min_size=1,
    max_size=6,
)


@settings(
    max_examples=int(os.environ.get("CKPTREPORT_HOSTILE_EXAMPLES", "300")) // 2, deadline=None
)
@given(argv=args)
def test_hostile_command_lines(argv):
    """Whatever the arguments: exit 0 or 2 (1 only for calibrate's verdict), a message, never a traceback.
    Builds are kept out of here (they write); the output traps below build for real."""
    if argv[0] in ("build", "init", "probe") or "build" in argv[:1]:
        argv = ["validate", *argv[1:]]
    result = CliRunner().invoke(main, argv, catch_exceptions=True)
    ok = result.exit_code in (0, 2) or (argv[0] == "calibrate" and result.exit_code == 1)
    clean = (
        "Traceback" not in result.output
        and "internal error" not in result.output
        and (result.exception is None or isinstance(result.exception, SystemExit))
    )
    _log(
        "command line",
        "ok" if result.exit_code == 0 else "clean error" if ok and clean else "bug",
        argv[0] if argv[0] in main.commands else "(no such command)",
    )
    assert ok and clean, (argv, result.exit_code, result.output[-2000:], result.exception)


@pytest.mark.parametrize(
    "argv, expect",
    [
        (
            ["explain", "llama3-8b", "dgx-h100", "superpod-good", "--gpus", "64", "--interval=-1h"],
            "from 0.001 s",
        ),
        (
            [
                "explain",
                "llama3-8b",
                "dgx-h100",
                "superpod-good",
                "--gpus",
                "0",
                "--interval",
                "1h",
            ],
            "--gpus",
        ),
        (
            [
                "explain",
                "llama3-8b",
                "dgx-h100",
                "superpod-good",
                "--gpus",
                "64",
                "--interval",
                "1e309 s",
            ],
            "too large",
        ),
        (
            [
                "import",
                "fio",
                str(FIXTURES / "fio-seqwrite-4jobs.json"),
                "--sku",
                "dgx-h100",
                "-o",
                "/dev/null/x.yaml",
            ],
            "cannot write",
        ),
        (
            [
                "explain",
                "llama3-8b\x1b[31m",
                "dgx-h100",
                "superpod-good",
                "--gpus",
                "64",
                "--interval",
                "1h",
            ],
            "\\x1b",
        ),
    ],
)
def test_command_lines_the_last_review_found(argv, expect):
    result = CliRunner().invoke(main, argv)
    assert result.exit_code == 2 and expect in result.output and "Traceback" not in result.output, (
        result.output
    )
    assert "\x1b" not in result.output
    _log("command line", "clean error", argv[0])


# ---- the output directory -----------------------------------------------------------------------


def _tiny_build(tmp: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    d = tmp / "models"
    if not d.exists():
        _models_dir(tmp, TINY)
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "ckptreport.cli",
            "build",
            "--models",
            str(d),
            "--out",
            str(out),
            "-q",
            *extra,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "SOURCE_DATE_EPOCH": "1700000000"},
    )


def test_output_directory_traps(tmp_path):
    """Each trap is a clean error that writes nothing, or a build that keeps what it did not write."""
    d = _models_dir(tmp_path, TINY)

    def run(out):
        argv = [
            "build",
            "--models",
            str(d),
            "--out",
            str(out),
            "-q",
            "--no-briefs",
            "--workbook-rows",
            "20",
        ]
        return CliRunner().invoke(main, argv)

    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    assert run(a_file).exit_code == 2
    trapped = tmp_path / "trapped"
    (trapped / "ckptreport.xlsx").mkdir(parents=True)
    r = run(trapped)
    assert r.exit_code == 2 and "a new output has its name" in r.output
    assert sorted(p.name for p in trapped.iterdir()) == ["ckptreport.xlsx"]
    briefs_file = tmp_path / "briefs-file"
    briefs_file.mkdir()
    (briefs_file / "briefs").write_text("mine")
    r = CliRunner().invoke(
        main,
        ["build", "--models", str(d), "--out", str(briefs_file), "-q", "--workbook-rows", "20"],
    )
    assert r.exit_code == 2 and (briefs_file / "briefs").read_text() == "mine"
    long = tmp_path / ("x" * 300)
    assert run(long).exit_code == 2
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    r = run(loop)
    assert r.exit_code == 2 and "loops" in r.output, r.output
    kept = tmp_path / "kept"
    (kept / "briefs").mkdir(parents=True)
    (kept / "briefs" / "mine.pdf").write_text("mine")
    (kept / "notes.txt").write_text("notes")
    assert run(kept).exit_code == 0 and run(kept).exit_code == 0
    assert (kept / "briefs" / "mine.pdf").read_text() == "mine" and (
        kept / "notes.txt"
    ).read_text() == "notes"
    linked = tmp_path / "linked"
    linked.symlink_to(kept)
    assert run(linked).exit_code == 0 and linked.is_symlink()
    leftovers = [p.name for p in tmp_path.iterdir() if ".ckptreport-" in p.name]
    assert leftovers == []
    for _ in range(7):
        _log("output directory", "ok")


def _consistent(out: Path) -> str:
    """'old' or 'new' by the manifest's input hash, after checking every file it lists is the one it
    hashed and nothing of ours is missing or extra."""
    manifest = json.loads((out / "manifest.json").read_text())
    files = output_files(out)
    ours = {
        name: data
        for name, data in files.items()
        if name != "manifest.json" and name != "notes.txt"
    }
    assert sorted(ours) == sorted(manifest["files"]), (sorted(ours), sorted(manifest["files"]))
    import hashlib

    for name, digest in manifest["files"].items():
        assert hashlib.sha256(files[name]).hexdigest() == digest, name
    assert files["notes.txt"] == b"keep me"
    return manifest["input_hash"]


def test_a_build_killed_at_any_moment_leaves_the_old_set_or_the_new(tmp_path):
    """A build of changed inputs is killed at moments spread over a whole build (fractions of the
    time the first build took, so the kills land while it computes, writes and switches on any
    machine); each time out/ is wholly the old set or wholly the new one (every file the manifest
    lists, with its hash; the user's file kept), and the next build clears what the killed ones left
    beside out/."""
    out = tmp_path / "out"
    took = math.inf
    for _ in range(
        2
    ):  # the quicker of two: a first build slowed by cold caches would send every kill too late
        t = time.monotonic()
        assert _tiny_build(tmp_path, out).returncode == 0
        took = min(took, time.monotonic() - t)
    (out / "notes.txt").write_text("keep me")
    old = _consistent(out)
    plan = tmp_path / "models" / "plan.yaml"
    plan.write_text(plan.read_text().replace("retention: '2'", "retention: '3'"))
    seen, mid_build, attempts = set(), 0, 0
    fractions = [0.15, 0.35, 0.55, 0.7, 0.8, 0.9, 0.95, 1.0]
    while (
        fractions and attempts < 24
    ):  # a kill that came too late (a loaded machine) is tried again earlier
        fraction = fractions.pop(0)
        attempts += 1
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "ckptreport.cli",
                "build",
                "--models",
                str(tmp_path / "models"),
                "--out",
                str(out),
                "-q",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "SOURCE_DATE_EPOCH": "1700000000"},
        )
        time.sleep(fraction * took)
        landed = process.poll() is None
        mid_build += landed
        process.send_signal(signal.SIGKILL)
        process.wait()
        seen.add(_consistent(out))
        if not landed:
            fractions.append(fraction * 0.6)
        _log("killed build", "ok")
    assert mid_build >= 8, (
        f"only {mid_build} kills landed before the build ended in {attempts} tries"
    )
    assert seen <= {old, _hash_of(tmp_path)}
    assert _tiny_build(tmp_path, out).returncode == 0
    assert _consistent(out) == _hash_of(tmp_path)
    assert [p.name for p in tmp_path.iterdir() if ".ckptreport-" in p.name] == []


def _hash_of(tmp: Path) -> str:
    return load(tmp / "models").input_hash


def test_two_builds_into_one_directory_take_turns(tmp_path):
    """Two builds started together into one out/: both succeed, one waits for the other, and out/
    holds one consistent set."""
    _models_dir(tmp_path, TINY)
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    cmd = [
        sys.executable,
        "-m",
        "ckptreport.cli",
        "build",
        "--models",
        str(tmp_path / "models"),
        "--out",
        str(out),
    ]
    env = {**os.environ, "SOURCE_DATE_EPOCH": "1700000000"}
    first = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    second = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    )
    results = [p.communicate(timeout=300) for p in (first, second)]
    assert first.returncode == 0 and second.returncode == 0, results
    assert any("waiting for another build" in err for _, err in results), [
        err[-500:] for _, err in results
    ]
    assert _consistent(out) == _hash_of(tmp_path)
    _log("concurrent builds", "ok")


# ---- a full build of hostile names through the real command -------------------------------------

NAMES = {
    "models": ("llama3-8b", "=cmd|' /C calc'!A0"),
    "skus": ("dgx-h100", "+1+1"),
    "tiers": ("superpod-good", '@SUM(1) <img src="file:///etc/passwd"> & ../x'),
    "engines": ("dcp-async-cached", "-2+3 <b>engine</b>"),
}


def test_a_full_build_keeps_hostile_names_as_text_everywhere(tmp_path):
    """A model, SKU, tier and engine named as formulas and markup, built by the real command with the workbook
    and the briefs: exit 0; no CSV cell starts a formula; no workbook formula holds a name; each brief's
    text shows the names literally; the brief files stay inside out/briefs."""
    files = copy.deepcopy(TINY)
    for section, (old, new) in NAMES.items():
        file = next(f for f, data in files.items() if section in data)
        files[file][section] = {new if k == old else k: v for k, v in files[file][section].items()}
        files["plan.yaml"][section] = [new if n == old else n for n in files["plan.yaml"][section]]
    _models_dir(tmp_path, files)
    out = tmp_path / "out"
    done = _tiny_build(tmp_path, out)
    assert done.returncode == 0, done.stderr[-3000:]
    with open(out / "scenarios.csv", newline="") as f:
        cells = [c for row in csv.reader(f) for c in row]
    starts = [c for c in cells if c and c[0] in "=+-@\t\r" and not _is_number(c)]
    assert starts == [], starts[:5]
    for _, new in NAMES.values():
        assert "'" + new in cells
    with zipfile.ZipFile(out / "ckptreport.xlsx") as z:
        sheets = " ".join(
            z.read(n).decode() for n in z.namelist() if n.startswith("xl/worksheets/")
        )
    formulas = " ".join(re.findall(r"<f(?:\s[^>]*[^/])?>([^<]*)</f>", sheets))
    assert formulas.count("INDEX(") > 10  # the pattern finds the formulas there are
    assert "cmd|" not in formulas and "SUM(1)" not in formulas and "+1+1" not in formulas
    pdfs = sorted((out / "briefs").glob("*.pdf"))
    assert pdfs and all(p.parent == out / "briefs" for p in pdfs)
    text = subprocess.run(
        ["pdftotext", str(pdfs[0]), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "=cmd|' /C calc'!A0" in text and "+1+1" in text and "-2+3 <b>engine</b>" in text
    _log("cli: full build of hostile names", "ok")
    # Opened in a real spreadsheet application: our CSV gives no formula; the same names written raw do.
    raw = tmp_path / "raw.csv"
    raw.write_text(
        "model,x\n" + "".join('"' + new.replace('"', '""') + '",1\n' for _, new in NAMES.values())
    )
    opened = {
        name: openpyxl.load_workbook(libreoffice(src, tmp_path / "lo", "xlsx"))
        for name, src in (("ours", out / "scenarios.csv"), ("raw", raw))
    }
    formulas = {
        name: [c.value for ws in wb for row in ws.iter_rows() for c in row if c.data_type == "f"]
        for name, wb in opened.items()
    }
    assert formulas["ours"] == [] and formulas["raw"], formulas


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def test_a_hostile_name_in_a_range_stays_text_in_the_tornado_and_the_sensitivity_sheet(tmp_path):
    """A tier named with TeX and a formula, its write bandwidth given a range: the brief's tornado
    labels it literally (the chart drawer escapes every string), and the Sensitivity sheet holds it as text."""
    name = "=a$x^2$b & <i>"
    files = copy.deepcopy(TINY)
    tiers = files["storage.yaml"]["tiers"]
    tiers[name] = tiers.pop("superpod-good")
    tiers[name]["write"] = {
        "value": "30 GB/s",
        "low": "20 GB/s",
        "high": "60 GB/s",
        "basis": "assumption",
        "source": "assumption: a test range",
    }
    files["plan.yaml"]["tiers"] = [
        name if t == "superpod-good" else t for t in files["plan.yaml"]["tiers"]
    ]
    _models_dir(tmp_path, files)
    out = tmp_path / "out"
    done = _tiny_build(tmp_path, out)
    assert done.returncode == 0, done.stderr[-3000:]
    pdf = out / "briefs" / "llama3-8b.pdf"
    text = subprocess.run(
        ["pdftotext", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    assert "How sure this is" in text
    assert f"tiers.{name}.write"[:30] in text.replace("&amp;", "&")
    wb = openpyxl.load_workbook(out / "ckptreport.xlsx")
    labels = [
        c
        for row in wb["Sensitivity"].iter_rows()
        for c in row
        if isinstance(c.value, str) and "x^2" in c.value
    ]
    assert labels and all(c.data_type == "s" for c in labels)


# ---- issue 25: every command under the hostile suite --------------------------------------------

FEW = settings(
    max_examples=max(10, int(os.environ.get("CKPTREPORT_HOSTILE_EXAMPLES", "300")) // 6),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
TINY_EXPLAIN = ["llama3-8b", "dgx-h100", "superpod-good", "--gpus", "64", "--interval", "30min"]


def _cli(kind: str, argv: list[str], allowed=(0, 2)):
    """The command through click in-process: its exit code must be one of ``allowed`` and nothing a
    traceback or an internal error; the outcome is counted under ``kind``."""
    result = CliRunner().invoke(main, argv, catch_exceptions=True)
    clean = (
        "Traceback" not in result.output
        and "internal error" not in result.output
        and (result.exception is None or isinstance(result.exception, SystemExit))
    )
    fine = result.exit_code in allowed and clean
    _log(
        kind,
        "bug" if not fine else "ok" if result.exit_code in (0, 1) else "clean error",
        argv[0],
    )
    assert fine, (kind, argv, result.exit_code, result.output[-2000:], result.exception)
    return result


@st.composite
def scaled(draw, base):
    """``base`` with one to three of its figures scaled (a valid edit, mostly: the unit kept, the
    number times 0.5 to 2); the result may still break a rule, which is a clean error."""
    data = copy.deepcopy(base)
    leaves = [
        p
        for p in _paths(data)
        if p
        and isinstance(_get(data, p), str)
        and re.fullmatch(r"\$?[\d.,]+\s*[A-Za-z/%]*", _get(data, p).strip())
    ]
    for _ in range(draw(st.integers(1, 3))):
        if not leaves:
            break
        path = draw(st.sampled_from(leaves))
        text = _get(data, path).strip()
        m = re.fullmatch(r"(\$?)([\d.,]+)\s*(.*)", text)
        number = float(m.group(2).replace(",", "")) * draw(st.sampled_from([0.5, 0.9, 1.1, 2.0]))
        _set(data, path, f"{m.group(1)}{number:g} {m.group(3)}".strip())
    return data


def _get(data, path):
    obj = data
    for p in path:
        obj = obj[p]
    return obj


@FEW
@given(data=st.data())
def test_diff_of_two_models_directories_exits_0_or_1_for_any_valid_edit(tmp_path_factory, data):
    """Two models directories, the second with figures of any file scaled: exit 0 (the recommendation
    held) or 1 (it changed) when the edit is valid, 2 when it is not; never 3."""
    name = data.draw(st.sampled_from(sorted(TINY)))
    root = tmp_path_factory.mktemp("diff")
    base = _models_dir(root / "a", TINY) if (root / "a").mkdir() is None else None
    edited = (
        _models_dir(root / "b", {**TINY, name: data.draw(scaled(TINY[name]))})
        if (root / "b").mkdir() is None
        else None
    )
    valid = outcome(f"diff: edit of {name} loads", lambda: load(edited)) == "ok"
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(diff_mod, "snapshot", _snapshot_once)
        _cli(
            "cli: diff models dirs",
            ["diff", str(base), str(edited), "--json"],
            allowed=(0, 1) if valid else (2,),
        )


_REAL_SNAPSHOT = diff_mod.snapshot
_SNAPSHOTS: dict[str, dict] = {}  # this test process's snapshots of models directories, by bytes


def _snapshot_once(where, progress=lambda _: None) -> dict:
    """``diff.snapshot`` of a models directory, computed once per content (its files' bytes) in this
    test process, as ``checked`` does: every example's base is the same tiny models, computed once
    instead of once per example; an edited side whose bytes are new is computed. A snapshot names
    its directory (``where``), set to the one asked for; nothing else in it names a path."""
    key = _digest([Path(where)])
    if key in _SNAPSHOTS:
        _log("reused", "reused", command="(an earlier example's snapshot: the same input bytes)")
    else:
        _SNAPSHOTS[key] = _REAL_SNAPSHOT(where, progress)
    return {**copy.deepcopy(_SNAPSHOTS[key]), "where": str(Path(where))}


@pytest.fixture(scope="module")
def tiny_built(tmp_path_factory):
    """The tiny models built once (tables and manifest): the base a damaged manifest starts from."""
    root = tmp_path_factory.mktemp("tiny-built")
    done = _tiny_build(root, root / "out", "--no-workbook", "--no-briefs")
    assert done.returncode == 0, done.stderr
    return root / "out"


@FEW
@given(damage=st.data())
def test_diff_refuses_a_damaged_manifest(tiny_built, tmp_path_factory, damage):
    """A build's manifest.json mutated (values replaced, keys renamed or removed): exit 2 naming the key,
    or 0 / 1 where the damage left a manifest that still reads; never 3."""
    doc = json.loads((tiny_built / "manifest.json").read_text())
    small = {
        k: doc[k] for k in ("recommendations", "input_values", "briefs", "measured") if k in doc
    }
    broken = damage.draw(mutated(small))
    out = tmp_path_factory.mktemp("damaged")
    (out / "manifest.json").write_text(json.dumps({**doc, **broken}))
    _cli("cli: diff damaged manifest", ["diff", str(out), str(tiny_built)], allowed=(0, 1, 2))


@CASES
@given(data=st.data())
def test_explain_json_and_sensitivity_on_mutated_models(tmp_path_factory, data):
    """explain --json and sensitivity on a mutated models directory: exit 0 or 2, never 3."""
    name = data.draw(st.sampled_from(sorted(TINY)))
    d = _models_dir(tmp_path_factory.mktemp("m"), {**TINY, name: data.draw(mutated(TINY[name]))})
    if data.draw(st.booleans()):
        _cli("cli: explain --json", ["explain", *TINY_EXPLAIN, "--models", str(d), "--json"])
    else:
        _cli("cli: sensitivity", ["sensitivity", "--models", str(d), "--all", "--json"])


RANGE_KEYS = st.sampled_from(["low", "high", "distribution", "driver"])


@st.composite
def ranged(draw, base):
    """``base`` with hostile ranges: a figure turned into {value, low, high, distribution, driver} with
    values from the hostile sets, or a driver shared by figures of different units."""
    data = copy.deepcopy(base)
    leaves = [
        p
        for p in _paths(data)
        if p
        and isinstance(_get(data, p), str)
        and re.fullmatch(r"\$?[\d.,]+\s*[A-Za-z/%]*", _get(data, p).strip())
    ]
    for _ in range(draw(st.integers(1, 3))):
        if not leaves:
            break
        path = draw(st.sampled_from(leaves))
        value = (
            _get(data, path)
            if isinstance(_get(data, path), str)
            else _get(data, path).get("value", "1")
        )
        q = {"value": value}
        for key in draw(st.lists(RANGE_KEYS, max_size=4, unique=True)):
            q[key] = draw(
                st.one_of(
                    scalars,
                    st.sampled_from(
                        ["gpu-mtbf", "flash", "uniform", "lognormal", "triangular", value]
                    ),
                )
            )
        _set(data, path, q)
    return data


@FEW
@given(data=st.data())
def test_build_samples_with_hostile_ranges_and_drivers(tmp_path_factory, data):
    """build --samples over ranges and drivers drawn from the hostile values: exit 0 or 2, never 3, and
    nothing written on an error."""
    name = data.draw(
        st.sampled_from(["hardware.yaml", "storage.yaml", "engines.yaml", "plan.yaml"])
    )
    root = tmp_path_factory.mktemp("ranges")
    d = _models_dir(root, {**TINY, name: data.draw(ranged(TINY[name]))})
    out = root / "out"
    result = _cli(
        "cli: build --samples",
        [
            "build",
            "--models",
            str(d),
            "--out",
            str(out),
            "--samples",
            "64",
            "--no-workbook",
            "--no-briefs",
            "-q",
        ],
    )
    if result.exit_code == 2:
        assert not out.exists() or not any(out.iterdir())


@pytest.mark.parametrize("command", ["schema", "init"])
@pytest.mark.parametrize(
    "trap",
    [
        "a file",
        "below a file",
        "a fifo",
        "a dangling link",
        "a device",
        "non-empty",
        "an escape in its name",
        "a new directory",
    ],
)
def test_schema_and_init_into_odd_directories(tmp_path, command, trap):
    """schema DIR and init DIR into a file, below a file, a FIFO, a dangling link, /dev/null, a directory
    already holding files, a name with an escape sequence, or a new directory: a clean error (exit 2,
    nothing half-written) or the files written; never 3."""
    target = {
        "a file": tmp_path / "f",
        "below a file": tmp_path / "f" / "x",
        "a fifo": tmp_path / "fifo",
        "a dangling link": tmp_path / "link",
        "a device": Path("/dev/null"),
        "non-empty": tmp_path / "full",
        "an escape in its name": tmp_path / "x\x1b[31m",
        "a new directory": tmp_path / "new",
    }[trap]
    (tmp_path / "f").write_text("a user's file\n")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "link").symlink_to(tmp_path / "nowhere")
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "plan.yaml").write_text("# mine\n")
    result = _cli(f"cli: {command} into odd directories", [command, str(target)])
    assert (tmp_path / "f").read_text() == "a user's file\n"  # never overwritten
    assert (tmp_path / "full" / "plan.yaml").read_text() == "# mine\n"
    assert "\x1b" not in result.output
    if trap == "a new directory":
        assert result.exit_code == 0 and any(target.rglob("*.json"))


# ---- probe ----------------------------------------------------------------------------------------

PROBE_SIZES = ["1MiB", "0", "-1 GB", "1e400 B", "NaN GB", "abc", "100 PB", "\x1b[31m", "1.5 MiB"]


@settings(
    max_examples=max(10, int(os.environ.get("CKPTREPORT_HOSTILE_EXAMPLES", "300")) // 10),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(
    sku=st.sampled_from(["dgx-h100", "nope", "", "\x1b[2J", "a" * 300]),
    where=st.sampled_from(["dir", "missing", "a file", "/dev/null/x", "none"]),
    tier=st.sampled_from(
        [None, "pfs-100=DIR", "nope=DIR", "pfs-100", "=DIR", "pfs-100=/dev/null/x"]
    ),
    size=st.sampled_from(PROBE_SIZES),
    shard=st.sampled_from([None, *PROBE_SIZES]),
    engines=st.lists(st.sampled_from(["nope", "torch-save", "", "dcp-async-cached"]), max_size=2),
    writers=st.sampled_from(["1", "0", "257", "-3", "x"]),
    output=st.sampled_from(["m.yaml", "DIR", "/dev/null/x", "sub/m.yaml", "\x1b]0;x\x07.yaml"]),
)
def test_hostile_probe_arguments(
    tmp_path_factory, sku, where, tier, size, shard, engines, writers, output
):
    """Whatever probe is given: exit 0 or 2, never a traceback, and on an error neither a measured
    file nor a test file left behind. Kept cheap: the sizes that pass are a MiB or two, and the
    interference needs --cpu-loop, never given, so it is skipped where there is no GPU."""
    tmp = tmp_path_factory.mktemp("probe")
    disk = tmp / "nvme"
    disk.mkdir()
    (tmp / "a file").write_text("x")
    paths = {"dir": str(disk), "missing": str(tmp / "missing"), "a file": str(tmp / "a file")}
    argv = ["probe", "--sku", sku, "--size", size, "--writers", writers, "--repeat", "1"]
    if where != "none":
        argv += ["--path", paths.get(where, where)]
    if tier is not None:
        argv += ["--tier", tier.replace("DIR", str(disk))]
    if shard is not None:
        argv += ["--shard", shard]
    for e in engines:
        argv += ["--interference", e]
    target = (
        str(disk) if output == "DIR" else output if output.startswith("/") else str(tmp / output)
    )
    result = _cli("cli: probe arguments", [*argv, "-o", target])
    leftovers = [p for p in disk.iterdir() if p.name.startswith(".ckptreport-probe")]
    assert leftovers == [], leftovers
    assert "\x1b" not in result.output
    if result.exit_code == 2:
        assert not Path(target).is_file() or output == "DIR"
