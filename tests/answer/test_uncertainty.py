"""Ranges on inputs, the tornado and break-even values: each checked against the pipeline itself
run on models files that state the swept value outright (no range), so the engine's vectorised
re-evaluation cannot drift from what a build computes."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from ckptreport.answer.report import compute
from ckptreport.answer.types import option_label
from ckptreport.answer.uncertainty import montecarlo
from ckptreport.answer.uncertainty.montecarlo import monte_carlo
from ckptreport.answer.uncertainty.ranges import follow, parameters
from ckptreport.answer.uncertainty.robustness import sensitivity
from ckptreport.base.errors import InputError
from ckptreport.cli import main
from ckptreport.read.load import load

from conftest import REPO

PRICE = 'capex_usd_per_GBps: {value: "$25,000", basis: assumption'  # every flash tier's, once ranges are stripped
CHOSEN = "superpod-better"  # the tier the small plan recommends for LINE (405B async with DCP's cached plans)
LINE = ("llama3-405b", "dgx-h100")


def _set(models: Path, file: str, old: str, new: str, count: int = 1) -> None:
    path = models / file
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new, count))


def _strip_ranges(models: Path) -> Path:
    """The models with every range removed: each figure taken as certain, as before ranges."""
    import re

    for name in ("hardware.yaml", "storage.yaml", "engines.yaml", "plan.yaml"):
        path = models / name
        path.write_text(
            re.sub(
                r'low: (?:"[^"]*"|[^,]+), high: (?:"[^"]*"|[^,]+), (distribution: \w+, )?(driver: [\w-]+, )?',
                "",
                path.read_text(),
            )
        )
    return models


@pytest.fixture
def plain_models(small_models) -> Path:
    """The small plan's models without a range."""
    return _strip_ranges(small_models)


def _set_tier(models: Path, tier: str, old: str, new: str) -> None:
    """Replace ``old`` by ``new`` inside one tier's block of storage.yaml."""
    path = models / "storage.yaml"
    head, rest = path.read_text().split(f"\n  {tier}:\n", 1)
    lines = rest.split("\n")  # the block runs to the next tier's name (two spaces in)
    end = next(
        (i for i, ln in enumerate(lines) if ln.startswith("  ") and not ln.startswith("   ")),
        len(lines),
    )
    block = "\n".join(lines[:end])
    assert old in block, (tier, old)
    path.write_text(head + f"\n  {tier}:\n" + "\n".join([block.replace(old, new, 1), *lines[end:]]))


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _line(report, model_sku=LINE) -> int:
    table = report.summary
    return int(table.index[(table["model"] == model_sku[0]) & (table["sku"] == model_sku[1])][0])


def _pick(models: Path, model_sku=LINE) -> dict:
    report = compute(load(models), needs=frozenset())
    r = report.summary.iloc[_line(report, model_sku)]
    return {
        "option": option_label(r["option_strategy"], r["option_tier"], r["option_engine"]),
        "total_usd": r["option_total_usd"],
    }


@pytest.mark.parametrize(
    "quantity, message",
    [
        ("{value: 50677 h, low: 20000 h}", "a range gives both low and high"),
        ("{value: 50677 h, low: 60000 h, high: 90000 h}", "expected low <= value <= high"),
        ("{value: 50677 h, low: 2 TB, high: 90000 h}", "low: expected a duration"),
        (
            "{value: 50677 h, low: 20000 h, high: 90000 h, distribution: normal}",
            "distribution must be one of",
        ),
        (
            "{value: 50677 h, low: 0 h, high: 90000 h, distribution: lognormal}",
            "low: expected a duration greater than 0",
        ),
        ("{value: 50677 h, driver: rate}", "a driver goes with a range"),
    ],
)
def test_a_bad_range_names_file_line_and_key(plain_models, quantity, message):
    _set(
        plain_models,
        "hardware.yaml",
        'gpu_mtbf: {value: 50677 h, basis: derived, source: "Llama 3 paper',
        f'gpu_mtbf: {quantity}\n    _was: {{value: 50677 h, basis: derived, source: "Llama 3 paper',
    )
    _set(plain_models, "hardware.yaml", "    _was: ", "    # ")
    with pytest.raises(InputError) as caught:
        load(plain_models)
    (problem,) = caught.value.problems
    assert (
        problem.path == "skus.dgx-h100.gpu_mtbf" and problem.line > 0 and message in problem.message
    )


def test_a_whole_number_or_a_plan_point_takes_no_range(small_models):
    _set(small_models, "plan.yaml", "retention: 3", "retention: {value: 3, low: 2, high: 5}")
    with pytest.raises(InputError, match="takes one figure, not a range"):
        load(small_models)


