"""ckptreport diff: two builds that differ by one price show that price, with its file and line on
both sides, and what it moved in the headline; the exit code says whether the recommendation changed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from ckptreport.answer.types import option_label
from ckptreport.build import build
from ckptreport.cli import main
from ckptreport.read import units

PRICE = 'capex_usd_per_GBps: {value: "$25,000"'  # superpod-good's price per GB/s bought, the first in storage.yaml
# its range, shared with the other flash tiers
RANGED = ', low: "$8,400", high: "$50,000", driver: flash-price-per-GBps'


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def _priced(models: Path, target: Path, price: str) -> Path:
    shutil.copytree(models, target)
    storage = target / "storage.yaml"
    text = storage.read_text()
    assert PRICE in text
    within = units.parse(price, "usd") <= 50_000  # inside the shipped range: only the value changes
    storage.write_text(
        text.replace(
            PRICE + ("" if within else RANGED), f'capex_usd_per_GBps: {{value: "{price}"', 1
        )
    )
    return target


@pytest.fixture(scope="module")
def builds(tmp_path_factory, request):
    """The small plan built three times (tables only): as shipped, with superpod-good's price per
    GB/s up 4% (the ranking holds), and up 20x (it flips)."""
    small = request.getfixturevalue("small_build")
    root = tmp_path_factory.mktemp("diff")
    sides = {}
    for name, price in (("base", None), ("nudged", "$26,000"), ("flipped", "$500,000")):
        models = (
            small.models if price is None else _priced(small.models, root / f"models-{name}", price)
        )
        build(models, root / name, skip=["workbook", "briefs"])
        sides[name] = SimpleNamespace(models=models, out=root / name)
    return sides


def _diff(*args):
    return CliRunner().invoke(main, ["diff", *map(str, args)], catch_exceptions=False)


def test_one_price_shows_with_file_and_line_and_what_it_moved(builds):
    base, nudged = builds["base"], builds["nudged"]
    result = _diff(base.out, nudged.out, "--json")
    assert result.exit_code == 0, result.output  # the ranking holds: exit 0
    d = json.loads(result.output)
    line = _line_of(nudged.models / "storage.yaml", "$26,000")
    assert d["inputs"] == [
        {
            "file": "storage.yaml",
            "key": "tiers.superpod-good.capex_usd_per_GBps.value",
            "old": {"line": line, "value": "$25,000"},
            "new": {"line": line, "value": "$26,000"},
        }
    ]
    assert not d["recommendation_changed"]
    old = {
        (r["model"], r["sku"]): r
        for r in json.loads((base.out / "manifest.json").read_text())["recommendations"]
    }
    moved = {(h["model"], h["sku"]): h for h in d["headline"]}
    on_good = {k for k, r in old.items() if r["tier"] == "superpod-good"}
    assert on_good and set(moved) == on_good  # exactly the lines that buy superpod-good moved
    for key, h in moved.items():
        assert not h["recommendation_changed"]
        assert (
            "overhead_pct" not in h["changed"] and "stall_s" not in h["changed"]
        )  # a price moves no time
        storage = h["changed"]["storage_usd_month"]
        assert storage["old"] == old[key]["storage_usd_month"] and storage["new"] > storage["old"]
        total = h["changed"]["total_usd_month"]
        assert total["new"] - total["old"] == pytest.approx(storage["new"] - storage["old"])

    text = _diff(base.out, nudged.out)
    assert text.exit_code == 0
    assert (
        f"tiers.superpod-good.capex_usd_per_GBps.value  [storage.yaml:{line} -> storage.yaml:{line}]"
        in text.output
    )
    assert "'$25,000' -> '$26,000'" in text.output
    assert "The recommendation is the same everywhere (exit 0)." in text.output
    first = next(iter(moved.values()))
    shown = f"${first['changed']['total_usd_month']['old']:,.0f} -> ${first['changed']['total_usd_month']['new']:,.0f}"
    assert shown in text.output


def test_a_price_that_flips_the_ranking_exits_1_and_names_both_options(builds):
    base, flipped = builds["base"], builds["flipped"]
    result = _diff(base.out, flipped.out, "--json")
    assert result.exit_code == 1, result.output
    d = json.loads(result.output)
    assert d["recommendation_changed"]
    new = {
        (r["model"], r["sku"]): r
        for r in json.loads((flipped.out / "manifest.json").read_text())["recommendations"]
    }
    flips = [h for h in d["headline"] if h["recommendation_changed"]]
    assert flips
    for h in flips:
        r = new[(h["model"], h["sku"])]
        assert h["recommendation"]["new"] == option_label(r["strategy"], r["tier"], r["engine"])
        assert h["recommendation"]["old"] != h["recommendation"]["new"]
    text = _diff(base.out, flipped.out)
    assert text.exit_code == 1
    assert (
        f"{flips[0]['recommendation']['old']} -> {flips[0]['recommendation']['new']}" in text.output
    )
    assert _diff(base.out, flipped.out, "-q").output == ""


def test_a_models_directory_equals_its_own_build_and_briefs_are_compared(builds):
    """A models directory reduces to the same snapshot as its build; two models directories also
    compare their briefs (the build above has none: said, not counted as a change)."""
    base, flipped = builds["base"], builds["flipped"]
    same = _diff(base.out, base.models)
    assert same.exit_code == 0, same.output
    assert "Inputs: no change" in same.output and "no summary line moved" in same.output
    assert "Briefs: not compared" in same.output
    d = json.loads(_diff(base.models, flipped.models, "--json").output)
    assert d["briefs_compared"] and d["briefs"], (
        "the flip moves the brief of a model bought on superpod-good"
    )
    assert all(b["old"] != b["new"] for b in d["briefs"])


def test_added_and_removed_keys_and_an_old_manifest(builds, tmp_path):
    base = builds["base"]
    models = tmp_path / "models"
    shutil.copytree(base.models, models)
    plan = models / "plan.yaml"
    plan.write_text(plan.read_text().replace("buffers: 1\n", "") + "host_recoverable: 0%\n")
    d = json.loads(_diff(base.models, models, "--json").output)
    changes = {c["key"]: c for c in d["inputs"]}
    assert changes["buffers"]["new"] is None and changes["buffers"]["old"]["value"] == "1"
    assert changes["host_recoverable"]["old"] is None and changes["host_recoverable"]["new"] == {
        "line": _line_of(plan, "host_recoverable"),
        "value": "0%",
    }

    old = tmp_path / "old-build"
    shutil.copytree(base.out, old)
    doc = json.loads((old / "manifest.json").read_text())
    del doc["input_values"]  # as a build before inputs were recorded
    (old / "manifest.json").write_text(json.dumps(doc))
    result = _diff(old, base.out)
    assert result.exit_code == 0 and "Inputs: not compared" in result.output


@pytest.mark.parametrize(
    "damage, key",
    [
        (lambda d: d.update(recommendations="all"), "recommendations"),
        (
            lambda d: d["recommendations"][0].update(total_usd_month="$5"),
            "recommendations[0].total_usd_month",
        ),
        (
            lambda d: d.update(input_values={"plan.yaml": {"mfu.value": "40%"}}),
            "input_values.plan.yaml",
        ),
    ],
)
def test_a_damaged_manifest_is_refused_naming_the_key(builds, tmp_path, damage, key):
    bad = tmp_path / "bad"
    shutil.copytree(builds["base"].out, bad)
    doc = json.loads((bad / "manifest.json").read_text())
    damage(doc)
    (bad / "manifest.json").write_text(json.dumps(doc))
    result = CliRunner().invoke(main, ["diff", str(bad), str(builds["base"].out)])
    assert result.exit_code == 2
    assert key in result.output and "Traceback" not in result.output


def test_neither_a_build_nor_models_is_refused(tmp_path):
    result = CliRunner().invoke(main, ["diff", str(tmp_path), str(tmp_path)])
    assert result.exit_code == 2
    assert "neither a build" in result.output
    (tmp_path / "manifest.json").write_text("{not json")
    result = CliRunner().invoke(main, ["diff", str(tmp_path), str(tmp_path)])
    assert result.exit_code == 2 and "not JSON" in result.output


def test_an_engine_term_that_moves_the_stall_shows_in_the_diff(builds, tmp_path):
    """An engine's fixed cost from its fitted 0.558 s to 5 s (engines.yaml): the diff names the key with its line on
    both sides, shows the stall that moved on every line recommending that engine, and exits 0 or 1 as
    the recommendation holds or changes, never an internal error."""
    base = builds["base"]
    models = tmp_path / "models"
    shutil.copytree(base.models, models)
    engines = models / "engines.yaml"
    text = engines.read_text()
    old = "  dcp-async-cached:\n"
    head, tail = text.split(old)
    tail = tail.replace(
        "async: {value: 0.558 s, low: 0.227 s, high: 0.768 s",
        "async: {value: 5 s, low: 0 s, high: 10 s",
        1,
    )
    engines.write_text(head + old + tail)
    build(models, tmp_path / "out", skip=["workbook", "briefs"])
    result = _diff(base.out, tmp_path / "out", "--json")
    assert result.exit_code in (0, 1), result.output
    d = json.loads(result.output)
    line = _line_of(engines, "async: {value: 5 s")
    assert {
        "file": "engines.yaml",
        "key": "engines.dcp-async-cached.fixed_cost.async.value",
        "old": {"line": line, "value": "0.558 s"},
        "new": {"line": line, "value": "5 s"},
    } in d["inputs"]
    before = {
        (r["model"], r["sku"]): r
        for r in json.loads((base.out / "manifest.json").read_text())["recommendations"]
    }
    with_it = {
        k
        for k, r in before.items()
        if r["engine"] == "dcp-async-cached" and r["strategy"] == "async"
    }
    assert with_it
    moved = {(h["model"], h["sku"]): h for h in d["headline"]}
    for key in with_it:
        assert "stall_s" in moved[key]["changed"] or moved[key]["recommendation_changed"], key
    text = _diff(base.out, tmp_path / "out")
    assert text.exit_code == result.exit_code and "stall per checkpoint" in text.output


def test_a_build_with_measured_figures_against_one_without_names_the_measured_hops(
    builds, tmp_path
):
    """build --measured against the same models unmeasured: exit 0 or 1, never 3, and the measured
    hop is an input that changed (added on one side), with its figure."""
    from ckptreport.read import measured

    doc = measured.document(
        "h1",
        "ckptreport probe",
        "dgx-h100",
        {"d2h_per_gpu": {"value": 50e9, "samples": [50e9], "method": "m"}},
    )
    path = measured.write(doc, tmp_path / "measured" / "h1.yaml")
    build(builds["base"].models, tmp_path / "out", skip=["workbook", "briefs"], measured=[path])
    result = _diff(builds["base"].out, tmp_path / "out", "--json")
    assert result.exit_code in (0, 1), result.output
    d = json.loads(result.output)
    hop = next(i for i in d["inputs"] if i["file"] == "measured")
    assert hop["key"] == "skus.dgx-h100.d2h_per_gpu" and hop["old"] is None
    assert hop["new"]["value"] == "measured on 1 host 50 GB/s"
    back = _diff(tmp_path / "out", builds["base"].out)  # and the other way round, as text
    assert back.exit_code in (0, 1) and "skus.dgx-h100.d2h_per_gpu" in back.output


@pytest.mark.parametrize(
    "text, said",
    [
        ('"rows": ' + "9" * 400, "an integer of 400 digits"),
        ('"rows": ' + "9" * 5000, "an integer of 5,000 digits"),
        ('"deep": ' + "[" * 100_000 + "]" * 100_000, "not JSON"),
    ],
)
def test_a_manifest_with_hostile_numbers_or_nesting_is_exit_2_not_a_crash(
    builds, tmp_path, text, said
):
    bad = tmp_path / "bad"
    shutil.copytree(builds["base"].out, bad)
    raw = (bad / "manifest.json").read_text()
    (bad / "manifest.json").write_text(raw.replace("{", "{" + text + ", ", 1))
    result = CliRunner().invoke(main, ["diff", str(bad), str(builds["base"].out)])
    assert result.exit_code == 2, result.output
    assert said in result.output and "Traceback" not in result.output
