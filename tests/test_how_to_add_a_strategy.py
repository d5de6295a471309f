"""README "How to add a strategy", run: a strategy declared in the strategy table alone (the README's
own snippet, added for this test and taken out after) flows to every output. No column, loader rule,
sheet or template names it: the frame computes its rows from its traits, the plan crosses it with the
engines that implement what it is built on, explain shows its traits and their arithmetic, the
workbook's formulas read its traits from Assumptions and LibreOffice recalculates them to the
engine's figures, and the brief compares it with the other planned strategies."""

from __future__ import annotations

import math
import re
import shutil
import subprocess
import textwrap

import pytest

from ckptreport.answer.explain import Scenario, explanation
from ckptreport.base.paths import shipped_models
from ckptreport.build import build
from ckptreport.read import strategies
from ckptreport.read.strategies import STRATEGIES, Strategy, declared

from conftest import REPO, SMALL_PLAN, SOFFICE, recalculated
from spreadsheets import assert_cells_equal_engine, formulas_carry_what_it_computes, scenario_cells

README = (REPO / "README.md").read_text()
NAME = "peer_differential"
LAYERED = (
    "host_recoverable: 75%\nnode_loss: 17%\npeer_replicas: 1\ndurable_every: 6\nfull_every: 4\n"
    "diff_fraction: 25%\n"
)


def readme_strategy() -> Strategy:
    """The Strategy the README's snippet declares, evaluated as written."""
    section = README[README.index("### How to add a strategy") :]
    block = re.search(r"```python\n(.*?)```", section, re.S).group(
        1
    )  # an entry of the table's declare(...)
    strategy = eval(textwrap.dedent(block).strip().rstrip(","), {"Strategy": Strategy})  # noqa: S307
    assert isinstance(strategy, Strategy) and strategy.name == NAME
    return strategy


@pytest.fixture(scope="module")
def added(tmp_path_factory):
    """The small plan with sync, async and the README's strategy, built with every output but the page,
    while the strategy is in the table; the table as it was afterwards."""
    root = tmp_path_factory.mktemp("strategy")
    shutil.copytree(shipped_models(), root / "models")
    plan = SMALL_PLAN.replace(
        "strategies: [sync, async, tiered]", f"strategies: [sync, async, {NAME}]"
    )
    assert plan != SMALL_PLAN
    (root / "models" / "plan.yaml").write_text(plan + LAYERED)
    before = dict(STRATEGIES)
    with declared(readme_strategy()):
        # in this process: ``declared`` adds to this process's table, which spawned workers (who read the
        # source, as they would once the README's entry is written into it) do not see
        result = build(root / "models", root / "out", skip=["page"], workers=1)
        steps = explanation(
            result.inputs, Scenario("llama3-405b", "dgx-h100", "pfs-100", 1024, 1800.0, NAME)
        )
    assert STRATEGIES == before  # taken out again
    return result, root / "out", steps


def test_the_snippet_declares_only_traits_the_columns_read():
    s = readme_strategy()
    assert (
        s.built_on == "async" and s.copies_to_peers and s.saves_differences and s.durable_every_nth
    )
    assert NAME not in STRATEGIES  # not part of the product
    assert set(s.reads) <= {
        "peer_replicas",
        "durable_every",
        "node_loss_pct",
        "peer_nic_GBps",
        "full_every",
        "diff_fraction_pct",
    }


def test_its_rows_are_computed_from_its_traits(added):
    """Every figure a trait selects, by hand: a durable save every N-th time and then a difference
    between full ones, a copy to one peer, the chain a restore reads, the host memory the peer copy
    takes; the snapshot and the persist as async's on the same engine, tier and job."""
    result, _, _ = added
    frame = result.frame
    mine = frame[frame["strategy"] == NAME]
    assert len(mine) > 0 and set(mine["engine"].astype(str)) == {
        "dcp-async-cached"
    }  # the engine that runs async
    key = ["model", "recipe", "sku", "tier", "engine", "gpus", "interval_s"]
    asyn = frame[frame["strategy"] == "async"].set_index(key)
    checked = 0
    for _, row in mine.iterrows():
        twin = asyn.loc[tuple(row[k] for k in key)]
        k, n, full, frac = (
            row["peer_replicas"],
            row["durable_every"],
            row["full_every"],
            row["diff_fraction_pct"] / 100,
        )
        assert (k, n, full, frac) == (1, 6, 4, 0.25)
        assert row["durable_every_saves"] == n
        assert row["durable_share_pct"] == pytest.approx((1 + (full - 1) * frac) / full * 100)
        assert row["durable_bytes"] == pytest.approx(row["written_bytes"] * (1 + 3 * 0.25) / 4)
        assert row["peer_s"] == pytest.approx(
            k * row["bytes_per_node"] / (row["peer_nic_GBps"] * 1e9)
        )
        assert row["host_memory_needed_bytes"] == pytest.approx(
            row["bytes_per_node"] * (row["buffers"] + k)
        )
        assert row["restore_chain_pct"] == pytest.approx((1 + (full - 1) / 2 * frac) * 100)
        assert row["peer_restore_pct"] == row["node_loss_pct"] == 17.0
        assert row["snapshot_s"] == twin["snapshot_s"] and row["fixed_s"] == twin["fixed_s"]
        assert row["capacity_needed_bytes"] == pytest.approx(
            row["retention"]
            * (1 + 3 * 0.25)
            * row["written_bytes"]
            * (1 + row["headroom_pct"] / 100)
        )
        if (
            math.isfinite(twin["required_write_GBps"]) and twin["required_write_GBps"] > 0
        ):  # N intervals, and less
            assert row["required_write_GBps"] < twin["required_write_GBps"]
        checked += 1
    assert checked == len(mine)


