"""Chains the stages: load -> compute (``answer.report.compute``) -> render (``outputs``), into a staging directory.
Every input is validated before anything is computed. The rows go to Parquet (and CSV) as the
compute stage hands them over, chunk by chunk; the workbook, the briefs and the manifest follow.
Nothing lands in ``out`` until all of it is written: the staging directory is switched in at once
(``publish``), so a failed or killed build leaves the previous outputs untouched."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import time
from collections.abc import Collection
from pathlib import Path

import pandas as pd

from . import __version__
from .answer.report import compute as compute_report
from .answer.report import streams
from .answer.types import DECISIONS
from .base.errors import InputError, Problem
from .base.paths import resolve_models, shipped_models
from .base.workers import bootstrapping
from .base.workers import choose as choose_workers
from .model.plan import checked, plan_rows
from .outputs import CSV_MAX_ROWS, Output, Progress, Result, Run, choose
from .read import schema
from .read.load import load
from .read.quantity import Q
from .read.validated import Inputs


def build_time() -> dt.datetime:
    """SOURCE_DATE_EPOCH when set (reproducible builds), else now."""
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        try:
            return dt.datetime.fromtimestamp(int(epoch), dt.UTC)
        except ValueError:
            raise InputError(
                f"SOURCE_DATE_EPOCH must be whole seconds since 1970, got {epoch!r}"
            ) from None
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def load_inputs(
    models_dir: Path,
    progress: Progress = lambda _: None,
    measured_paths: list | None = None,
    workbook_rows: int | None = None,
) -> Inputs:
    """Load and validate the inputs (and the measured files that replace spec figures)."""
    progress(f"loading {models_dir}")
    inputs = checked(load(models_dir))
    if measured_paths:
        from .read import measured

        inputs = measured.apply(inputs, measured_paths)
    if workbook_rows is not None:
        plan = inputs.plan.model_copy(
            update={"workbook_rows": Q(float(workbook_rows), str(workbook_rows), "count")}
        )
        inputs = dataclasses.replace(inputs, plan=plan)
    return inputs


def write(
    result: Result,
    inputs: Inputs,
    progress: Progress = lambda _: None,
    outputs: list[Output] | None = None,
    paper: str | None = None,
    csv: bool | None = None,
    samples: int = 0,
    seed: int = 1,
    workers=None,
) -> None:
    """Compute and write ``outputs`` (``outputs.choose``; default: every one the options ask for) into a
    staging directory beside ``out``, then switch it in at once (``publish``): a failed or killed build
    leaves the previous outputs as they were. ``workers`` (``base.workers``) is where a streamed
    plan's pieces and the Monte Carlo's run (default: every core of this machine). The compute stage
    computes what the outputs need; the rows go to the outputs that take them (Parquet, CSV) as they
    are computed; then each output is started in the registry's order (the briefs' PDFs are laid out
    by worker processes meanwhile) and finished in it (the manifest last)."""
    from .publish import Publisher

    chosen = choose(samples=samples) if outputs is None else list(outputs)
    when = build_time()
    rows = plan_rows(inputs)[0]
    csv = _csv_wanted(result, rows, csv)
    publisher = Publisher(result.out_dir, progress)
    with publisher as staging:
        meta = {
            "ckptreport_version": __version__,
            "input_hash": inputs.input_hash,
            "build_time": when.isoformat().replace("+00:00", "Z"),
        }
        run = Run(staging, meta, when, progress, result, chosen, csv, paper, samples, seed)
        run.rows, run.streamed = rows, streams(rows)
        own = workers is None
        run.workers = choose_workers() if own else workers
        try:
            _compute(run, inputs)
            t = time.perf_counter()
            try:
                for o in chosen:
                    o.start(run)
                for o in chosen:
                    o.finish(run)
            except BaseException:
                for o in chosen:
                    o.abort(run)
                raise
        finally:
            if own:
                run.workers.close()
        files = run.state.get("files", {})
        kept = publisher.commit()
    out = publisher.out
    written = sorted({f.split("/")[0] for f in files} | {"manifest.json"})
    result.written = [out / name for name in written]
    result.seconds["write"] = time.perf_counter() - t
    progress(
        f"wrote {', '.join(str(p) for p in result.written)}"
        + (f"; kept {len(kept)} file(s) of yours in {out}" if kept else "")
    )


def _csv_wanted(result: Result, rows: int, csv: bool | None) -> bool:
    """Whether to write scenarios.csv: as asked, else up to CSV_MAX_ROWS rows (saying so above it)."""
    if csv is not None:
        return csv
    if rows > CSV_MAX_ROWS:
        result.notes.append(
            f"scenarios.csv left out: {rows:,} rows is more than {CSV_MAX_ROWS:,} (a CSV of "
            "gigabytes); every row is in scenarios.parquet (pandas.read_parquet, DuckDB, "
            "Spark), or pass --csv to write it anyway"
        )
        return False
    return True


def _compute(run: Run, inputs: Inputs) -> None:
    """The compute stage, computing what the chosen outputs need; the rows handed to the outputs
    that take them as they are computed."""
    t = time.perf_counter()
    sinks = [s for s in (o.sink(run) for o in run.chosen) if s is not None]
    try:
        needs = frozenset({DECISIONS}).union(
            *(o.needs for o in run.chosen)
        )  # the summary prints them
        report = compute_report(inputs, _fan_out(sinks), run.progress, needs, run.workers)
        run.report = run.result.report = report
    finally:
        for s in sinks:
            s.close()
    run.result.seconds["engine"] = time.perf_counter() - t
    run.progress(f"computed {report.rows:,} scenarios in {run.result.seconds['engine']:.2f} s")


def _fan_out(sinks: list):
    """One sink for the compute stage that hands each chunk of rows to every output taking them."""
    if len(sinks) <= 1:  # one: itself, so that it pickles to the workers of a streamed plan
        return sinks[0] if sinks else None

    def sink(frame: pd.DataFrame) -> None:
        for s in sinks:
            s(frame)

    return sink


def build(
    models: str | Path | None,
    out: str | Path,
    progress: Progress = lambda _: None,
    skip: Collection[str] = (),
    workbook_rows: int | None = None,
    paper: str | None = None,
    measured: list | None = None,
    csv: bool | None = None,
    samples: int = 0,
    seed: int = 1,
    scheduler: str | None = None,
    workers: int | None = None,
) -> Result:
    """Load, compute, write. ``skip`` names the outputs left out (``outputs.SKIPPABLE``: workbook,
    briefs, page); ``workbook_rows`` overrides the plan's limit on workbook rows; ``measured`` names
    measured files or directories whose figures replace the spec; ``csv`` forces scenarios.csv on or
    off (default: written up to CSV_MAX_ROWS rows); ``samples`` draws the uncertain inputs that many
    times (seeded by ``seed``) into samples.parquet and the manifest. A streamed plan's pieces and
    the draws run on the Dask scheduler ``scheduler`` names (else DASK_SCHEDULER_ADDRESS's), else on
    ``workers`` processes of this machine (default: one per core): the bytes are the same."""
    if bootstrapping():
        raise RuntimeError(
            "ckptreport.build called while a worker process imports the main script: guard the "
            'script\'s build with if __name__ == "__main__": (the build computes here meanwhile)'
        )
    chosen = choose(
        skip, samples=samples
    )  # an unknown output is the caller's error, before any work
    models_dir = resolve_models(models)
    t = time.perf_counter()
    inputs = load_inputs(
        models_dir, progress, measured, workbook_rows
    )  # every input error before any output
    result = Result(None, models_dir, Path(out), seconds={"load": time.perf_counter() - t})
    result.notes.extend(inputs.notes)  # what the models directory took from the shipped defaults
    pool = choose_workers(scheduler, workers)
    try:
        write(result, inputs, progress, chosen, paper, csv, samples, seed, pool)
    finally:
        pool.close()
    return result


def init(target: str | Path, force: bool = False) -> list[Path]:
    """Copy the shipped models out as a starting point."""
    target = Path(target)
    source = shipped_models()
    files = sorted(source.glob("*.yaml"))
    clashes = [target / f.name for f in files if (target / f.name).exists()]
    if clashes and not force:
        raise InputError(
            Problem(
                str(target),
                0,
                0,
                "",
                "already holds "
                + ", ".join(c.name for c in clashes)
                + "; pass --force to overwrite",
            )
        )
    from .base.safeio import make_dir_here, refuse_link, write_text_here

    make_dir_here(target)
    for f in files:  # every target checked before anything is written
        refuse_link(target / f.name, "a models file init would overwrite")
    written = schema.write_schemas(target / schema.SCHEMA_DIR)
    for f in files:
        # the yaml-language-server modeline: an editor completes and checks keys from the schema beside it
        line = f"# yaml-language-server: $schema={schema.SCHEMA_DIR}/{schema.schema_file(f.name)}\n"
        written.append(write_text_here(target / f.name, line + f.read_text()))
    return written


def golden(out: Path) -> list[Path]:
    """Write the rendered HTML of every brief of the shipped defaults, normalised (see
    ``render.brief.normalized_html``), for the golden test to compare with."""
    from .render import brief as render_brief

    report = compute_report(load(shipped_models()))
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.html"):
        old.unlink()
    written = []
    for name, html in render_brief.golden_html(report).items():
        (out / name).write_text(html)
        written.append(out / name)
    return written


if __name__ == "__main__":
    import sys

    if len(sys.argv) != 3 or sys.argv[1] != "--golden":
        raise SystemExit("usage: python -m ckptreport.build --golden DIR")
    for path in golden(Path(sys.argv[2])):
        print(f"wrote {path}")
