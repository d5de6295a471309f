"""The sheets around the model: Sources (every citation and the build's provenance), Checks (live
consistency checks a model reviewer runs) and the Cover (what the workbook answers, how to use it,
how many checks pass). ``Checked`` says where the checks are and how many pass as built."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...model import display
from ...read.inputs import RECIPES
from ...read.units import BOOL_EXCEL
from .assumptions import Assumed
from .book import BOLD, TITLE, Context, Sheet
from .scenarios import KEY, Table

SIZE_PARTS = [
    "weights_bytes",
    "master_bytes",
    "optimizer_bytes",
    "grads_bytes",
    "consolidated_bytes",
    "other_bytes",
]
STALL_PARTS = ["checkpoint_cost_s", "backpressure_s", "interference_s"]


@dataclass(frozen=True)
class Checked:
    """The Checks sheet's first and last check rows, and how many pass as built."""

    first: int
    last: int
    passing: int


def write_sources(sh: Sheet, ctx: Context, notes: list[str]) -> None:
    sh.layout({1: 40, 2: 11, 3: 110, 4: 30}, "A8")
    sh.append([sh.text("Sources and provenance", font=TITLE)])
    for k, v in (
        ("tool", f"ckptreport {ctx.meta['ckptreport_version']}"),
        ("input hash", ctx.meta["input_hash"]),
        ("built", ctx.meta["build_time"] + " (SOURCE_DATE_EPOCH when set)"),
        ("scenarios", f"{ctx.report.rows:,} rows; all in scenarios.parquet"),
    ):
        sh.append([sh.text(k, font=BOLD), sh.text(v)])
    for note in notes:
        sh.append([sh.text("note", font=BOLD), sh.text(note)])
    sh.append([])
    sh.header(("figure", "basis", "source", "from"))
    for (section, name, fld), prov in sorted(ctx.inputs.prov.items()):
        where = f"{prov.file}:{prov.line}" if prov.line else prov.file
        sh.append(
            [
                sh.text(f"{section}.{name}.{fld}" if section != "plan" else f"plan.{fld}"),
                sh.text(prov.basis),
                sh.text(prov.source or "(no source given)"),
                sh.text(where),
            ]
        )
    for name, recipe in ctx.inputs.recipes.items():
        place = ctx.inputs.places[(RECIPES, name)]
        sh.append(
            [
                sh.text(f"recipes.{name}"),
                sh.text("spec" if recipe.source else "input"),
                sh.text(recipe.source or "(no source given)"),
                sh.text(f"{place.file}:{place.line}"),
            ]
        )


def write_checks(sh: Sheet, ctx: Context, assumed: Assumed, table: Table) -> Checked:
    """Checks a model reviewer runs: inputs in range, totals that reconcile in every scenario (a formula
    overwritten by a number shows here), the rows all there. Each is TRUE or FALSE, live."""
    sh.layout({1: 70, 2: 10, 3: 80}, "A4")
    sh.append([sh.text("Checks: each TRUE when the model is consistent", font=TITLE)])
    sh.append([sh.text("They recompute with every edit; the Cover shows how many pass.")])
    sh.header(("check", "passes", "what a FALSE means"))
    n = len(table.rows)
    rows = ctx.frame.loc[list(table.rows)]

    def reconcile(total: str, parts: list[str]) -> str:
        diff = "-".join([table.column(total), *(table.column(p) for p in parts)])
        return f"=SUMPRODUCT(ABS({diff}))<=1E-9*SUMPRODUCT(ABS({table.column(total)}))"

    def reconciles(
        total: str, parts: list[str]
    ) -> bool:  # the same sums, on the evaluator's values
        diff = rows[total].to_numpy(float) - sum(rows[p].to_numpy(float) for p in parts)
        return bool(np.abs(diff).sum() <= 1e-9 * np.abs(rows[total].to_numpy(float)).sum())

    numbers = [
        (name, v)
        for _, name, v in assumed.typed
        if isinstance(v, (int, float)) and not isinstance(v, bool)
    ]
    checks = [
        (
            "Every input on Assumptions is 0 or more",
            '=COUNTIF(Assumptions!$C:$C,"<0")=0',
            "an input was typed negative: find it with a filter on Assumptions column C",
            all(not v < 0 for _, v in numbers),
        ),
        (
            "Every percentage input is at most 100%",
            '=COUNTIFS(Assumptions!$D:$D,"%",Assumptions!$C:$C,">1")=0',
            "a percentage above 100% (type 1.5% for one and a half percent: a bare 1.5 is 150%)",
            all(not v > 1 for name, v in numbers if display.unit_of(name) == "pct"),
        ),
        (
            "Checkpoint size = weights + master + optimizer + gradients, in every scenario",
            reconcile("ckpt_bytes", SIZE_PARTS),
            "a Scenarios formula was overwritten (sizes), or a column was edited by hand",
            reconciles("ckpt_bytes", SIZE_PARTS),
        ),
        (
            "Stall = checkpoint cost + back-pressure + interference, in every scenario",
            reconcile("stall_s", STALL_PARTS),
            "a Scenarios formula was overwritten (times), or a column was edited by hand",
            reconciles("stall_s", STALL_PARTS),
        ),
        (
            f"Scenarios holds its {n:,} keyed rows",
            f"=COUNT({table.column(KEY)})={n}",
            "rows were deleted from (or added to) Scenarios; rebuild to restore them",
            True,
        ),
    ]
    first = sh.row + 1
    for what, formula, means, passes in checks:
        sh.append([sh.text(what), sh.cell(formula, fmt=BOOL_EXCEL, result=passes), sh.text(means)])
    return Checked(first, sh.row, sum(passes for *_, passes in checks))


