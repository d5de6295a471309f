"""Draws and sweep ends stay where validation stays: every uncertain input of a plan with every
strategy given a wide lognormal range (the distribution with unbounded tails), drawn, and each draw
and each sweep end checked against its key's bounds and the limits between keys (shares of one whole,
pp <= layers, peers below the nodes). Before the tails were cut, a lognormal MFU or share drew values
above 100% and the shares added up to more than every failure."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from click.testing import CliRunner

from ckptreport.answer.report import compute
from ckptreport.answer.uncertainty.evaluator import Evaluator
from ckptreport.answer.uncertainty.ranges import BLOCK, block_draws, parameters
from ckptreport.cli import main
from ckptreport.read import units
from ckptreport.read.inputs import INPUTS, PLAN, SHARES, of
from ckptreport.read.load import load
from ckptreport.read.quantity import Kind, bounds_of
from ckptreport.read.schema import FILES
from ckptreport.read.strategies import names

SAMPLES = 8 * BLOCK
SUFFIX = {"bytes": " B", "bandwidth": " B/s", "duration": " s", "flops": " FLOPS", "count": ""}


def _kind(inp) -> str:
    return next(m.key for m in inp.type.__metadata__ if isinstance(m, Kind))


def _text(x: float, kind: str) -> str:
    if kind == "percent":
        return f"{x * 100:.12g}%"
    if kind == "usd":
        return f"${x:.12g}"
    return f"{x:.12g}{SUFFIX[kind]}"


def _inward(x: float, kind: str, lo: float, hi: float) -> str:
    """``x`` as written, nudged inside [lo, hi] where its rounding would step out."""
    for _ in range(8):
        text = _text(x, kind)
        got = units.parse(text, kind)
        if lo <= got <= hi:
            return text
        x = x * (1 - 1e-9) if got > hi else x * (1 + 1e-9)
    raise AssertionError((x, kind, lo, hi))


def _ranged(inp) -> bool:
    b = bounds_of(inp.type)
    return inp.key is not None and b is not None and b.ranged


def _node(doc: dict, key: str):
    """The mapping holding dotted ``key``'s last part, and that part (None where a parent is absent)."""
    *parents, last = key.split(".")
    for p in parents:
        doc = doc.get(p)
        if not isinstance(doc, dict):
            return None, last
    return doc, last


def _widen(models: Path) -> None:
    """Every strategy in the plan; every ranged key an entity or the plan gives, a lognormal from a
    quarter of its value to four times it (cut at the key's bounds); the shares' highs as far as the
    loader lets them go, so that draws of both add up past 100% unless they are held."""
    inputs = load(models)
    for file, sections in FILES.items():
        path = models / file
        doc = yaml.safe_load(path.read_text())
        for section in sections:
            entities = {PLAN: doc} if section == PLAN else doc.get(section) or {}
            for name, raw in entities.items():
                entity = inputs.plan if section == PLAN else inputs.entity(section, name)
                for inp in (i for i in of(section) if _ranged(i)):
                    q = inp.raw(entity)
                    holder, last = _node(raw, inp.key)
                    if q is None or holder is None or last not in holder or not q.value > 0:
                        continue
                    b, kind, v = bounds_of(inp.type), _kind(inp), q.value
                    lo, hi = max(v / 4, b.low), min(v * 4, b.high)
                    if inp.name in {c for g in SHARES for c in g}:
                        group = next(g for g in SHARES if inp.name in g)
                        whole = sum(INPUTS[c].raw(inputs.plan).value for c in group)
                        hi = v + 1 - whole
                    if not lo < v < hi:
                        continue
                    holder[last] = {
                        "value": _inward(v, kind, b.low, b.high),
                        "low": _inward(lo, kind, b.low, v),
                        "high": _inward(hi, kind, v, b.high),
                        "distribution": "lognormal",
                        "basis": "assumption",
                        "source": "test: a wide lognormal",
                    }
        if file == "plan.yaml":
            doc["strategies"] = list(names())
            doc.pop("engines", None)  # every engine: each strategy runs on one that implements it
        path.write_text(yaml.safe_dump(doc, sort_keys=False))


@pytest.fixture(scope="module")
def widened(tmp_path_factory):
    import shutil

    from conftest import shipped_models

    models = tmp_path_factory.mktemp("widened") / "models"
    shutil.copytree(shipped_models(), models)
    _widen(models)
    inputs = load(models)
    report = compute(inputs, needs=frozenset())
    frame = report.frame
    keys = ["strategy", "engine", "model", "sku", "tier", "recipe"]
    rows = frame.loc[
        sorted(set().union(*(frame.groupby(k, observed=True).head(2).index for k in keys)))
    ]
    return inputs, report.params, rows


