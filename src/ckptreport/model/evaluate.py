"""The evaluator: the plan's cross product as a pandas frame, every column computed vectorised.

It knows nothing of files or formats. ``scenarios(inputs)`` returns one row per model x recipe x SKU
x tier x strategy x GPU count x interval, with the input columns (``inputs.INPUTS``, each read from
its entity as its declaration says), the derived columns (``model.columns.COLUMNS``) and the basis of each
bandwidth used (``inputs.SOURCES``). ``columns(inputs)`` is the same in numpy alone (text columns as
codes into their categories), for a command that needs a few rows and should not wait for pandas.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

import numpy as np

from ..read.inputs import (
    ENGINES,
    INPUTS,
    MODELS,
    PLAN,
    RECIPES,
    SKUS,
    SOURCES,
    STRATEGY_ENTITY,
    TIERS,
    of,
)
from ..read.provenance import basis
from ..read.strategies import FIXED_COSTS
from ..read.vocab import REPLICATED, SHARDINGS, STAGINGS, TIER_KINDS
from .axes import Dropped
from .columns import COLUMNS
from .plan import combinations, cross_product, dimensions, too_few_replicas

if TYPE_CHECKING:
    import pandas as pd

    from ..read.validated import Inputs

LABELS = {
    "tier_kind": TIER_KINDS,
    "sharding": SHARDINGS,
    "staging_kind": STAGINGS,
    "replicated": REPLICATED,
    "fixed_cost": FIXED_COSTS,
}  # label inputs with a fixed vocabulary


def compute(
    values: dict[str, np.ndarray], wanted: Iterable[str] | None = None
) -> dict[str, np.ndarray]:
    """Evaluate the column definitions over arrays of inputs; returns inputs and columns. ``wanted``:
    only these columns and what they read (a search over many candidates needs a few)."""
    env = dict(values)
    cols = COLUMNS.values() if wanted is None else _needed(tuple(wanted))
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        for col in cols:
            env[col.name] = col.fn(*(env[p] for p in col.params))
    return env


@functools.cache
def _needed(wanted: tuple[str, ...]) -> list:
    """The column definitions ``wanted`` reads, directly or not, in their order of definition."""
    need, todo = set(), [w for w in wanted if w in COLUMNS]
    while todo:
        name = todo.pop()
        if name not in need:
            need.add(name)
            todo.extend(p for p in COLUMNS[name].params if p in COLUMNS)
    return [c for c in COLUMNS.values() if c.name in need]


def entity_values(inputs: Inputs, section: str, name: str) -> dict[str, float | str]:
    """One entity's input values, in the columns' units, as declared."""
    entity = inputs.entity(section, name)
    return {i.name: i.value(entity, name) for i in of(section)}


def _table(inputs: Inputs, section: str, names: list[str]) -> dict[str, np.ndarray]:
    rows = [entity_values(inputs, section, n) for n in names]
    return {
        i.name: np.asarray([r[i.name] for r in rows], dtype=object if i.unit == "label" else float)
        for i in of(section)
    }


def _label_array(values: np.ndarray) -> np.ndarray:
    return values.astype(str)


def _recipe_codes(inputs: Inputs, dims, idx) -> tuple[np.ndarray, list[str]]:
    if dims["recipe"] != [None]:
        return idx["recipe"], list(dims["recipe"])
    names = sorted({inputs.models[m].recipe for m in dims["model"]})
    per_model = np.array([names.index(inputs.models[m].recipe) for m in dims["model"]])
    return per_model[idx["model"]], names


def _sources(inputs: Inputs, dims) -> dict[str, list[str]]:
    """Per SKU x tier pair (sku-major), the basis of each hop's figure: ``inputs.SOURCES``."""
    out: dict[str, list[str]] = {name: [] for name in SOURCES}
    for sku in dims["sku"]:
        for tier in dims["tier"]:
            names = {SKUS: sku, TIERS: tier}
            local = inputs.tiers[tier].kind == "local_nvme"
            got = {}
            for name, src in SOURCES.items():
                bases = {basis(inputs, INPUTS[i], names) for i in src.inputs} - {None}
                got[name] = "+".join(sorted(bases)) or "none"
            if local and got["tier_source"] == "none":  # the node's own drives, as the SKU says
                got["tier_source"] = got["nvme_source"]
            if local:  # a local tier crosses no NIC
                got["nic_source"] = "none"
            for name in SOURCES:
                out[name].append(got[name])
    return out


