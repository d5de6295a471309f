"""PDF briefs for hardware purchase proposals: a few pages a director reads in five minutes.

One brief per model (its summary SKU, every tier of the plan) and one per ``briefs:`` entry of the
plan. Everything a brief shows was computed in the compute stage (``answer.types.BriefData``: its rows, the
recommendation, the tier comparison, the waste curves, the provenance of each input); this module
only formats it, into jinja2 templates from ``templates/`` (autoescaped; an undefined variable is an
error) rendered by WeasyPrint; the prose is the template's, the figures it quotes are formatted here.
Charts (``charts``) are vector SVG with their text kept as text. The renderer fetches nothing: every
URL is refused."""

from __future__ import annotations

import re
from concurrent.futures import as_completed
from pathlib import Path
from typing import TYPE_CHECKING

from markupsafe import Markup

from ..base.workers import cores as workers_cores
from ..base.workers import spawn_works
from ..model import display
from ..read import units
from ..read.strategies import COMPARED
from . import charts, pdf, svg
from .brief_words import (
    ettr_ends,
    held_out,
    robust_words,
    sku_rows,
    sources,
    strategy_rows,
    tier_rows,
    words,
)
from .chain import chain_svg
from .env import environment, templates_dir

if TYPE_CHECKING:
    from ..answer.types import BriefData, Report


def context(data: BriefData, report: Report, meta: dict[str, str], paper: str) -> dict:
    """Everything the template shows, formatted from the brief's data."""
    env = environment()
    rec, spec = data.pick.row, data.spec
    f = display.of
    cited, bandwidths, measured_rows = sources(data, report.inputs.measured.values())
    skus = sku_rows(data)
    built = meta["build_time"]
    return {
        "title": spec.title or f"Checkpoint storage for {spec.model}",
        "model": spec.model,
        "version": meta["ckptreport_version"],
        "built": built,
        "built_date": built[:10],
        "input_hash": meta["input_hash"][:16],
        "css": Markup(_css(paper)),
        "paper_class": "letter" if paper == "Letter" else "a4",
        "w": words(data),
        "rec": {
            "sku": str(rec["sku"]),
            "tier": str(rec["tier"]),
            "strategy": str(rec["strategy"]),
            "meets": data.pick.meets,
        },
        "params": f("params", rec["params"]),
        "active": f("active_params", rec["active_params"]),
        "tokens": f("tokens", rec["tokens"]),
        "recipe": str(rec["recipe"]),
        "bytes_per_param": f("bytes_per_param", rec["bytes_per_param"]),
        "ckpt": f("ckpt_bytes", rec["ckpt_bytes"]),
        "per_gpu": f("bytes_per_gpu", rec["bytes_per_gpu"]),
        "per_node": f("bytes_per_node", rec["bytes_per_node"]),
        "gpus": f"{spec.gpus:,}",
        "mfu": f("mfu_pct", rec["mfu_pct"]),
        "idle": f"{int(rec['idle_gpus']):,}" if rec["idle_gpus"] else "",
        "replicas": f"{int(rec['dp_ranks']):,}",
        "training": f"{int(rec['training_gpus']):,}",
        "compute_days": display.value(rec["compute_s"] / units.COLUMN_UNITS["days"].scale, "days"),
        "mtbf": f("cluster_mtbf_s", rec["cluster_mtbf_s"]),
        "interval": f("interval_s", rec["interval_s"]),
        "target": f("target_overhead_pct", rec["target_overhead_pct"]),
        "size_svg": svg.draw(charts.size(rec)),
        "waste_svg": svg.draw(charts.waste(data)),
        "ettr_svg": svg.draw(charts.ettr(data)),
        "ettr_ends": ettr_ends(data),
        "chain_svg": chain_svg(env, rec),
        "purchase_what": data.purchase.what,
        "purchase_svg": svg.draw(
            charts.purchase(
                data.purchase.points,
                data.purchase.optimum,
                str(rec["strategy"]),
                data.purchase.what,
            )
        ),
        "units": units_words(report, data),
        "tornado_svg": svg.draw(charts.brief_tornado(data)),
        "robust": robust_words(data),
        "host_recoverable": display.value(data.pick.row["host_recoverable_pct"], "pct"),
        "tiers": tier_rows(data),
        "skus": skus if len(skus) > 1 else [],
        "strategies": strategy_rows(data),
        "compared": COMPARED,
        "sources": cited,
        "bandwidths": bandwidths,
        "measured": measured_rows,
        "calibration": report.calibration.rows,
        "held_out": held_out(report.calibration.summary),
        "decision": decision_words(data),
    }


def units_words(report, data: BriefData) -> dict | None:
    """A job of a cluster: its cluster's purchase curve (units against cost over the storage's life)
    and the words beside it."""
    from .cluster import facts

    cp = next((c for c in getattr(report, "clusters", []) if data.spec.name in c.jobs), None)
    if cp is None or cp.choice is None or data.spec.decision is None:
        return None
    f = facts(cp)
    least, pay = f["least"], f["payback"]
    mine = next(j for j in f["choice"]["jobs"] if j["job"] == data.spec.name)
    runner = f["runner_up"]
    return {
        "share": display.value(mine.get("storage_share_usd") or 0.0, "usd"),
        "runner": runner["label"] if runner else "",
        "runner_purchase": display.value(runner["purchase_usd"], "usd") if runner else "",
        "purchase": display.value(f["choice"]["purchase_usd"], "usd"),
        "svg": svg.draw(charts.units_curve(f)),
        "cluster": f["cluster"],
        "jobs": ", ".join(f["jobs"]),
        "choice": f["choice"]["label"],
        "least": least["label"] if least else "",
        "payback": f"{pay['more_units']:,} more {f['choice']['unit']} than the fewest pay back in "
        f"{pay['months']:,.1f} months of GPU time"
        if pay
        else "",
    }


