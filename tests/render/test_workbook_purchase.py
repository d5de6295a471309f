"""The cluster's purchase in the workbook (Purchase sheet), as finance uses it: LibreOffice and Gnumeric
recalculate it to the tool's figures, and an edited unit price moves the purchase by formula."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import xlsxcells
import yaml

from ckptreport.base.paths import shipped_models
from ckptreport.build import build

from clusterplan import cluster_plan
from conftest import EPOCH, GNUMERIC, SOFFICE, gnumeric, once, recalculated

pytestmark = pytest.mark.skipif(
    (SOFFICE is None or GNUMERIC is None) and not os.environ.get("CI"),
    reason="LibreOffice and Gnumeric are not installed: run `make system-deps`",
)

PLAN = cluster_plan(
    models=["llama3-70b"],
    skus=["dgx-h100"],
    tiers=["superpod-good", "superpod-better", "pfs-100"],
    gpus=[2048],
    jobs=[
        {"name": "a", "model": "llama3-70b", "sku": "dgx-h100", "gpus": 2048, "cluster": "c"},
        {"name": "b", "model": "llama3-70b", "sku": "dgx-h100", "gpus": 1024, "cluster": "c"},
    ],
)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """A small plan with one cluster of two jobs, built once (power and space charged per SU)."""

    def make(root: Path) -> None:
        models = root / "models"
        shutil.copytree(shipped_models(), models)
        (models / "plan.yaml").write_text(yaml.safe_dump(PLAN, sort_keys=False))
        storage = yaml.safe_load((models / "storage.yaml").read_text())
        for name in ("superpod-good", "superpod-better"):
            storage["tiers"][name]["unit"].update(power_W=3000, rack_units=4)
        (models / "storage.yaml").write_text(yaml.safe_dump(storage, sort_keys=False))
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SOURCE_DATE_EPOCH", EPOCH)
            build(models.resolve(), root / "out", skip=("briefs", "page"))

    out = once(tmp_path_factory, "cluster-build", make) / "out"
    return out / "ckptreport.xlsx", json.loads((out / "manifest.json").read_text())["clusters"][0]


def _figures(xlsx: Path) -> dict[str, tuple[str, object]]:
    """The Purchase sheet's cluster block: label (column A) -> (its B cell, its value)."""
    cells = xlsxcells.read(xlsx, only=("Purchase",))["Purchase"]
    out = {}
    for ref, c in cells.items():
        if ref.startswith("A") and isinstance(c.value, str):
            b = "B" + ref[1:]
            if b in cells:
                out.setdefault(c.value, (b, cells[b].value))
    return out


def _assert_the_tools(figures: dict, f: dict) -> None:
    c = f["choice"]
    expected = {
        "purchase": c["purchase_usd"],
        "running a year": c["running_usd_year"],
        "storage over the life": c["storage_life_usd"],
        "present value": f["present_value_usd"],
        "total over the life": c["total_usd"],
    }
    for label, want in expected.items():
        assert figures[label][1] == pytest.approx(want, rel=1e-9), label


def test_the_cached_figures_are_the_tools(built):
    xlsx, f = built
    figures = _figures(xlsx)
    _assert_the_tools(figures, f)
    assert figures["units bought"][1] == f["choice"]["units"]
    runner = next(k for k in figures if k.startswith("runner-up:"))
    assert figures[runner][1] == pytest.approx(f["runner_up"]["purchase_usd"])


def test_libreoffice_and_gnumeric_recalculate_the_purchase_to_the_tools(built, tmp_path):
    xlsx, f = built
    _assert_the_tools(_figures(recalculated(xlsx, tmp_path)), f)
    _assert_the_tools(_figures(gnumeric(xlsx, tmp_path / "gnumeric")), f)


def test_doubling_the_unit_price_doubles_the_units_purchase(built, tmp_path):
    """Finance types twice the price per unit: the units' purchase doubles, the purchase and every
    year's support follow, by formula, in LibreOffice and in Gnumeric."""
    xlsx, f = built
    figures = _figures(xlsx)
    at, price = figures["price per unit"]
    edited = xlsxcells.typed(xlsx, tmp_path / "edited.xlsx", {"Purchase": {at: 2 * price}})
    before_units = figures["purchase of the units"][1]
    capacity = figures["purchase of the capacity"][1]
    for recalc in (recalculated(edited, tmp_path), gnumeric(edited, tmp_path / "gnumeric")):
        after = _figures(recalc)
        assert after["purchase of the units"][1] == pytest.approx(2 * before_units, rel=1e-12)
        assert after["purchase"][1] == pytest.approx(2 * before_units + capacity, rel=1e-12)
        assert after["storage over the life"][1] > figures["storage over the life"][1]
