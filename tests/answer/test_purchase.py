"""The purchase for a cluster (answer/purchase.py): storage bought in units, one system for every job
of the cluster, the count that costs least over the storage's life, what it moves and what not."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from ckptreport.answer import decide
from ckptreport.answer import purchase as buying
from ckptreport.answer.types import STAGGERED
from ckptreport.base.errors import InputError
from ckptreport.cli import main
from ckptreport.model.plan import summary_point
from ckptreport.read.load import load

from clusterplan import cluster_plan


def _edit(models: Path, fname: str, change) -> None:
    path = models / fname
    data = yaml.safe_load(path.read_text())
    change(data)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def _jobs(inputs):
    return decide.jobs(inputs, summary_point(inputs))


# ---- units ------------------------------------------------------------------------------------


def test_a_superpod_tier_scales_with_the_sus_bought_and_says_where_it_extrapolates(shipped):
    assert [c.name for c in shipped.plan.clusters] == ["h100-cluster", "a100-cluster"]
    t = shipped.tiers["superpod-best"]
    assert buying.bandwidth(t, 1)[:2] == (62e9, 125e9)
    w4, r4, beyond4 = buying.bandwidth(t, 4)
    assert (w4, r4, beyond4) == pytest.approx((250e9, 500e9, False))
    w64, _, beyond64 = buying.bandwidth(t, 64)  # a cluster of 64 SUs is sized as 64 SUs
    assert w64 == pytest.approx(64 * 250e9 / 4) and beyond64
    w2, _, _ = buying.bandwidth(t, 2)  # between published sizes: the per-unit rate interpolated
    assert 2 * 62e9 < w2 < 2 * 62.5e9


def test_a_tier_without_a_unit_is_one_fixed_unit(shipped):
    p = buying.product("pfs-100", shipped.tiers["pfs-100"])
    assert (p.lo, p.hi, p.unit_name) == (1, 1, "system")  # one fixed unit, not sold in units
    assert p.unit_price_usd == pytest.approx(100 * 25_000)


# ---- the shipped clusters ------------------------------------------------------------------


@pytest.fixture(scope="module")
def clusters(report):
    return {cp.cluster: cp for cp in report.clusters}


def test_the_405b_runs_beside_another_job_and_one_system_is_bought_for_both(report, clusters):
    cp = clusters["h100-cluster"]
    assert set(cp.jobs) == {"llama3-405b", "deepseek-v3"}
    assert cp.overlaps["llama3-405b"] == ("deepseek-v3",)  # they train at the same time
    c = cp.choice
    assert c is not None and c.feasible
    assert {j.job for j in c.jobs} == set(cp.jobs)
    decisions = {d.job.name: d for d in report.decisions}
    for j in c.jobs:  # each job decided again on what the cluster buys: the same choice
        d = decisions[j.job]
        assert d.bought is not None and d.bought.cluster == cp.cluster
        assert str(d.pick.row["tier"]) == c.tier
        assert str(d.pick.row["strategy"]) == str(j.row["strategy"])
        assert float(d.pick.row["interval_s"]) == pytest.approx(float(j.row["interval_s"]))
        assert d.p_meets_pct >= cp.confidence_pct - 1e-9
    if c.units > 1:  # bought in units, priced as units
        t = report.inputs.tiers[c.tier]
        assert c.write_GBps * 1e9 == pytest.approx(buying.bandwidth(t, c.units)[0])
    assert cp.runner_up is not None and cp.runner_up.tier != c.tier
    assert cp.runner_up.purchase_usd > 0


def test_bloom_alone_buys_less_than_the_smallest_catalogue_tier(clusters):
    """Before units, BLOOM was sold superpod-good's 30 GB/s whole (the smallest priced tier)."""
    c = clusters["a100-cluster"].choice
    assert c.write_GBps < 30
    assert c.purchase_usd < 751_774


def test_restart_is_what_the_purchase_does_not_move(clusters):
    for cp in clusters.values():
        c = cp.choice
        assert c.moved_usd + c.not_moved_usd == pytest.approx(c.gpu_lost_usd)
        assert c.not_moved_usd > 0
        # the same restart share in every product: no purchase moves it much
        shares = [p.not_moved_usd / p.gpu_lost_usd for p in cp.products if p.feasible]
        assert max(shares) - min(shares) < 0.5 * max(shares)


