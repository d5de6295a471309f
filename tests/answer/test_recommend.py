"""One recommendation, everywhere: the terminal summary, the workbook's Summary, each brief and
manifest.json name the same option for the same scenario, and it is the option the rule picks:
among durable options meeting the target, priced storage first, then the lowest cost over the run."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

import numpy as np
import openpyxl
import pandas as pd
import pytest

from ckptreport.answer.recommend import recommend
from ckptreport.answer.types import CLOSEST, RECOMMENDED, option_label
from ckptreport.render.terminal import summary as summary_text

pytestmark = pytest.mark.skipif(
    shutil.which("pdftotext") is None, reason="poppler-utils not installed"
)


def expected_option(rows: pd.DataFrame) -> tuple[str, str, str, str]:
    """The rule, restated: durable options that meet the target; priced before unpriced; the lowest
    GPU-hours-plus-storage over the run."""
    ok = rows[
        rows["tier_durable"]
        & rows["meets_target"]
        & rows["host_memory_ok"]
        & rows["capacity_ok"]
        & rows["storage_usd_month"].notna()
    ]
    assert not ok.empty, "the test plan should have a priced, durable option meeting the target"
    cost = ok["storage_run_usd"] + ok["waste_usd"]  # storage over the run + GPU time lost
    best = (
        ok.loc[cost == cost.min()]
        .sort_values(["tier_bought_GBps", "overhead_pct"], kind="stable")
        .iloc[0]
    )
    return str(best["sku"]), str(best["tier"]), str(best["strategy"]), str(best["engine"])


def test_every_output_names_the_same_recommended_option(small_build, small_recalc):
    """The workbook's Summary chooses by formula: its value after LibreOffice recalculates it."""
    report, out = small_build.result.report, small_build.out
    point = report.point
    manifest = json.loads((out / "manifest.json").read_text())
    wb = openpyxl.load_workbook(small_recalc, read_only=True, data_only=True)
    rows = list(wb["Summary"].iter_rows(values_only=True))
    start = next(i for i, r in enumerate(rows) if r and r[0] == "model")
    header, lines = rows[start], []
    for r in rows[start + 1 :]:
        if not r or r[0] is None:  # the summary table ends at its first empty row
            break
        lines.append(r)
    workbook = {(r[0], r[2]): r[header.index("recommended")] for r in lines}
    terminal = {
        tuple(line.split()[:2]): line
        for line in summary_text(report).splitlines()[5:]
        if line.strip()
    }
    checked = 0
    for data in report.briefs:
        spec = data.spec
        f = report.frame
        rows_ = f[
            (f["model"] == spec.model)
            & (f["sku"] == point.sku)
            & (f["gpus"] == point.gpus)
            & (f["interval_s"] == point.interval_s)
            & (f["recipe"] == spec.recipe)
        ]
        sku, tier, strategy, engine = expected_option(rows_)  # the summary's, at the plan's point
        words = option_label(strategy, tier, engine)
        assert workbook[(spec.model, sku)] == words, spec.model
        assert re.search(rf"  {re.escape(words)}( \*)?  ", terminal[(spec.model, sku)]), spec.model
        line = next(
            r for r in manifest["recommendations"] if r["model"] == spec.model and r["sku"] == sku
        )
        assert (line["tier"], line["strategy"], line["engine"], line["meets_target"]) == (
            tier,
            strategy,
            engine,
            True,
        )
        # the brief is the job's decision, at the cadence it solves for (which may name another
        # tier than the summary's fixed point): the brief, its PDF and the manifest name that one
        assert data.pick.meets
        sku, tier, strategy, engine = (
            data.pick.option[k] for k in ("sku", "tier", "strategy", "engine")
        )
        if spec.decision is None:  # a brief at the point: the summary's rule, restated
            assert (sku, tier, strategy, engine) == expected_option(rows_)
        entry = next(b for b in manifest["briefs"] if b["name"] == spec.name)
        assert (entry["sku"], entry["tier"], entry["strategy"], entry["engine"]) == (
            sku,
            tier,
            strategy,
            engine,
        )
        text = subprocess.run(
            ["pdftotext", str(out / "briefs" / f"{spec.name}.pdf"), "-"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        assert f"Recommended: {strategy} checkpoints to {tier} on {sku} with {engine}" in re.sub(
            r"\s+", " ", text
        )
        checked += 1
    assert checked == len(report.frame["model"].cat.categories) == 2


def test_each_brief_names_the_best_option_and_the_best_on_another_tier_as_runner_up(report):
    """The order the README states: durable, priced options meeting the target; the lower cost over
    the run (storage plus GPU time lost); the smaller system; the lower overhead. The runner-up is
    the first option on another tier: the other storage a buyer would weigh. A job of a cluster is
    decided on what its cluster buys: its pick is on the cluster's product and its runner-up on the
    cluster's runner-up product (the purchase ranks them for all the cluster's jobs: test_purchase)."""
    clusters = {j: cp for cp in report.clusters for j in cp.jobs}
    for data in report.briefs:
        d = data.spec.decision
        if d is not None and d.bought is not None:
            cp = clusters[d.job.name]
            assert str(data.pick.row["tier"]) == cp.choice.tier, data.spec.name
            assert str(data.pick.runner_up["tier"]) == cp.runner_up.tier, data.spec.name
            continue
        rows = data.rows
        ok = rows[rows["tier_durable"] & rows["meets_target"] & rows["total_usd"].notna()].copy()
        order = ok.sort_values(["total_usd", "tier_bought_GBps", "overhead_pct"], kind="stable")
        assert data.pick.index == order.index[0], data.spec.name
        other = order[order["tier"] != order.iloc[0]["tier"]]
        assert data.pick.runner_up.name == other.index[0], data.spec.name
        engine = order[order["engine"] != order.iloc[0]["engine"]]  # the best of another engine
        assert data.pick.other_engine.name == engine.index[0], data.spec.name


def test_when_nothing_meets_the_target_the_closest_option_is_named(frame):
    rows = frame[
        (frame["model"] == "llama3-405b")
        & (frame["strategy"] == "sync")
        & (frame["gpus"] == 16384)
        & (frame["interval_s"] == 600)
    ].copy()
    rows["meets_target"] = False
    rows["recommendable"] = False
    pick = recommend(rows)
    assert not pick.meets and pick.status == "closest" and pick.runner_up is None
    durable = rows[rows["tier_durable"]]
    assert pick.row["overhead_pct"] == durable["overhead_pct"].min()


def test_choosing_among_positions_is_choosing_among_those_rows(report):
    """A summary chooses each strategy's option among positions of its line's rows (``at``, with the
    line's columns read once): the pick, its row, status, runner-up, other engine and unpriced tiers
    are those of choosing among the rows themselves, on every line and strategy, and on subsets
    that leave a line without a priced or feasible option."""
    from ckptreport.answer.recommend import columns_of

    def same(a, b) -> None:
        assert (a is None) == (b is None)
        if a is None:
            return
        assert (a.index, a.status, a.unpriced) == (b.index, b.status, b.unpriced)
        for x, y in ((a.row, b.row), (a.runner_up, b.runner_up), (a.other_engine, b.other_engine)):
            assert (x is None) == (y is None)
            if x is not None:
                pd.testing.assert_series_equal(x, y)

    frame = report.frame
    statuses = set()
    for line in range(len(report.summary)):
        rows = frame.loc[report.candidates[line]]
        cols = columns_of(rows)
        strategies = rows["strategy"].to_numpy()
        subsets = [np.flatnonzero(strategies == s) for s in dict.fromkeys(strategies)]
        subsets += [
            np.arange(0, len(rows), 3),
            np.flatnonzero(~rows["meets_target"].to_numpy(bool)),
        ]
        subsets += [np.arange(0), None]
        for at in subsets:
            got = recommend(rows, at, cols)
            same(got, recommend(rows if at is None else rows.iloc[at]))
            statuses.add(None if got is None else got.status)
    assert {RECOMMENDED, CLOSEST, None} <= statuses  # the subsets reach each case
