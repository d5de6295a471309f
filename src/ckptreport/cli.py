"""The command line: parses options, calls the stage that answers (build, explain, diff, ...), and
prints what ``render.terminal`` formats. Only this module touches the terminal. User errors print as
`file:line:col: key: message` and exit 2; bugs exit 3."""

from __future__ import annotations

import contextlib
import json
import os
import sys
import traceback
from pathlib import Path

import click

from . import __version__
from .read import units
from .read.strategies import BASELINE, STRATEGIES
from .read.vocab import PAPERS

MODELS_HELP = (
    "Directory of models.yaml, hardware.yaml, storage.yaml, plan.yaml "
    "[default: ./models if present, else the shipped set]."
)

# Options several commands share, declared once
models_option = click.option(
    "--models", "models", type=click.Path(file_okay=False), help=MODELS_HELP
)


def json_option(what: str, for_whom: str = ""):
    """--json: print ``what`` as JSON instead of text."""
    return click.option("--json", "as_json", is_flag=True, help=f"Print {what} as JSON{for_whom}.")


def verbose_option(what: str):
    return click.option("-v", "--verbose", is_flag=True, help=f"Also {what}.")


def quiet_option(what: str):
    return click.option("-q", "--quiet", is_flag=True, help=what)


class UserError(click.ClickException):
    exit_code = 2