def test_the_schedule_adds_up_to_the_storage_over_the_life(clusters):
    for cp in clusters.values():
        rows = cp.schedule
        assert rows[0]["purchase_usd"] == pytest.approx(cp.choice.purchase_usd)
        total = sum(r["purchase_usd"] + r["running_usd"] for r in rows)
        assert total == pytest.approx(cp.choice.storage_life_usd)
        assert buying.present_value(rows) < total  # an 8% discount rate


# ---- the search: no count is cheaper ----------------------------------------------------------

SEARCH_PLAN = cluster_plan()
SEARCH_PLAN["clusters"][0]["tiers"] = ["superpod-good", "pfs-owned"]


def _search_models(models: Path, plan: dict) -> Path:
    (models / "plan.yaml").write_text(yaml.safe_dump(plan, sort_keys=False))

    def tiers(data):
        good = data["tiers"]["superpod-good"]
        good["unit"]["max"] = 40
        good["unit"]["power_W"] = 3000
        good["unit"]["rack_units"] = 4
        data["tiers"]["pfs-owned"] = {
            "kind": "parallel_fs",
            "write": "40 GB/s",
            "per_node_write": "20 GB/s",
            "owned": 1,
            "support_usd_per_year": "$50,000",
            "source": "a test's owned system",
        }

    _edit(models, "storage.yaml", tiers)
    return models


def test_no_count_of_any_product_is_cheaper_than_the_choice(models_copy):
    """Every unit count from the fewest to the most, each job judged there as the purchase judges it:
    none that meets every target costs less over the life than the choice. The owned system is an
    option priced by its running costs, with no purchase."""
    inputs = load(_search_models(models_copy, SEARCH_PLAN))
    jobs = _jobs(inputs)
    cluster = inputs.plan.clusters[0]
    cp = buying.purchase(inputs, cluster, jobs)
    owned = next(p for p in cp.products if p.tier == "pfs-owned")
    assert owned.purchase_usd == 0 and owned.running_usd_year == pytest.approx(50_000)
    every = []
    for prod in buying.products(inputs, cluster)[0]:
        ev = buying.evaluator(inputs, cluster, jobs, prod.tier)
        ev.evaluate(list(prod.counts), every_share=True)
        every += [p for p in ev.points.values() if p.feasible]
    assert every, "some count meets every target"
    cheapest = min(p.total_usd for p in every)
    assert cp.choice.total_usd == pytest.approx(cheapest, rel=1e-9)
    assert cp.choice.units in {p.units for p in every if p.total_usd <= cheapest * (1 + 1e-9)}
    # power and space are charged per unit
    c = cp.choice
    if c.tier == "superpod-good":
        expected = c.purchase_usd * 0.10 + c.units * (3000 * 8766 / 1000 * 0.10 + 4 * 12 * 20)
        assert c.running_usd_year == pytest.approx(expected)


# ---- jobs that save at the same time -----------------------------------------------------------


def _least(models: Path, plan: dict, mode: str) -> int:
    """The fewest SUs of superpod-good with which every job of the plan meets its target: its jobs'
    saves ``together`` (each its share), ``staggered`` (each the whole, taking turns) or alone."""
    inputs = load(_search_models(models, plan))
    jobs = _jobs(inputs)
    cluster = inputs.plan.clusters[0]
    ev = buying.evaluator(inputs, cluster, jobs, "superpod-good")
    mine, prod = ev.jobs, ev.prod
    for n in prod.counts:
        ev.evaluate([n], every_share=True)
        at = {j.name: ev.picks[j.name] for j in mine}
        if mode == STAGGERED:
            whole = [at[j.name].get((n, 1.0)) for j in mine]
            if all(r is not None for r in whole) and sum(buying._busy(r) for r in whole) <= 1:
                return n
        elif all(at[j.name].get((n, ev.shares[j.name][0])) is not None for j in mine):
            return n
    return math.inf


def test_two_jobs_saving_together_need_more_units_than_either_alone_and_staggering_needs_fewer(
    tmp_path, models_copy
):
    import shutil

    plan = {**SEARCH_PLAN, "strategies": ["sync"], "engines": ["torch-save"]}
    plan["clusters"] = [{**SEARCH_PLAN["clusters"][0], "tiers": ["superpod-good"]}]
    alone = []
    for job in plan["jobs"]:
        d = tmp_path / job["name"]
        shutil.copytree(models_copy, d)
        alone.append(_least(d, {**plan, "jobs": [job]}, "alone"))
    d = tmp_path / "both"
    shutil.copytree(models_copy, d)
    together = _least(d, plan, "together")
    staggered = _least(d, plan, STAGGERED)
    assert together > max(alone), (together, alone)
    assert staggered < together, (staggered, together)


