"""Property tests: the engine's physics, the unit parser's round trips, and the agreement of every
column's numeric (numpy) and symbolic (expression-tree) readings.

Rows are drawn as whole valid input rows (every name in ``columns.INPUTS``) and evaluated many at a
time, the way ``engine.scenarios`` evaluates a plan. "Valid" follows the rules the loader and
``plan.cross_product`` enforce: a SKU without local NVMe has 0 NVMe write and capacity and is never
paired with the tiered strategy or a local_nvme tier; a local_nvme tier has no aggregate write (inf)
and is never tiered; any other tier has at least one finite write figure.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from ckptreport import display, units
from ckptreport.columns import COLUMNS
from ckptreport.engine import compute
from ckptreport.expr import Var, evaluate, render
from ckptreport.inputs import INPUTS
from ckptreport.render.workbook.assumptions import CONSTANTS

# When a property fails, hypothesis's pytest plugin imports libcst (hypothesis.extra._patching) to
# suggest a patch, and libcst's import of mypy_extensions.TypedDict warns; with filterwarnings=error
# that warning turns the failure report into a pytest INTERNALERROR. Ignore that one warning only.
pytestmark = pytest.mark.filterwarnings(
    "ignore:mypy_extensions.TypedDict is deprecated:DeprecationWarning")

LABEL_INPUTS = {name for name, c in INPUTS.items() if c.unit == "label"}
HOPS = ("d2h_gpu_GBps", "d2h_node_GBps", "storage_nic_GBps", "tier_write_GBps",
        "tier_node_write_GBps", "nvme_write_GBps", "writer_GBps", "staging_gpu_GBps", "tier_read_GBps",
        "tier_node_read_GBps", "nvme_read_GBps")
TIMES = ("d2h_s", "write_s", "stall_s", "checkpoint_cost_s")
REL = 1e-12  # "never longer", allowing for rounding in the last bits

ROWS = 40  # rows per drawn batch
SETTINGS = settings(max_examples=40, deadline=None)


def _f(lo: float, hi: float) -> st.SearchStrategy[float]:
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


@st.composite
def input_row(draw) -> dict[str, object]:
    """One valid scenario row, in the engine's units (GB/s, s, bytes, pct)."""
    has_nvme = draw(st.booleans())
    tier_kind = draw(st.sampled_from(["parallel_fs", "cloud_fs", "object_store", "local_nvme"]
                                     if has_nvme else ["parallel_fs", "cloud_fs", "object_store"]))
    strategies = ["sync", "async", "tiered"] if has_nvme and tier_kind != "local_nvme" else ["sync", "async"]
    per_tib, capacity = math.nan, math.nan
    if tier_kind == "local_nvme":
        tier_write = math.inf
        tier_node = draw(st.one_of(st.just(math.inf), _f(0.1, 200)))
    elif tier_kind == "cloud_fs" and draw(st.booleans()):  # per TiB: a fixed size, or sized by the plan
        per_tib, capacity = draw(_f(0.1, 1.0)), draw(st.one_of(st.just(math.nan), _f(2**40, 2**50)))
        tier_write = math.inf if math.isnan(capacity) else per_tib * capacity / 2**40
        tier_node = draw(st.one_of(st.just(math.inf), _f(0.1, 1000)))
    else:
        tier_write = draw(st.one_of(st.just(math.inf), _f(0.1, 1e5)))
        tier_node = draw(_f(0.1, 1000)) if math.isinf(tier_write) else \
            draw(st.one_of(st.just(math.inf), _f(0.1, 1000)))
    params = draw(_f(1e6, 2e13))
    layers = float(draw(st.integers(0, 200)))
    hidden = draw(_f(0, 3e4)) if layers else 0.0
    vocab = draw(_f(0, 3e5)) if layers else 0.0
    if 2 * vocab * hidden >= params:  # the embeddings are part of the parameters
        vocab = hidden = 0.0
    sync_fixed = draw(_f(0, 60))
    bought = draw(st.booleans())  # bought storage (capex over a life) or rented
    d2h_gpu = draw(_f(1, 1000))
    writer = draw(st.one_of(st.just(math.inf), _f(0.05, 50)))
    # async stalls no more than sync while its staging copy is no slower than a writer (pinned: d2h)
    staging = d2h_gpu if math.isinf(writer) else draw(_f(writer, max(writer, 1000)))
    return {
        "model": "m", "recipe": "r", "sku": "s", "tier": "t",
        "strategy": draw(st.sampled_from(strategies)),
        "gpus": float(draw(st.integers(1, 200_000))),
        "interval_s": draw(_f(60, 1e6)),
        "params": params,
        "active_params": params * draw(_f(0.01, 1)),
        "tokens": draw(_f(1e9, 1e14)),
        "weights_bytes_per_param": draw(st.sampled_from([0.5, 1.0, 2.0, 4.0])),
        "master_bytes_per_param": draw(st.sampled_from([0.0, 2.0, 4.0])),
        "optimizer_bytes_per_param": draw(st.sampled_from([0.0, 1.0, 4.0, 8.0, 16.0])),
        "grads_bytes_per_param": draw(st.sampled_from([0.0, 2.0, 4.0])),
        "gpus_per_node": float(draw(st.integers(1, 72))),
        "peak_TFLOPS": draw(_f(10, 5000)),
        "d2h_gpu_GBps": d2h_gpu,
        "staging_gpu_GBps": staging,
        "d2h_node_GBps": draw(_f(1, 5000)),
        "host_memory_bytes": draw(_f(1e10, 1e13)),
        "storage_nic_GBps": draw(_f(0.1, 1000)),
        "nvme_write_GBps": draw(_f(0.5, 200)) if has_nvme else 0.0,
        "nvme_capacity_bytes": draw(_f(1e11, 1e14)) if has_nvme else 0.0,
        "usd_per_gpu_hour": draw(_f(0.1, 20)),
        "gpu_mtbf_s": draw(_f(1e5, 1e9)),
        "tier_kind": tier_kind,
        "tier_write_GBps": tier_write,
        "tier_node_write_GBps": tier_node,
        "tier_write_per_TiB_GBps": per_tib,
        "tier_capacity_bytes": draw(st.one_of(st.just(math.nan), _f(1e12, 1e15))) if math.isnan(per_tib) else capacity,
        "usd_per_tb_month": draw(st.one_of(st.just(math.nan), _f(0, 1000))),  # nan: unpriced tier
        "target_overhead_pct": draw(_f(0.01, 100)),
        "mfu_pct": draw(_f(1, 100)),
        "restart_s": draw(_f(0, 1e4)),
        "retention": float(draw(st.integers(1, 10))),
        "buffers": float(draw(st.integers(1, 4))),
        "sharding": draw(st.sampled_from(["fully_sharded", "optimizer_sharded", "replica0"])),
        "tp": float(draw(st.sampled_from([1, 2, 4, 8]))),
        "pp": float(draw(st.sampled_from([1, 2, 4, 8, 16]))),
        "layers": layers, "hidden": hidden, "vocab": vocab,
        "writer_GBps": writer,
        "writer_scaling_pct": draw(_f(0, 100)),
        "coordination_per_rank_s": draw(st.one_of(st.just(0.0), _f(0, 0.1))),
        "host_recoverable_pct": draw(_f(0, 100)),
        "model_bytes_per_param": draw(st.one_of(st.just(math.nan), _f(0.5, 32))),
        "checkpoint_size_bytes": draw(st.one_of(st.just(math.nan), st.just(math.nan), _f(1e9, 1e14))),
        "consolidated_bytes_per_param": draw(st.sampled_from([0.0, 0.0, 2.0])),
        "tier_read_GBps": draw(st.one_of(st.just(math.nan), _f(0.1, 1e5))),
        "tier_node_read_GBps": draw(st.one_of(st.just(math.nan), _f(0.1, 1000))),
        "nvme_read_GBps": draw(st.one_of(st.just(math.nan), _f(0.5, 200))) if has_nvme else math.nan,
        "sync_fixed_s": sync_fixed,
        "async_fixed_s": draw(_f(0, sync_fixed)),  # a snapshot's set-up never exceeds a full sync's
        "tiered_fixed_s": draw(_f(0, sync_fixed)),
        "async_slowdown_pct": draw(_f(0, 50)),
        "site": "on-prem",
        "tier_durable": tier_kind != "local_nvme" and draw(st.booleans()),
        "tier_family": "f",
        "tier_min_capacity_bytes": draw(st.one_of(st.just(0.0), _f(1e12, 1e14))),
        "usd_per_GBps_month": draw(st.one_of(st.just(0.0), _f(0, 2000))),
        "capex_usd_per_tb": draw(_f(10, 500)) if bought else math.nan,
        "capex_usd_per_GBps": draw(_f(0, 50_000)) if bought else 0.0,
        "life_s": draw(_f(1 * 365.25 * 86400, 10 * 365.25 * 86400)) if bought else math.nan,
        "support_pct": draw(_f(0, 20)),
        "usd_per_1k_puts": draw(_f(0, 0.01)),
        "part_size_bytes": draw(st.one_of(st.just(math.inf), _f(1e6, 1e9))),
        "puts_per_s_per_prefix": draw(st.one_of(st.just(math.inf), _f(100, 1e4))),
        "prefixes": float(draw(st.integers(1, 8))),
        "headroom_pct": draw(_f(0, 50)),
    }


