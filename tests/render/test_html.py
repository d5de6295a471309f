"""out/report.html, the review page: one self-contained file that says what the other outputs say.

The browser tests drive Debian's headless Chromium through Selenium (chromium-driver): the page
loads with no console error from disk and from a static file server, its table sorts and filters to
the engine's rows, its figures are the manifest's, nothing overflows a laptop's or a phone's width,
and names that look like markup run nothing."""

from __future__ import annotations

import base64
import functools
import hashlib
import http.server
import json
import math
import os
import re
import shutil
import threading
from pathlib import Path

import lxml.html
import numpy as np
import pandas as pd
import pytest

from ckptreport.answer import page as page_module
from ckptreport.answer.recommend import recommend
from ckptreport.answer.types import RECOMMENDED, option_label
from ckptreport.answer.uncertainty.robustness import line_rows
from ckptreport.answer.uncertainty.tornado import tornado, tornadoes
from ckptreport.build import build
from ckptreport.model import rule
from ckptreport.render import columnar

from conftest import EPOCH

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
try:
    import selenium  # noqa: F401

    HAVE_SELENIUM = True
except ImportError:
    HAVE_SELENIUM = False
needs_browser = pytest.mark.skipif(
    not (CHROMIUM and DRIVER and HAVE_SELENIUM) and not os.environ.get("CI"),
    reason="needs chromium, chromium-driver and selenium (make system-deps; CI has them)",
)


def _doc(out: Path):
    return lxml.html.fromstring((out / "report.html").read_text(encoding="utf-8"))


# ---- the page as a file ----------------------------------------------------------------------------


def test_the_page_is_one_file_that_fetches_nothing(small_build):
    """No script, stylesheet, font or image from anywhere: the CSP forbids fetching, and allows only
    the page's own script and style, by their hashes; every link is to an output of the build."""
    out = small_build.out
    text = (out / "report.html").read_text(encoding="utf-8")
    doc = _doc(out)
    csp = doc.xpath("//meta[@http-equiv='Content-Security-Policy']/@content")[0]
    assert "default-src 'none'" in csp and "connect-src 'none'" in csp
    for tag, attr in (
        ("script", "src"),
        ("img", "src"),
        ("link", "href"),
        ("iframe", "src"),
        ("object", "data"),
    ):
        assert not doc.xpath(f"//{tag}[@{attr}]"), tag
    assert "@import" not in text and "url(" not in text.split("<body")[0]
    scripts = [s for s in doc.xpath("//script") if s.get("type") != "application/json"]
    styles = doc.xpath("//style")
    assert len(scripts) == 1 and len(styles) == 1
    for element in (scripts[0], styles[0]):
        digest = base64.b64encode(hashlib.sha256(element.text.encode()).digest()).decode()
        assert f"'sha256-{digest}'" in csp
    for a in doc.xpath("//a"):
        href = a.get("href")
        if href.startswith("#"):
            assert doc.get_element_by_id(href[1:]) is not None, href
        elif a.getparent().get("class") == "src" or a.xpath("ancestor::td[@class='src']"):
            # a source's link opens its publication elsewhere, on a click, in a new tab
            assert href.startswith("https://") and a.get("target") == "_blank", href
        else:
            assert "://" not in href and not href.startswith("/"), href
            assert (out / href).is_file() or href == "manifest.json", href
    assert "report.html" in json.loads((out / "manifest.json").read_text())["files"]


def test_no_html_writes_no_page(small_models, tmp_path):
    result = build(small_models, tmp_path / "out", skip=["workbook", "briefs", "page"])
    assert not (tmp_path / "out" / "report.html").exists()
    assert result.report.page is None


def _expand(flat: list[int]) -> list[int]:
    return [v for v, n in zip(flat[::2], flat[1::2], strict=True) for _ in range(n)]


def _index(data: dict) -> list[int]:
    return np.cumsum(_expand(data["index_steps"])).tolist()


def _values(c: dict) -> list:
    """A column's values, decoded as the page's script decodes them."""
    codes = _expand(c["runs"]) if "runs" in c else c.get("codes")
    if "dict" in c:
        return [c["dict"][k] for k in codes]
    return codes if codes is not None else c["values"]


def test_runs_encode_whole_numbers_and_expand_back():
    rng = np.random.default_rng(7)
    for ints in (
        [],
        [5],
        [1, 1, 1, 0, 0, 3],
        rng.integers(0, 3, 500).repeat(rng.integers(1, 9, 500)),
    ):
        flat = columnar.runs(np.asarray(ints, dtype=np.int64))
        assert _expand(flat) == list(ints)
        assert all(
            a != b for a, b in zip(flat[:-2:2], flat[2::2], strict=True)
        )  # each run is maximal


