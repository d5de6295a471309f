"""Ranges on inputs, the tornado and break-even values: each checked against the pipeline itself
run on models files that state the swept value outright (no range), so the engine's vectorised
re-evaluation cannot drift from what a build computes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from ckptreport import uncertainty
from ckptreport.cli import main
from ckptreport.errors import InputError
from ckptreport.load import load
from ckptreport.report import compute

PRICE = 'capex_usd_per_GBps: {value: "$25,000", basis: assumption'  # superpod-good, the first in storage.yaml
LINE = ("llama3-405b", "dgx-h100")


def _set(models: Path, file: str, old: str, new: str, count: int = 1) -> None:
    path = models / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, count))


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _line(report, model_sku=LINE) -> int:
    table = report.summary
    return int(table.index[(table["model"] == model_sku[0]) & (table["sku"] == model_sku[1])][0])


def _pick(models: Path, model_sku=LINE) -> dict:
    report = compute(load(models), workbook=False, briefs=False)
    r = report.summary.iloc[_line(report, model_sku)]
    return {"option": f"{r['option_strategy']} to {r['option_tier']}", "total_usd": r["option_total_usd"]}


@pytest.mark.parametrize("quantity, message", [
    ('{value: 50677 h, low: 20000 h}', "a range gives both low and high"),
    ('{value: 50677 h, low: 60000 h, high: 90000 h}', "expected low <= value <= high"),
    ('{value: 50677 h, low: 2 TB, high: 90000 h}', "low: expected a duration"),
    ('{value: 50677 h, low: 20000 h, high: 90000 h, distribution: normal}', "distribution must be one of"),
    ('{value: 50677 h, low: 0 h, high: 90000 h, distribution: lognormal}', "low: expected a duration greater than 0"),
    ('{value: 50677 h, driver: rate}', "a driver goes with a range"),
])
def test_a_bad_range_names_file_line_and_key(small_models, quantity, message):
    _set(small_models, "hardware.yaml", "gpu_mtbf: {value: 50677 h, basis: derived, source: \"Llama 3 paper",
         f"gpu_mtbf: {quantity}\n    _was: {{value: 50677 h, basis: derived, source: \"Llama 3 paper")
    _set(small_models, "hardware.yaml", "    _was: ", "    # ")
    with pytest.raises(InputError) as caught:
        load(small_models)
    (problem,) = caught.value.problems
    assert problem.path == "skus.dgx-h100.gpu_mtbf" and problem.line > 0 and message in problem.message


def test_a_whole_number_or_a_plan_point_takes_no_range(small_models):
    _set(small_models, "plan.yaml", "retention: 3", "retention: {value: 3, low: 2, high: 5}")
    with pytest.raises(InputError, match="takes one figure, not a range"):
        load(small_models)


def test_the_tornado_swing_is_what_the_build_computes_at_each_end(small_models, tmp_path):
    """One uncertain price swept from its low to its high gives exactly what a build gives with the
    price written as that value."""
    _set(small_models, "storage.yaml", PRICE, 'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", '
         'high: "$40,000", basis: assumption')
    inputs = load(small_models)
    params = uncertainty.parameters(inputs)
    assert [p.label for p in params] == ["tiers.superpod-good.capex_usd_per_GBps"]
    assert (params[0].low, params[0].value, params[0].high) == (20000, 25000, 40000)
    report = compute(inputs, workbook=False, briefs=False)
    s = uncertainty.sensitivity(report, params, _line(report))
    (swing,) = s.swings
    for end, price in (("low", "$20,000"), ("high", "$40,000")):
        models = _copy(small_models, tmp_path / end)
        _set(models, "storage.yaml", 'value: "$25,000", low: "$20,000", high: "$40,000"', f'value: "{price}"')
        expected = _pick(models)
        got = getattr(swing, end)
        assert got["option"] == expected["option"]
        assert got["total_usd"] == pytest.approx(expected["total_usd"], rel=1e-12)
    assert swing.swing("total_usd") == pytest.approx(abs(swing.high["total_usd"] - swing.low["total_usd"]))
    assert s.base["option"] == _pick(small_models)["option"]


def test_a_break_even_is_where_the_build_changes_its_recommendation(small_models, tmp_path):
    _set(small_models, "storage.yaml", PRICE, 'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", '
         'high: "$40,000", basis: assumption')
    inputs = load(small_models)
    params = uncertainty.parameters(inputs)
    report = compute(inputs, workbook=False, briefs=False)
    s = uncertainty.sensitivity(report, params, _line(report))
    (flip,) = [b for b in s.breaks if b.direction == "above"]
    assert 40000 < flip.value < 250000  # beyond the range, within a factor of 10
    base = _pick(small_models)["option"]
    for factor, want in ((0.999, base), (1.001, flip.to)):
        models = _copy(small_models, tmp_path / str(factor))
        _set(models, "storage.yaml", 'value: "$25,000", low: "$20,000", high: "$40,000"',
             f'value: "${flip.value * factor:.2f}"')
        assert _pick(models)["option"] == want
    assert flip.to != base


def test_a_driver_moves_its_figures_together(small_models, tmp_path):
    """Every flash tier's price per GB/s named by one driver: one tornado bar, and its low end is a
    build with every one of them at its low."""
    ranged = 'capex_usd_per_GBps: {value: "$25,000", low: "$10,000", high: "$50,000", driver: flash, basis: assumption'
    _set(small_models, "storage.yaml", 'capex_usd_per_GBps: {value: "$25,000", basis: assumption', ranged, count=-1)
    inputs = load(small_models)
    (param,) = uncertainty.parameters(inputs)
    assert param.driver == "flash" and len(param.members) == 5 and param.label == "flash (5 figures)"
    report = compute(inputs, workbook=False, briefs=False)
    (swing,) = uncertainty.sensitivity(report, [param], _line(report)).swings
    low = _copy(small_models, tmp_path / "low")
    _set(low, "storage.yaml", 'value: "$25,000", low: "$10,000", high: "$50,000", driver: flash',
         'value: "$10,000"', count=-1)
    expected = _pick(low)
    assert (swing.low["option"], swing.low["total_usd"]) == (expected["option"], pytest.approx(expected["total_usd"]))


def test_figures_of_one_driver_must_agree(small_models):
    _set(small_models, "storage.yaml", 'capex_usd_per_GBps: {value: "$25,000", basis: assumption',
         'capex_usd_per_GBps: {value: "$25,000", low: "$10,000", high: "$50,000", driver: flash, basis: assumption')
    _set(small_models, "storage.yaml", 'capex_usd_per_GBps: {value: "$25,000", basis: assumption',
         'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", high: "$50,000", driver: flash, basis: assumption')
    with pytest.raises(InputError, match="driver 'flash' moves its figures together") as caught:
        uncertainty.parameters(load(small_models))
    assert caught.value.problems[0].file == "storage.yaml" and caught.value.problems[0].line > 0


def test_sensitivity_command(small_models):
    _set(small_models, "storage.yaml", PRICE, 'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", '
         'high: "$40,000", basis: assumption')
    result = CliRunner().invoke(main, ["sensitivity", "--models", str(small_models)])
    assert result.exit_code == 0, result.output
    assert "llama3-405b on dgx-h100" in result.output
    assert "tiers.superpod-good.capex_usd_per_GBps" in result.output and "$20,000 -> $40,000" in result.output
    assert "The recommendation holds unless:" in result.output and "rises above" in result.output
    data = json.loads(CliRunner().invoke(main, ["sensitivity", "--models", str(small_models), "--all", "--json"]).output)
    assert len(data) == 6  # 2 models x 3 SKUs of the small plan
    assert {s["input"] for d in data for s in d["swings"]} == {"tiers.superpod-good.capex_usd_per_GBps"}
    bad = CliRunner().invoke(main, ["sensitivity", "--models", str(small_models), "--sku", "nope"])
    assert bad.exit_code == 2 and "no summary line" in bad.output