rows_strategy = st.lists(input_row(), min_size=1, max_size=ROWS)


def arrays(rows: list[dict[str, object]]) -> dict[str, np.ndarray]:
    assert set(rows[0]) == set(INPUTS)
    return {name: np.asarray([r[name] for r in rows],
                             dtype=None if name in LABEL_INPUTS else bool if INPUTS[name].unit == "bool" else float)
            for name in INPUTS}


def assert_not_longer(after: np.ndarray, before: np.ndarray, what: str) -> None:
    assert not np.isnan(before).any() and not np.isnan(after).any(), what
    bad = ~(after <= before * (1 + REL))
    assert not bad.any(), f"{what}: {after[bad]} > {before[bad]}"


# ---- the engine's physics -----------------------------------------------------------------------

@SETTINGS
@given(rows=rows_strategy, factor=_f(1, 100))
def test_more_bandwidth_never_lengthens_anything(rows, factor):
    """Raising any one hop's bandwidth (GPU->host per GPU or per node, storage NIC, tier aggregate,
    tier per node, local NVMe) by a factor >= 1 never makes d2h_s, write_s, stall_s or
    checkpoint_cost_s longer, for any strategy and tier kind (inf bandwidths included), with the
    storage bought held fixed (a per-TiB tier sized by the plan buys less when a faster hop leaves
    the write more time: that is the sizing working, see test_a_sized_tier_buys_what_the_target_needs)."""
    values = arrays(rows)
    before = compute(values)
    values["tier_capacity_bytes"] = np.where(before["sized_per_TiB"], before["provisioned_bytes"],
                                             values["tier_capacity_bytes"])
    before = compute(values)
    for hop in HOPS:
        after = compute({**values, hop: values[hop] * factor})
        for col in TIMES:
            assert_not_longer(after[col], before[col], f"{col} after {hop} x {factor}")