def _check(env: dict[str, np.ndarray], where: str) -> int:
    """Every numeric input column inside its key's bounds, and the limits between keys; returns how
    many values were checked."""
    checked = 0
    for name, values in env.items():
        inp = INPUTS[name]
        if inp.unit in ("label", "bool") or inp.key is None:
            continue
        lo, hi = inp.bounds
        finite = values[np.isfinite(values) & (values != 0)]
        bad = finite[(finite < lo * (1 - 1e-9)) | (finite > hi * (1 + 1e-9))]
        assert not len(bad), f"{where}: {name} outside [{lo:g}, {hi:g}]: {bad[:5]}"
        checked += len(finite)
    for group in SHARES:
        total = sum(env[c] for c in group)
        assert (total <= 100 * (1 + 1e-12)).all(), f"{where}: {group} add up to {total.max():.6g}%"
    assert (env["pp"] <= env["layers"]).all() or not env["layers"].any(), where
    nodes = np.ceil(env["gpus"] / env["gpus_per_node"])
    peered = env["peers_below_nodes"].astype(bool)
    assert (env["peer_replicas"][peered] < nodes[peered]).all(), where
    return checked


def test_every_draw_of_every_uncertain_input_stays_inside_its_bounds_and_the_limits(widened):
    inputs, params, rows = widened
    assert set(rows["strategy"]) == set(names())  # every strategy's inputs are drawn on its rows
    drawn = {p.input for p in params}
    assert {"mfu_pct", "async_slowdown_pct", "diff_fraction_pct", "node_loss_pct"} <= drawn
    assert {"host_recoverable_pct", "jit_overhead_pct", "writer_scaling_pct"} <= drawn
    assert all(p.distribution == "lognormal" for p in params if p.first.label.endswith("mfu"))
    values = block_draws(params, 1, 0, SAMPLES // BLOCK, SAMPLES)
    env = Evaluator(rows, params).inputs(values)
    assert _check(env, "draws") > 1000
    # the test bites: the tails reach the bounds, where an uncut lognormal steps past them
    mfu = next(j for j, p in enumerate(params) if p.input == "mfu_pct")
    assert values[:, mfu].max() > 90
    share = [j for j, p in enumerate(params) if p.input in SHARES[0]]
    assert (
        values[:, share].sum(axis=1) > 100
    ).any()  # drawn alone they pass 100%, held they do not


def test_every_sweep_end_stays_inside_its_bounds_and_the_limits(widened):
    inputs, params, rows = widened
    base = np.array([p.value for p in params])
    ends = []
    for j, p in enumerate(params):
        for end in (p.low, p.high):
            v = base.copy()
            v[j] = end
            ends.append(v)
    ev = Evaluator(rows, params)
    for k in range(0, len(ends), 64):
        _check(ev.inputs(np.array(ends[k : k + 64])), "sweep ends")


def test_a_widened_scaling_range_stops_at_its_keys_bounds(widened):
    inputs, _, _ = widened
    wide = parameters(inputs, ranks=10**9)  # every scaling term far beyond its largest case
    for p in wide:
        for m in p.members:
            assert m.floor <= m.low <= m.value <= m.high <= m.ceiling, m.label
    assert any(m.widened > 1 for p in wide for m in p.members)


def test_a_shares_high_past_what_the_others_leave_is_refused_at_its_key(models_copy):
    """The issue's case: node_loss up to 40% beside host_recoverable 75% (and durable_every 100)
    flipped the sensitivity to peer memory with a waste of -6.4%; now the plan is refused there."""
    path = models_copy / "plan.yaml"
    text = path.read_text()
    old = "node_loss: {value: 17%, low: 10%, high: 25%"
    assert old in text
    path.write_text(
        text.replace(old, "node_loss: {value: 17%, low: 10%, high: 40%").replace(
            'durable_every: {value: "6"', 'durable_every: {value: "100"'
        )
    )
    line = next(
        i for i, t in enumerate(path.read_text().splitlines(), 1) if t.startswith("node_loss")
    )
    res = CliRunner().invoke(main, ["sensitivity", "--models", str(models_copy), "--json"])
    assert res.exit_code == 2, res.output
    assert f"plan.yaml:{line}:" in res.output and "node_loss" in res.output
    assert "at most 0.25" in res.output
    assert "Traceback" not in res.output


def test_the_shipped_lognormal_diff_fraction_draws_no_difference_above_the_checkpoint(shipped):
    """Shipped: diff_fraction 25%, 5-100%, lognormal; 11.3% of its draws were above 100%."""
    params = parameters(shipped)
    j = next(j for j, p in enumerate(params) if p.input == "diff_fraction_pct")
    draws = block_draws(params, 1, 0, 1000 // BLOCK + 1, 1000)[:, j]
    assert draws.max() <= 100 and draws.min() > 0
    assert math.isclose(np.median(draws), 25, rel_tol=0.15)  # the cut moves the median little


def test_judging_a_chunk_at_a_time_gives_what_judging_all_at_once_gives(small_models, monkeypatch):
    """Memory is bounded by judging chunks of draws x options (``evaluator.CELLS``): the tornado, the
    break-evens, the Monte Carlo band and each option's chance and robust cadence are the same to
    the last bit with chunks of one draw (or one option) as with everything at once, and with chunks
    of 37 cells (1,000 draws: 27 chunks of 37 draws and a last of one). The chance and the robust
    cadence, a compute per chunk and per round, are judged one draw at a time on two options (every
    option is judged apart from the others), and 37 cells at a time on all of them."""
    from ckptreport.answer import decide
    from ckptreport.answer.uncertainty import evaluator, robustness

    report = compute(load(small_models), needs=frozenset())
    rows = robustness.line_rows(report, 0)
    assert len(rows) > 4
    two = rows.iloc[:2]

    def tornado():
        r = robustness.robustness(rows, report.params, samples=96)
        return (
            r.base,
            [(s.param.label, s.low, s.high, s.flips) for s in r.swings],
            [(b.param.label, b.direction, b.value, b.to) for b in r.breaks],
            r.wins,
            r.quantiles,
            r.meets,
        )

    def options(of):
        return (
            decide.chance(of, report.params).tolist(),
            decide.robust_intervals(of, report.params, 80.0).tolist(),
        )

    whole = tornado(), options(rows), options(two)
    monkeypatch.setattr(evaluator, "CELLS", 1)  # one draw, or one option, at a time
    assert (tornado(), options(two)) == (whole[0], whole[2])
    monkeypatch.setattr(evaluator, "CELLS", 37)
    assert (tornado(), options(rows)) == (whole[0], whole[1])


def _robust_judging_all(ev, base, params, c, kept):
    """``decide._robust`` as it was before it judged only the options short of the target: every
    option judged in every round and at the end (the reference the faster one must equal)."""
    from ckptreport.answer import decide

    intervals = base.copy()
    for _ in range(6):
        _, cols = decide._judged(ev, intervals, params, decide.CHECK, kept)
        if cols is None:
            return base
        met = cols["meets_target"].mean(axis=0) >= c - 1e-12
        if met.all():
            break
        feasible = (
            cols["host_memory_ok"] & cols["nvme_ok"] & cols["capacity_ok"] & cols["layout_ok"]
        )
        ratio = np.where(
            feasible,
            cols["overhead_pct"] / (cols["target_overhead_pct"] * decide.WITHIN_TARGET),
            np.inf,
        )
        need = np.quantile(ratio, c, axis=0, method="higher")
        grow = np.where(np.isfinite(need), np.maximum(need, 1.0), 1.0) * 1.0001
        grow = np.where(met, 1.0, grow)
        intervals = np.minimum(np.maximum(base, intervals * grow), decide.GRID_S[-1])
    _, cols = decide._judged(ev, intervals, params, ["meets_target"], kept)
    reached = cols["meets_target"].mean(axis=0) >= c - 1e-12
    return np.where(reached, intervals, base)


def test_judging_only_the_options_short_of_the_target_gives_what_judging_all_gives(widened):
    """A robust cadence's rounds judge again only the options that have not met the target
    (``Evaluator.rows``): on options of every strategy, engine, model, SKU and tier, with every input
    widened, a subset's draws are the whole's columns at its rows to the last bit, and the robust
    cadences equal those of judging every option in every round, at 50%, 80% and 99% confidence
    (some options then need a longer cadence than their cheapest)."""
    from ckptreport.answer import decide
    from ckptreport.answer.uncertainty import robustness

    _, params, rows = widened
    ev = Evaluator(rows, params)
    kept = ev.touching()
    assert kept and len(rows) > 20
    _, whole = robustness.draws(None, params, samples=64, ev=ev)
    rng = np.random.default_rng(7)
    for size in (1, 5, len(rows) // 2):
        at = np.sort(rng.choice(len(rows), size, replace=False))
        _, part = robustness.draws(None, params, samples=64, ev=ev.rows(at), kept=kept)
        assert set(part) == set(whole)
        for name, values in whole.items():
            want = values[:, at]
            assert np.array_equal(part[name], want, equal_nan=want.dtype.kind == "f"), (size, name)
    base = decide.best_intervals(rows)
    moved = 0
    for confidence in (0.5, 0.8, 0.99):
        got = decide._robust(ev, base, params, confidence, kept)
        assert np.array_equal(got, _robust_judging_all(ev, base, params, confidence, kept))
        moved += int((got != base).sum())
    assert moved > 0  # some options needed a longer cadence: the rounds ran
