"""PDF briefs for purchase proposals, read as a director would: the text (pdftotext), the pages
(pdftoppm), and what WeasyPrint laid out. Golden files pin the rendered HTML; regenerate them with
`python -m ckptreport.build --golden tests/golden/briefs` (or `make golden`)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

import jinja2
import numpy as np
import pytest
import weasyprint
from click.testing import CliRunner

from ckptreport.answer.uncertainty.ranges import parameters
from ckptreport.build import build
from ckptreport.cli import main
from ckptreport.model import display
from ckptreport.model.evaluate import curve
from ckptreport.render import brief, pdf
from ckptreport.render.decision import cadence, facts

from conftest import REPO

GOLDEN = REPO / "tests" / "golden" / "briefs"
POPPLER = shutil.which("pdftotext") and shutil.which("pdftoppm")
needs_poppler = pytest.mark.skipif(
    not POPPLER and not os.environ.get("CI"),
    reason="poppler-utils not installed: run `make system-deps`",
)


def squash(text: str) -> str:
    """Text without spaces and hyphens: pdftotext joins a word hyphenated at a line's end ('superpod-'
    then 'better' reads 'superpodbetter'), so a sentence is compared without them."""
    return re.sub(r"[\s\-]", "", text)


def pdftotext(pdf: Path, layout: bool = True) -> str:
    """The PDF's text, whitespace folded; layout=False keeps a wrapped table cell's lines together."""
    args = ["pdftotext", *(["-layout"] if layout else []), str(pdf), "-"]
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return re.sub(r"\s+", " ", out)


def pages(pdf: Path) -> int:
    info = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    return int(re.search(r"Pages:\s+(\d+)", info).group(1))


@pytest.fixture(scope="module")
def built(default_build, report):
    """The briefs of `ckptreport build` on the shipped defaults, and what the same inputs compute."""
    return report, default_build.out / "briefs"


def test_one_brief_per_job(built, shipped):
    _, briefs = built
    names = sorted(p.stem for p in briefs.glob("*.pdf"))
    assert names == sorted(j.name for j in shipped.plan.jobs)


@needs_poppler
def test_the_first_page_carries_the_decision(built, tmp_path):
    """Read as a director deciding a purchase: page 1 (as text, and rendered to a PNG) gives what to
    buy and run, the cadence, the purchase price, the chance of meeting the target and ETTR, with the
    figures of the decision (the manifest's)."""
    result, briefs = built
    for data in result.briefs:
        d = data.spec.decision
        assert d is not None
        first = pdftotext(briefs / f"{data.spec.name}.pdf", layout=False).split("\f")[0]
        flat = re.sub(r"\s+", " ", first)
        f = facts(d)
        p, b = f["pick"], f["bought"]
        price = (  # a job of a cluster: the cluster's purchase, and its runner-up's
            f"Purchase price {display.value(b['purchase_usd'], 'usd')} for {b['label']}"
            if b
            else f"Purchase price {display.value(p['purchase_usd'], 'usd')}"
        )
        if b and b["runner_label"]:
            runner = f"Runner-up: {b['runner_label']}, purchase "
            assert runner + display.value(b["runner_purchase_usd"], "usd") in flat, flat[:3000]
        for words in (
            "The decision",
            p["option"],
            cadence(p),
            price,
            "What the storage moves",
            "What it does not move",
            f"{display.value(p['p_meets_pct'], 'pct')} of 1,000 draws (the plan asks 80%)",
            f"Goodput (ETTR) {display.value(p['ettr_pct'], 'pct')} of the wall clock trains",
        ):
            assert words in flat, (data.spec.name, words, flat[:3000])
        subprocess.run(
            [
                "pdftoppm",
                "-r",
                "40",
                "-png",
                "-f",
                "1",
                "-l",
                "1",
                str(briefs / f"{data.spec.name}.pdf"),
                str(tmp_path / data.spec.name),
            ],
            check=True,
        )
        (png,) = tmp_path.glob(f"{data.spec.name}*.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10_000


@needs_poppler
def test_headline_figures_equal_the_engine(built):
    """Each brief's text holds its headline figures as the engine computes and formats them."""
    result, briefs = built
    for data in result.briefs:
        spec, rec = data.spec, data.pick.row
        text = pdftotext(briefs / f"{spec.name}.pdf")
        bought = spec.decision.bought if spec.decision is not None else None
        for figure in (
            display.of("ckpt_bytes", rec["ckpt_bytes"]),
            display.value(rec["overhead_pct"], "pct"),
            # a job of a cluster: its storage is the cluster's purchase, not a monthly figure of its own
            *([] if bought else [display.of("storage_usd_month", rec["storage_usd_month"])]),
            display.of("lost_gpu_usd_month", rec["lost_gpu_usd_month"]),
            # a job of a cluster: its GPU time lost, the storage being the cluster's purchase
            *([] if bought else [display.of("total_usd", rec["total_usd"])]),
            display.of("waste_usd", rec["waste_usd"]),
            display.of("tier_bought_GBps", rec["tier_bought_GBps"]),
            display.of("required_write_GBps", rec["required_write_GBps"]),
            str(rec["tier"]),
            str(rec["sku"]),
        ):
            assert figure in text, (spec.name, figure)
        flat = re.sub(r"\s+", " ", pdftotext(briefs / f"{spec.name}.pdf", layout=False))
        if bought is not None:  # the runner-up is the cluster's other product, with its price
            assert f"On the cluster's runner-up, {bought.runner_label} (purchase" in flat
            assert "The purchase for the cluster" in flat and "bought" in flat
        elif data.pick.runner_up is not None:
            extra = display.value(data.pick.runner_up_extra_usd, "usd")
            assert (
                f"Runner-up: {data.pick.runner_up['strategy']} checkpoints to {data.pick.runner_up['tier']}"
                in flat
            )
            assert f"{extra} more over the run" in flat, (spec.name, extra)
        for name, value in data.assumed:
            assert f"{name} {value}" in flat, (spec.name, name)
        if bought is None:
            assert "Purchase curve" in flat and "write bandwidth bought (GB/s)" in flat
        # the restore after a failure and the recovery mix it rests on (issue 14)
        mix = display.value(rec["host_restore_pct"], "pct")
        assert (
            f"After a failure: {mix} of restarts read the copy in host memory "
            f"({display.of('restore_host_s', rec['restore_host_s'])})"
        ) in flat, spec.name
        assert (
            f"{display.of('restore_s', rec['restore_s'])} on average, counted in the rework" in flat
        ), spec.name
        assert "restore (async)" in flat
        # the brief's row is the decision's pick, as the model computes it at its cadence
        assert rec is spec.decision.pick.row
        again = curve(rec, np.array([rec["interval_s"]]))
        assert again["overhead_pct"][0] == pytest.approx(rec["overhead_pct"], rel=1e-12)


@needs_poppler
def test_every_page_renders_and_the_body_before_the_appendix_is_at_most_5_pages(built, tmp_path):
    """A director reads the decision on page 1 and the body (recommendation, costs, what is trained,
    the write chain) in a few pages; the appendix of sources and calibration follows."""
    _, briefs = built
    for path in briefs.glob("*.pdf"):
        n = pages(path)
        text = subprocess.run(
            ["pdftotext", str(path), "-"], check=True, capture_output=True, text=True
        ).stdout
        appendix = next(
            i
            for i, page in enumerate(text.split("\f"), 1)
            if "Appendix: assumptions and sources" in page
        )
        assert appendix <= 6 and 3 <= n <= 10, (path.name, appendix, n)
        subprocess.run(
            ["pdftoppm", "-r", "30", "-png", str(path), str(tmp_path / path.stem)], check=True
        )
        assert len(list(tmp_path.glob(f"{path.stem}*.png"))) == n


def _rightmost(box) -> float:
    edge = 0.0
    for child in getattr(box, "children", None) or []:
        if getattr(child, "width", None) is not None and hasattr(child, "margin_width"):
            edge = max(edge, child.position_x + child.margin_width())
        edge = max(edge, _rightmost(child))
    return edge


def _check_fits(html: str) -> None:
    doc = weasyprint.HTML(string=html, url_fetcher=pdf.RefusingFetcher()).render()
    for number, page in enumerate(doc.pages, 1):
        box = page._page_box
        limit = page.width - box.margin_right + 0.5
        assert _rightmost(box) <= limit, f"page {number}: something runs off the page"


def test_no_table_or_diagram_runs_off_the_page(report):
    """Every laid-out box of every page ends inside the right margin, A4 and Letter."""
    meta = {"ckptreport_version": "x", "input_hash": "0" * 64, "build_time": "2000-01-01T00:00:00Z"}
    for paper in ("A4", "Letter"):
        _check_fits(brief.render_html(brief.context(report.briefs[2], report, meta, paper)))


HOSTILE = {
    "model": '<img src="file:///etc/passwd">',
    "tier": '<link rel=attachment href="file:///etc/hostname">',
    "sku": "A & B <C>",
}


def _hostile_models(models: Path) -> None:
    def rename(file: str, old: str, new: str) -> None:
        path = models / file
        text = path.read_text()
        quoted = "'" + new.replace("'", "''") + "'"
        assert f"  {old}:\n" in text
        path.write_text(text.replace(f"  {old}:\n", f"  {quoted}:\n", 1))

    rename("models.yaml", "llama3-8b", HOSTILE["model"])
    rename("storage.yaml", "pfs-100", HOSTILE["tier"])
    rename("hardware.yaml", "dgx-h100", HOSTILE["sku"])
    plan = models / "plan.yaml"
    text = (
        plan.read_text()
        .replace("model: llama3-405b", "model: llama3-405b")
        .replace("sku: dgx-h100", "sku: 'A & B <C>'")
    )
    hostile = "'" + HOSTILE["model"].replace("'", "''") + "'"
    text = text.replace(
        "jobs:\n",
        f"jobs:\n  - {{name: etc-passwd, model: {hostile}, sku: 'A & B <C>', gpus: 1024}}\n",
    )
    plan.write_text(
        text
        + "models: [llama3-405b, '"
        + HOSTILE["model"]
        + "']\ntiers: ['"
        + HOSTILE["tier"]
        + "', s3-standard, superpod-best]\nskus: ['A & B <C>', gh200]\n"
    )


@needs_poppler
def test_hostile_names_appear_literally_and_nothing_is_fetched(models_copy, tmp_path, monkeypatch):
    """Names that look like markup are text: they print literally, no file is read, nothing attached."""
    _hostile_models(models_copy)
    result = build(models_copy, tmp_path / "out", skip=["workbook"])
    pdfs = sorted((tmp_path / "out" / "briefs").glob("*.pdf"))
    hostile_pdf = next(p for p in pdfs if "passwd" in p.name)
    text = pdftotext(hostile_pdf, layout=False)
    squeezed = re.sub(r"\s", "", text)  # a long name may wrap across lines
    for name in HOSTILE.values():
        assert re.sub(r"\s", "", name) in squeezed, name
    assert sorted(result.refused) == sorted(
        b.spec.name for b in result.report.briefs
    )  # each reported back
    assert all(urls == [] for urls in result.refused.values())  # nothing was even asked for
    raw = hostile_pdf.read_bytes()
    assert b"/EmbeddedFile" not in raw and b"/FileAttachment" not in raw
    assert "root:x:0:0" not in text
    data = next(b for b in result.report.briefs if "passwd" in b.spec.name)
    html = brief.render_html(brief.context(data, result.report, brief.GOLDEN_META, "A4"))
    assert '<img src="file' not in html and "<link rel=attachment" not in html
    assert "&lt;img src=&#34;file:///etc/passwd&#34;&gt;" in html


def test_the_fetcher_refuses_file_and_http_urls():
    """Even markup that asks for files gets nothing: the renderer's fetcher refuses every URL."""
    fetcher = pdf.RefusingFetcher()
    html = (
        '<html><body><p>x</p><img src="file:///etc/passwd"><link rel=attachment href="file:///etc/hostname">'
        '<img src="http://example.invalid/x.png"></body></html>'
    )
    laid_out = weasyprint.HTML(string=html, url_fetcher=fetcher).write_pdf()
    assert {u.split("//")[0] for u in fetcher.refused} >= {"file:"}
    assert b"/EmbeddedFile" not in laid_out


def test_templates_are_strict():
    """An undefined variable is an error, not an empty string; autoescape is on."""
    env = brief.environment()
    with pytest.raises(jinja2.UndefinedError):
        env.get_template("brief.html.j2").render()
    assert env.from_string("{{ x }}").render(x="<b>") == "&lt;b&gt;"


def test_a_cluster_jobs_first_page_names_its_clusters_purchase_and_the_runner_ups(default_build):
    """The shipped 405B runs on a cluster: page 1 of its brief gives the cluster's purchase (units of
    which product, for which jobs), the runner-up's own purchase price, and what the storage moves and
    does not, with the manifest's figures."""
    import json

    manifest = json.loads((default_build.out / "manifest.json").read_text())
    cluster = next(c for c in manifest["clusters"] if "llama3-405b" in c["jobs"])
    c, r = cluster["choice"], cluster["runner_up"]
    first = pdftotext(default_build.out / "briefs" / "llama3-405b.pdf", layout=False).split("\f")[0]
    flat = first.replace("-", "")  # pdftotext joins a name broken at its hyphen without it
    unit = f"{c['units']:,} {c['unit']} of {c['tier']}"
    for words in (
        f"Purchase price {display.value(c['purchase_usd'], 'usd')} for {unit}",
        f"the storage of the cluster {cluster['cluster']}",
        f"Runner-up: {r['units']:,} {r['unit']} of {r['tier']}, purchase "
        + display.value(r["purchase_usd"], "usd"),
        "What the storage moves",
        "What it does not move",
        "restart after a failure",
    ):
        assert words.replace("-", "") in flat, (words, flat[:3000])
    whole = pdftotext(default_build.out / "briefs" / "llama3-405b.pdf", layout=False)
    curve = f"The purchase for the cluster {cluster['cluster']}".replace("-", "")
    assert curve in whole.replace("-", ""), "the brief draws the cluster's purchase curve"


def test_golden_html(report):
    """The rendered HTML equals the golden files (charts elided; see brief.normalized_html)."""
    got = brief.golden_html(report)
    assert sorted(got) == sorted(p.name for p in GOLDEN.glob("*.html")), "run: make golden"
    for name, html in got.items():
        assert html == (GOLDEN / name).read_text(), (
            f"{name} differs: run `make golden` and review the diff"
        )


def test_charts_are_vector_with_text_as_text(report):
    ctx = brief.context(report.briefs[0], report, brief.GOLDEN_META, "A4")
    for key in ("size_svg", "waste_svg", "chain_svg"):
        svg = str(ctx[key])
        assert svg.startswith("<svg") and "<text" in svg and "<image" not in svg, key
    assert "checkpoint interval (min)" in str(ctx["waste_svg"])


@needs_poppler
def test_letter_on_request_and_plan_briefs(small_models, tmp_path):
    """--paper Letter gives US Letter pages; a `briefs:` entry gets its own PDF comparing its SKUs."""
    plan = small_models / "plan.yaml"
    plan.write_text(
        plan.read_text()
        + (
            "briefs:\n  - name: h100-vs-a100\n    model: llama3-405b\n    skus: [dgx-h100, dgx-a100]\n"
            "    tiers: [superpod-best, s3-standard, fsx-lustre-1000]\n    gpus: 4096\n    interval: 30 min\n"
            "    title: Storage for the 405B run\n"
        )
    )
    build(small_models, tmp_path / "out", paper="Letter", skip=["workbook"])
    pdf = tmp_path / "out" / "briefs" / "h100-vs-a100.pdf"
    info = subprocess.run(["pdfinfo", str(pdf)], check=True, capture_output=True, text=True).stdout
    assert "612 x 792 pts" in info
    text = pdftotext(pdf)
    assert "Storage for the 405B run" in text and "The best option on each candidate SKU" in text
    assert "dgx-a100" in text and "4,096 GPUs" in text


def test_briefs_are_the_same_bytes_in_workers_or_here(small_build, tmp_path):
    """Laid out by worker processes (the build's default on several cores) or in this process, each
    PDF is byte for byte the same; a worker's failure reaches the build as an error."""
    report = small_build.result.report
    here = brief.write_all(tmp_path / "here", report, brief.GOLDEN_META, workers=0)
    there = brief.write_all(tmp_path / "there", report, brief.GOLDEN_META, workers=2)
    assert [p.name for p in here] == [p.name for p in there] and here
    for a, b in zip(here, there):
        assert a.read_bytes() == b.read_bytes(), a.name
    blocked = tmp_path / "blocked"
    (blocked / here[0].name).mkdir(parents=True)  # a directory where a worker writes a PDF
    with pytest.raises(OSError):
        brief.write_all(blocked, report, brief.GOLDEN_META, workers=2)


def test_without_weasyprint_the_build_says_what_to_install(small_build, tmp_path, monkeypatch):
    """No WeasyPrint (or no Pango under it): a clean error that names what to install and the way
    around it, not a traceback."""
    import sys

    from ckptreport.base.errors import InputError

    monkeypatch.setitem(sys.modules, "weasyprint", None)  # import weasyprint now raises ImportError
    with pytest.raises(InputError, match="apt-get install libpango.*--no-briefs"):
        brief.write_all(tmp_path / "b", small_build.result.report, brief.GOLDEN_META, workers=0)


@needs_poppler
def test_every_brief_says_how_sure_it_is(built):
    """The band (P10/P50/P90 of the recommendation's cost, the share of draws it wins), the break-even
    verdict and the tornado are in each brief's text, as the engine computed them."""
    result, briefs = built
    for data in result.briefs:
        r = data.robust
        flat = re.sub(r"\s+", " ", pdftotext(briefs / f"{data.spec.name}.pdf", layout=False))
        assert "How sure this is" in flat
        q = r.quantiles["total_usd_month"]
        p10, p50, p90 = (display.of("total_usd_month", q[f"p{p}"]) for p in (10, 50, 90))
        after = squash(flat).split(squash("Its total cost a month:"), 1)[1][
            :300
        ]  # a page break may fall in it
        assert squash(f"P10 {p10}, P50 {p50}, P90") in after and squash(p90) in after, (
            data.spec.name
        )
        share = r.wins[r.base["option"]]
        said = f"{r.base['option']} is the recommendation in {share:.0%} of draws"
        assert squash(said) in squash(flat)  # pdftotext joins a word hyphenated at a line's end
        assert "Tornado: each uncertain input moved alone" in flat
        for w in r.swings[
            :3
        ]:  # the tornado's bars are labelled with the inputs (up to 40 characters)
            assert w.param.label[:30] in flat, w.param.label
        assert ("holds unless" in flat) == bool(r.breaks)
        assert ("No uncertain input flips this recommendation" in flat) == (not r.breaks)


@needs_poppler
def test_a_brief_names_the_break_even_where_its_recommendation_flips(small_models, tmp_path):
    """One tier's price per GB/s given a range alone: the 405B brief says above which price the
    recommendation changes, and to what (the engine's break-even)."""
    import re as re_

    from ckptreport.answer.report import compute
    from ckptreport.read.load import load

    for name in ("hardware.yaml", "storage.yaml", "engines.yaml", "plan.yaml"):
        path = small_models / name
        path.write_text(
            re_.sub(
                r'low: (?:"[^"]*"|[^,]+), high: (?:"[^"]*"|[^,]+), (distribution: \w+, )?'
                r"(driver: [\w-]+, )?",
                "",
                path.read_text(),
            )
        )
    storage = small_models / "storage.yaml"
    head, tier = storage.read_text().split(
        "\n  superpod-good:\n", 1
    )  # the tier the 405B brief buys
    storage.write_text(
        head
        + "\n  superpod-good:\n"
        + tier.replace(
            'capex_usd_per_GBps: {value: "$25,000", basis: assumption',
            'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", high: "$40,000", basis: assumption',
            1,
        )
    )
    report = compute(load(small_models))
    data = next(b for b in report.briefs if b.spec.name == "llama3-405b")
    (flip,) = [b for b in data.robust.breaks if b.direction == "above"]
    out = tmp_path / "out"
    assert (
        CliRunner()
        .invoke(
            main, ["build", "--models", str(small_models), "--out", str(out), "--no-workbook", "-q"]
        )
        .exit_code
        == 0
    )
    flat = re.sub(r"\s+", " ", pdftotext(out / "briefs" / "llama3-405b.pdf", layout=False))
    said = (
        f"This recommendation holds unless tiers.superpod-good.capex_usd_per_GBps rises above "
        f"{display.of('capex_usd_per_GBps', flip.value)} (then {flip.to})"
    )
    assert squash(said) in squash(flat)
    assert [p.label for p in parameters(report.inputs)] == [
        "tiers.superpod-good.capex_usd_per_GBps"
    ]


def test_the_ettr_curve_is_what_explain_computes_at_its_gpu_counts(report):
    """Each point of a brief's ETTR-against-GPUs curve, replica_recovery's among them, is the ETTR at
    the optimal cadence that `explain` computes for that option at that GPU count."""
    import json

    from click.testing import CliRunner

    from ckptreport.cli import main

    data = next(b for b in report.briefs if "replica_recovery" in b.ettr_curves)
    row = data.pick.row
    bought = data.spec.decision.bought if data.spec.decision else None
    sized = []  # a job of a cluster: its tier at the units the cluster buys (its whole bandwidth)
    if bought is not None and bought.units:
        assert bought.share_pct == pytest.approx(100)
        sized = ["--units", str(bought.units)]
    assert {"async", "replica_recovery"} <= set(data.ettr_curves)
    for strategy, (engine, gpus, ettr) in data.ettr_curves.items():
        assert gpus[0] >= 1000 and gpus[-1] >= 99_000 and (np.diff(gpus) > 0).all()
        assert (gpus % (row["tp"] * row["pp"]) == 0).all()  # whole replicas
        for k in (0, len(gpus) - 1):
            argv = ["explain", str(row["model"]), str(row["sku"]), str(row["tier"])]
            argv += ["--gpus", f"{gpus[k]:.0f}", "--interval", "30min", "--strategy", strategy]
            argv += ["--engine", engine, "--recipe", str(row["recipe"]), "--json", *sized]
            result = CliRunner().invoke(main, argv)
            assert result.exit_code == 0, result.output
            steps = {s["name"]: s["value"] for s in json.loads(result.output)["steps"]}
            assert steps["optimal_ettr_pct"] == pytest.approx(ettr[k], rel=1e-9), (
                strategy,
                gpus[k],
            )
    mine = data.ettr_curves["replica_recovery"][2]
    assert (mine > data.ettr_curves["async"][2]).all()  # it keeps more of the run at every scale