Labels = tuple  # (codes, categories): a text column without pandas


def columns(
    inputs: Inputs, start: int = 0, stop: int | None = None
) -> tuple[dict[str, np.ndarray | Labels], list[Dropped]]:
    """Every column of the scenario frame as numpy (of positions ``start`` to ``stop`` of the full
    product, see ``plan.cross_product``): numbers and booleans as arrays of their final dtype, text as
    (codes, sorted categories)."""
    idx, dims, dropped = cross_product(inputs, start, stop)
    n = len(idx["model"])
    recipe_codes, recipe_names = _recipe_codes(inputs, dims, idx)
    codes = {
        MODELS: idx["model"],
        RECIPES: recipe_codes,
        SKUS: idx["sku"],
        TIERS: idx["tier"],
        ENGINES: idx["engine"],
        STRATEGY_ENTITY: idx["strategy"],
    }
    names = {
        MODELS: dims["model"],
        RECIPES: recipe_names,
        SKUS: dims["sku"],
        TIERS: dims["tier"],
        ENGINES: dims["engine"],
        STRATEGY_ENTITY: dims["strategy"],
    }
    values: dict[str, np.ndarray] = {
        "gpus": np.asarray(dims["gpus"], dtype=float)[idx["gpus"]],
        "interval_s": np.asarray(dims["interval_s"], dtype=float)[idx["interval_s"]],
        "strategy": np.asarray(dims["strategy"])[idx["strategy"]],
    }
    for section in (MODELS, RECIPES, SKUS, TIERS, ENGINES, STRATEGY_ENTITY):
        for k, v in _table(inputs, section, names[section]).items():
            values[k] = v[codes[section]]
    for k, v in entity_values(inputs, PLAN, PLAN).items():
        values[k] = np.full(n, v)
    for k in LABELS:
        values[k] = _label_array(values[k])
    for k, inp in INPUTS.items():
        if inp.unit == "bool":
            values[k] = np.asarray(values[k], dtype=float).astype(bool)
    env = compute(values)

    out: dict[str, np.ndarray | Labels] = {
        "model": (idx["model"], list(dims["model"])),
        "recipe": (recipe_codes, list(recipe_names)),
        "sku": (idx["sku"], list(dims["sku"])),
        "tier": (idx["tier"], list(dims["tier"])),
        "engine": (idx["engine"], list(dims["engine"])),
        "strategy": (idx["strategy"], list(dims["strategy"])),
        "gpus": env["gpus"].astype(np.int64),
    }
    for name, inp in INPUTS.items():
        if name in out:
            continue
        value = env[name]
        if inp.unit == "label":
            value = _labels(value.astype(str), LABELS.get(name))
        elif inp.unit == "bool":
            value = value.astype(bool)
        out[name] = value
    for name, col in COLUMNS.items():
        value = env[name]
        if col.unit == "label":
            value = _labels(value)
        elif col.unit == "count":
            value = _whole(name, value)
        out[name] = value
    pair = idx["sku"] * len(dims["tier"]) + idx["tier"]
    for name, table in _sources(inputs, dims).items():
        out[name] = _take(table, pair)
    return out, dropped


def _whole(name: str, value: np.ndarray) -> np.ndarray:
    """A count column as integers: every count is whole by its definition (rounded where it divides),
    so what the frame, the Parquet and a workbook cell cache is what its formula gives."""
    finite = np.isfinite(value)
    if not np.array_equal(value[finite], np.trunc(value[finite])) or not finite.all():
        raise ValueError(f"count column {name} is not a whole finite number in every row")
    return value.astype(np.int64)


def row_at(cols: dict[str, np.ndarray | Labels], i: int) -> dict[str, object]:
    """Row ``i`` of ``columns`` as Python values (what the frame's row holds)."""
    return {
        name: (c[1][c[0][i]] if isinstance(c, tuple) else c[i].item()) for name, c in cols.items()
    }


def scenarios(inputs: Inputs) -> tuple[pd.DataFrame, list[Dropped]]:
    """The full scenario frame for a validated plan."""
    cols, dropped = columns(inputs)
    return _frame(cols), dropped


