"""The build's outputs, registered: each a writer the build runs from one list (``OUTPUTS``), the command
line's --no-* flags (and ``build(skip=...)``) choosing from it. An output says what of the answer it
needs computed (``needs``), may take the plan's rows as they are computed (``sink``), starts (writing,
or handing its work to worker processes) and finishes (waiting for them), and names what the review
page links to. They are started in the list's order, then finished in it: the briefs are laid out
while the workbook and the page are written, and the manifest hashes what the others wrote."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .answer.types import BRIEFS, DECISIONS, PAGE, WORKBOOK, Report, Sampled

if (
    TYPE_CHECKING
):  # the command line reads the registry at once; the writers' libraries load when they write
    import pandas as pd


Progress = Callable[[str], None]


CSV_MAX_ROWS = (
    1_000_000  # above it scenarios.csv is written only when asked (--csv): GBs no one opens
)


SAMPLE_GROUP_ROWS = 65_536  # rows of samples.parquet per row group, whatever the pieces' size


def sample(
    report: Report,
    staging: Path,
    meta: dict[str, str],
    samples: int,
    seed: int,
    progress: Progress,
    workers=None,
):
    """Monte Carlo over the summary lines (``answer.uncertainty.montecarlo``): every draw streamed to
    samples.parquet a chunk at a time, the quantiles and win shares returned."""
    import pyarrow.parquet as pq

    from .answer.uncertainty.montecarlo import monte_carlo
    from .render.tables import arrow_table

    params = report.params
    progress(
        f"drawing {samples:,} samples of {len(params)} uncertain input(s) (seed {seed}) over "
        f"{len(report.summary):,} summary lines"
    )
    writer, buffered = None, []

    def write(frames: list) -> None:
        nonlocal writer
        import pandas as pd

        frame = frames[0] if len(frames) == 1 else pd.concat(frames, ignore_index=True)
        table = arrow_table(frame, {**meta, "samples": str(samples), "seed": str(seed)})
        if writer is None:
            writer = pq.ParquetWriter(staging / "samples.parquet", table.schema, compression="zstd")
        writer.write_table(table)

    def sink(
        frame: pd.DataFrame,
    ) -> None:  # row groups of SAMPLE_GROUP_ROWS: a write per chunk costs more
        buffered.append(frame)
        if sum(len(f) for f in buffered) >= SAMPLE_GROUP_ROWS:
            write(buffered)
            buffered.clear()

    scratch = staging / ".scratch"
    scratch.mkdir()
    try:
        sampled = monte_carlo(report, params, samples, seed, scratch, sink, progress, workers)
        if buffered:
            write(buffered)
        return sampled
    finally:
        if writer is not None:
            writer.close()
        scratch.rmdir()


@dataclass
class Run:
    """What the outputs of one build share: where they write (the staging directory), the answer, the
    build's meta and clock, its options, the outputs chosen, and the result they report into."""

    staging: Path
    meta: dict[str, str]
    when: dt.datetime
    progress: Progress
    result: Result
    chosen: list[Output]
    csv: bool = True
    paper: str | None = None
    samples: int = 0
    seed: int = 1
    streamed: bool = (
        False  # a plan above ROWS_IN_MEMORY rows: computed, and its tables written, in pieces
    )
    workers: object = None  # where pieces run (``base.workers``)
    report: Report | None = None  # once the compute stage has run
    sampled: Sampled | None = None  # once the samples are drawn
    state: dict[str, object] = field(
        default_factory=dict
    )  # an output's own work in progress (briefs: the pool)

    def links(self) -> list[tuple[str, str]]:
        """What the review page links to, (label, path in ``out``), in the order a reviewer reaches for them."""
        return [
            link for name in LINKED for o in self.chosen if o.name == name for link in o.links(self)
        ]


class Output:
    """One output of the build. ``name`` is how --no-NAME and ``build(skip=...)`` leave it out (an output
    that is ``always`` written cannot be); ``needs`` is what the compute stage computes for it
    (``answer.report.NEEDS``)."""

    name: str = ""
    needs: frozenset[str] = frozenset()
    always: bool = False
    flag: str = ""  # the command line's --no-FLAG that leaves it out ('' for none)

    def wanted(self, run_options: dict) -> bool:
        """Whether a build with these options writes it, once not skipped (samples: only when asked)."""
        return True

    def sink(self, run: Run):
        """A function the plan's rows are handed to as the compute stage computes them, or None."""
        return None

    def start(self, run: Run) -> None:
        """Write, or begin writing (work handed to worker processes), once the answer is computed."""

    def finish(self, run: Run) -> None:
        """Wait for what ``start`` began; record it on ``run.result``."""

    def abort(self, run: Run) -> None:
        """The build failed: stop what ``start`` began (the staging directory is discarded)."""

    def links(self, run: Run) -> list[tuple[str, str]]:
        return []


class TablesOutput(Output):
    """scenarios.parquet and scenarios.csv, written as the rows are computed (``Tables``)."""

    name, always = "tables", True

    def sink(self, run: Run):
        from .render.tables import Tables

        run.state["tables"] = Tables(
            run.staging, run.meta, run.csv, parts=run.streamed, rows=run.rows
        )
        return run.state["tables"]

    def finish(self, run: Run) -> None:
        run.state["tables"].check()

    def links(self, run: Run) -> list[tuple[str, str]]:
        out = [("every row (scenarios.parquet)", "scenarios.parquet")]
        return out + ([("every row (scenarios.csv)", "scenarios.csv")] if run.csv else [])