def test_the_embedded_rows_are_the_engines(small_build):
    """The table's data block decodes to the engine's rows, column by column (numbers to 8 digits)."""
    doc = _doc(small_build.out)
    data = json.loads(doc.get_element_by_id("scenario-data").text)
    frame = small_build.result.frame
    assert data["rows"] == len(frame) and _index(data) == frame.index.tolist()
    assert [c["name"] for c in data["columns"]] == list(page_module.TABLE_COLUMNS)
    assert any("runs" in c for c in data["columns"])  # the long runs of labels are encoded as runs
    for c in data["columns"]:
        got = _values(c)
        want = frame[c["name"]]
        if c["unit"] == "label":
            assert got == want.astype(str).tolist(), c["name"]
        elif c["unit"] == "bool":
            assert got == want.astype(int).tolist(), c["name"]
        else:
            w = want.to_numpy(float)
            g = np.array([np.nan if v is None else v for v in got], dtype=float)
            assert np.array_equal(np.isnan(g), np.isnan(w)), c["name"]
            ok = ~np.isnan(w)
            np.testing.assert_allclose(g[ok], w[ok], rtol=1e-7, err_msg=c["name"])


def test_the_summary_and_headline_are_the_manifests(small_build):
    """Each summary line's recommended option, and the headline's figures, as the manifest records them."""
    doc = _doc(small_build.out)
    manifest = json.loads((small_build.out / "manifest.json").read_text())
    recs = manifest["recommendations"]
    rows = doc.xpath("//table[@class='summary']/tbody/tr")
    assert len(rows) == len(recs)
    head = [th.text_content() for th in doc.xpath("//table[@class='summary']/thead/tr/th")]
    at = head.index("recommended")
    for tr, rec in zip(rows, recs):
        cells = [c.text_content() for c in tr.xpath("./th|./td")]
        assert cells[:2] == [rec["model"], rec["sku"]]
        if rec["status"] == RECOMMENDED:
            assert cells[at].rstrip(" *") == option_label(
                rec["strategy"], rec["tier"], rec["engine"]
            )
    point = next(r for r in recs if r["model"] == "llama3-405b" and r["sku"] == "dgx-h100")
    figures = {
        e.get("data-figure"): e.text_content()
        for e in doc.xpath("//*[@id='headline']//*[@data-figure]")
    }
    usd = lambda v: f"${v:,.0f}"  # noqa: E731
    assert figures["storage_usd_month"] == usd(point["storage_usd_month"])
    assert figures["lost_gpu_usd_month"] == usd(point["lost_gpu_usd_month"])
    assert figures["total_usd_month"] == usd(point["total_usd_month"])
    assert figures["total_usd"] == usd(point["total_usd"])
    assert figures["runner_up_extra_usd"] == usd(point["runner_up"]["extra_usd"])
    for prose in doc.xpath("//*[@id='headline']//p") + doc.xpath(
        "//section[contains(@class, 'line')]//p"
    ):
        assert not re.search(r"[a-z)]\.[A-Z]", prose.text_content()), (
            prose.text_content()
        )  # sentences apart
    title = doc.xpath("//*[@id='headline']/h2")[0].text_content()
    assert title.endswith(option_label(point["strategy"], point["tier"], point["engine"]))


def test_every_input_is_shown_with_its_source(small_build):
    """The inputs panel: every entity of the build, each input's basis and file:line as provenance says."""
    doc = _doc(small_build.out)
    inputs = small_build.result.inputs
    blocks = {
        b.xpath("./summary")[0].text_content(): b
        for b in doc.xpath("//section[@id='inputs']/details")
    }
    assert "skus: dgx-h100" in blocks and "tiers: pfs-100" in blocks and "plan: plan" in blocks
    rows = {
        r.xpath("./td")[0].text_content(): [c.text_content() for c in r.xpath("./td")]
        for r in blocks["tiers: pfs-100"].xpath(".//tbody/tr")
    }
    prov = inputs.prov[("tiers", "pfs-100", "write")]
    assert rows["tier_write_GBps"][2] == prov.basis
    assert rows["tier_write_GBps"][3] == f"{prov.file}:{prov.line}"
    assert rows["tier_write_GBps"][4].startswith(prov.source)


def test_the_page_opens_with_each_clusters_purchase(default_build):
    """Before the jobs: each cluster's purchase (what it buys, its price, what it moves and what not,
    the runner-up's own purchase price), with the manifest's figures, linked from the contents."""
    import html as htmllib
    import json

    from ckptreport.model import display

    page = htmllib.unescape((default_build.out / "report.html").read_text())
    manifest = json.loads((default_build.out / "manifest.json").read_text())
    assert '<a href="#clusters">The purchase</a>' in page
    section = page[page.index('<section id="clusters"') : page.index('<section id="jobs"')]
    for c in manifest["clusters"]:
        ch, r = c["choice"], c["runner_up"]
        for figure in (
            f"{ch['units']:,} {ch['unit']} of {ch['tier']}",
            display.value(ch["purchase_usd"], "usd"),
            display.value(ch["moved_usd"], "usd"),
            display.value(ch["not_moved_usd"], "usd"),
            f"({display.value(r['purchase_usd'], 'usd')})",
        ):
            assert figure in section, (c["cluster"], figure)