def test_the_tornado_swing_is_what_the_build_computes_at_each_end(plain_models, tmp_path):
    """One uncertain price swept from its low to its high gives exactly what a build gives with the
    price written as that value."""
    _set(
        plain_models,
        "storage.yaml",
        PRICE,
        'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", high: "$40,000", basis: assumption',
    )
    inputs = load(plain_models)
    params = parameters(inputs)
    assert [p.label for p in params] == ["tiers.superpod-good.capex_usd_per_GBps"]
    assert (params[0].low, params[0].value, params[0].high) == (20000, 25000, 40000)
    report = compute(inputs, needs=frozenset())
    s = sensitivity(report, params, _line(report))
    (swing,) = s.swings
    for end, price in (("low", "$20,000"), ("high", "$40,000")):
        models = _copy(plain_models, tmp_path / end)
        _set(
            models,
            "storage.yaml",
            'value: "$25,000", low: "$20,000", high: "$40,000"',
            f'value: "{price}"',
        )
        expected = _pick(models)
        got = getattr(swing, end)
        assert got["option"] == expected["option"]
        assert got["total_usd"] == pytest.approx(expected["total_usd"], rel=1e-12)
    assert swing.swing("total_usd") == pytest.approx(
        abs(swing.high["total_usd"] - swing.low["total_usd"])
    )
    assert s.base["option"] == _pick(plain_models)["option"]


def test_a_break_even_is_where_the_build_changes_its_recommendation(plain_models, tmp_path):
    _set_tier(
        plain_models,
        CHOSEN,
        PRICE,
        'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", high: "$40,000", basis: assumption',
    )
    inputs = load(plain_models)
    params = parameters(inputs)
    report = compute(inputs, needs=frozenset())
    s = sensitivity(report, params, _line(report))
    (flip,) = [b for b in s.breaks if b.direction == "above"]
    assert 25000 < flip.value < 250000  # above its value, within a factor of 10
    base = _pick(plain_models)["option"]
    for factor, want in ((0.999, base), (1.001, flip.to)):
        models = _copy(plain_models, tmp_path / str(factor))
        _set_tier(
            models,
            CHOSEN,
            'value: "$25,000", low: "$20,000", high: "$40,000"',
            f'value: "${flip.value * factor:.2f}"',
        )
        assert _pick(models)["option"] == want
    assert flip.to != base


def test_a_driver_moves_its_figures_together(plain_models, tmp_path):
    """Every flash tier's price per GB/s named by one driver: one tornado bar, and its low end is a
    build with every one of them at its low."""
    ranged = 'capex_usd_per_GBps: {value: "$25,000", low: "$10,000", high: "$50,000", driver: flash, basis: assumption'
    _set(
        plain_models,
        "storage.yaml",
        'capex_usd_per_GBps: {value: "$25,000", basis: assumption',
        ranged,
        count=-1,
    )
    inputs = load(plain_models)
    (param,) = parameters(inputs)
    assert (
        param.driver == "flash" and len(param.members) == 5 and param.label == "flash (5 figures)"
    )
    report = compute(inputs, needs=frozenset())
    (swing,) = sensitivity(report, [param], _line(report)).swings
    low = _copy(plain_models, tmp_path / "low")
    _set(
        low,
        "storage.yaml",
        'value: "$25,000", low: "$10,000", high: "$50,000", driver: flash',
        'value: "$10,000"',
        count=-1,
    )
    expected = _pick(low)
    assert (swing.low["option"], swing.low["total_usd"]) == (
        expected["option"],
        pytest.approx(expected["total_usd"]),
    )


def test_figures_of_one_driver_go_to_the_same_place_in_their_own_ranges(plain_models, tmp_path):
    """superpod-good priced $25,000 ($10,000-50,000), superpod-better $30,000 ($20,000-40,000), one
    driver: at the tornado's low end each is at its own low, as a build with those prices gives;
    a figure of another distribution cannot join the driver."""
    _set(
        plain_models,
        "storage.yaml",
        'capex_usd_per_GBps: {value: "$25,000", basis: assumption',
        'capex_usd_per_GBps: {value: "$25,000", low: "$10,000", high: "$50,000", driver: flash, basis: assumption',
    )
    _set(
        plain_models,
        "storage.yaml",
        'capex_usd_per_GBps: {value: "$25,000", basis: assumption',
        'capex_usd_per_GBps: {value: "$30,000", low: "$20,000", high: "$40,000", driver: flash, basis: assumption',
    )
    inputs = load(plain_models)
    (param,) = parameters(inputs)
    assert [m.label for m in param.members] == [
        "tiers.superpod-better.capex_usd_per_GBps",
        "tiers.superpod-good.capex_usd_per_GBps",
    ]  # sorted by name
    first, other = param.members
    for x, want in ((first.low, other.low), (first.value, other.value), (first.high, other.high)):
        assert follow(param, other, np.array([x]))[0] == pytest.approx(want)
    report = compute(inputs, needs=frozenset())
    (swing,) = sensitivity(report, [param], _line(report)).swings
    low = _copy(plain_models, tmp_path / "low")
    _set(
        low,
        "storage.yaml",
        'value: "$25,000", low: "$10,000", high: "$50,000", driver: flash',
        'value: "$10,000"',
    )
    _set(
        low,
        "storage.yaml",
        'value: "$30,000", low: "$20,000", high: "$40,000", driver: flash',
        'value: "$20,000"',
    )
    expected = _pick(low)
    assert (swing.low["option"], swing.low["total_usd"]) == (
        expected["option"],
        pytest.approx(expected["total_usd"]),
    )
    _set(
        plain_models,
        "storage.yaml",
        'high: "$40,000", driver: flash',
        'high: "$40,000", distribution: uniform, driver: flash',
    )
    with pytest.raises(
        InputError, match="driver 'flash' moves its figures together: they share a distribution"
    ) as caught:
        parameters(load(plain_models))
    assert caught.value.problems[0].file == "storage.yaml" and caught.value.problems[0].line > 0