class SamplesOutput(Output):
    """samples.parquet and the manifest's quantiles: Monte Carlo over the summary lines (``--samples``)."""

    name = "samples"

    def wanted(self, run_options: dict) -> bool:
        return bool(run_options.get("samples"))

    def start(self, run: Run) -> None:
        t = time.perf_counter()
        run.sampled = run.result.sampled = sample(
            run.report, run.staging, run.meta, run.samples, run.seed, run.progress, run.workers
        )
        run.result.seconds["samples"] = time.perf_counter() - t

    def links(self, run: Run) -> list[tuple[str, str]]:
        return [("Monte Carlo draws (samples.parquet)", "samples.parquet")]


class BriefsOutput(Output):
    """out/briefs/*.pdf: laid out by worker processes while the workbook and the page are written."""

    name, needs, flag = "briefs", frozenset({BRIEFS}), "briefs"

    def start(self, run: Run) -> None:
        from .render import brief as render_brief

        run.state["briefs_t"] = time.perf_counter()
        run.state["briefs"] = render_brief.start(
            run.staging / "briefs", run.report, run.meta, run.paper, run.progress
        )

    def finish(self, run: Run) -> None:
        pending = run.state.pop("briefs", None)
        if pending is None:
            return
        try:
            pending.wait()
            run.result.refused = pending.refused
            run.result.seconds["briefs"] = time.perf_counter() - run.state["briefs_t"]
        finally:
            pending.close()

    def abort(self, run: Run) -> None:
        pending = run.state.pop("briefs", None)
        if pending is not None:
            pending.close()

    def links(self, run: Run) -> list[tuple[str, str]]:
        pending = run.state.get("briefs")
        return (
            []
            if pending is None
            else [(f"brief: {path.name}", f"briefs/{path.name}") for _, path, _ in pending.jobs]
        )


class WorkbookOutput(Output):
    """out/ckptreport.xlsx: the live spreadsheet model."""

    name, needs, flag = "workbook", frozenset({WORKBOOK}), "workbook"

    def start(self, run: Run) -> None:
        from .render import workbook as render_workbook

        run.progress(
            f"writing the workbook ({len(run.report.workbook_index):,} scenario rows of formulas)"
        )
        t = time.perf_counter()
        run.result.notes += render_workbook.write(
            run.staging / "ckptreport.xlsx", run.report, run.meta, run.when, run.progress
        )
        run.result.seconds["workbook"] = time.perf_counter() - t

    def links(self, run: Run) -> list[tuple[str, str]]:
        return [("workbook (ckptreport.xlsx)", "ckptreport.xlsx")]


class PageOutput(Output):
    """out/report.html: the planning review in one self-contained page (--no-html leaves it out)."""

    name, needs, flag = "page", frozenset({PAGE}), "html"

    def start(self, run: Run) -> None:
        from .render import html as render_html

        t = time.perf_counter()
        run.progress("writing report.html")
        render_html.write(
            run.staging / "report.html", run.report, run.meta, run.links(), run.sampled
        )
        run.result.seconds["html"] = time.perf_counter() - t


class ManifestOutput(Output):
    """out/manifest.json: what was built from what, and the hash of every file the others wrote."""

    name, always, needs = "manifest", True, frozenset({DECISIONS})  # each job's decision

    def finish(self, run: Run) -> None:
        from .render.manifest import file_sha256, manifest, sampled_doc

        staging = run.staging
        files = {
            str(p.relative_to(staging).as_posix()): file_sha256(p)
            for p in sorted(staging.rglob("*"))
            if p.is_file()
        }
        doc = manifest(run.report, run.meta, files)
        if run.sampled is not None:
            doc["samples"] = sampled_doc(run.sampled)
        (staging / "manifest.json").write_text(json.dumps(doc, indent=2, allow_nan=False) + "\n")
        run.state["files"] = files

    def links(self, run: Run) -> list[tuple[str, str]]:
        return [("provenance and hashes (manifest.json)", "manifest.json")]


# Every output, in the order the build starts (and then finishes) them
OUTPUTS: tuple[Output, ...] = (
    TablesOutput(),
    SamplesOutput(),
    BriefsOutput(),
    WorkbookOutput(),
    PageOutput(),
    ManifestOutput(),
)


LINKED = ("workbook", "briefs", "tables", "samples", "manifest")  # the page's links, in this order


SKIPPABLE = tuple(
    o.name for o in OUTPUTS if not o.always and o.name != "samples"
)  # --no-workbook ...


def choose(skip=(), **options) -> list[Output]:
    """The outputs a build writes: all but those ``skip`` names (never the ones always written), and
    those its ``options`` ask for (samples)."""
    unknown = set(skip) - set(SKIPPABLE)
    if unknown:
        raise ValueError(
            f"no output named {sorted(unknown)} to skip; the outputs are {', '.join(SKIPPABLE)}"
        )
    return [o for o in OUTPUTS if (o.always or o.name not in skip) and o.wanted(options)]


@dataclass
class Result:
    """What a build did: the answer it computed, where it read and wrote, the files it wrote, how long
    each part took, its notes, the URLs a brief's renderer refused, the Monte Carlo summary."""

    report: Report
    models_dir: Path
    out_dir: Path
    written: list[Path] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    refused: dict[str, list[str]] = field(
        default_factory=dict
    )  # per brief: URLs its renderer refused
    sampled: Sampled | None = None  # when the build drew samples (--samples)

    @property
    def inputs(self):
        return self.report.inputs

    @property
    def frame(self) -> pd.DataFrame:
        return self.report.frame

    @property
    def dropped(self):
        return self.report.dropped