def test_the_page_is_under_five_megabytes(default_build):
    """The shipped defaults' page (every one of their rows) within the 5 MB the review asks."""
    size = (default_build.out / "report.html").stat().st_size
    assert size <= 5_000_000, size


def test_the_page_does_not_depend_on_the_directory(small_models, tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", EPOCH)
    pages = []
    for where in ("a", "b"):
        (tmp_path / where).mkdir()
        monkeypatch.chdir(tmp_path / where)
        build(small_models, tmp_path / where / "out", skip=["workbook", "briefs"])
        pages.append((tmp_path / where / "out" / "report.html").read_bytes())
    assert pages[0] == pages[1]


# ---- what the compute stage gives the page -------------------------------------------------------


def test_the_batched_tornadoes_are_each_lines_tornado(report):
    """uncertainty.tornadoes (every line in one evaluation) gives each line what tornado gives it alone."""
    batched = tornadoes(report.frame, report.candidates, report.params)
    assert len(batched) == len(report.summary) > 1
    for line, (base, swings) in enumerate(batched):
        alone_base, alone = tornado(line_rows(report, line), report.params)
        assert base == alone_base
        assert [(s.param.label, s.low, s.high, s.flips) for s in swings] == [
            (s.param.label, s.low, s.high, s.flips) for s in alone
        ]


def test_the_tier_table_is_the_rule_on_each_tier_and_strategy(report):
    tiers = page_module.tier_table(report.frame, report.candidates)
    checked = 0
    for line, by_tier in enumerate(tiers):
        rows = report.frame.loc[sorted(report.candidates[line])]
        for tier, by in by_tier:
            for strategy, label in by.items():
                pick = recommend(rows[(rows["tier"] == tier) & (rows["strategy"] == strategy)])
                assert pick.index == label
                checked += 1
    assert checked > 100


def test_best_per_group_agrees_with_the_rule_on_awkward_groups():
    """Padding never wins: groups with no durable option, unknown costs, infinite overheads, one row."""
    rng = np.random.default_rng(3)
    n = 400
    cols = {
        "recommendable": rng.random(n) < 0.2,
        "tier_durable": rng.random(n) < 0.5,
        "meets_target": rng.random(n) < 0.5,
        "total_usd": np.where(rng.random(n) < 0.2, np.nan, rng.random(n) * 100),
        "tier_bought_GBps": np.where(
            rng.random(n) < 0.1, np.inf, rng.integers(1, 5, n).astype(float)
        ),
        "overhead_pct": np.where(rng.random(n) < 0.1, np.inf, rng.random(n)),
    }
    cols["recommendable"] &= cols["tier_durable"]
    cut = np.sort(rng.choice(np.arange(1, n), 60, replace=False))
    groups = [g for g in np.split(np.arange(n), cut) if len(g)]
    groups.append(np.array([5]))
    first, status = page_module.best_per_group(cols, groups)
    for g, got, s in zip(groups, first, status):
        order, _, want_status = rule.rank(*rule.of({k: v[g] for k, v in cols.items()}))
        assert got == g[order[0]] and s == want_status


# ---- in a real browser ---------------------------------------------------------------------------


@functools.cache
def _options():
    from selenium.webdriver.chrome.options import Options

    o = Options()
    for arg in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--disable-background-networking",
        "--no-first-run",
    ):
        o.add_argument(arg)
    if CHROMIUM:
        o.binary_location = CHROMIUM
    o.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return o


@pytest.fixture(scope="module")
def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    driver = webdriver.Chrome(service=Service(DRIVER), options=_options())
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()


def _open(driver, url: str, size=(1280, 800)):
    driver.set_window_size(*size)
    driver.get(url)
    driver.get_log("browser")  # what an earlier page logged
    driver.refresh()
    assert driver.execute_script("return document.body.dataset.ready") == "1"
    return [e for e in driver.get_log("browser")]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def served(default_build):
    handler = functools.partial(_Quiet, directory=str(default_build.out))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/report.html"
    server.shutdown()
    server.server_close()


@needs_browser
def test_the_page_loads_without_a_console_message_from_disk_and_from_a_server(
    browser, default_build, served
):
    for url in ((default_build.out / "report.html").as_uri(), served):
        logs = _open(browser, url)
        assert logs == [], logs
        assert (
            browser.execute_script("return document.querySelectorAll('#scenario-body tr').length")
            == 50
        )


def _rows_shown(driver) -> list[dict]:
    """The rows the table draws, every column (the chooser's "all" first)."""
    return driver.execute_script("""
        if (document.querySelector('#scenario-head th[hidden]')) { document.getElementById('all-columns').click(); }
        const names = [...document.querySelectorAll('#scenario-head button')].map(b => b.dataset.col);
        return [...document.querySelectorAll('#scenario-body tr')].map(tr => {
            const out = {row: Number(tr.dataset.row)};
            [...tr.querySelectorAll('td')].slice(1).forEach((td, k) => { out[names[k]] = td.dataset.v; });
            return out;
        });""")