def test_explain_shows_its_traits_and_their_arithmetic(added):
    _, _, steps = added
    inputs = {i["name"]: i for i in steps["inputs"]}
    for trait in ("copies_to_peers", "saves_differences", "durable_every_nth", "stages_snapshot"):
        assert inputs[trait]["basis"] == "definition" and inputs[trait]["display"] == "yes", trait
        assert inputs[trait]["file"] == "the strategy table" and inputs[trait]["source"].startswith(
            f"{NAME}: "
        )
    assert {"peer_replicas", "durable_every", "full_every", "diff_fraction_pct"} <= set(
        inputs
    )  # what it reads
    step = next(s for s in steps["steps"] if s["name"] == "durable_share_pct")
    assert step["formula"].startswith("if(saves_differences,") and step["value"] == pytest.approx(
        43.75
    )


@pytest.mark.skipif(
    SOFFICE is None and not __import__("os").environ.get("CI"),
    reason="LibreOffice (soffice) is not installed: run `make system-deps`",
)
def test_the_workbook_reads_its_traits_and_recalculates_to_the_engine(added, tmp_path):
    """Assumptions holds its traits as cells, its Scenarios rows look them up, and LibreOffice's
    recalculation of every cell equals the engine's frame (its rows among them)."""
    import openpyxl

    result, out, _ = added
    xlsx = out / "ckptreport.xlsx"
    wb = openpyxl.load_workbook(xlsx, read_only=True)
    rows = [
        r
        for r in wb["Assumptions"].iter_rows(values_only=True)
        if r and r[0] == f"strategies.{NAME}"
    ]
    wb.close()
    assert {r[1] for r in rows} >= {
        "copies_to_peers",
        "saves_differences",
        "durable_every_nth",
        "fixed_cost",
    }
    assert all(r[4] == "definition" for r in rows)
    lo = recalculated(xlsx, tmp_path)
    frame = result.frame.astype({c: object for c in result.frame.select_dtypes("category").columns})
    shown = scenario_cells(lo)
    assert NAME in set(shown["strategy"])
    assert assert_cells_equal_engine(shown, frame) > 10_000
    assert formulas_carry_what_it_computes(xlsx, lo, "LibreOffice")["Scenarios"] > 1000


@pytest.mark.skipif(
    shutil.which("pdftotext") is None and not __import__("os").environ.get("CI"),
    reason="poppler (pdftotext) is not installed: run `make system-deps`",
)
def test_the_brief_compares_it_with_the_other_strategies(added):
    """The 405B brief's strategy table has a row for it, with what it needs beyond the tier (the copy to
    its peer), because it is layered (built on async): the brief compares every planned strategy."""
    _, out, _ = added
    text = subprocess.run(
        ["pdftotext", str(out / "briefs" / "llama3-405b.pdf"), "-"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    table = " ".join(
        text[
            text.index("Each strategy at its best on dgx-h100") : text.index("What we train")
        ].split()
    )
    assert f"{NAME} " in table.replace("- ", "").replace(
        "differe ntial", "differential"
    )  # a cell may wrap
    assert re.search(
        r"s a checkpoint to copy to its peer\(s\)", table
    )  # what it needs beyond the tier


def test_a_strategy_built_on_an_undeclared_one_is_refused():
    with pytest.raises(ValueError, match="not declared before it"):
        strategies.declare(
            Strategy("orphan", "built on nothing known", built_on="no-such-strategy")
        )
    with pytest.raises(ValueError, match="declared twice"):
        strategies.declare(Strategy("sync", "again"))
    assert "orphan" not in STRATEGIES