def _run(fn, *args, **kwargs):
    """Call ``fn``; a user error prints as its problems and exits 2, a bug exits 3 (never a traceback)."""
    from .base.errors import InputError

    try:
        return fn(*args, **kwargs)
    except (click.exceptions.ClickException, click.exceptions.Abort, click.exceptions.Exit):
        raise  # click prints its own usage errors (exit 2)
    except InputError as e:
        click.echo(e.render(), err=True)
        click.echo("ckptreport: nothing was written.", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("ckptreport: interrupted; nothing was written.", err=True)
        sys.exit(130)
    except MemoryError:
        click.echo(
            "ckptreport: out of memory: this machine cannot hold what the command was asked for; narrow "
            "the plan (fewer models, SKUs, tiers, engines, GPU counts or intervals), lower max_rows or "
            "--samples, or leave the workbook out (--no-workbook); nothing was written.",
            err=True,
        )
        sys.exit(2)
    except RecursionError:
        click.echo("ckptreport: an input is nested too deeply to read.", err=True)
        sys.exit(2)
    except (
        UnicodeError
    ):  # a name on the command line the file system cannot spell (a lone surrogate)
        click.echo(
            "ckptreport: a path on the command line is not valid text; nothing was written.",
            err=True,
        )
        sys.exit(2)
    except OSError as e:  # the machine's, not a bug: a full disk, a permission, a file in the way
        from .base.errors import printable

        where = f"{e.filename}: " if e.filename else ""
        click.echo(
            f"ckptreport: {printable(where + (e.strerror or str(e)).lower())}; nothing was written.",
            err=True,
        )
        sys.exit(2)
    except Exception:  # a bug, not the user's input
        if os.environ.get("CKPTREPORT_DEBUG"):
            traceback.print_exc()
        from .base.errors import printable

        click.echo(
            f"ckptreport {__version__}: internal error: {printable(repr(sys.exc_info()[1]))}\n"
            "This is a bug. Set CKPTREPORT_DEBUG=1 to see the traceback, and report it.",
            err=True,
        )
        sys.exit(3)


class Commands(click.Group):
    """Every command runs inside ``_run``: whatever it does, the user sees a clean message and an exit
    code (2 bad input, 3 a bug), never a traceback."""

    def invoke(self, ctx):
        return _run(super().invoke, ctx)


@contextlib.contextmanager
def _terminated_as_interrupted():
    """While the block runs, SIGTERM (a kill, a job scheduler's timeout) is taken as Ctrl-C: the
    cleanup the command does on an interrupt runs, and it exits 130 saying nothing was written."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def interrupt(*_):
        raise KeyboardInterrupt

    before = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, before)


def _progress(quiet: bool):
    """Progress on stderr: bars on a terminal, plain lines in a log, nothing with -q."""
    from .base.progress import for_terminal

    return for_terminal(sys.stderr, quiet)


@click.group(
    cls=Commands, context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100}
)
@click.version_option(__version__, prog_name="ckptreport")
def main():
    """Plan training checkpoints: size, write time, stall, best cadence, cost, storage to buy.

    \b
    Inputs are YAML in a models directory (see `ckptreport init`); outputs go to out/.
    \b
    Examples:
      ckptreport build                      # shipped defaults -> out/
      ckptreport explain llama3-405b dgx-h100 pfs-100 --gpus 1024 --interval 30min
      ckptreport validate --models my-models
    """


@main.command()
@models_option
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False),
    default="out",
    show_default=True,
    help="Directory for scenarios.parquet, scenarios.csv and manifest.json.",
)
@click.option(
    "--workbook-rows",
    type=click.IntRange(1, 1_000_000),
    help="Most scenario rows in ckptreport.xlsx (overrides the plan's workbook_rows).",
)
@click.option("--no-workbook", is_flag=True, help="Skip ckptreport.xlsx (faster).")
@click.option("--no-briefs", is_flag=True, help="Skip the PDF briefs in out/briefs/ (faster).")
@click.option("--no-html", is_flag=True, help="Skip the review page, out/report.html.")
@click.option(
    "--paper", type=click.Choice(PAPERS), help="Paper size of the briefs [default: the plan's, A4]."
)
@click.option(
    "--measured",
    "measured_paths",
    multiple=True,
    type=click.Path(),
    help="Measured files or directories (ckptreport probe / import): they replace spec figures.",
)
@click.option(
    "--csv/--no-csv",
    "csv",
    default=None,
    help="Write scenarios.csv [default: when the plan has at most 1,000,000 rows; Parquet always].",
)
@click.option(
    "--samples",
    type=click.IntRange(0, 10_000_000),
    default=0,
    show_default=True,
    help="Monte Carlo: draw every input that carries a range this many times, together; writes "
    "samples.parquet and P10/P50/P90 per summary line.",
)
@click.option(
    "--seed",
    type=click.IntRange(0, 2**63 - 1),
    default=1,
    show_default=True,
    help="Seed of the draws: the same seed gives the same bytes.",
)
@click.option(
    "--scheduler",
    metavar="ADDRESS",
    envvar="DASK_SCHEDULER_ADDRESS",
    show_envvar=True,
    help="A Dask scheduler (tcp://host:8786): a large plan's pieces and the draws run on its workers, "
    "each writing its own Parquet part; the bytes are those of a build on this machine.",
)
@click.option(
    "--workers",
    type=click.IntRange(1, 4096),
    help="Worker processes on this machine, without --scheduler [default: one per core].",
)
@quiet_option("Print only the summary.")
def build(
    models,
    out,
    workbook_rows,
    no_workbook,
    no_briefs,
    no_html,
    paper,
    measured_paths,
    csv,
    samples,
    seed,
    scheduler,
    workers,
    quiet,
):
    """Compute every scenario of the plan and write out/.

    \b
    Writes out/scenarios.parquet and out/scenarios.csv (one row per model x recipe x SKU x tier x
    strategy x GPU count x interval, every column documented in the README; above 1,000,000 rows
    the CSV only with --csv, and the plan is computed in chunks in bounded memory), out/ckptreport.xlsx
    (a live spreadsheet model: edit an assumption and every figure recomputes), out/briefs/*.pdf
    (one per model, and one per `briefs:` entry of the plan, for purchase proposals),
    out/report.html (the planning review in a browser: one self-contained file, works offline) and
    out/manifest.json (tool version, input hash, build time; SOURCE_DATE_EPOCH is honoured).
    Prints, per model and SKU, the cheapest durable tier that meets the target overhead, sync
    against async. Nothing is written unless every input is valid.
    \b
    Examples:
      ckptreport build
      ckptreport build --models my-models --out /tmp/plan-a
      ckptreport build --workbook-rows 5000      # a lighter workbook; Parquet keeps every row
      ckptreport build --paper Letter
      ckptreport build --measured measured/      # use what ckptreport probe measured
      ckptreport build --no-workbook --no-briefs --no-html  # the table alone: millions of rows in bounded memory
      ckptreport build --scheduler tcp://10.0.0.5:8786 --no-workbook --no-briefs  # a sweep on a Dask cluster
    """
    from .base.progress import beating
    from .build import build as run_build
    from .outputs import OUTPUTS
    from .render import comparisons, terminal

    progress = _progress(quiet)
    left_out = {"workbook": no_workbook, "briefs": no_briefs, "html": no_html}  # --no-FLAG, by flag
    skip = [o.name for o in OUTPUTS if o.flag and left_out[o.flag]]
    with beating(progress):  # in a log, a line at least every 15 s
        result = _run(
            run_build,
            models,
            out,
            progress,
            skip=skip,
            workbook_rows=workbook_rows,
            paper=paper,
            measured=list(measured_paths),
            csv=csv,
            samples=samples,
            seed=seed,
            scheduler=scheduler,
            workers=workers,
        )
    for m in result.inputs.measured.values():
        progress(
            f"{m.section}.{m.name}.{m.field}: {m.basis}, {units.fmt(m.median, m.unit)} "
            f"({'shipped' if m.unit == 'percent' else 'spec'} "
            f"{units.fmt(m.spec, m.unit) if m.spec else 'none'})"
            + (f" — {m.flag}" if m.flag else "")
        )
    for d in result.dropped:
        progress(f"left out {d.rows:,} combinations: {d.reason}")
    for note in result.notes:
        progress(note)
    click.echo(terminal.summary(result.report))
    if result.sampled is not None:
        click.echo("")
        click.echo(comparisons.sampled(result.sampled))


@main.command()
@models_option
def validate(models):
    """Check the inputs without building: every problem, with file, line and key.

    \b
    Exit code 0 when valid, 2 when not (every problem is listed at once).
    \b
    Examples:
      ckptreport validate
      ckptreport validate --models my-models
    """
    from .base.paths import resolve_models
    from .model.plan import plan_rows
    from .read.load import load

    models_dir = resolve_models(models)
    inputs = _run(load, models_dir)
    rows, _ = _run(plan_rows, inputs)
    for note in inputs.notes:
        click.echo(f"ckptreport: note: {note}", err=True)
    click.echo(
        f"{models_dir}: valid — {len(inputs.models)} models, {len(inputs.recipes)} recipes, "
        f"{len(inputs.skus)} SKUs, {len(inputs.tiers)} tiers, {len(inputs.engines)} engines; the plan has "
        f"{rows:,} scenarios."
    )


def _interval(ctx, param, value):
    try:
        seconds = units.parse(value, "duration")
    except units.UnitError as e:
        raise click.BadParameter(str(e)) from None
    low, high = units.PLAUSIBLE["duration"]
    if not low <= seconds <= high:
        raise click.BadParameter(
            f"expected an interval from {units.fmt(low, 'duration')} to "
            f"{units.fmt(high, 'duration')}, got {value!r}"
        )
    return seconds


@main.command()
@click.argument("model")
@click.argument("sku")
@click.argument("tier")
@click.option("--gpus", type=click.IntRange(1, 100_000_000), required=True, help="GPUs in the job.")
@click.option(
    "--interval", callback=_interval, required=True, help="Checkpoint cadence, e.g. 30min, '1 h'."
)
@click.option(
    "--strategy", type=click.Choice(STRATEGIES.keys()), default=BASELINE, show_default=True
)
@click.option("--recipe", help="Recipe to use [default: the model's own].")
@click.option(
    "--engine",
    help="Checkpointing engine (engines.yaml) [default: the plan's first that implements the "
    "strategy].",
)
@click.option(
    "--units",
    type=click.IntRange(1, 100_000),
    help="Units of a tier sold in units (unit: in storage.yaml): its bandwidth as that many units "
    "give it, as a cluster's purchase sizes it [default: the tier's own figures].",
)
@models_option
@json_option("the steps")
def explain(model, sku, tier, gpus, interval, strategy, recipe, engine, units, models, as_json):
    """Show the arithmetic of one scenario, step by step, each number with its source.

    MODEL, SKU and TIER are names from the models directory; the scenario need not be in the plan.

    \b
    Examples:
      ckptreport explain llama3-405b dgx-h100 pfs-100 --gpus 1024 --interval 30min --recipe adamw-bf16-grads
      ckptreport explain llama3-405b dgx-h100 pfs-100 --gpus 1024 --interval 1h --strategy async --engine dlrover-flash
      ckptreport explain bloom-176b dgx-a100 superpod-best --gpus 384 --interval 3h --json
      ckptreport explain llama3-405b dgx-h100 superpod-good --gpus 16384 --interval 11min --units 12
    """
    from .answer.explain import Scenario, explanation
    from .base.paths import resolve_models
    from .read.load import load
    from .render import terminal

    inputs = _run(load, resolve_models(models))
    if units is not None and tier in inputs.tiers:
        from .answer.purchase import with_units

        inputs = _run(with_units, inputs, tier, units)
    e = _run(
        explanation, inputs, Scenario(model, sku, tier, gpus, interval, strategy, recipe, engine)
    )
    click.echo(json.dumps(e, indent=2, allow_nan=False) if as_json else terminal.explanation(e))


def _size(ctx, param, value):
    if value is None:
        return None
    try:
        return int(units.parse(value, "bytes"))
    except units.UnitError as e:
        raise click.BadParameter(str(e)) from None


def _tier_dir(ctx, param, value):
    if value is None:
        return None
    name, sep, directory = value.partition("=")
    if not sep or not name or not directory:
        raise click.BadParameter(f"expected TIER=DIR, e.g. pfs-100=/lustre/scratch, got {value!r}")
    if not os.path.isdir(directory):
        raise click.BadParameter(f"{directory!r} is not a directory")
    return {name: directory}


@main.command()
@click.option("--sku", required=True, help="The SKU (skus.NAME in hardware.yaml) this host is.")
@click.option(
    "--path",
    "paths",
    multiple=True,
    type=click.Path(file_okay=False, exists=True),
    help="A local NVMe directory to write into (repeat for several mounts: written at once).",
)
@click.option(
    "--tier",
    "tier",
    callback=_tier_dir,
    metavar="TIER=DIR",
    help="Also measure one node's write into a mounted tier, e.g. pfs-100=/lustre/scratch.",
)
@click.option(
    "--size", callback=_size, default="8GiB", show_default=True, help="Bytes per write test."
)
@click.option(
    "--writers", type=click.IntRange(1, 256), default=8, show_default=True, help="Parallel writers."
)
@click.option("--direct", is_flag=True, help="Open files with O_DIRECT (bypass the page cache).")
@click.option(
    "--repeat",
    type=click.IntRange(1, 20),
    default=3,
    show_default=True,
    help="Repetitions per test.",
)
@click.option(
    "--interference",
    "engines",
    multiple=True,
    metavar="ENGINE",
    help="Also measure how much a background persist slows a GPU compute loop, for this engine "
    "(engines.NAME; repeat for several): its async_slowdown is then the measured one.",
)
@click.option(
    "--shard",
    callback=_size,
    default=None,
    help="Bytes the background process writes a pass (the node's shard) [default: --size].",
)
@click.option(
    "--cpu-loop",
    is_flag=True,
    help="Without a GPU, measure the interference on a CPU compute loop (says nothing of a GPU "
    "training step: for a CPU host and for tests).",
)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False),
    help="Measured file [default: measured/HOST.yaml].",
)
def probe(sku, paths, tier, size, writers, direct, repeat, engines, shard, cpu_loop, output):
    """Measure this host: GPU -> pinned host copies (PyTorch, per GPU and all at once), host memory
    copy, sequential writes with fsync into local NVMe and a tier, torch.save throughput, and (with
    --interference) the slowdown of a GPU compute loop while a background process writes a node's
    shard into the tier (or the first --path): the step time alone, then during, each repetition.

    Writes a measured file for `ckptreport build --measured`. Without PyTorch or a GPU it measures
    what exists and says what it skipped. Ctrl-C leaves no partial file and removes its test files.

    \b
    Examples:
      ckptreport probe --sku dgx-h100 --path /raid --size 16GiB
      ckptreport probe --sku dgx-h100 --tier pfs-100=/lustre/ckpt --writers 16 -o measured/node17.yaml
      ckptreport probe --sku dgx-h100 --tier pfs-100=/lustre/ckpt --interference dcp-async-cached \\
        --interference nvrx-local --shard 44GB
      ckptreport build --measured measured/
    """
    import socket

    from . import probe as run_probe
    from .read import measured

    target = output or f"measured/{socket.gethostname()}.yaml"

    def bar(label, total, done):
        import time

        with click.progressbar(length=total, label=label, file=sys.stderr) as b:
            seen = 0
            while seen < total:
                now = min(done(), total)
                b.update(now - seen)
                seen = now
                if seen >= total:
                    break
                time.sleep(0.1)

    with _terminated_as_interrupted():  # a kill leaves no test file behind, as Ctrl-C does
        doc = _run(
            run_probe.run,
            sku,
            [Path(p) for p in paths],
            {k: Path(v) for k, v in (tier or {}).items()},
            size,
            writers,
            direct,
            repeat,
            bar,
            lambda m: click.echo(f"ckptreport: measuring {m}", err=True),
            list(engines),
            shard,
            cpu_loop,
        )
    for reason in doc.get("skipped", []):
        click.echo(f"ckptreport: skipped {reason}", err=True)
    path = _run(measured.write, doc, Path(target))
    for name, m in doc["metrics"].items():
        click.echo(f"{name:<20} {m['value']:>14}  {m['method']}")
    if "interference" in doc:
        m = doc["interference"]
        click.echo(
            f"{'interference':<20} {m['value']:>14}  {m['method']} ({', '.join(m['engines'])})"
        )
    click.echo(f"wrote {path}")


@main.group("import")
def import_():
    """Convert fio, IOR or nvbandwidth output into a measured file.

    \b
    Examples:
      fio --name=ckpt --directory=/raid --rw=write --bs=4M --size=8G --numjobs=8 --end_fsync=1 \\
          --group_reporting --output-format=json > fio.json
      ckptreport import fio fio.json --sku dgx-h100 -o measured/node17-nvme.yaml
      ckptreport import ior ior.json --sku dgx-h100 --tier pfs-100 -o measured/ior.yaml
      nvbandwidth -j > nvb.json && ckptreport import nvbandwidth nvb.json --sku dgx-h100 -o measured/nvb.yaml
    """


def _import_command(tool: str, needs_tier: bool):
    @click.argument("file", type=click.Path(dir_okay=False))
    @click.option("--sku", required=True, help="The SKU (skus.NAME) of the measured host.")
    @click.option(
        "--tier",
        required=needs_tier,
        help="The tier (tiers.NAME) written to"
        + ("." if needs_tier else "; without it, fio measured local NVMe."),
    )
    @click.option("--host", help="Host name to record [default: from the file, else its name].")
    @click.option(
        "-o",
        "--output",
        required=True,
        type=click.Path(dir_okay=False),
        help="Measured file to write.",
    )
    def command(file, sku, tier, host, output):
        from .read import importers, measured

        fn = getattr(importers, tool)
        kwargs = {"tier": tier} if tool != "nvbandwidth" else {}
        if tool == "nvbandwidth" and tier:
            raise UserError("nvbandwidth measures GPU -> host copies: --tier does not apply")
        doc = _run(fn, Path(file), sku, host=host, **kwargs)
        path = _run(measured.write, doc, Path(output))
        for name, m in doc["metrics"].items():
            click.echo(f"{name:<20} {m['value']:>14}  {m['method']}")
        click.echo(f"wrote {path}")

    example = {
        "fio": "ckptreport import fio fio.json --sku dgx-h100 -o measured/node17-nvme.yaml",
        "ior": "ckptreport import ior ior.json --sku dgx-h100 --tier pfs-100 -o measured/ior.yaml",
        "nvbandwidth": "ckptreport import nvbandwidth nvb.json --sku dgx-h100 -o measured/nvb.yaml",
    }[tool]
    command.__doc__ = (
        f"Convert {tool} output (FILE) into a measured file.\n\n\b\nExample:\n  {example}\n"
    )
    return import_.command(tool)(command)


for _tool, _tier in (("fio", False), ("ior", True), ("nvbandwidth", False)):
    _import_command(_tool, _tier)


@main.command()
@json_option("the cases")
@verbose_option("print each case's source, assumptions and notes")
@click.option(
    "--fit",
    "refit",
    is_flag=True,
    help="Fit each engine's free terms anew and print each value, its "
    "residuals, leave-one-out errors and range, and the cases behind it.",
)
def calibrate(as_json, verbose, refit):
    """Compare the model with published checkpoint measurements.

    Prints each case: the published figure, what the model predicts from the inputs the source
    gave (the rest stated as assumptions), the error and the verdict against the case's tolerance.
    Each case names the checkpointing engine that produced it. A scored case is 'fit' (its engine's
    fit used it) or 'test' (held out of every fit: the error is a prediction). 'input' cases are
    figures a default is taken from; 'lacks' cases name the term the model lacks and why. The summary
    gives the median and worst error of the held-out sizes, times, async stalls and restores apart,
    and per engine. A fit case outside its tolerance is a FAIL too: what the engine's terms cannot
    hold, counted among the misses. Exit 1 if a held-out case fails (a prediction that missed).

    --fit fits each engine's free terms (a writer's bandwidth, writer scaling, a fixed cost,
    coordination per rank or per chunk pair, a staging copy's rate, its overlap, interference) by
    least squares on its fit cases from a neutral start, and prints each
    value beside the one the shipped engines carry, each case's residual and leave-one-out error, and
    each term's bootstrap range (P10-P90 over refits on resampled cases).

    \b
    Examples:
      ckptreport calibrate
      ckptreport calibrate --verbose
      ckptreport calibrate --fit
      ckptreport calibrate --json
    """
    from .answer import calibration
    from .render import comparisons

    computed = calibration.table()
    rows, summary = computed.rows, computed.summary
    fitted = [calibration.fit_report(engine) for engine in calibration.fits()] if refit else None
    if as_json:
        click.echo(
            json.dumps(
                {"cases": rows, "summary": summary, **({"fit": fitted} if fitted else {})}, indent=2
            )
        )
    else:
        lines = comparisons.calibration(rows, summary, verbose)
        for report in fitted or []:
            lines += ["", *comparisons.fit(report)]
        click.echo("\n".join(lines))
    if summary["failed_held_out"]:
        sys.exit(1)


@main.command()
@click.argument("old", type=click.Path(file_okay=False))
@click.argument("new", type=click.Path(file_okay=False))
@json_option("the comparison", " (for scripts)")
@verbose_option("list every figure that moved, line by line")
@quiet_option("Print nothing; the exit code alone answers.")
def diff(old, new, as_json, verbose, quiet):
    """Compare two builds: the inputs that changed and what they changed in the headline.

    OLD and NEW are output directories of `ckptreport build` (their manifest.json records every
    input value with its file and line) or models directories (computed here, nothing written); one
    of each works too. Prints each changed input with file:line on both sides, then each summary
    line and brief whose recommendation, overhead, stall, cost or bandwidth moved.

    \b
    Exit code: 0 the recommendation is the same everywhere, 1 it changed for some line or brief
    (or one appeared or went), 2 bad input.
    \b
    Examples:
      ckptreport build --out out/q3 && ckptreport build --models models-q4 --out out/q4
      ckptreport diff out/q3 out/q4
      ckptreport diff models models-q4 --json | jq '.headline'
      ckptreport diff out/q3 models-q4 -q || echo "the recommendation changed"
    """
    from . import diff as diff_
    from .render import comparisons

    say = (
        (lambda _: None)
        if quiet or as_json
        else (lambda m: click.echo(f"ckptreport: {m}", err=True))
    )
    result = _run(diff_.compare, _run(diff_.snapshot, old, say), _run(diff_.snapshot, new, say))
    if as_json:
        click.echo(json.dumps(result, indent=2, allow_nan=False))
    elif not quiet:
        click.echo(comparisons.diff(result, verbose))
    sys.exit(1 if result["recommendation_changed"] else 0)


@main.command()
@models_option
@click.option("--model", help="The summary line's model [default: the plan's summary model].")
@click.option("--sku", help="The summary line's SKU [default: the plan's summary SKU].")
@click.option(
    "--all", "every", is_flag=True, help="Every summary line (model x SKU), one after another."
)
@json_option("the swings and break-evens")
def sensitivity(models, model, sku, every, as_json):
    """Which assumption moves the answer: the tornado and the break-even values of a summary line.

    Every input whose quantity carries a range ({value, low, high}) is swept from its low to its
    high with the others held, at the plan's summary cluster size and cadence: the total cost a
    month and overhead of the option recommended at each end, and whether the recommendation
    changes, largest swing first. Then the values, nearest each input's own, at which the
    recommendation flips (found on the model, within a factor of 10 of the value).

    \b
    Examples:
      ckptreport sensitivity
      ckptreport sensitivity --model llama3-70b --sku aws-p5
      ckptreport sensitivity --all --json > sensitivity.json
    """
    from .answer.report import compute
    from .answer.uncertainty import robustness
    from .base.paths import resolve_models
    from .model.plan import summary_point
    from .read.load import load
    from .render import comparisons

    inputs = _run(load, resolve_models(models))
    report = _run(compute, inputs, None, lambda _: None, frozenset())
    params = report.params
    table = report.summary
    point = summary_point(inputs)
    if every:
        lines = list(range(len(table)))
    else:
        want_model, want_sku = model or point.model, sku or point.sku
        lines = [
            i
            for i, r in enumerate(table.to_dict("records"))
            if r["model"] == want_model and r["sku"] == want_sku
        ]
        if not lines:
            raise UserError(
                f"no summary line for model {want_model!r} on SKU {want_sku!r}; the plan's summary has "
                + ", ".join(sorted({f"{r['model']}/{r['sku']}" for r in table.to_dict("records")}))
            )
    found = [_run(robustness.sensitivity, report, params, i) for i in lines]
    if as_json:
        click.echo(json.dumps([robustness.as_dict(s) for s in found], indent=2, allow_nan=False))
        return
    click.echo(f"{len(params)} input(s) carry a range; every other figure is taken as certain.\n")
    click.echo("\n\n".join(comparisons.sensitivity(s) for s in found))


@main.command("schema")
@click.argument("directory", type=click.Path(file_okay=False), default=".schema")
def schema_command(directory):
    """Write a JSON Schema for each models file into DIRECTORY (default .schema).

    The schemas come from the same declarations as validation: every key with its type and
    description, units as patterns with examples. An editor with a YAML language server (VS Code's
    YAML extension, and others) completes and checks keys as you type when a models file starts with
    '# yaml-language-server: $schema=.schema/plan.schema.json' (ckptreport init writes that line).

    \b
    Example:
      ckptreport schema models/.schema
    """
    from .base.errors import printable
    from .read.schema import write_schemas

    for path in _run(write_schemas, directory):
        click.echo(f"wrote {printable(str(path))}")


@main.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite files already there.")
def init(directory, force):
    """Copy the shipped models into DIRECTORY as a starting point, with their JSON Schemas.

    Each file's first line points an editor's YAML language server at its schema in
    DIRECTORY/.schema, so keys complete and misspellings show as you type.

    \b
    Example:
      ckptreport init my-models && ckptreport build --models my-models
    """
    from .base.errors import printable
    from .build import init as run_init

    for path in _run(run_init, directory, force):
        click.echo(f"wrote {printable(str(path))}")


if __name__ == "__main__":
    main()