@needs_browser
def test_sorting_by_overhead_and_filtering_by_tier_shows_the_engines_rows(browser, default_build):
    """Filter the table to one tier, sort it by overhead (then reverse it), and read back the rows:
    the engine's rows of that tier, in pandas' stable order, each figure the Parquet's."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _open(browser, (default_build.out / "report.html").as_uri())
    frame = pd.read_parquet(default_build.out / "scenarios.parquet")
    Select(
        browser.find_element(By.CSS_SELECTOR, "#scenario-filters select[data-col='tier']")
    ).select_by_value("pfs-100")
    browser.find_element(By.CSS_SELECTOR, "#scenario-head button[data-col='overhead_pct']").click()
    want = frame[frame["tier"] == "pfs-100"].sort_values("overhead_pct", kind="stable")
    shown = browser.find_element(By.ID, "shown").text
    assert f"of {len(want):,} (filtered from {len(frame):,})" in shown
    for direction in ("ascending", "descending"):
        rows = _rows_shown(browser)
        expect = (
            want
            if direction == "ascending"
            else frame[frame["tier"] == "pfs-100"].sort_values(
                "overhead_pct", ascending=False, kind="stable"
            )
        )
        assert [r["row"] for r in rows] == expect.index[:50].tolist(), direction
        for r in rows:
            engine = frame.loc[r["row"]]
            assert (
                r["tier"] == "pfs-100"
                and r["model"] == engine["model"]
                and r["engine"] == engine["engine"]
            )
            for col in ("overhead_pct", "stall_s", "total_usd_month", "ckpt_bytes"):
                v = engine[col]
                if pd.isna(v):
                    assert r[col] == "null"
                elif math.isinf(v):
                    assert r[col] == "Infinity"
                else:
                    assert float(r[col]) == pytest.approx(float(v), rel=1e-7), col
        browser.find_element(
            By.CSS_SELECTOR, "#scenario-head button[data-col='overhead_pct']"
        ).click()
    box = browser.find_element(By.CSS_SELECTOR, "#scenario-filters input[data-col='overhead_pct']")
    box.send_keys("<= 0.5")
    low = want[want["overhead_pct"] <= 0.5]
    assert f"of {len(low):,} (filtered" in browser.find_element(By.ID, "shown").text


@needs_browser
def test_the_figures_the_browser_shows_are_the_manifests(browser, default_build):
    """As rendered: the summary's recommended option per line and the headline's dollars."""
    _open(browser, (default_build.out / "report.html").as_uri())
    manifest = json.loads((default_build.out / "manifest.json").read_text())
    shown = browser.execute_script("""
        const head = [...document.querySelectorAll('table.summary thead th')].map(t => t.textContent);
        const at = head.indexOf('recommended');
        return [...document.querySelectorAll('table.summary tbody tr')].map(tr =>
            [...tr.children].map(c => c.innerText)).map(c => [c[0], c[1], c[at]]);""")
    assert len(shown) == len(manifest["recommendations"])
    for (model, sku, option), rec in zip(shown, manifest["recommendations"]):
        assert (model, sku) == (rec["model"], rec["sku"])
        if rec["status"] == RECOMMENDED:
            assert option.rstrip(" *") == option_label(rec["strategy"], rec["tier"], rec["engine"])
    figures = browser.execute_script("""return Object.fromEntries([...document.querySelectorAll(
        '#headline [data-figure]')].map(e => [e.dataset.figure, e.innerText]));""")
    point = next(
        r
        for r in manifest["recommendations"]
        if r["model"] == "llama3-405b" and r["sku"] == "dgx-h100"
    )
    assert figures["total_usd_month"] == f"${point['total_usd_month']:,.0f}"


@needs_browser
def test_nothing_overflows_a_laptop_or_a_phone(browser, default_build, tmp_path):
    """At 1280x800 and 390x844 the page is no wider than the window: wide tables and charts scroll
    inside their own box. The screenshots are kept (CKPTREPORT_SCREENSHOTS=DIR) for a person to read."""
    keep = Path(os.environ.get("CKPTREPORT_SCREENSHOTS", tmp_path))
    keep.mkdir(parents=True, exist_ok=True)
    for width, height in ((1280, 800), (390, 844)):
        _open(browser, (default_build.out / "report.html").as_uri(), (width, height))
        inner = browser.execute_script("return document.documentElement.clientWidth")
        assert browser.execute_script("return document.documentElement.scrollWidth") <= inner
        outside = browser.execute_script("""
            const w = document.documentElement.clientWidth, bad = [];
            for (const e of document.querySelectorAll('body *')) {
                if (e.closest('.scroll, figure, [hidden], select, option')) continue;
                const r = e.getBoundingClientRect();
                if (r.width && r.right > w + 1) bad.push(e.tagName + '#' + e.id + '.' + e.className);
            }
            return bad;""")
        assert outside == [], (width, outside[:10])
        assert browser.get_screenshot_as_file(str(keep / f"report-{width}x{height}.png"))


@needs_browser
def test_a_hostile_named_build_runs_no_script(browser, models_copy, tmp_path):
    """Names that are markup and formulas are shown as text in every part of the page, and run
    nothing: no handler fires, no element is made from them, the console stays empty."""
    hostile = {
        "model": "<img src=x onerror=\"window.__pwned='model'\">",
        "tier": "<script>window.__pwned='tier'</script>",
        "sku": '=HYPERLINK("http://x","y") & <b>',
    }

    def rename(file: str, old: str, new: str) -> None:
        path = models_copy / file
        text = path.read_text()
        assert f"  {old}:\n" in text
        path.write_text(text.replace(f"  {old}:\n", "  '" + new.replace("'", "''") + "':\n", 1))

    rename("models.yaml", "llama3-8b", hostile["model"])
    rename("storage.yaml", "pfs-100", hostile["tier"])
    rename("hardware.yaml", "dgx-h100", hostile["sku"])
    plan = models_copy / "plan.yaml"
    q = lambda s: "'" + s.replace("'", "''") + "'"  # noqa: E731
    text = (
        plan.read_text()
        .replace("sku: dgx-h100", f"sku: {q(hostile['sku'])}")
        .replace("model: llama3-405b", f"model: {q(hostile['model'])}")
    )
    text = re.sub(
        r"(?m)^gpus:.*\n(?:  .*\n)*",  # the shipped list, on one line or item by item
        "gpus: [1024]\n",
        re.sub(r"(?m)^intervals: .*$", "intervals: [30 min]", text),
    )
    plan.write_text(
        text + f"models: [llama3-405b, {q(hostile['model'])}]\ntiers: [{q(hostile['tier'])}, "
        f"s3-standard, superpod-best]\nskus: [{q(hostile['sku'])}, gh200]\n"
    )
    build(models_copy, tmp_path / "out", skip=["workbook", "briefs"])
    logs = _open(browser, (tmp_path / "out" / "report.html").as_uri())
    assert logs == [], logs
    assert browser.execute_script("return window.__pwned === undefined")
    assert browser.execute_script("return document.querySelectorAll('img').length") == 0
    assert (
        browser.execute_script("return document.querySelectorAll('script').length") == 3
    )  # the table's data, the live model's and the page's script
    text = browser.execute_script("return document.body.innerText")
    for name in hostile.values():
        assert name in text, name
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(
        browser.find_element(By.CSS_SELECTOR, "#scenario-filters select[data-col='tier']")
    ).select_by_value(hostile["tier"])
    rows = _rows_shown(browser)
    assert rows and all(r["tier"] == hostile["tier"] for r in rows)
    assert browser.execute_script("return window.__pwned === undefined")
    csv = browser.execute_script("return window.ckptreportTable.csv()")  # the download's bytes
    cells = [c for line in csv.splitlines()[1:] for c in line.split(",")]
    assert '"\'=HYPERLINK(""http://x""' in csv and not any(c.startswith("=") for c in cells)


def test_a_plan_too_large_for_the_page_embeds_the_workbooks_rows_and_says_so(
    small_models, tmp_path, monkeypatch
):
    """Above PAGE_ROWS the table holds the rows the workbook holds, and the page says how many of the
    plan's rows that is (every row stays in scenarios.parquet); a streamed plan's page too."""
    from ckptreport.answer import report as report_mod

    monkeypatch.setattr(page_module, "PAGE_ROWS", 200)
    monkeypatch.setattr(report_mod, "ROWS_IN_MEMORY", 500)
    monkeypatch.setattr(report_mod, "CHUNK_ROWS", 300)
    result = build(small_models, tmp_path / "out", skip=["briefs"])
    doc = _doc(tmp_path / "out")
    data = json.loads(doc.get_element_by_id("scenario-data").text)
    assert data["rows"] == 200 < result.report.rows
    assert set(_index(data)) <= set(result.report.workbook_index.tolist())
    words = doc.get_element_by_id("scenarios").text_content()
    assert f"200 of the plan's {result.report.rows:,} rows" in re.sub(r"\s+", " ", words)


def test_a_sampled_build_says_how_sure_from_its_own_draws(small_models, tmp_path):
    """With --samples each section quotes the build's own Monte Carlo band and win shares (the
    manifest's figures), not only the brief's."""
    build(small_models, tmp_path / "out", samples=64, skip=["workbook", "briefs"])
    doc = _doc(tmp_path / "out")
    lines = json.loads((tmp_path / "out" / "manifest.json").read_text())["samples"]["lines"]
    for k, line in enumerate(lines[:3]):
        words = re.sub(r"\s+", " ", doc.get_element_by_id(f"line-{k}").text_content())
        q = line["quantiles"]["total_usd_month"]
        assert "this build's 64 draws (--samples, seed 1)" in words
        assert (
            f"costs ${q['p10']:,.0f} to ${q['p90']:,.0f} a month (P10 to P90, median ${q['p50']:,.0f})"
            in words
        )
        best, share = next(iter(line["wins"].items()))
        assert f"{best} {share:.0%}" in words


# ---- the live model: a section recomputed in the browser ---------------------------------------

LIVE_EDITS = (
    (),
    (("usd_per_gpu_hour", "", 2.5),),
    (("interval_s", "", 600.0), ("gpus", "", 4096.0)),
    (("target_overhead_pct", "", 0.5), ("async_slowdown_pct", "nvrx-local", 40.0)),
)


def _in_python(frame: pd.DataFrame, rows: list[int], edits) -> dict:
    """The evaluator's columns for ``rows`` with ``edits`` (input, entity or '' for every row, value)."""
    from ckptreport.model.evaluate import compute
    from ckptreport.read.inputs import ENTITY_COLUMN, INPUTS

    table = frame.loc[rows, list(INPUTS)].copy()
    for name, entity, value in edits:
        owner = ENTITY_COLUMN.get(INPUTS[name].entity)
        mask = (table[owner].astype(str) == entity).to_numpy() if entity and owner else slice(None)
        table.loc[mask, name] = value
    kind = {"bool": bool, "label": object}
    return compute({k: table[k].to_numpy(kind.get(i.unit, float)) for k, i in INPUTS.items()})