def test_sensitivity_command(plain_models):
    _set_tier(
        plain_models,
        CHOSEN,
        PRICE,
        'capex_usd_per_GBps: {value: "$25,000", low: "$20,000", high: "$40,000", basis: assumption',
    )
    result = CliRunner().invoke(main, ["sensitivity", "--models", str(plain_models)])
    assert result.exit_code == 0, result.output
    assert "llama3-405b on dgx-h100" in result.output
    assert (
        f"tiers.{CHOSEN}.capex_usd_per_GBps" in result.output
        and "$20,000 -> $40,000" in result.output
    )
    assert "The recommendation holds unless:" in result.output and "rises above" in result.output
    data = json.loads(
        CliRunner()
        .invoke(main, ["sensitivity", "--models", str(plain_models), "--all", "--json"])
        .output
    )
    assert len(data) == 6  # 2 models x 3 SKUs of the small plan
    assert {s["input"] for d in data for s in d["swings"]} == {f"tiers.{CHOSEN}.capex_usd_per_GBps"}
    bad = CliRunner().invoke(main, ["sensitivity", "--models", str(plain_models), "--sku", "nope"])
    assert bad.exit_code == 2 and "no summary line" in bad.output


# ---- Monte Carlo ----------------------------------------------------------------------------------


def _only_gpu_hour_uncertain(
    models: Path, low="$4.00", high="$6.00", distribution="uniform"
) -> None:
    """Every range of the shipped models removed but dgx-h100's GPU-hour, given ``low``-``high``."""
    _strip_ranges(models)
    _set(
        models,
        "hardware.yaml",
        "usd_per_gpu_hour: {value: $4.916, basis: spec",
        f"usd_per_gpu_hour: {{value: $4.916, low: {low}, high: {high}, distribution: {distribution}, basis: spec",
    )


def test_monte_carlo_quantiles_of_a_linear_output_match_the_analytic_ones(small_models, tmp_path):
    """The GPU-hour, uniform from $4 to $6, enters the monthly cost linearly: its P10/P50/P90 are the
    ends' costs interpolated at 10/50/90%, within sampling error."""
    _only_gpu_hour_uncertain(small_models)
    inputs = load(small_models)
    params = parameters(inputs)
    assert [p.label for p in params] == ["skus.dgx-h100.usd_per_gpu_hour"]
    report = compute(inputs, needs=frozenset())
    line = _line(report)
    (swing,) = sensitivity(report, params, line).swings
    assert (
        swing.low["option"] == swing.high["option"]
    )  # one option throughout: the output is affine
    lo, hi = swing.low["total_usd_month"], swing.high["total_usd_month"]
    n = 20_000
    got = monte_carlo(report, params, n, seed=7, scratch=tmp_path).lines[line]
    assert got["option"] == swing.low["option"] and got["wins"] == {got["option"]: 1.0}
    for q in (10, 50, 90):
        analytic = lo + (hi - lo) * q / 100
        error = (
            4 * (hi - lo) * math.sqrt(q / 100 * (1 - q / 100) / n)
        )  # 4 standard errors of a uniform's quantile
        assert abs(got["quantiles"]["total_usd_month"][f"p{q}"] - analytic) < error, q
    other = _line(
        report, ("llama3-405b", "gh200")
    )  # a line the input does not touch: every draw the same
    spread = monte_carlo(report, params, 50, seed=7, scratch=tmp_path).lines[other]["quantiles"]
    assert spread["total_usd_month"]["p10"] == spread["total_usd_month"]["p90"]