COVER = (
    (
        "What it answers",
        "How big each checkpoint is, how long it takes to write, how much of the run it "
        "stalls, how often to take one, what that costs, and which storage and bandwidth to buy.",
    ),
    (
        "Start here",
        "Summary: per model and SKU, the cheapest durable tier meeting the target and the "
        "recommended option with its costs and runner-up.",
    ),
    (
        "Change an assumption",
        "Assumptions: blue cells are inputs (validated; the sheets are protected "
        "without a password so formulas are not overwritten by mistake). Every figure "
        "recomputes.",
    ),
    (
        "Sort and filter",
        "Scenarios: one row per scenario, keyed by scenario_id; sorting or filtering it "
        "changes nothing elsewhere.",
    ),
    (
        "Units",
        "Names carry units: _bytes bytes, _s seconds, _GBps GB/s (1 GB = 1e9 bytes), _pct a percentage "
        "(stored as a fraction: type 1% or 0.01), _usd US dollars. Infinity reads as words (unbounded, unreachable).",
    ),
    (
        "Prices",
        "Each price on Assumptions has a date, a region and a source; a price nobody published is "
        "#N/A, and a recommendation that rests on an assumed price says so.",
    ),
    (
        "Sources",
        "Sources: the citation of every figure; Checks: the model's own consistency checks.",
    ),
    ("What it leaves out", "See the README, 'How the model works, and what it leaves out'."),
)


def write_cover(sh: Sheet, ctx: Context, checked: Checked) -> None:
    """What the workbook answers and how to use it, and whether its checks pass."""
    first, last = checked.first, checked.last
    sh.layout({1: 28, 2: 110}, None, fit=True)
    sh.append(
        [
            sh.text(
                "Checkpoint plan: what it costs to write training checkpoints, and what storage to buy",
                font=TITLE,
            )
        ]
    )
    sh.append(
        [
            sh.text(
                f"ckptreport {ctx.meta['ckptreport_version']}, built {ctx.meta['build_time']}, "
                f"input hash {ctx.meta['input_hash'][:16]}"
            )
        ]
    )
    sh.append([])
    passes, count = f"COUNTIF(Checks!$B${first}:$B${last},TRUE)", last - first + 1
    words = f"{checked.passing} of {count} checks pass" + (
        "" if checked.passing == count else ": see the Checks sheet"
    )
    sh.append(
        [
            sh.text("Checks", font=BOLD),
            sh.cell(
                f'={passes}&" of {count} checks pass"&IF({passes}={count},"",'
                '": see the Checks sheet")',
                font=BOLD,
                result=words,
            ),
        ]
    )
    for label, text in COVER:
        sh.append([sh.text(label, font=BOLD), sh.text(text)])