@SETTINGS
@given(rows=rows_strategy)
def test_a_sized_tier_buys_what_the_target_needs(rows):
    """A per-TiB tier sized by the plan holds the retained checkpoints and, when the target is
    reachable, gives at least the bandwidth the target requires (unless a request ceiling caps it)."""
    env = compute(arrays(rows))
    sized = env["sized_per_TiB"]
    assert (env["provisioned_bytes"][sized] >= env["capacity_needed_bytes"][sized] * (1 - REL)).all()
    reachable = sized & np.isfinite(env["required_write_GBps"]) & ~np.isfinite(env["request_ceiling_GBps"])
    assert (env["tier_bought_GBps"][reachable] >= env["required_write_GBps"][reachable] * (1 - REL)).all()


@SETTINGS
@given(rows=rows_strategy)
def test_async_never_stalls_more_than_sync_and_tiered_never_costs_more(rows):
    """For the same row and the same storage, async stall_s <= sync stall_s (the persist moves off the
    critical path and only its overrun of the interval is waited for), and tiered checkpoint_cost_s <=
    sync's (rows that may be tiered: the SKU has NVMe and the tier is remote). A per-TiB tier sized by
    the plan buys less bandwidth for async (enough to drain within the interval), so it is compared
    at the size sync buys. Async stages at its own rate (drawn no slower than a writer): the claim holds
    while the snapshot fits in the interval; a snapshot longer than the interval that also waits for
    an overrunning persist can stall longer than sync (a degenerate plan the target rejects anyway)."""
    values = arrays(rows)
    n = len(rows)
    sync = compute({**values, "strategy": np.full(n, "sync")})
    fixed = np.where(sync["sized_per_TiB"], sync["provisioned_bytes"], values["tier_capacity_bytes"])
    asyn = compute({**values, "strategy": np.full(n, "async"), "tier_capacity_bytes": fixed})
    fits = asyn["snapshot_s"] <= values["interval_s"]
    assert_not_longer(asyn["stall_s"][fits], sync["stall_s"][fits], "async stall_s vs sync")
    tierable = (values["nvme_write_GBps"] > 0) & (values["tier_kind"] != "local_nvme")
    tiered = compute({**values, "strategy": np.full(n, "tiered")})
    assert_not_longer(tiered["checkpoint_cost_s"][tierable], sync["checkpoint_cost_s"][tierable],
                      "tiered checkpoint_cost_s vs sync")