# ---- compatibility and refusals ----------------------------------------------------------------


def test_a_models_directory_without_clusters_or_units_keeps_its_per_job_answer(models_copy):
    def strip_units(data):
        for t in data["tiers"].values():
            t.pop("unit", None)

    def strip_clusters(data):
        data.pop("clusters", None)
        for j in data["jobs"]:
            j.pop("cluster", None)
            j.pop("start", None)

    _edit(models_copy, "storage.yaml", strip_units)
    _edit(models_copy, "plan.yaml", strip_clusters)
    inputs = load(models_copy)
    jobs = [j for j in _jobs(inputs) if j.name == "bloom-176b"]
    d = decide.decide(inputs, jobs[0], scale=False)
    assert str(d.pick.row["tier"]) == "superpod-good"
    assert float(d.pick.row["tier_bought_GBps"]) == pytest.approx(
        30
    )  # the catalogue size, as before
    assert buying.settings(inputs, _jobs(inputs)) == {}


def _refused(models: Path, fname: str, change, *expected: str, build: bool = False) -> None:
    _edit(models, fname, change)
    out = models.parent / "out"
    args = (
        ["build", "--models", str(models), "--out", str(out)]
        if build
        else ["validate", "--models", str(models)]
    )
    result = CliRunner().invoke(main, args)
    assert result.exit_code != 0, result.output
    for text in expected:
        assert text in result.output, result.output
    assert not out.exists() or not any(out.iterdir())
    assert "Traceback" not in result.output


def test_jobs_running_at_once_on_more_gpus_than_the_cluster_has_are_refused(models_copy):

    def grow(data):
        data["clusters"][0]["gpus"] = 17000

    _edit(models_copy, "plan.yaml", grow)
    inputs = load(models_copy)
    with pytest.raises(InputError) as e:
        buying.settings(inputs, _jobs(inputs))
    text = str(e.value)
    assert "plan.yaml" in text and "jobs[1].gpus" in text and "18,432 GPUs together" in text


def test_a_later_start_lets_the_jobs_take_the_cluster_in_turn(models_copy):

    def later(data):
        data["clusters"][0]["gpus"] = 16384
        data["jobs"][1]["start"] = "200 d"

    _edit(models_copy, "plan.yaml", later)
    inputs = load(models_copy)
    jobs = _jobs(inputs)
    buying.setting(inputs, inputs.plan.clusters[0], jobs)  # no refusal
    assert (
        buying.overlaps(
            buying.spans(inputs, jobs[:2], {j.name: buying._job_rows(inputs, j) for j in jobs[:2]})
        )["llama3-405b"]
        == ()
    )


@pytest.mark.parametrize(
    ("fname", "change", "expected"),
    [
        (
            "storage.yaml",
            lambda d: d["tiers"]["superpod-good"]["unit"].update(min=10, max=2),
            ["storage.yaml", "superpod-good", "unit.min", "above the most"],
        ),
        (
            "storage.yaml",
            lambda d: d["tiers"]["superpod-good"].update(owned=2),
            ["storage.yaml", "superpod-good", "owned", "no purchase price"],
        ),
        (
            "storage.yaml",
            lambda d: d["tiers"]["superpod-good"]["unit"].pop("write"),
            ["storage.yaml", "superpod-good", "unit.write"],
        ),
        (
            "plan.yaml",
            lambda d: d["jobs"][0].update(cluster="nowhere"),
            ["plan.yaml", "jobs[0].cluster", "unknown cluster 'nowhere'"],
        ),
        (
            "plan.yaml",
            lambda d: d["jobs"][2].update(cluster="h100-cluster"),
            ["plan.yaml", "jobs[2].sku", "is of dgx-h100"],
        ),
        (
            "plan.yaml",
            lambda d: d["clusters"][1].update(tiers=["superpod-good", "nope"]),
            ["plan.yaml", "clusters[1].tiers[1]", "unknown tier 'nope'"],
        ),
    ],
)
def test_contradictions_are_refused_at_their_file_line_and_key(
    models_copy, fname, change, expected
):
    _refused(models_copy, fname, change, *expected)


def test_a_build_refuses_jobs_over_the_clusters_gpus_and_writes_nothing(models_copy):
    _refused(
        models_copy,
        "plan.yaml",
        lambda d: d["clusters"][0].update(gpus=17000),
        "jobs[1].gpus",
        "GPUs together",
        build=True,
    )
