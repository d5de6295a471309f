"""The command line: thin. Parses options, calls build/explain, prints. Only this module touches
the terminal. User errors print as `file:line:col: key: message` and exit 2; bugs exit 3."""

from __future__ import annotations

import json
import os
import sys
import traceback

import click

from . import __version__, units

MODELS_HELP = "Directory of models.yaml, hardware.yaml, storage.yaml, plan.yaml [default: ./models if present, else the shipped set]."


class UserError(click.ClickException):
    exit_code = 2


def _run(fn, *args, **kwargs):
    from .errors import InputError

    try:
        return fn(*args, **kwargs)
    except InputError as e:
        click.echo(e.render(), err=True)
        click.echo("ckptreport: nothing was written.", err=True)
        sys.exit(2)
    except KeyboardInterrupt:
        click.echo("ckptreport: interrupted; nothing was written.", err=True)
        sys.exit(130)
    except Exception:  # a bug, not the user's input
        if os.environ.get("CKPTREPORT_DEBUG"):
            traceback.print_exc()
        click.echo(f"ckptreport {__version__}: internal error: {sys.exc_info()[1]!r}\n"
                   "This is a bug. Set CKPTREPORT_DEBUG=1 to see the traceback, and report it.", err=True)
        sys.exit(3)


def _progress(quiet: bool):
    return (lambda _: None) if quiet else (lambda msg: click.echo(f"ckptreport: {msg}", err=True))


@click.group(context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100})
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
@click.option("--models", "models", type=click.Path(file_okay=False), help=MODELS_HELP)
@click.option("--out", "out", type=click.Path(file_okay=False), default="out", show_default=True,
              help="Directory for scenarios.parquet, scenarios.csv and manifest.json.")
@click.option("--workbook-rows", type=click.IntRange(1, 1_000_000),
              help="Most scenario rows in ckptreport.xlsx (overrides the plan's workbook_rows).")
@click.option("--no-workbook", is_flag=True, help="Skip ckptreport.xlsx (faster).")
@click.option("--no-briefs", is_flag=True, help="Skip the PDF briefs in out/briefs/ (faster).")
@click.option("--paper", type=click.Choice(["A4", "Letter"]), help="Paper size of the briefs [default: the plan's, A4].")
@click.option("-q", "--quiet", is_flag=True, help="Print only the summary.")
def build(models, out, workbook_rows, no_workbook, no_briefs, paper, quiet):
    """Compute every scenario of the plan and write out/.

    \b
    Writes out/scenarios.parquet and out/scenarios.csv (one row per model x recipe x SKU x tier x
    strategy x GPU count x interval, every column documented in the README), out/ckptreport.xlsx
    (a live spreadsheet model: edit an assumption and every figure recomputes), out/briefs/*.pdf
    (one per model, and one per `briefs:` entry of the plan, for purchase proposals) and
    out/manifest.json (tool version, input hash, build time; SOURCE_DATE_EPOCH is honoured).
    Prints, per model and SKU, the cheapest durable tier that meets the target overhead, sync
    against async. Nothing is written unless every input is valid.
    \b
    Examples:
      ckptreport build
      ckptreport build --models my-models --out /tmp/plan-a
      ckptreport build --workbook-rows 5000      # a lighter workbook; Parquet keeps every row
      ckptreport build --paper Letter
    """
    from .build import build as run_build
    from .summary import summary

    progress = _progress(quiet)
    result = _run(run_build, models, out, progress, workbook=not no_workbook, workbook_rows=workbook_rows,
                  briefs=not no_briefs, paper=paper)
    for d in result.dropped:
        progress(f"left out {d.rows:,} combinations: {d.reason}")
    for note in result.notes:
        progress(note)
    click.echo(_summary_text(summary(result.frame, result.inputs), result.inputs))