def decision_words(data: BriefData) -> dict | None:
    """A job's brief: the decision's figures as its first page shows them (``render.decision``: the
    same figures and sentences as the terminal, the page and the manifest; the purchase in its table)."""
    from .decision import shown

    return None if data.spec.decision is None else shown(data.spec.decision, False)


def _css(paper: str) -> str:
    css = (templates_dir() / "brief.css").read_text()
    return css.replace("size: A4;", "size: letter;", 1) if paper == "Letter" else css


def render_html(ctx: dict) -> str:
    return (
        environment()
        .get_template("brief.html.j2")
        .render(**{k: v for k, v in ctx.items() if not k.startswith("_")})
    )


class Briefs:
    """Briefs being written: their HTML was rendered here; the PDFs are laid out by ``pdf.Pool``."""

    def __init__(self, pool: pdf.Pool, jobs: list, progress):
        from ..base.progress import advance_as_done

        self.pool, self.jobs, self.progress = pool, jobs, progress
        self.refused: dict[str, list[str]] = {}
        # in a log each PDF says so as its worker finishes it, while the workbook is still written
        self.as_done = advance_as_done(progress, "briefs", len(jobs))
        for _, path, future in jobs if self.as_done else ():
            future.add_done_callback(
                lambda f, name=path.name: f.cancelled() or f.exception() or self.as_done(1, name)
            )

    def wait(self) -> list[Path]:
        """Wait for every PDF; returns their paths. A missing WeasyPrint or Pango is a clean error."""
        from ..base.progress import task

        try:
            futures = {future: (name, path) for name, path, future in self.jobs}
            with task(
                self.progress if not self.as_done else None, "briefs", len(futures)
            ) as advance:
                for future in as_completed(futures):
                    name, path = futures[future]
                    try:
                        self.refused[name] = refused = future.result()
                    except pdf.NoRenderer as e:
                        raise _no_weasyprint(e) from None
                    advance(1, path.name)
                    if refused:
                        self.progress(f"{path.name}: refused to fetch {len(refused)} URL(s)")
            return [path for _, path, _ in self.jobs]
        finally:
            self.close()

    def close(self) -> None:
        """Stop: workers finish the brief in hand, the rest are cancelled (a failed build)."""
        self.pool.close(cancel=True)


def _no_weasyprint(e: BaseException):
    from ..base.errors import InputError

    return InputError(
        f"PDF briefs need WeasyPrint and the Pango library ({e}); on Debian: apt-get "
        "install libpango-1.0-0 libpangoft2-1.0-0 libharfbuzz-subset0, or build with --no-briefs"
    )


def start(
    out_dir: Path,
    report: Report,
    meta: dict[str, str],
    paper: str | None = None,
    progress=lambda _: None,
    workers: int | None = None,
) -> Briefs:
    """Render every brief's HTML and hand each to a pool of worker processes that lay the PDFs out
    (``workers``: how many, 0 for none; by default one per core, at most one per brief; on a
    2-core machine two workers beside the workbook beat one by about a fifth). Returns at once
    with the PDFs in progress: ``wait()`` for them."""
    out_dir.mkdir(parents=True, exist_ok=True)
    paper = paper or report.inputs.plan.paper
    if workers is None:
        cores = workers_cores()
        workers = 0 if cores == 1 or not spawn_works() else min(len(report.briefs), cores)
    where = f"{workers} worker process(es)" if workers else "this process"
    progress(
        f"briefs: {len(report.briefs)} laid out as PDF by {where}, beside the rest of the build"
    )
    from ..base.progress import task

    pool = pdf.Pool(workers)
    jobs = []
    try:
        with task(progress, "brief pages", len(report.briefs)) as advance:
            for data in report.briefs:
                html = render_html(context(data, report, meta, paper))
                path = out_dir / f"{data.spec.name}.pdf"
                jobs.append((data.spec.name, path, pool.submit(html, path)))
                advance(1)
    except BaseException:
        pool.close(cancel=True)
        raise
    return Briefs(pool, jobs, progress)


def write_all(
    out_dir: Path,
    report: Report,
    meta: dict[str, str],
    paper: str | None = None,
    progress=lambda _: None,
    workers: int | None = None,
) -> list[Path]:
    """Write every brief and wait for them."""
    return start(out_dir, report, meta, paper, progress, workers).wait()


GOLDEN_META = {
    "ckptreport_version": "golden",
    "input_hash": "0" * 64,
    "build_time": "2000-01-01T00:00:00Z",
}


_CHART = re.compile(r'<svg xmlns="http://www.w3.org/2000/svg" [^>]*class="chart".*?</svg>', re.S)


def normalized_html(html: str) -> str:
    """HTML with the charts' bodies and the stylesheet elided: golden files pin our markup and words;
    the charts' points are pinned by their own tests (tests/render/test_svg.py), and
    render/templates/brief.css is not copied into every file."""
    html = re.sub(
        r"<style>.*?</style>", "<style>/* templates/brief.css */</style>", html, flags=re.S
    )
    return _CHART.sub("<svg><!-- chart: charts.py, drawn by svg.py --></svg>", html)


def golden_html(report: Report) -> dict[str, str]:
    return {
        f"{data.spec.name}.html": normalized_html(
            render_html(context(data, report, GOLDEN_META, "A4"))
        )
        for data in report.briefs
    }