def _frame(cols: dict[str, np.ndarray | Labels], first: int = 0) -> pd.DataFrame:
    import pandas as pd

    frame = {
        name: pd.Categorical.from_codes(c[0], c[1]) if isinstance(c, tuple) else c
        for name, c in cols.items()
    }
    index = pd.RangeIndex(first, first + len(cols["gpus"]))
    return pd.DataFrame(
        frame, index=index, copy=False
    )  # no copy: consolidating 140 columns costs more than computing them


Span = tuple[
    int, int, int
]  # (start, stop) of the full product, and the label of its first kept row


def spans(inputs: Inputs, rows: int) -> list[Span]:
    """The plan cut into pieces of about ``rows`` kept rows each (the last may be smaller): each
    a range of the full product and the label its first row has in the whole frame, so that any
    process computing any piece, in any order, labels its rows as the whole frame would. The
    combinations that cannot exist do not depend on the interval (the innermost axis), so a
    piece is a run of whole interval blocks, counted without building the product."""
    dims = dimensions(inputs)
    intervals = len(dims["interval_s"])
    keep, _ = combinations(inputs, dims)  # sku x tier x engine x strategy
    few = too_few_replicas(inputs, dims)  # strategy x model x gpus
    shape = tuple(len(v) for k, v in dims.items() if k != "interval_s")
    blocks = (
        keep[None, None, :, :, :, :, None]
        & ~few.transpose(1, 0, 2)[:, None, None, None, None, :, :]
    )
    blocks = np.broadcast_to(blocks, shape).reshape(-1)
    ends = np.cumsum(blocks, dtype=np.int64) * intervals  # kept rows up to each block's end
    total = int(ends[-1]) if len(ends) else 0
    out, block, first = [], 0, 0
    while first < total:
        stop = int(np.searchsorted(ends, first + rows, side="left")) + 1  # the block reaching it
        stop = min(stop, len(ends))
        out.append((block * intervals, stop * intervals, first))
        block, first = stop, int(ends[stop - 1])
    return out


def chunk(inputs: Inputs, span: Span) -> pd.DataFrame:
    """One piece of the scenario frame (``spans``), labelled as the whole frame labels it."""
    start, stop, first = span
    cols, _ = columns(inputs, start, stop)
    return _frame(cols, first)


def chunks(inputs: Inputs, rows: int) -> Iterator[pd.DataFrame]:
    """The scenario frame in pieces of about ``rows`` rows (the last may be smaller), labelled as the
    whole frame would be: memory stays flat however large the plan."""
    for span in spans(inputs, rows):
        yield chunk(inputs, span)


def curve(row: pd.Series, intervals_s: np.ndarray) -> dict[str, np.ndarray]:
    """Every column of one scenario recomputed at other intervals (the waste curve of a brief)."""
    env = {k: np.full(len(intervals_s), row[k]) for k in INPUTS}
    env["interval_s"] = np.asarray(intervals_s, dtype=float)
    return compute(env)


def at_scale(row: pd.Series, gpus: np.ndarray, strategy: str) -> dict[str, np.ndarray]:
    """Every column of one scenario recomputed at other GPU counts under another strategy (its traits
    from the strategy table): the ETTR-against-GPUs curve of a brief."""
    from ..read.inputs import trait_values

    env = {k: np.full(len(gpus), row[k]) for k in INPUTS}
    env["gpus"] = np.asarray(gpus, dtype=float)
    for k, v in {**trait_values(strategy), "strategy": strategy}.items():
        env[k] = np.full(len(gpus), bool(v) if INPUTS[k].unit == "bool" else v)
    return compute(env)


def _labels(values: np.ndarray, categories=None) -> Labels:
    """Codes into sorted categories for an array of strings, without hashing a million of them."""
    cats = (
        np.unique(values[:: max(1, len(values) // 4096)])
        if categories is None
        else np.asarray(sorted(categories))
    )
    codes = np.searchsorted(cats, values)
    codes = np.minimum(codes, len(cats) - 1)
    if (
        len(values) and (cats[codes] != values).any()
    ):  # a label the sample did not catch: the exact way
        cats, codes = np.unique(values, return_inverse=True)
    return codes.astype(np.int64), [str(c) for c in cats]


def _take(table: list[str], codes: np.ndarray) -> Labels:
    cats = sorted(set(table))
    lookup = np.array([cats.index(v) for v in table])
    return lookup[codes], cats