def _summary_text(table, inputs) -> str:
    from . import display

    if table.empty:
        return "No scenario at the summary's cluster size and cadence."
    first = table.iloc[0]
    target = display.value(inputs.plan.target_overhead.value * 100, "pct")
    head = (f"Cheapest durable tier meeting the {target} target, at {first['gpus']:,} GPUs, every "
            f"{display.value(first['interval_s'], 's')} (overhead in brackets; '-' none meets it: closest shown)")
    cols = ["model", "sku", "checkpoint", "sync", "async", "tiered"]
    rows = []
    for _, r in table.iterrows():
        cells = [str(r["model"]), str(r["sku"]), display.value(r["ckpt_bytes"], "bytes")]
        for s in ("sync", "async", "tiered"):
            if isinstance(r.get(f"{s}_tier"), str):
                cells.append(f"{r[f'{s}_tier']} ({display.value(r[f'{s}_overhead_pct'], 'pct')})")
            elif isinstance(r.get(f"{s}_closest_tier"), str):
                cells.append(f"- ({r[f'{s}_closest_tier']} {display.value(r[f'{s}_overhead_pct'], 'pct')})")
            else:
                cells.append("n/a")
        rows.append(cells)
    widths = [max(len(c), *(len(row[i]) for row in rows)) for i, c in enumerate(cols)]
    fmt = "  ".join(f"{{:<{w}}}" for w in widths)
    lines = [head, "", fmt.format(*cols), fmt.format(*("-" * w for w in widths))]
    lines += [fmt.format(*row) for row in rows]
    return "\n".join(lines)


@main.command()
@click.option("--models", "models", type=click.Path(file_okay=False), help=MODELS_HELP)
def validate(models):
    """Check the inputs without building: every problem, with file, line and key.

    \b
    Exit code 0 when valid, 2 when not (every problem is listed at once).
    \b
    Examples:
      ckptreport validate
      ckptreport validate --models my-models
    """
    from .build import resolve_models
    from .engine import cross_product
    from .load import load

    models_dir = resolve_models(models)
    inputs = _run(load, models_dir)
    idx, _, dropped = cross_product(inputs)
    click.echo(f"{models_dir}: valid — {len(inputs.models)} models, {len(inputs.recipes)} recipes, "
               f"{len(inputs.skus)} SKUs, {len(inputs.tiers)} tiers; the plan has "
               f"{len(idx['model']):,} scenarios.")


def _interval(ctx, param, value):
    try:
        return units.parse(value, "duration")
    except units.UnitError as e:
        raise click.BadParameter(str(e)) from None


@main.command()
@click.argument("model")
@click.argument("sku")
@click.argument("tier")
@click.option("--gpus", type=click.IntRange(min=1), required=True, help="GPUs in the job.")
@click.option("--interval", callback=_interval, required=True, help="Checkpoint cadence, e.g. 30min, '1 h'.")
@click.option("--strategy", type=click.Choice(["sync", "async", "tiered"]), default="sync", show_default=True)
@click.option("--recipe", help="Recipe to use [default: the model's own].")
@click.option("--models", "models", type=click.Path(file_okay=False), help=MODELS_HELP)
@click.option("--json", "as_json", is_flag=True, help="Print the steps as JSON.")
def explain(model, sku, tier, gpus, interval, strategy, recipe, models, as_json):
    """Show the arithmetic of one scenario, step by step, each number with its source.

    MODEL, SKU and TIER are names from the models directory; the scenario need not be in the plan.

    \b
    Examples:
      ckptreport explain llama3-405b dgx-h100 pfs-100 --gpus 1024 --interval 30min --recipe adamw-bf16-grads
      ckptreport explain llama3-405b dgx-h100 pfs-100 --gpus 1024 --interval 30min --strategy async
      ckptreport explain bloom-176b dgx-a100 superpod-best --gpus 384 --interval 3h --json
    """
    from .build import resolve_models
    from .explain import Scenario, as_text, explanation
    from .load import load

    inputs = _run(load, resolve_models(models))
    e = _run(explanation, inputs, Scenario(model, sku, tier, gpus, interval, strategy, recipe))
    click.echo(json.dumps(e, indent=2, allow_nan=False) if as_json else as_text(e))


@main.command()
@click.argument("directory", type=click.Path(file_okay=False))
@click.option("--force", is_flag=True, help="Overwrite files already there.")
def init(directory, force):
    """Copy the shipped models into DIRECTORY as a starting point.

    \b
    Example:
      ckptreport init my-models && ckptreport build --models my-models
    """
    from .build import init as run_init

    for path in _run(run_init, directory, force):
        click.echo(f"wrote {path}")


if __name__ == "__main__":
    main()