@SETTINGS
@given(rows=rows_strategy, factor=_f(1, 1000))
def test_bigger_model_never_has_a_smaller_checkpoint(rows, factor):
    """More parameters (same recipe) never give a smaller ckpt_bytes (a checkpoint_size given directly
    stays what it is, to the last bit's rounding)."""
    values = arrays(rows)
    small = compute(values)["ckpt_bytes"]
    big = compute({**values, "params": values["params"] * factor})["ckpt_bytes"]
    assert (big >= small * (1 - REL)).all()


# ---- one definition, two readings ---------------------------------------------------------------

TREES = {name: col.fn(*(Var(p) for p in col.params)) for name, col in COLUMNS.items()}


def _scalar(v):
    if isinstance(v, np.str_ | str):
        return str(v)
    if isinstance(v, np.bool_ | bool):
        return bool(v)
    return float(v)


@settings(max_examples=25, deadline=None)
@given(rows=rows_strategy)
def test_symbolic_form_of_every_column_equals_its_numeric_form(rows):
    """For every column in COLUMNS, the expression tree built from its definition (what explain
    and the workbook print), evaluated with one row's values, equals what numpy computed for that
    row (rel 1e-9; labels and bools equal; a non-finite numpy value must be non-finite there too)."""
    env = compute(arrays(rows))
    for i in range(len(rows)):
        row = {k: _scalar(v[i]) for k, v in env.items()}
        for name, col in COLUMNS.items():
            expected, got = row[name], evaluate(TREES[name], row)
            where = f"{name} row {i}: tree {got!r}, numpy {expected!r}"
            if col.unit == "label":
                assert got == expected, where
            elif col.unit == "bool":
                assert bool(got) == expected, where
            elif math.isfinite(expected):
                assert math.isclose(float(got), expected, rel_tol=1e-9), where
            else:
                assert not math.isfinite(float(got)), where


def _excel_to_python(formula: str) -> str:
    """The printed Excel formula as a Python expression (functions become the helpers below)."""
    out = re.sub(r"(?<![<>])=(?!=)", "==", formula)
    out = out.replace("<>", "!=").replace("^", "**")
    return re.sub(r"\b(MIN|MAX|SQRT|IF|ROUNDUP|ROUNDDOWN|AND|OR|ISNA|ISNUMBER|NOT)\(", lambda m: f"_{m.group(1)}(", out)


_XL = {"_MIN": min, "_MAX": max, "_SQRT": math.sqrt, "_IF": lambda c, a, b: a if c else b,
       "_ROUNDUP": lambda x, _: math.ceil(x) if math.isfinite(x) else x,  # IF is lazy in a spreadsheet, not here
       "_ROUNDDOWN": lambda x, _: math.floor(x) if math.isfinite(x) else x,
       "_AND": lambda *x: all(x), "_OR": lambda *x: any(x),
       "_ISNA": lambda x: math.isnan(x), "_ISNUMBER": lambda x: not math.isnan(x), "_NOT": lambda x: not x,
       **{c.name: float(c) for c in CONSTANTS}}  # the workbook's defined names for its constants


