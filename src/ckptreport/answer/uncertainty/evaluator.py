"""Rows of the scenario frame re-evaluated with the uncertain figures set to other values, by the same
column definitions as the frame (``evaluate.compute``), and the option the one rule picks in each draw."""

from __future__ import annotations

import copy
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ...model import rule
from ...model.evaluate import compute
from ...read.inputs import ENTITY_COLUMN, INPUTS, PLAN, SHARES
from ...read.strategies import read_only_by
from ..types import Param
from .ranges import Terms, follow_all, follow_terms

METRICS = [
    "overhead_pct",
    "stall_s",
    "waste_pct",
    "total_usd_month",
    "total_usd",
]  # what a draw reports


class Evaluator:
    """Rows of the scenario frame (``rows``: their input columns) re-evaluated with the uncertain figures
    set to other values: ``run(values)`` with ``values`` of shape (draws, params) in each param's
    unit gives every column, shape (draws, rows). A param's other members follow its first
    (``follow``); the inputs derived from a member move in proportion to it."""

    def __init__(self, rows: pd.DataFrame, params: list[Param]):
        self.params = params
        self.n = len(rows)
        self.base = {
            k: (
                _text(rows[k])
                if INPUTS[k].unit == "label"
                else rows[k].to_numpy(bool if INPUTS[k].unit == "bool" else float)
            )
            for k in INPUTS
        }
        # per param: per member, the rows it applies to (sorted positions; a layered strategy's input,
        # its rows only): positions, not masks, so that thousands of tiers x their rows stay small
        self.member_rows: list[list[np.ndarray]] = []
        text = {}  # an entity column as text, read once
        rows_of: dict[str, dict[str, np.ndarray]] = {}  # an entity column: each name's rows
        only = read_only_by()  # an input only some strategies read moves their rows only
        everything = np.arange(self.n)
        for p in params:
            rows_j = []
            for m in p.members:
                at = everything
                if m.section != PLAN:
                    column = ENTITY_COLUMN[m.section]
                    if column not in rows_of:
                        text[column] = _text(rows[column])
                        rows_of[column] = _positions(text[column])
                    at = rows_of[column].get(m.name, everything[:0])
                if m.input in only:
                    if "strategy" not in text:
                        text["strategy"] = _text(rows["strategy"])
                    at = at[np.isin(text["strategy"][at], only[m.input])]
                rows_j.append(at)
            self.member_rows.append(rows_j)
        self.runs_cache: dict[int, list[_Run]] | None = None  # per param, its runs (``_runs``)
        # (draws, base tiled, the columns a param writes)
        self.tiles_cache: tuple[int, dict[str, np.ndarray], set[str]] | None = None
        # a base column repeated (draws, tile) by column: shared by reference with the evaluators
        # ``moved`` makes of this one (an interval search moves a few columns each round), except
        # the columns they move (``own``)
        self.shared_tiles: dict[str, tuple[int, np.ndarray]] = {}
        self.own: frozenset[str] = frozenset()
        # the columns the params set in the rows this evaluator was cut from (``rows``): a share of
        # one whole counts as drawn as it does there, so a row's figures are the same cut or whole
        self.also_moved: frozenset[str] = frozenset()

    def only(self, kept: list[int]) -> Evaluator:
        """The same rows with only the params at positions ``kept``."""
        out = copy.copy(self)
        out.params = [self.params[j] for j in kept]
        out.member_rows = [self.member_rows[j] for j in kept]
        out.runs_cache = out.tiles_cache = None
        return out

    def moved(self, inputs: dict[str, np.ndarray]) -> Evaluator:
        """The same rows and params with some base inputs set to other values (one per row)."""
        out = copy.copy(self)
        out.base = {**self.base, **inputs}
        out.own = self.own | set(inputs)
        out.tiles_cache = None
        return out

    def touches(self, j: int) -> bool:
        return any(len(m) for m in self.member_rows[j])

    def touching(self) -> list[int]:
        """The positions of the params that move any of the rows."""
        return [j for j in range(len(self.params)) if self.touches(j)]

    def part(self, rows: slice) -> Evaluator:
        """The same params over a run of the rows (one of ``parts``): an option's figures do not
        depend on the other rows', so options can be judged a part at a time."""
        a, b = rows.start, rows.stop
        return self._cut(
            slice(a, b), [[_within(m, a, b) - a for m in ms] for ms in self.member_rows]
        )

    def rows(self, at: np.ndarray) -> Evaluator:
        """The same params over some of the rows (``at``: sorted positions), as ``part`` over a run
        of them: an interval search judges again only the options that have not met its target."""
        out = self._cut(at, [[_among(m, at) for m in ms] for ms in self.member_rows])
        out.also_moved = self.also_moved | self._written()
        return out

    def _cut(self, at: slice | np.ndarray, member_rows: list[list[np.ndarray]]) -> Evaluator:
        """The same params over the rows ``at`` (a run, or sorted positions), each member's rows
        among them ``member_rows``: nothing tiled or run for the whole is kept."""
        out = copy.copy(self)
        out.base = {k: v[at] for k, v in self.base.items()}
        out.member_rows = member_rows
        out.n = len(np.arange(self.n)[at])
        out.runs_cache = out.tiles_cache = None
        out.shared_tiles, out.own = {}, frozenset()
        return out

    def parts(self, draws: int) -> list[slice]:
        """The rows cut into runs of at most ``CELLS`` draws x rows (one row at least)."""
        step = max(1, CELLS // max(draws, 1))
        return [slice(a, min(a + step, self.n)) for a in range(0, self.n, step)]

    def chunks(self, values: np.ndarray, columns: list[str] | None = None):
        """``run`` a chunk of the draws at a time, at most ``CELLS`` draws x rows (one draw at least):
        yields each chunk's columns, in order. What a caller keeps of each is what it holds."""
        step = max(1, CELLS // max(self.n, 1))
        for a in range(0, values.shape[0], step):
            yield self._run(values[a : a + step], columns)

    def run(self, values: np.ndarray, columns: list[str] | None = None) -> dict[str, np.ndarray]:
        """Every column (or ``columns``) at ``values``, shape (draws, rows), evaluated a chunk of the
        draws at a time: the inputs of at most ``CELLS`` draws x rows are in memory at once."""
        if values.shape[0] * self.n <= CELLS:
            return self._run(values, columns)
        parts = list(self.chunks(values, columns))
        return {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}

    def _run(self, values: np.ndarray, columns: list[str] | None) -> dict[str, np.ndarray]:
        draws = values.shape[0]
        out = compute(self.inputs(values), columns)
        keep = columns or list(out)
        return {k: np.asarray(out[k]).reshape(draws, self.n) for k in keep}

    def inputs(self, values: np.ndarray) -> dict[str, np.ndarray]:
        """The input columns ``run`` evaluates at ``values``, each of shape (draws x rows,): the base
        with every member set (``follow``), its dependents in proportion, and the shares of one whole
        (``SHARES``) held to 100% (``_within_shares``)."""
        draws = values.shape[0]
        env = self._tiled(draws)
        moved: set[str] = set(self.also_moved)
        for j, p in enumerate(self.params):
            for run in self._runs(j):
                y = follow_all(p, run.members, values[:, j], run.terms)  # (draws, members)
                value = run.terms.value
                with np.errstate(divide="ignore", invalid="ignore"):
                    scale = np.where(value != 0, y / value, 1.0)  # a zero: its dependents stay 0
                for column, bases in run.columns:
                    at = y if bases is None else bases * scale
                    env[column].reshape(draws, self.n)[:, run.rows] = at[:, run.which]
                    moved.add(column)
        for group in SHARES:
            _within_shares(env, group, moved)
        return env

    def _tiled(self, draws: int) -> dict[str, np.ndarray]:
        """The base inputs repeated ``draws`` times: the columns no param sets shared (read-only)
        between calls of the same number of draws (a Monte Carlo's every chunk), the ones a param
        sets copied for this call to write into."""
        if self.tiles_cache is None or self.tiles_cache[0] != draws:
            tiled = {k: self._tile(k, v, draws) for k, v in self.base.items()}
            self.tiles_cache = (draws, tiled, self._written())
        _, tiled, written = self.tiles_cache
        return {k: (v.copy() if k in written else v) for k, v in tiled.items()}

    def _written(self) -> set[str]:
        """The columns the params set in some row."""
        return {c for j in range(len(self.params)) for run in self._runs(j) for c, _ in run.columns}

    def _tile(self, column: str, base: np.ndarray, draws: int) -> np.ndarray:
        """``base`` repeated ``draws`` times, read-only: a column this evaluator shares with the one it
        was ``moved`` from is tiled once for both (the last number of draws kept)."""
        if column in self.own:
            tile = np.tile(base, draws)
        else:
            hit = self.shared_tiles.get(column)
            if hit is not None and hit[0] == draws:
                return hit[1]
            tile = np.tile(base, draws)
            self.shared_tiles[column] = (draws, tile)
        tile.setflags(write=False)
        return tile

    def _runs(self, j: int) -> list[_Run]:
        """Param ``j``'s members as runs of consecutive members setting the same columns, each with
        the rows it sets and which member sets each (the last one, as member after member would):
        one array operation a run, whatever the number of tiers or SKUs a driver moves."""
        if self.runs_cache is None:
            self.runs_cache = {}
        if j not in self.runs_cache:
            runs: list[_Run] = []
            for member, rows in zip(self.params[j].members, self.member_rows[j]):
                if not len(rows):
                    continue
                names = (member.input, *(c for c, _ in member.dependents))
                if not runs or runs[-1].names != names:
                    runs.append(_Run(names, [], np.full(self.n, -1)))
                run = runs[-1]
                run.index[rows] = len(run.members)
                run.members.append(member)
            self.runs_cache[j] = [r.done(self.params[j]) for r in runs]
        return self.runs_cache[j]


@dataclass
class _Run:
    """Consecutive members of a param setting the same columns (``names``: its input, then the
    inputs derived from it), the rows each sets (``index``: -1 none) and, once ``done``, the rows
    set, which member sets each, per column its members' bases (None: the input itself), and the
    terms ``follow_all`` reads of its members (formed once: a chunked evaluation reuses them)."""

    names: tuple[str, ...]
    members: list
    index: np.ndarray
    rows: np.ndarray | None = None
    which: np.ndarray | None = None
    columns: list | None = None
    terms: Terms | None = None

    def done(self, param: Param) -> _Run:
        self.rows = np.flatnonzero(self.index >= 0)
        self.which = self.index[self.rows]
        self.columns = [(self.names[0], None)] + [
            (name, np.array([dict(m.dependents)[name] for m in self.members]))
            for name in self.names[1:]
        ]
        self.terms = follow_terms(param, self.members)
        return self


def _within_shares(env: dict[str, np.ndarray], group: tuple[str, ...], moved: set[str]) -> None:
    """Where a group's shares of one whole add up to more than 100%, the ones drawn (``moved``) shrink
    in proportion to what the others (held at their values) leave. The loader holds each one's high
    inside that, so a sweep end (one moved) is never cut; only draws of several at once can be."""
    drawn = [c for c in group if c in moved]
    if not drawn:
        return
    whole = 1.0 / INPUTS[group[0]].scale  # 100%, in the columns' unit
    held = sum((env[c] for c in group if c not in moved), np.zeros_like(env[drawn[0]]))
    total = sum(env[c] for c in drawn)
    with np.errstate(divide="ignore", invalid="ignore"):
        shrink = np.where(total + held > whole, np.clip(whole - held, 0.0, None) / total, 1.0)
    for c in drawn:
        env[c] = env[c] * shrink


def _positions(names: np.ndarray) -> dict[str, np.ndarray]:
    """Each name's rows (sorted positions), found in one pass over the column."""
    codes, uniques = pd.factorize(names)
    order = np.argsort(codes, kind="stable")
    cuts = np.cumsum(np.bincount(codes, minlength=len(uniques)))[:-1]
    return {str(u): rows for u, rows in zip(uniques, np.split(order, cuts))}


def _within(rows: np.ndarray, a: int, b: int) -> np.ndarray:
    """The sorted positions ``rows`` that lie in [a, b)."""
    lo, hi = np.searchsorted(rows, [a, b])
    return rows[lo:hi]


def _among(rows: np.ndarray, at: np.ndarray) -> np.ndarray:
    """Where in ``at`` (sorted positions) the sorted positions ``rows`` that it holds lie."""
    where = np.searchsorted(at, rows)
    held = where < len(at)
    held[held] = at[where[held]] == rows[held]
    return where[held]


def hits(rows: np.ndarray, group: np.ndarray) -> bool:
    """Whether any of the sorted positions ``rows`` lies in ``group`` (consecutive positions)."""
    return len(group) > 0 and len(_within(rows, int(group[0]), int(group[-1]) + 1)) > 0


def _text(column: pd.Series) -> np.ndarray:
    """A column as an array of Python strings (a categorical's codes into its categories: no copy of a
    string per row)."""
    if isinstance(column.dtype, pd.CategoricalDtype):
        cats = np.asarray(column.cat.categories.astype(str), dtype=object)
        return cats[column.cat.codes.to_numpy()]
    return column.astype(str).to_numpy(object)


RANK_COLUMNS = list(rule.COLUMNS.values())  # what the rule reads of each draw
CELLS = 1 << 16  # draws x rows whose inputs are evaluated at once (~200 columns: some 100 MB)


@dataclass
class Judged:
    """What ``judge`` keeps of the draws: per group the position picked in each draw (-1: none), per
    group and kept column its value at that pick (nan where none), per kept column its sum over the
    draws per row, and every kept column at the ``fixed`` rows (draws x fixed)."""

    chosen: list[np.ndarray]
    at: dict[str, list[np.ndarray]]
    sums: dict[str, np.ndarray]
    fixed: dict[str, np.ndarray]


def judge(
    ev: Evaluator,
    values: np.ndarray,
    groups: list[np.ndarray],
    keep: list[str] = (),
    fixed: list[int] = (),
) -> Judged:
    """The rule's pick of every group in every draw (``picks``), evaluated a chunk of draws at a time
    (``Evaluator.chunks``), keeping only what ``Judged`` holds: memory is one chunk's, whatever the
    number of draws or options."""
    chosen: list[list[np.ndarray]] = [[] for _ in groups]
    at: dict[str, list[list[np.ndarray]]] = {k: [[] for _ in groups] for k in keep}
    sums = {k: np.zeros(ev.n) for k in keep}
    held: dict[str, list[np.ndarray]] = {k: [] for k in keep}
    for cols in ev.chunks(values, list(dict.fromkeys([*RANK_COLUMNS, *keep]))):
        for g, pick in enumerate(picks(cols, groups)):
            chosen[g].append(pick)
            for k in keep:
                got = np.asarray(cols[k], dtype=float)[np.arange(len(pick)), np.maximum(pick, 0)]
                at[k][g].append(np.where(pick >= 0, got, np.nan))
        for k in keep:
            column = np.asarray(cols[k], dtype=float)
            sums[k] += column.sum(axis=0)
            held[k].append(column[:, list(fixed)])
    return Judged(
        [np.concatenate(c) for c in chosen],
        {k: [np.concatenate(v) for v in at[k]] for k in keep},
        sums,
        {k: np.concatenate(v) for k, v in held.items()},
    )


def picks(cols: dict[str, np.ndarray], groups: list[np.ndarray]) -> list[np.ndarray]:
    """Per group of row positions (a summary line's options, in the frame's order), the position
    the rule (``rule.rank``) picks in each draw (shape (draws,)), -1 when no option is recommendable
    (the line's status is then 'needs a price' or 'closest')."""
    out = []
    for g in groups:
        order, _, status = rule.rank(*rule.of({c: cols[c][:, g] for c in RANK_COLUMNS}))
        out.append(np.where(status == 0, np.asarray(g)[order[:, 0]], -1))
    return out
