"""The decision a buyer faces (answer/decide.py): each job at its real scale, the cadence chosen with
the purchase, the bandwidth it needs, and how likely it is to meet the target."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from ckptreport.answer import decide
from ckptreport.cli import main
from ckptreport.read.load import load
from ckptreport.render.decision import SHARES, facts, sentences


@pytest.fixture(scope="module")
def decisions(report):
    return {d.job.name: d for d in report.decisions}


def test_the_405b_headline_is_llama3s_16384_h100_at_a_cadence_the_tool_chose(shipped, decisions):
    """The shipped plan's 405B job is Llama 3's scale, with its source, and its cadence is not one of
    the plan's grid: it was solved for."""
    d = decisions["llama3-405b"]
    assert (d.job.model, d.job.sku, d.job.gpus) == ("llama3-405b", "dgx-h100", 16384)
    assert "2407.21783" in d.job.source
    interval = float(d.pick.row["interval_s"])
    assert interval not in {q.value for q in shipped.plan.intervals}
    assert d.pick.status == "recommended"
    assert int(d.pick.row["gpus"]) == 16384


def test_every_pick_meets_the_target_with_the_plans_confidence_or_says_none_does(decisions):
    for d in decisions.values():
        if d.reached:
            assert d.p_meets_pct >= d.confidence_pct - 1e-9, d.job.name
        else:
            assert any("No option meets" in s for s in sentences(facts(d))), d.job.name


def test_the_cadence_is_the_cheapest_that_meets_the_target_for_the_option(decisions):
    """At its cheapest cadence an option costs no more than at any interval of a fine grid around it
    that meets the target at the base figures (the search is continuous, not the plan's grid)."""
    d = decisions["llama3-405b"]
    rows = decide.options(load_shipped(), d.job)
    best = rows["interval_s"].to_numpy()
    for i in rows.index[rows["recommendable"].to_numpy(bool)][:6]:
        one = rows.loc[[i]]
        grid = np.geomspace(60, 86_400, 400)
        at = decide.at_intervals(one.loc[one.index.repeat(len(grid))].reset_index(drop=True), grid)
        ok = at["meets_target"].to_numpy(bool)
        cheapest = at["total_usd"].to_numpy()[ok].min()
        assert rows.at[i, "total_usd"] <= cheapest * (1 + 1e-6), (i, best[i])


def load_shipped():
    from ckptreport.base.paths import shipped_models

    return load(shipped_models())


def _with_tier_bandwidth(models, tier: str, gbps: float):
    data = yaml.safe_load((models / "storage.yaml").read_text())
    entry = data["tiers"][tier]
    entry["write"] = {
        "value": f"{gbps:.12g} GB/s",  # 6 digits rounded away more than the 1e-6 tried
        "basis": "assumption",
        "source": "test: the bandwidth the decision requires",
    }
    entry.pop("write_per_TiB", None)
    (models / "storage.yaml").write_text(yaml.safe_dump(data, sort_keys=False))


