from __future__ import annotations

import fcntl
import os
import pickle
import shutil
import subprocess
import tempfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from ckptreport.answer.report import compute
from ckptreport.base.paths import shipped_models
from ckptreport.build import build
from ckptreport.read.load import load

REPO = Path(__file__).resolve().parents[1]


def once(tmp_path_factory, name: str, make) -> Path:
    """``make(directory)`` run once per test session, whichever xdist worker asks first, the others
    waiting on a lock and reading what it wrote: the directory is under the session's shared temp
    directory (``pytest-N``), so a new session computes afresh from the code it tests. What is made
    there must not be changed by a test."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    target = root / f"once-{name}"
    with open(root / f"once-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (target / ".made").exists():
            shutil.rmtree(target, ignore_errors=True)
            target.mkdir()
            make(target)
            (target / ".made").write_text("")
    return target


def once_object(tmp_path_factory, name: str, make):
    """``make()``'s value, computed once per test session and read back (pickled) by every worker."""

    def write(directory: Path) -> None:
        with open(directory / "value.pickle", "wb") as f:
            pickle.dump(make(), f, protocol=pickle.HIGHEST_PROTOCOL)

    with open(once(tmp_path_factory, name, write) / "value.pickle", "rb") as f:
        return pickle.load(f)


@pytest.fixture(scope="session")
def shipped():
    """The shipped models, loaded once."""
    return load(shipped_models())


@pytest.fixture(scope="session")
def report(shipped, tmp_path_factory):
    """Everything the outputs of the shipped models show, computed once per session."""
    return once_object(tmp_path_factory, "report", lambda: compute(shipped))


@pytest.fixture(scope="session")
def frame(report):
    return report.frame


@pytest.fixture
def models_copy(tmp_path) -> Path:
    """A writable copy of the shipped models, to break or extend."""
    target = tmp_path / "models"
    shutil.copytree(shipped_models(), target)
    return target


def pick(frame, **where):
    """The single row matching every column=value given."""
    mask = True
    for key, value in where.items():
        mask = mask & (frame[key] == value)
    rows = frame[mask]
    assert len(rows) == 1, f"{len(rows)} rows match {where}"
    return rows.iloc[0]


SMALL_PLAN = """\
models: [llama3-405b, llama3-8b]
recipes: [adamw-bf16, adamw-bf16-grads]
skus: [dgx-h100, gh200, dgx-a100]
gpus: [1024, 4096]
intervals: [10 min, 30 min]
strategies: [sync, async, tiered]
engines: [dcp-async-cached, megatron-dist-ckpt, torch-save]
target_overhead: 1%
mfu: 40%
restart: 10 min
retention: 3
buffers: 1
summary: {gpus: 1024, interval: 30 min, model: llama3-405b, sku: dgx-h100}
"""


@pytest.fixture
def small_models(models_copy) -> Path:
    """The shipped models with a small plan (~1,000 scenarios): quick to build and recalculate."""
    (models_copy / "plan.yaml").write_text(SMALL_PLAN)
    return models_copy


EPOCH = "1700000000"  # SOURCE_DATE_EPOCH of the shared build: 2023-11-14T22:13:20Z


@pytest.fixture(scope="session")
def small_build(tmp_path_factory):
    """The small plan built once with every output (workbook, briefs, manifest), SOURCE_DATE_EPOCH
    set, the models named by their absolute path: shared by the tests that read outputs and change
    nothing (once per session, across workers). ``.models`` is its models directory, ``.out`` its
    output, ``.result`` what build returned."""

    def make(root: Path) -> None:
        models = root / "models"
        shutil.copytree(shipped_models(), models)
        (models / "plan.yaml").write_text(SMALL_PLAN)
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
            mp.chdir(root)
            result = build(models.resolve(), root / "out")
        with open(root / "result.pickle", "wb") as f:
            pickle.dump(result, f, protocol=pickle.HIGHEST_PROTOCOL)

    root = once(tmp_path_factory, "small-build", make)
    with open(root / "result.pickle", "rb") as f:
        result = pickle.load(f)
    return SimpleNamespace(models=root / "models", out=root / "out", result=result)


def output_files(out: Path) -> dict[str, bytes]:
    """Every file of an output directory by its relative name."""
    return {
        p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()
    }


@pytest.fixture(scope="session")
def default_build(tmp_path_factory):
    """`ckptreport build` on the shipped defaults through the CLI, once per session (a light
    workbook): ``.out`` the output directory, ``.cli`` what the command printed (``.stdout``,
    ``.stderr``, ``.output``)."""

    def make(root: Path) -> None:
        from click.testing import CliRunner

        from ckptreport.cli import main

        result = CliRunner().invoke(
            main,
            ["build", "--out", str(root / "out"), "--workbook-rows", "300"],
            catch_exceptions=False,
        )
        assert result.exit_code == 0, result.output
        for name in ("stdout", "stderr", "output"):
            (root / f"{name}.txt").write_text(getattr(result, name))

    root = once(tmp_path_factory, "default-build", make)
    cli = SimpleNamespace(
        exit_code=0, **{n: (root / f"{n}.txt").read_text() for n in ("stdout", "stderr", "output")}
    )
    return SimpleNamespace(out=root / "out", cli=cli)


