"""rule.py: the one rule that picks an option, for frame rows and for draws alike."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from ckptreport.answer.recommend import ranked
from ckptreport.answer.types import CLOSEST, NEEDS_PRICE, RECOMMENDED, STATUSES, option_label
from ckptreport.answer.uncertainty.evaluator import picks
from ckptreport.model import rule

OPTION = st.fixed_dictionaries(
    {
        "recommendable": st.booleans(),
        "tier_durable": st.booleans(),
        "meets_target": st.booleans(),
        "total_usd": st.sampled_from([1.0, 2.0, 3.0, np.nan]),
        "tier_bought_GBps": st.sampled_from([10.0, 20.0, np.inf]),
        "overhead_pct": st.sampled_from([0.5, 1.0, 5.0, np.inf]),
        "tier": st.sampled_from(["a", "b"]),
    }
)


def by_hand(rows: pd.DataFrame) -> tuple[list, str]:
    """The rule as the README states it, in plain pandas."""
    ok = rows[rows["recommendable"]]
    if len(ok):
        return list(
            ok.sort_values(["total_usd", "tier_bought_GBps", "overhead_pct"], kind="stable").index
        ), "recommended"
    durable = rows[rows["tier_durable"]]
    unpriced = durable[durable["meets_target"]]
    if len(unpriced):
        return list(
            unpriced.sort_values(["tier_bought_GBps", "overhead_pct"], kind="stable").index
        ), "needs a price"
    pool = durable if len(durable) else rows
    return list(
        pool.sort_values(["overhead_pct", "tier_bought_GBps"], kind="stable").index
    ), "closest"


@settings(max_examples=300, deadline=None)
@given(st.lists(OPTION, min_size=1, max_size=7))
def test_the_rule_ranks_as_the_readme_says(options):
    rows = pd.DataFrame(options, index=np.arange(100, 100 + len(options)))
    rows.loc[rows["recommendable"], "total_usd"] = rows.loc[
        rows["recommendable"], "total_usd"
    ].fillna(4.0)
    order, status = ranked(rows)
    assert (list(order), status) == by_hand(rows)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.lists(OPTION, min_size=4, max_size=4), min_size=1, max_size=6))
def test_draws_pick_what_each_draw_alone_would(draws):
    """uncertainty.picks over many draws at once gives, draw by draw, what the frame path gives."""
    frames = []
    for options in draws:
        f = pd.DataFrame(options)
        f.loc[f["recommendable"], "total_usd"] = f.loc[f["recommendable"], "total_usd"].fillna(4.0)
        frames.append(f)
    group = np.array(
        [3, 5, 7, 9]
    )  # the options' positions among the draws' columns; the rest is never read
    cols = {}
    for c in rule.COLUMNS.values():
        wide = np.zeros((len(frames), 10), dtype=frames[0][c].dtype)
        wide[:, group] = np.stack([f[c].to_numpy() for f in frames])
        cols[c] = wide
    (got,) = picks(cols, [group])
    for f, chosen in zip(frames, got):
        order, status = ranked(f)
        assert chosen == (group[order[0]] if status == RECOMMENDED else -1)


def test_statuses_and_the_label():
    rows = pd.DataFrame(
        {
            "recommendable": [False, False],
            "tier_durable": [True, True],
            "meets_target": [False, True],
            "total_usd": [np.nan, np.nan],
            "tier_bought_GBps": [5.0, 50.0],
            "overhead_pct": [3.0, 0.5],
        }
    )
    order, count, status = rule.rank(*rule.of(rows))
    assert STATUSES[int(status)] == NEEDS_PRICE and count == 1 and order[0] == 1
    rows["meets_target"] = False
    order, count, status = rule.rank(*rule.of(rows))
    assert STATUSES[int(status)] == CLOSEST and count == 2 and list(order) == [1, 0]
    assert option_label("async", "superpod-good") == "async to superpod-good"