def _explain(models, d, interval_s: float) -> dict:
    row = d.pick.row
    result = CliRunner().invoke(
        main,
        [
            "explain",
            d.job.model,
            d.job.sku,
            str(row["tier"]),
            "--models",
            str(models),
            "--gpus",
            str(d.job.gpus),
            "--interval",
            f"{interval_s!r} s",
            "--strategy",
            str(row["strategy"]),
            "--engine",
            str(row["engine"]),
            "--recipe",
            d.job.recipe,
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


@pytest.mark.parametrize("job", ["llama3-405b", "deepseek-v3"])
def test_the_bandwidth_required_bought_as_the_tier_meets_the_target(decisions, models_copy, job):
    """required_write_GBps of the recommended option, written into the tier as its bandwidth and
    rebuilt (explain on the edited models), meets the target; 10% less misses it: it is the least."""
    d = decisions[job]
    row = d.pick.row
    required = float(row["required_write_GBps"])
    assert np.isfinite(required) and required > 0
    step = {s["name"]: s for s in _explain(models_copy, d, float(row["interval_s"]))["steps"]}
    assert step["required_write_GBps"]["value"] == pytest.approx(required, rel=1e-9)
    for factor, meets in ((1.0 + 1e-6, True), (0.9, False)):
        _with_tier_bandwidth(models_copy, str(row["tier"]), required * factor)
        steps = {
            s["name"]: s["value"]
            for s in _explain(models_copy, d, float(row["interval_s"]))["steps"]
        }
        assert steps["meets_target"] is meets, (factor, steps["overhead_pct"])


def test_ettr_is_one_minus_the_shares_of_the_wall_clock(decisions):
    for d in decisions.values():
        r = d.pick.row
        lost = sum(float(r[k]) for k in SHARES)
        assert float(r["ettr_pct"]) == pytest.approx(100 - lost, abs=1e-9)
        assert float(r["ettr_pct"]) == pytest.approx(100 / (1 + float(r["waste_pct"]) / 100))


def test_a_confidence_no_option_reaches_is_said_plainly(models_copy):
    """One tier, sync only, whose bandwidth may be as low as 1 GB/s: at that a 5.68 TB save outlasts 1%
    of even a day's interval, so no cadence meets the target in every draw, though the base figures
    (100 GB/s) meet it at minutes. With a confidence of 100% the decision says none reaches it."""
    plan = yaml.safe_load((models_copy / "plan.yaml").read_text())
    plan["confidence"] = "100%"
    plan["jobs"] = plan["jobs"][:1]
    plan["strategies"], plan["tiers"] = ["sync"], ["pfs-100"]
    (models_copy / "plan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))
    storage = yaml.safe_load((models_copy / "storage.yaml").read_text())
    storage["tiers"]["pfs-100"]["write"] = {
        "value": "100 GB/s",
        "low": "1 GB/s",
        "high": "100 GB/s",
        "basis": "assumption",
        "source": "test: a tier that may deliver far less than its figure",
    }
    (models_copy / "storage.yaml").write_text(yaml.safe_dump(storage, sort_keys=False))
    inputs = load(models_copy)
    (job,) = decide.jobs(inputs, None)
    d = decide.decide(inputs, job, scale=False)
    assert not d.reached
    assert d.pick.status == "recommended" and d.p_meets_pct < 100
    words = " ".join(sentences(facts(d)))
    assert re.search(r"No option meets the 1% target in 100% of the draws", words), words


def test_a_plan_without_jobs_decides_each_model_at_the_summary_point(small_build):
    manifest = json.loads((small_build.out / "manifest.json").read_text())
    got = {(d["job"], d["gpus"], d["declared"]) for d in manifest["decisions"]}
    assert got == {("llama3-405b", 1024, False), ("llama3-8b", 1024, False)}
    assert sorted(p.name for p in (small_build.out / "briefs").glob("*.pdf")) == [
        "llama3-405b.pdf",
        "llama3-8b.pdf",
    ]


@pytest.mark.parametrize(
    "jobs, key, words",
    [
        (
            [{"name": "a", "model": "nope", "sku": "dgx-h100", "gpus": 1024}],
            "jobs[0].model",
            "nope",
        ),
        (
            [
                {"name": "a", "model": "llama3-8b", "sku": "dgx-h100", "gpus": 64},
                {"name": "a", "model": "llama3-8b", "sku": "dgx-h100", "gpus": 128},
            ],
            "jobs[1].name",
            "twice",
        ),
        (
            [{"name": "a", "model": "llama3-405b", "sku": "dgx-h100", "gpus": 64}],
            "jobs[0].gpus",
            "replica",
        ),
        (
            [{"name": "a b", "model": "llama3-8b", "sku": "dgx-h100", "gpus": 64}],
            "jobs[0].name",
            "",
        ),
    ],
)
def test_a_bad_job_is_refused_at_its_key(models_copy, tmp_path, jobs, key, words):
    plan = yaml.safe_load((models_copy / "plan.yaml").read_text())
    plan["jobs"] = jobs
    (models_copy / "plan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))
    out = tmp_path / "out"
    result = CliRunner().invoke(main, ["build", "--models", str(models_copy), "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert "plan.yaml:" in result.output and key in result.output, result.output
    assert words in result.output
    assert not out.exists()


def test_gpu_time_lost_never_exceeds_the_clusters_bill_and_the_impossible_is_named(frame):
    """Lost GPU time is the bill times the share of the wall clock that does not train, so it stays
    under the whole bill; a stall longer than its interval is named as impossible in its row."""
    from ckptreport.model.columns.define import SECONDS_PER_MONTH

    bill = frame["gpus"] * frame["usd_per_gpu_hour"] * float(SECONDS_PER_MONTH) / 3600
    assert (frame["lost_gpu_usd_month"] <= bill * (1 + 1e-12)).all()
    over = frame["overhead_pct"] > 100
    assert over.any()  # the plan's 10-min cadence with DCP's uncached planning at 16,384 GPUs
    assert (frame.loc[over, "implausible"] == "stall above the interval").all()
    assert (frame.loc[~over & (frame["rework_pct"] <= 100), "implausible"] == "none").all()


def test_an_impossible_pick_is_said_with_its_cause(decisions):
    """The sentence a flagged option gets names the figures that cause it (here made by hand from
    the 405B pick: its stall set above its interval)."""
    f = facts(decisions["llama3-405b"])
    f["pick"] = {**f["pick"], "implausible": "stall above the interval", "stall_s": 4000.0}
    (line,) = [s for s in sentences(f) if s.startswith("Impossible figure")]
    from ckptreport.model import display

    interval = display.value(f["pick"]["interval_s"], "s")
    assert f"stalls training 66.7 min, longer than the interval of {interval}" in line, line


def test_a_job_no_tier_can_serve_is_a_clean_error_at_the_job(models_copy, tmp_path):
    """The hostile suite found it: tiers moved to a site no on-premises SKU is at left the on-premises
    jobs without an option, and the build stopped with an internal error. Now exit 2 at the job's
    line, nothing written; with only node-local NVMe left to them (durable nowhere, priced nowhere),
    the build runs and says no option is recommended (it stopped with an internal error too)."""
    import re as regex

    path = (
        models_copy / "storage.yaml"
    )  # no remote tier serves on-prem SKUs; cloud SKUs keep theirs
    text, n = regex.subn(r"\bon-prem\b", "nowhere", path.read_text())
    assert n > 3
    path.write_text(text)
    only_nvme = CliRunner().invoke(
        main, ["build", "--models", str(models_copy), "--out", str(tmp_path / "nvme")]
    )
    assert only_nvme.exit_code == 0, only_nvme.output
    assert "- (async to local-nvme" in only_nvme.stdout
    path.write_text(text.replace("    sites: [any]\n", "    sites: [nowhere]\n", 1))  # local-nvme's
    plan = (models_copy / "plan.yaml").read_text().splitlines()
    line = next(i for i, t in enumerate(plan, 1) if regex.match(r"\s*- name: llama3-405b", t))
    result = CliRunner().invoke(
        main, ["build", "--models", str(models_copy), "--out", str(tmp_path / "out")]
    )
    assert result.exit_code == 2, result.output
    assert f"plan.yaml:{line}:" in result.output and "job 'llama3-405b'" in result.output
    assert "has no option" in result.output and "internal error" not in result.output
    assert not (tmp_path / "out").exists()


def test_the_decisions_are_computed_only_for_what_reads_them(shipped, report):
    """A caller asking for no output (the API's recommendations, sensitivity) does not pay for the jobs'
    decisions; asking for them alone gives what the default computes, each at the plan's sizes."""
    from ckptreport.answer.report import compute
    from ckptreport.answer.types import DECISIONS

    assert compute(shipped, needs=frozenset()).decisions == []
    alone = compute(shipped, needs=frozenset({DECISIONS})).decisions
    assert [d.pick.option for d in alone] == [d.pick.option for d in report.decisions]
    for a, b in zip(alone, report.decisions):
        assert [g for g, _ in a.scale] == [g for g, _ in b.scale] == sorted({g for g, _ in b.scale})
        assert all(x.equals(y) for (_, x), (_, y) in zip(a.scale, b.scale))
