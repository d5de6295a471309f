"""engine.py: the cross product as columns, in numpy alone (explain, validate) and as a pandas frame
(the build), whole or in chunks, and one scenario recomputed at other intervals."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from ckptreport.model import evaluate as engine
from ckptreport.model.plan import plan_rows
from ckptreport.read.load import load


@pytest.fixture(scope="module")
def small(tmp_path_factory):
    import shutil

    from ckptreport.base.paths import shipped_models

    from conftest import SMALL_PLAN

    root = tmp_path_factory.mktemp("engine") / "models"
    shutil.copytree(shipped_models(), root)
    (root / "plan.yaml").write_text(SMALL_PLAN)
    return load(root)


def _same(a, b) -> bool:
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    return a == b


def test_the_numpy_columns_are_the_frame(small):
    """columns() (numpy, text as codes into categories) holds row for row what scenarios() holds."""
    frame, _ = engine.scenarios(small)
    cols, _ = engine.columns(small)
    assert len(frame) == plan_rows(small)[0] == len(cols["gpus"])
    for i in (0, len(frame) // 2, len(frame) - 1):
        row = engine.row_at(cols, i)
        assert set(row) == set(frame.columns)
        assert all(
            _same(
                row[k],
                frame.iloc[i][k].item() if hasattr(frame.iloc[i][k], "item") else frame.iloc[i][k],
            )
            for k in row
        ), i


def test_chunks_make_up_the_frame(small):
    """The frame in pieces of about 100 rows: labelled as the whole frame, nothing lost or doubled."""
    frame, _ = engine.scenarios(small)
    pieces = list(engine.chunks(small, 100))
    assert len(pieces) > 3
    whole = pd.concat(
        [
            p.astype({c: object for c in p.columns if isinstance(p[c].dtype, pd.CategoricalDtype)})
            for p in pieces
        ]
    )
    assert list(whole.index) == list(frame.index)
    for c in ("model", "sku", "tier", "strategy"):
        assert list(whole[c]) == list(frame[c].astype(object)), c
    for c in ("ckpt_bytes", "stall_s", "total_usd"):
        np.testing.assert_array_equal(whole[c].to_numpy(float), frame[c].to_numpy(float))


def test_a_scenario_recomputed_at_its_own_interval_is_itself(small):
    frame, _ = engine.scenarios(small)
    row = frame[frame["total_usd"].notna()].iloc[7]  # a priced option
    again = engine.curve(row, np.array([row["interval_s"], 2 * row["interval_s"]]))
    for c in ("stall_s", "overhead_pct", "waste_pct", "total_usd"):
        assert again[c][0] == pytest.approx(row[c], rel=1e-12), c
    assert again["overhead_pct"][1] == pytest.approx(row["overhead_pct"] / 2, rel=1e-9)


def test_labels_are_codes_into_sorted_categories_even_beyond_the_sample():
    values = np.array(["b"] * 10_000 + ["a"] + ["c"] * 10_000)  # 'a' falls between the sampled rows
    codes, cats = engine._labels(values)
    assert cats == ["a", "b", "c"]
    assert [cats[k] for k in codes[[0, 10_000, 20_000]]] == ["b", "a", "c"]


def test_every_count_column_is_whole_so_the_frame_holds_what_its_formula_gives(shipped):
    """A count column (replicas, nodes, stage parameters, requests, prefixes) is whole by its definition:
    the frame, the Parquet and a workbook's cached value hold exactly what the formula computes. BLOOM's
    TP4 x PP12 on 1,024 GPUs is 21 whole replicas (1,008 GPUs train, 16 stand idle), not 21.33 computed
    with and 21 stored."""
    from ckptreport.model.columns import COLUMNS
    from ckptreport.model.expr import Var, evaluate

    frame, _ = engine.scenarios(shipped)
    counts = [n for n, c in COLUMNS.items() if c.unit == "count"]
    rows = frame.sample(400, random_state=1)
    for name in counts:
        tree = COLUMNS[name].fn(*(Var(p) for p in COLUMNS[name].params))
        for _, row in rows.iterrows():
            env = {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
            got = evaluate(tree, env)  # the formula, on the row's own inputs and columns
            assert got == row[name] and float(got).is_integer(), (name, got, row[name])
    bloom = frame[(frame["model"] == "bloom-176b") & (frame["gpus"] == 1024)].iloc[0]
    assert (bloom["dp_ranks"], bloom["training_gpus"], bloom["idle_gpus"]) == (21, 1008, 16)
    with pytest.raises(ValueError, match="count column"):
        engine._whole("dp_ranks", np.array([21.333]))