# ---- LibreOffice: recalculate a workbook as finance's spreadsheet application would ------------

SOFFICE = shutil.which("soffice") or shutil.which("libreoffice")

RECALC_ALWAYS = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema"
 xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse">
<value>0</value></prop></item>
</oor:items>
"""


_LO_PROFILES: dict[str, Path] = {}  # this test process's LibreOffice profiles, made on first use


def lo_profile(use: str = "convert") -> Path:
    """A LibreOffice profile per test process and ``use`` (a worker runs its tests one at a time, so
    its starts never overlap): made on the first start, which later starts then skip. ``convert``
    recalculates on load; the UNO driver (``lo_uno.py``) writes its own settings into ``uno``."""
    if use not in _LO_PROFILES:
        profile = Path(tempfile.mkdtemp(prefix=f"ckptreport-lo-{use}-"))
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
        _LO_PROFILES[use] = profile
    return _LO_PROFILES[use]


def libreoffice(src: Path, outdir: Path, fmt: str, profile: Path | None = None) -> Path:
    """Open src in LibreOffice (recalculating every formula) and save it as fmt; return the file.
    ``profile``: a profile of its own (default: this process's, ``lo_profile``)."""
    if profile is None:
        profile = lo_profile()
    else:
        (profile / "user").mkdir(parents=True, exist_ok=True)
        (profile / "user" / "registrymodifications.xcu").write_text(RECALC_ALWAYS)
    outdir.mkdir(parents=True, exist_ok=True)
    # LibreOffice writes a lock file beside the file it opens (.~lock.NAME#): it opens a copy, so a
    # shared build's directory, read by other tests meanwhile, never holds one
    staged = Path(tempfile.mkdtemp(prefix="lo-source-", dir=outdir)) / src.name
    shutil.copyfile(src, staged)
    done = subprocess.run(
        [
            SOFFICE,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--calc",
            "--convert-to",
            fmt,
            "--outdir",
            str(outdir),
            str(staged),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    shutil.rmtree(staged.parent, ignore_errors=True)
    out = outdir / f"{src.stem}.{fmt.split(':')[0]}"
    assert out.exists(), (
        f"LibreOffice wrote nothing (exit {done.returncode}): {done.stdout} {done.stderr}"
    )
    return out


def recalculated(xlsx: Path, tmp_path: Path) -> Path:
    return libreoffice(xlsx, tmp_path / "recalc", "xlsx")


GNUMERIC = shutil.which("ssconvert")


def gnumeric(xlsx: Path, outdir: Path) -> Path:
    """``xlsx`` recalculated by Gnumeric (``ssconvert --recalc``) and saved as xlsx; return the file."""
    outdir.mkdir(parents=True, exist_ok=True)
    out = outdir / xlsx.name
    done = subprocess.run(
        [GNUMERIC or "ssconvert", "--recalc", str(xlsx), str(out)],
        capture_output=True,
        text=True,
        timeout=600,
        env={**os.environ, "HOME": str(outdir)},
    )
    assert done.returncode == 0 and out.exists(), (
        f"ssconvert failed ({done.returncode}): {done.stderr[-2000:]}"
    )
    return out


@pytest.fixture(scope="session")
def small_recalc(small_build, tmp_path_factory) -> Path:
    """The shared build's workbook, recalculated by LibreOffice once per session (cached values of
    every formula)."""
    root = once(
        tmp_path_factory,
        "small-recalc",
        lambda d: recalculated(small_build.out / "ckptreport.xlsx", d),
    )
    return root / "recalc" / "ckptreport.xlsx"


def pytest_sessionstart(session):
    """The hostile cases' log starts empty each run (in the controller, before any worker writes)."""
    path = os.environ.get("CKPTREPORT_HOSTILE_LOG")
    if path and not hasattr(session.config, "workerinput"):
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).unlink(missing_ok=True)


def pytest_terminal_summary(terminalreporter):
    """With CKPTREPORT_HOSTILE_LOG set (``make test`` sets it), the generated and hand-made hostile
    cases counted per command and outcome: what CI ran, in its log."""
    import collections
    import json

    path = os.environ.get("CKPTREPORT_HOSTILE_LOG")
    if not path or not Path(path).is_file():
        return
    counts: collections.Counter = collections.Counter()
    reused = 0
    for line in Path(path).read_text().splitlines():
        case = json.loads(line)
        if case["outcome"] == "reused":  # not a case: a note on one counted under its command
            reused += 1
            continue
        counts[(case.get("command", case["kind"]), case["outcome"])] += 1
    outcomes = sorted({o for _, o in counts})
    commands = sorted({c for c, _ in counts})
    width = max(len(c) for c in commands)
    terminalreporter.section("hostile inputs, per command")
    terminalreporter.write_line(f"{'command':<{width}}  " + "  ".join(f"{o:>11}" for o in outcomes))
    for c in commands:
        terminalreporter.write_line(
            f"{c:<{width}}  " + "  ".join(f"{counts[(c, o)]:>11,}" for o in outcomes)
        )
    total = sum(counts.values())
    terminalreporter.write_line(f"{total:,} cases")
    terminalreporter.write_line(
        f"{reused:,} of them computed once before: an earlier example had the same input bytes"
    )