def test_monte_carlo_draws_do_not_depend_on_the_chunking(small_models, tmp_path, monkeypatch):
    inputs = load(small_models)
    params = parameters(inputs)
    assert len(params) >= 4  # the shipped ranges
    report = compute(inputs, needs=frozenset())
    whole = monte_carlo(report, params, 300, seed=3, scratch=tmp_path)
    monkeypatch.setattr(montecarlo, "ROWS_PER_CHUNK", 50)  # a handful of draws per chunk
    chunked = monte_carlo(report, params, 300, seed=3, scratch=tmp_path)
    assert chunked.lines == whole.lines
    for line in whole.lines:
        assert sum(line["wins"].values()) == pytest.approx(1.0)


def _sampled_build(models: Path, out: Path, seed: int, monkeypatch) -> dict:
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1700000000")
    result = CliRunner().invoke(
        main,
        [
            "build",
            "--models",
            str(models),
            "--out",
            str(out),
            "--no-workbook",
            "--no-briefs",
            "--samples",
            "4000",
            "--seed",
            str(seed),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "Monte Carlo: 4,000 draws" in result.stdout
    return json.loads((out / "manifest.json").read_text())["samples"]


def test_same_seed_same_bytes_other_seed_consistent_quantiles(small_models, tmp_path, monkeypatch):
    import pyarrow.parquet as pq

    a = _sampled_build(small_models, tmp_path / "a", 1, monkeypatch)
    b = _sampled_build(small_models, tmp_path / "b", 1, monkeypatch)
    assert (tmp_path / "a" / "samples.parquet").read_bytes() == (
        tmp_path / "b" / "samples.parquet"
    ).read_bytes()
    assert a == b
    c = _sampled_build(small_models, tmp_path / "c", 2, monkeypatch)
    assert c != a  # other draws
    for x, y in zip(a["lines"], c["lines"]):
        p10, p50, p90 = (x["quantiles"]["total_usd_month"][k] for k in ("p10", "p50", "p90"))
        spread = p90 - p10
        # medians of 4,000 draws: a standard error of about 1.25 x spread / (2.56 x sqrt(4000)), i.e. 0.8%
        assert abs(y["quantiles"]["total_usd_month"]["p50"] - p50) <= 0.05 * spread + 1e-9 * p50
    table = pq.read_table(tmp_path / "a" / "samples.parquet")
    assert table.num_rows == 4000 * len(a["lines"])
    assert {
        "sample",
        "model",
        "sku",
        "recommended",
        "total_usd_month",
        "input gpu-mtbf",
        "input skus.dgx-h100.usd_per_gpu_hour",
    } <= set(table.column_names)


def test_the_readme_dask_block_gives_what_the_build_gives(tmp_path, monkeypatch):
    """The README's Dask example, run as written on a two-worker local cluster (processes): its
    result equals the build's --samples 2000 --seed 1, in the manifest, exactly."""
    import re

    from conftest import REPO

    readme = (REPO / "README.md").read_text()
    block = next(b for b in re.findall(r"```python\n(.*?)```", readme, re.S) if "LocalCluster" in b)
    monkeypatch.chdir(REPO)
    scope: dict = {"__name__": "readme_dask"}
    exec(compile(block, "README.md (Dask)", "exec"), scope)  # noqa: S102 - the README's own code
    built = CliRunner().invoke(
        main,
        [
            "build",
            "--out",
            str(tmp_path / "out"),
            "--no-workbook",
            "--no-briefs",
            "--samples",
            "2000",
            "--seed",
            "1",
            "-q",
        ],
    )
    assert built.exit_code == 0, built.output
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())["samples"]
    assert json.loads(json.dumps(scope["sampled"].lines)) == manifest["lines"]


def test_explain_shows_each_inputs_range_as_written():
    result = CliRunner().invoke(
        main,
        [
            "explain",
            "llama3-405b",
            "dgx-h100",
            "superpod-good",
            "--gpus",
            "1024",
            "--interval",
            "30min",
            "--json",
        ],
    )
    ranges = {i["name"]: i["range"] for i in json.loads(result.output)["inputs"]}
    assert ranges["gpu_mtbf_s"] == "22600 h to 83500 h (triangular, driver gpu-mtbf)"
    assert ranges["mfu_pct"] == "38% to 43% (uniform)"
    assert ranges["storage_nic_GBps"] is None  # taken as certain
    text = (
        CliRunner()
        .invoke(
            main,
            [
                "explain",
                "llama3-405b",
                "dgx-h100",
                "superpod-good",
                "--gpus",
                "1024",
                "--interval",
                "30min",
            ],
        )
        .output
    )
    line = next(
        i
        for i, ln in enumerate((REPO / "models" / "plan.yaml").read_text().splitlines(), 1)
        if ln.startswith("mfu:")
    )
    assert f"plan.yaml:{line} [range 38% to 43% (uniform)]" in text