@settings(max_examples=50, deadline=None)
@given(rows=rows_strategy)
def test_printed_excel_formula_computes_the_same_as_numpy(rows):
    """The formula text the workbook writes (operator precedence, brackets, constants) evaluates, as
    text, to the numpy value: a printing bug (a/(b*c) printed as a/b*c) cannot hide behind the tree.
    In a workbook a percentage is a fraction: every _pct value goes in and comes out divided by 100."""
    env = compute(arrays(rows))
    for i in range(len(rows)):
        row = {k: _scalar(v[i]) / 100 if display.unit_of(k) == "pct" else _scalar(v[i]) for k, v in env.items()}
        for name, col in COLUMNS.items():
            text = render(TREES[name], lambda n: f"v[{n!r}]")
            with np.errstate(all="ignore"):
                got = eval(_excel_to_python(text), {**_XL, "v": {k: (np.float64(x) if isinstance(x, float) else x)
                                                               for k, x in row.items()}})
            expected = row[name]
            where = f"{name} row {i}: {text} -> {got!r}, numpy {expected!r}"
            tie = name in ("meets_target", "recommendable") and math.isclose(
                row["overhead_pct"], row["target_overhead_pct"], rel_tol=1e-12)  # a tier bought to the target
            if col.unit in ("label", "bool") and not tie:
                assert got == expected, where
            elif math.isfinite(expected):
                assert math.isclose(float(got), expected, rel_tol=1e-9, abs_tol=1e-300), where  # /100 may underflow a subnormal
            else:
                assert float(got) >= 1e280 or not math.isfinite(float(got)), where


# ---- units --------------------------------------------------------------------------------------

NUMERIC_KINDS = [k for k in units.KINDS if k != "dtype"]


@pytest.mark.parametrize("kind", NUMERIC_KINDS)
@settings(max_examples=200, deadline=None)
@given(v=st.floats(min_value=0, exclude_min=True, allow_nan=False, allow_infinity=False))
def test_fmt_exact_parses_back_to_the_same_float(kind, v):
    """fmt_exact's promise: parse(fmt_exact(v, kind), kind) == v exactly, for every finite positive
    float and every numeric kind (percent: to rel 1e-12, its text is v x 100, so below 1e300 where
    v x 100 is still a float)."""
    assume(kind != "percent" or v < 1e300)
    back = units.parse(units.fmt_exact(v, kind), kind)
    if kind == "percent":
        assert math.isclose(back, v, rel_tol=1e-12)
    else:
        assert back == v


@pytest.mark.parametrize("kind", ["bytes", "bandwidth", "duration", "flops", "count"])
@settings(max_examples=100, deadline=None)
@given(v=st.floats(min_value=0, max_value=1e300, exclude_min=True))
def test_fmt_parses_back_within_three_significant_digits(kind, v):
    """What fmt prints for a planner (3 significant digits, stepped units) parses back to within
    0.5% of the value. (Capped at 1e300: near the largest float, rounding up to 3 digits overflows by
    construction.)"""
    back = units.parse(units.fmt(v, kind), kind)
    assert abs(back - v) <= 0.005 * v


@pytest.mark.parametrize("text, kind, value", [
    ("1 GiB", "bytes", 2**30),
    ("1 GB", "bytes", 1e9),
    ("400 Gb/s", "bandwidth", 50e9),
    ("2 x 400 Gb/s", "bandwidth", 100e9),
])
def test_decimal_and_binary_prefixes(text, kind, value):
    """GB is 1e9 bytes, GiB 2**30, Gb a gigabit (1/8 GB), and 'N x' multiplies a bandwidth."""
    assert units.parse(text, kind) == value


FAST = sorted(units._FAST.items())


@pytest.mark.parametrize("unit, kind_factor", FAST, ids=[u for u, _ in FAST])
@settings(max_examples=25, deadline=None)
@given(number=st.one_of(st.floats(min_value=1e-6, max_value=1e12).map(repr), st.integers(0, 10**9).map(str),
                        st.sampled_from(["1.5", ".5", "3e2", "1E-3", "405.85", "0.1", "+7"])))
def test_common_units_read_without_pint_as_pint_reads_them(unit, kind_factor, number):
    """The spellings read without pint (so that commands start at once) give exactly pint's value,
    with and without a space; the other kinds' units still go to pint and its messages."""
    kind, _ = kind_factor
    for text in (f"{number} {unit}", f"{number}{unit}"):
        assert units.parse(text, kind) == units._parse_with_pint(text, kind), text
    other = next(k for k in ("bytes", "duration") if k != kind)
    with pytest.raises(units.UnitError):
        units.parse(f"{number} {unit}", other)


def test_the_common_units_do_not_import_pint():
    import subprocess
    import sys

    code = ("import sys, ckptreport.units as u; u.parse('400 Gb/s', 'bandwidth'); u.parse('2 TiB', 'bytes'); "
            "u.parse('30 min', 'duration'); u.parse('989 TFLOPS', 'flops'); print('pint' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