def _close(got, want) -> bool:
    if (
        isinstance(want, (str, np.str_))
        or isinstance(got, str)
        and got not in ("NaN", "Infinity", "-Infinity")
    ):
        return str(got) == str(want)
    if isinstance(want, (bool, np.bool_)):
        return bool(got) == bool(want)
    g = float(got) if not isinstance(got, str) else float(got.replace("Infinity", "inf"))
    w = float(want)
    if math.isnan(w) or math.isinf(w):
        return g == w or (math.isnan(w) and math.isnan(g))
    return abs(g - w) <= 1e-9 * max(abs(g), abs(w)) or g == w


@needs_browser
def test_the_page_recomputes_a_section_from_edited_inputs_as_the_evaluator_does(
    browser, default_build
):
    """Edited in the page (a GPU-hour price, the cadence and GPU count, the target and one engine's
    slowdown), every column of every option of sections that between them hold every strategy and
    engine equals the Python evaluator's on the same inputs to 1e-9 relative, and the page's pick is
    the rule's."""
    from ckptreport.model.columns import COLUMNS

    _open(browser, (default_build.out / "report.html").as_uri())
    frame = pd.read_parquet(default_build.out / "scenarios.parquet")
    manifest = json.loads((default_build.out / "manifest.json").read_text())
    lines = [0, len(manifest["recommendations"]) // 2, len(manifest["recommendations"]) - 1]
    seen_strategies, seen_engines, compared = set(), set(), 0
    for line in lines:
        for edits in LIVE_EDITS:
            got = browser.execute_script(
                """const r = window.ckptreport.whatIf(arguments[0], arguments[1].map(
                       e => ({input: e[0], entity: e[1], value: e[2]})));
                   const out = v => typeof v === 'number' && !isFinite(v) ? String(v) : v;
                   return {pick: r.pick.row, rows: r.rows.map(v => Object.fromEntries(
                       Object.entries(v).map(([k, x]) => [k, out(x)])))};""",
                line,
                [list(e) for e in edits],
            )
            rows = [r["row"] for r in got["rows"]]
            want = _in_python(frame, rows, edits)
            for name in COLUMNS:
                for k, r in enumerate(got["rows"]):
                    assert _close(r[name], want[name][k]), (line, edits, name, r["row"], r[name])
                    compared += 1
            order, _, _ = rule.rank(
                *rule.of({c: np.asarray(want[c]) for c in rule.COLUMNS.values()})
            )
            assert got["pick"] == rows[order[0]], (line, edits)
            if not edits:  # the summary's recommendation
                rec, pick = manifest["recommendations"][line], frame.loc[got["pick"]]
                assert [str(pick[k]) for k in ("strategy", "tier", "engine")] == [
                    rec["strategy"],
                    rec["tier"],
                    rec["engine"],
                ]
            seen_strategies |= {str(s) for s in want["strategy"]}
            seen_engines |= {str(e) for e in want["engine"]}
    assert seen_strategies == set(frame["strategy"].astype(str)) and seen_engines == set(
        frame["engine"].astype(str)
    )
    assert compared > 10_000


@needs_browser
def test_the_what_if_controls_change_an_input_in_its_units_and_reset(browser, default_build):
    """In the first section: usd_per_gpu_hour typed as $2.50 lists the change and names the pick the
    rule makes on the recomputed figures; nonsense is refused in words; reset clears the changes."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    _open(browser, (default_build.out / "report.html").as_uri())
    box = browser.find_element(By.CSS_SELECTOR, "section.line:not([hidden]) div.whatif")
    Select(
        box.find_element(By.CSS_SELECTOR, "select[aria-label='input to change']")
    ).select_by_value("usd_per_gpu_hour")
    value = box.find_element(By.CSS_SELECTOR, "input[aria-label='new value']")
    value.send_keys("two dollars")
    box.find_element(By.XPATH, ".//button[.='apply']").click()
    assert "cannot read 'two dollars'" in box.text
    value.clear()
    value.send_keys("$2.50")
    box.find_element(By.XPATH, ".//button[.='apply']").click()
    assert "usd_per_gpu_hour: $2.50" in box.text and "over the run (was " in box.text
    frame = pd.read_parquet(default_build.out / "scenarios.parquet")
    line = int(box.get_attribute("data-line"))
    rows = browser.execute_script(
        "return window.ckptreport.whatIf(arguments[0], []).rows.map(r => r.row)", line
    )
    want = _in_python(frame, rows, [("usd_per_gpu_hour", "", 2.5)])
    order, _, _ = rule.rank(*rule.of({c: np.asarray(want[c]) for c in rule.COLUMNS.values()}))
    shown = box.find_element(By.XPATH, ".//p[contains(., 'over the run (was')]")
    assert int(shown.get_attribute("data-row")) == rows[order[0]]
    figures = {
        li.get_attribute("data-col"): li.text
        for li in box.find_elements(By.CSS_SELECTOR, "ul.figures li")
    }
    assert len(figures) == 15 and all("(was " in t for t in figures.values())
    assert figures["ettr_pct"].startswith(f"ettr_pct: {float(want['ettr_pct'][order[0]]):.3g}%"), (
        figures
    )
    box.find_element(By.XPATH, ".//button[.='reset']").click()
    assert "usd_per_gpu_hour: $2.50" not in box.text


def _as_shown(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame's figures as the page holds them: 8 significant digits."""
    out = frame.copy()
    for c in out.columns:
        if pd.api.types.is_float_dtype(out[c]):
            v = out[c].to_numpy(float)
            ok = np.isfinite(v) & (v != 0)
            digits = np.where(ok, 7 - np.floor(np.log10(np.abs(np.where(ok, v, 1)))), 0)
            out[c] = np.where(ok, np.round(v * 10.0**digits) / 10.0**digits, v)
    return out


FILTERS = (  # what a reader types, as the table shows it, and the rows it keeps
    ("interval_s", "= 30 min", lambda f: f["interval_s"] == 1800),
    ("gpus", "= 16,384", lambda f: f["gpus"] == 16384),
    ("ckpt_bytes", "> 5 TB", lambda f: f["ckpt_bytes"] > 5e12),
    ("overhead_pct", "<= 1%", lambda f: f["overhead_pct"] <= 1),
    ("total_usd_month", "< $60,000", lambda f: f["total_usd_month"] < 60_000),
    ("interval_s", "10 min..1 h", lambda f: (f["interval_s"] >= 600) & (f["interval_s"] <= 3600)),
    ("tier_bought_GBps", ">= 100 GB/s", lambda f: f["tier_bought_GBps"] >= 100),
)


@needs_browser
def test_filters_read_the_units_the_table_shows_and_say_what_they_cannot(browser, default_build):
    from selenium.webdriver.common.by import By

    _open(browser, (default_build.out / "report.html").as_uri())
    frame = _as_shown(pd.read_parquet(default_build.out / "scenarios.parquet"))
    browser.execute_script(
        "document.getElementById('all-columns').click()"
    )  # every filter in reach
    for column, typed, keep in FILTERS:
        box = browser.find_element(By.CSS_SELECTOR, f"#scenario-filters input[data-col='{column}']")
        box.send_keys(typed)
        n = int(keep(frame).sum())
        assert 0 < n < len(frame), (column, typed)
        assert (
            f"of {n:,} (filtered from {len(frame):,})" in browser.find_element(By.ID, "shown").text
        ), typed
        assert browser.find_element(By.ID, "filter-message").text == ""
        browser.find_element(By.ID, "clear").click()
    box = browser.find_element(By.CSS_SELECTOR, "#scenario-filters input[data-col='stall_s']")
    box.send_keys("> 3 TB")
    said = browser.find_element(By.ID, "filter-message").text
    assert "stall_s: cannot read '3 TB'" in said and "30 min" in said
    assert (
        f"of {len(frame):,}" in browser.find_element(By.ID, "shown").text
    )  # an unread filter keeps all


def test_sources_with_an_address_a_pr_or_a_paper_are_links_that_open_elsewhere(default_build):
    """Every source naming an address, a repository's PR or issue, or an arXiv paper links to it (a
    new tab; the page itself still fetches nothing), and the words around stay text."""
    doc = _doc(default_build.out)
    links = doc.xpath("//td[@class='src']//a")
    hrefs = {a.get("href") for a in links}
    assert len(links) >= 20 and all(h.startswith("https://") for h in hrefs), len(links)
    assert all(a.get("target") == "_blank" and "noopener" in a.get("rel") for a in links)
    assert "https://arxiv.org/abs/2407.21783" in hrefs  # Llama 3, named as "arXiv 2407.21783"
    assert any(h.startswith("https://github.com/pytorch/pytorch/pull/") for h in hrefs)


def test_a_hostile_source_stays_text_beside_its_links():
    from ckptreport.render.env import linked

    html = str(linked('<img src=x onerror=alert(1)> pytorch/pytorch PR #1 https://e.x/"><script>'))
    tree = lxml.html.fragment_fromstring(html, create_parent="div")
    assert not tree.xpath("//img|//script") and [a.get("href") for a in tree.xpath("//a")] == [
        "https://github.com/pytorch/pytorch/pull/1",
        "https://e.x/",
    ]
    assert "<img src=x onerror=alert(1)>" in tree.text_content()


@needs_browser
def test_the_default_columns_fit_and_a_link_reproduces_the_view(browser, default_build):
    """At 1,400 px the default columns fit their box and the page never scrolls sideways (nor at a
    phone's 390 px); a filter, a sort and a hidden column are in the address, and opening it again
    shows the same rows; the download holds the filtered rows, as the Parquet has them."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    uri = (default_build.out / "report.html").as_uri()
    for width in (390, 1400):
        _open(browser, uri, size=(width, 900))
        page = browser.execute_script(
            "return [document.documentElement.scrollWidth, document.documentElement.clientWidth]"
        )
        assert page[0] <= page[1], (width, page)
    table = browser.execute_script(
        "const t = document.getElementById('scenario-table'); return [t.scrollWidth, t.parentNode.clientWidth]"
    )
    assert table[0] <= table[1], table
    Select(
        browser.find_element(By.CSS_SELECTOR, "#scenario-filters select[data-col='tier']")
    ).select_by_value("pfs-100")
    browser.find_element(
        By.CSS_SELECTOR, "#scenario-filters input[data-col='overhead_pct']"
    ).send_keys("< 1%")
    for _ in range(2):  # descending
        browser.find_element(By.CSS_SELECTOR, "#scenario-head button[data-col='total_usd']").click()
    browser.execute_script(
        "document.querySelector(\"#column-list input[data-col='engine']\").click()"
    )
    url, shown = browser.current_url, browser.find_element(By.ID, "shown").text
    first = browser.execute_script("return document.querySelector('#scenario-body tr').dataset.row")
    csv = browser.execute_script("return window.ckptreportTable.csv()").splitlines()
    browser.get("about:blank")
    browser.get(url)
    assert browser.find_element(By.ID, "shown").text == shown
    assert (
        browser.execute_script("return document.querySelector('#scenario-body tr').dataset.row")
        == first
    )
    assert browser.execute_script(
        "return document.querySelector(\"#scenario-head button[data-col='engine']\").parentNode.hidden"
    )
    frame = pd.read_parquet(default_build.out / "scenarios.parquet")
    want = frame[(frame["tier"] == "pfs-100") & (_as_shown(frame)["overhead_pct"] < 1)]
    want = want.sort_values("total_usd", ascending=False, kind="stable")
    assert f"of {len(want):,} (filtered" in shown and len(csv) == len(want) + 1
    head = csv[0].split(",")
    assert (
        head[:3] == ["row", "model", "recipe"] and "engine" in head
    )  # every column the table holds
    top = dict(zip(head, csv[1].split(",")))
    assert int(top["row"]) == int(first) == want.index[0]
    assert float(top["total_usd"]) == pytest.approx(want["total_usd"].iloc[0], rel=1e-7)


def test_the_stall_chart_is_solid_within_an_engines_cases_and_dashed_beyond():
    from ckptreport.render import page_charts

    rows = pd.DataFrame(
        {
            "gpus": [64.0, 256.0, 1024.0, 4096.0],
            "engine": ["e"] * 4,
            "strategy": ["async"] * 4,
            "stall_s": [1.0, 1.2, 2.0, 5.0],
            "extrapolated": [False, False, True, True],
        }
    )
    rec = pd.Series({"engine": "e", "model": "m", "sku": "s", "tier": "t", "gpus": 256.0})
    chart = page_charts.stall_by_gpus(rows, rec)
    solid, dashed = chart.lines
    assert [p[0] for p in solid.points] == [64.0, 256.0] and solid.dash is None
    assert (
        [p[0] for p in dashed.points] == [256.0, 1024.0, 4096.0] and dashed.dash and not dashed.name
    )


def test_every_section_draws_its_cadence_and_its_engines_stall_against_the_gpus(default_build):
    doc = _doc(default_build.out)
    frame = pd.read_parquet(default_build.out / "scenarios.parquet")
    sections = doc.xpath("//section[contains(@class, 'line')]")
    assert sections
    for s in sections:
        titles = [t.text for t in s.xpath(".//svg/title")]
        assert any(t.startswith("Waste against the checkpoint interval, ") for t in titles)
        assert any(t.startswith("Stall per checkpoint against the GPU count, ") for t in titles)
    first = sections[0]
    stall = next(
        svg
        for svg in first.xpath(".//svg")
        if (svg.findtext("title") or "").startswith("Stall per checkpoint")
    )
    model, sku = first.get("data-model"), first.get("data-sku")
    engines = set(frame[(frame["model"] == model) & (frame["sku"] == sku)]["engine"].astype(str))
    legend = " ".join(t.text or "" for t in stall.xpath(".//text"))
    assert all(e in legend for e in engines), (engines, legend)
    assert stall.xpath(
        ".//polyline[@stroke-dasharray]"
    )  # 1,024 GPUs and up: past every engine's cases
