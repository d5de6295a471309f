"""README tables generated from the schema and the column definitions, so the docs cannot drift.

    python -m ckptreport.docs README.md     # rewrite the generated blocks in place
    python -m ckptreport.docs --check README.md

A test runs the check; the blocks sit between ``<!-- NAME:start -->`` and ``<!-- NAME:end -->``.
"""

from __future__ import annotations

import re
import sys
import types
import typing
from pathlib import Path

from pydantic import BaseModel

from .model.columns import COLUMNS
from .model.expr import Var, render
from .read import schema
from .read.inputs import INPUTS, SCENARIO, SOURCES
from .read.quantity import Kind
from .read.strategies import COMPARED, STRATEGIES
from .read.units import COLUMN_UNITS


def _type(annotation, metadata=()) -> str:
    for m in (*metadata, *getattr(annotation, "__metadata__", ())):
        if isinstance(m, Kind):
            return m.name
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _type(args[0], annotation.__metadata__)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_type(a) for a in args if a is not type(None))
    if origin is list:
        return f"list of {_type(args[0])}"
    if origin is typing.Literal:
        return " / ".join(args)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "mapping"
    if annotation is str:
        return "text"
    if (
        annotation is schema.StrategyName
    ):  # checked against the strategy table: its names, as a Literal's
        return " / ".join(STRATEGIES)
    return getattr(annotation, "__name__", str(annotation))


def _fields(model: type[BaseModel], prefix: str = "") -> list[tuple[str, str, str, str]]:
    rows = []
    for name, f in model.model_fields.items():
        required = "yes" if f.is_required() else "no"
        key = f.alias or name  # the key users write ('async', held as async_)
        rows.append((prefix + key, _type(f.annotation, f.metadata), required, f.description or ""))
        sub = next(
            (
                a
                for a in typing.get_args(f.annotation)
                if isinstance(a, type) and issubclass(a, BaseModel)
            ),
            None,
        )
        if sub is not None and sub is not model:
            rows += _fields(sub, prefix + key + ".")
    return rows


def schema_markdown() -> str:
    out = []
    for title, model, where in (
        ("recipes.NAME", schema.Recipe, "models.yaml"),
        ("models.NAME", schema.Model, "models.yaml"),
        ("skus.NAME", schema.Sku, "hardware.yaml"),
        ("tiers.NAME", schema.Tier, "storage.yaml"),
        ("engines.NAME", schema.Engine, "engines.yaml"),
        ("plan", schema.Plan, "plan.yaml"),
    ):
        out.append(f"**`{title}`** ({where}) — {model.__doc__.strip()}\n")
        out.append("| key | type | required | meaning |\n|---|---|---|---|")
        for name, kind, req, doc in _fields(model):
            out.append(f"| `{name}` | {kind} | {req} | {doc} |")
        out.append("")
    return "\n".join(out).rstrip() + "\n"


def input_meaning(i) -> str:
    """An input column's meaning in the README: what it is, where it is read, what omitting it means."""
    if i.entity == SCENARIO:
        return f"input: {i.doc} ({i.where})"
    omitted = "" if i.required and not i.absent else f"; omitted: {i.derived_doc or i.absent}"
    return f"input: {i.doc} ({i.where}{omitted})"


def columns_markdown() -> str:
    out = ["| column | unit | meaning |", "|---|---|---|"]
    for c in INPUTS.values():
        out.append(f"| `{c.name}` | {COLUMN_UNITS[c.unit].words} | {input_meaning(c)} |")
    section = None
    for c in COLUMNS.values():
        if c.section != section:
            section = c.section
            out.append(f"| **{section}** | | |")
        formula = render(c.fn(*(Var(p) for p in c.params)), lambda n: n, style="text")
        formula = formula.replace("|", "\\|")
        out.append(f"| `{c.name}` | {COLUMN_UNITS[c.unit].words} | {c.doc} `= {formula}` |")
    out.append("| **Sources** | | |")
    for src in SOURCES.values():
        out.append(f"| `{src.name}` | text | {src.doc} |")
    return "\n".join(out) + "\n"


ENGINE_TABLE = dict(
    model="llama3-405b",
    recipe="adamw-bf16-grads",
    sku="dgx-h100",
    tier="pfs-100",
    interval_s=1800.0,
)
ENGINE_GPUS = (1024, 16384)


def engines_markdown() -> str:
    """The worked example's stall per shipped engine: 405B (16 B/param) on DGX H100 to the 100 GB/s
    pfs-100, every 30 min, sync and async at 1,024 and 16,384 GPUs (the model's columns, as explain
    computes them); an extrapolation (beyond the engine's largest case) is marked with its factor."""
    from .answer.explain import Scenario, one_row
    from .base.paths import shipped_models
    from .model import display
    from .read.load import load

    inputs = load(shipped_models())
    head = [
        "engine",
        *(f"{s} stall, {g:,} GPUs" for s in COMPARED for g in ENGINE_GPUS),
        "largest published job its terms rest on",
        "source",
    ]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, engine in inputs.engines.items():
        cells = [f"`{name}`"]
        for strategy in COMPARED:
            for gpus in ENGINE_GPUS:
                if strategy not in engine.strategies:
                    cells.append("-")
                    continue
                row = one_row(
                    inputs, Scenario(gpus=gpus, strategy=strategy, engine=name, **ENGINE_TABLE)
                )
                mark = (
                    f" ‡ {display.of('beyond_largest_case_x', row['beyond_largest_case_x'])}"
                    if row["extrapolated"]
                    else ""
                )
                cells.append(display.of("stall_s", row["stall_s"]) + mark)
        largest = engine.largest_case
        cells.append("-" if largest is None else f"{int(largest.value):,} ranks ({largest.basis})")
        cells.append((engine.source or "").split(";")[0].replace("|", "\\|"))
        out.append("| " + " | ".join(cells) + " |")
    return "\n".join(out) + "\n"


BLOCKS = {"schema": schema_markdown, "columns": columns_markdown, "engines": engines_markdown}


def regenerate(text: str) -> str:
    for name, fn in BLOCKS.items():
        pattern = re.compile(rf"(<!-- {name}:start -->\n).*?(<!-- {name}:end -->)", re.S)
        if not pattern.search(text):
            raise SystemExit(f"README has no <!-- {name}:start --> ... <!-- {name}:end --> block")
        text = pattern.sub(lambda m, fn=fn: m.group(1) + fn() + m.group(2), text)
    return text


def main(argv: list[str]) -> int:
    check = "--check" in argv
    paths = [a for a in argv if not a.startswith("--")] or ["README.md"]
    path = Path(paths[0])
    text = path.read_text()
    new = regenerate(text)
    if check:
        if new != text:
            print(f"{path} is out of date: run python -m ckptreport.docs {path}", file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
