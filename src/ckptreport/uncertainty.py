"""Which assumption moves the answer: one-at-a-time sensitivity (the tornado), the values where the
recommendation flips (break-even), and Monte Carlo over every uncertain input at once.

An input is uncertain when its quantity carries a range (``{value, low, high, distribution}``,
``quantity.Q``). Each uncertain figure of an entity is one ``Param``: it moves the input's column in
every row that uses that entity (every row of a tier, or of the plan), and the inputs derived from it
when they were omitted (a SKU's node copy rate from its per-GPU rate). The rows are re-evaluated by
the same column definitions as the scenario frame (``engine.compute``), and the option a summary
line recommends is picked by the one rule (``rule.rank``), vectorised over draws.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from . import rule
from .engine import compute
from .inputs import ENGINES, ENTITY_COLUMN, INPUTS, PLAN, SCALING, Input, of, replaced, widening
from .load import Inputs
from .provenance import Prov
from .quantity import Q
from .strategies import read_only_by

Z90 = 1.2815515655446004  # the standard normal's 90th percentile: a lognormal's low and high are its P10 and P90
METRICS = ["overhead_pct", "stall_s", "waste_pct", "total_usd_month", "total_usd"]  # what a draw reports
QUANTILES = (0.1, 0.5, 0.9)
@dataclass(frozen=True)
class Member:
    """One figure a Param sets: ``section.name.key``, the input column it sets, its value and range
    there, and the columns derived from it when they were omitted (each with its value: they move in
    proportion to the figure)."""

    section: str
    name: str
    key: str
    input: str
    value: float
    prov: Prov
    dependents: tuple[tuple[str, float], ...] = ()
    low: float = math.nan
    high: float = math.nan
    low_text: str = ""  # the bounds as written in the models file (none once widened)
    high_text: str = ""
    widened: float = 1.0  # the factor its range was widened by (SCALING terms used beyond their data)

    @property
    def label(self) -> str:
        return f"plan.{self.key}" if self.section == PLAN else f"{self.section}.{self.name}.{self.key}"


@dataclass(frozen=True)
class Param:
    """One uncertain figure (or, with a ``driver``, every figure naming it, moved together): its
    value and range are the first member's, in its column's unit. The others follow it to the same
    place in their own ranges (``follow``): all at their lows, all at their values, all at their
    highs, and in between in proportion (lognormal: in proportion of the logarithms)."""

    members: tuple[Member, ...]
    value: float
    low: float
    high: float
    distribution: str
    driver: str | None = None

    @property
    def first(self) -> Member:
        return self.members[0]

    @property
    def input(self) -> str:
        return self.first.input

    @property
    def prov(self) -> Prov:
        return self.first.prov

    @property
    def name(self) -> str:
        """The driver, or the one figure's section.name.key: a column name in samples.parquet."""
        return self.driver or self.first.label

    @property
    def label(self) -> str:
        if self.driver is None:
            return self.first.label
        return f"{self.driver} ({len(self.members)} figures)" if len(self.members) > 1 else self.driver

    def end_text(self, end: str) -> str:
        """The first figure's low or high as the models file writes it (else in the column's unit)."""
        from . import display

        return getattr(self.first, f"{end}_text") or display.of(self.input, getattr(self, end))

    def sample(self, rng: np.random.Generator, n: int) -> np.ndarray:
        """``n`` draws in the column's unit."""
        if self.distribution == "uniform":
            return rng.uniform(self.low, self.high, n)
        if self.distribution == "lognormal":
            sigma = math.log(self.high / self.low) / (2 * Z90)
            return self.value * np.exp(sigma * rng.standard_normal(n))
        return rng.triangular(self.low, self.value, self.high, n)


def parameters(inputs: Inputs, ranks: float | None = None) -> list[Param]:
    """Every uncertain figure of the inputs, in declaration order (plan first, then each entity);
    figures sharing a driver are one Param. Figures of one driver share a distribution and a unit
    (else an InputError names the one that does not). An engine's scaling term used at ``ranks`` (the
    rows' GPUs; omitted: the plan's largest) more than 10x beyond its largest case has its range
    widened (``widening``)."""
    out: list[Param] = []
    drivers: dict[str, int] = {}
    ranks = max(q.value for q in inputs.plan.gpus) if ranks is None else ranks
    for section in (PLAN, *ENTITY_COLUMN):
        names = [PLAN] if section == PLAN else sorted(inputs.section(section))
        for name in names:
            entity = inputs.entity(section, name)
            for inp in of(section):
                raw = inp.raw(entity) if inp.key else None
                if not isinstance(raw, Q) or not raw.uncertain:
                    continue
                k = (widening(ranks, INPUTS["largest_case_ranks"].value(entity, name))
                     if section == ENGINES and inp.name in SCALING else 1.0)
                member = Member(section, name, inp.key, inp.name, raw.value / inp.scale,
                                inputs.prov[(section, name, inp.key)], _dependents(inp, entity, raw),
                                raw.low / inp.scale / k, raw.high / inp.scale * k,
                                "" if k > 1 else raw.low_text or "", "" if k > 1 else raw.high_text or "", k)
                if raw.driver is not None and raw.driver in drivers:
                    k = drivers[raw.driver]
                    _agree(out[k], member, raw)
                    out[k] = dataclasses.replace(out[k], members=(*out[k].members, member))
                    continue
                if raw.driver is not None:
                    drivers[raw.driver] = len(out)
                out.append(Param((member,), member.value, member.low, member.high, raw.distribution, raw.driver))
    return out


def _agree(param: Param, member: Member, raw: Q) -> None:
    """Figures of one driver share a distribution and a unit: they are one uncertain quantity."""
    from .errors import InputError, Problem

    first = param.first
    if raw.distribution != param.distribution or INPUTS[member.input].unit != INPUTS[first.input].unit:
        raise InputError(Problem(member.prov.file, member.prov.line, 0, member.label,
                                 f"driver '{raw.driver}' moves its figures together: they share a distribution and a "
                                 f"unit; {first.label} ({first.prov.file}:{first.prov.line}) is a "
                                 f"{param.distribution} {INPUTS[first.input].unit}, this one a {raw.distribution} "
                                 f"{INPUTS[member.input].unit}"))


def follow(p: Param, m: Member, x: np.ndarray) -> np.ndarray:
    """Where member ``m`` of ``p`` is when ``p``'s first member is at ``x``: the same place in its own
    range (piecewise linear through low, value and high, extended beyond them; uniform: linear from
    low to high; lognormal: the same in logarithms), never below zero."""
    if m is p.first:
        return x
    with np.errstate(divide="ignore", invalid="ignore"):
        if p.distribution == "lognormal":
            out = m.value * (x / p.value) ** (math.log(m.high / m.low) / math.log(p.high / p.low))
        elif p.distribution == "uniform":
            out = m.low + (x - p.low) * (m.high - m.low) / (p.high - p.low)
        else:
            below = m.value + (x - p.value) * ((m.value - m.low) / (p.value - p.low) if p.value > p.low else 0.0)
            above = m.value + (x - p.value) * ((m.high - m.value) / (p.high - p.value) if p.high > p.value else 0.0)
            out = np.where(x < p.value, below, above)
    return np.maximum(out, 0.0)


def _dependents(inp: Input, entity, raw: Q) -> tuple[tuple[str, float], ...]:
    """The inputs of the entity derived from ``inp``'s key when omitted, each with its value; each
    must move in proportion (every derive rule is a product), which is checked here."""
    out = []
    for other in of(inp.entity):
        if other.key and inp.key in other.derived_from and other.derived(entity) is not None:
            base = other.value(entity)
            doubled = other.value(replaced(entity, inp.key, dataclasses.replace(raw, value=2 * raw.value)))
            if not math.isclose(doubled, 2 * base, rel_tol=1e-9):
                raise ValueError(f"{other.name} is not proportional to {inp.key}")
            out.append((other.name, float(base)))
    return tuple(out)


class Evaluator:
    """Rows of the scenario frame (``rows``: their input columns) re-evaluated with the uncertain figures
    set to other values: ``run(values)`` with ``values`` of shape (draws, params) in each param's
    unit gives every column, shape (draws, rows). A param's other members follow its first
    (``follow``); the inputs derived from a member move in proportion to it."""

    def __init__(self, rows: pd.DataFrame, params: list[Param]):
        self.params = params
        self.n = len(rows)
        self.base = {k: (rows[k].astype(str).to_numpy(object) if INPUTS[k].unit == "label" else
                         rows[k].to_numpy(bool if INPUTS[k].unit == "bool" else float)) for k in INPUTS}
        self.masks = []  # per param: per member, the rows it applies to (only a layered strategy's, its inputs)
        strategy = rows["strategy"].astype(str).to_numpy()
        only = read_only_by()  # an input only some strategies read moves their rows only
        for p in params:
            self.masks.append([(np.ones(self.n, bool) if m.section == PLAN else
                                rows[ENTITY_COLUMN[m.section]].astype(str).to_numpy() == m.name)
                               & (np.isin(strategy, only[m.input]) if m.input in only else True)
                               for m in p.members])

    def touches(self, j: int) -> bool:
        return any(m.any() for m in self.masks[j])

    def run(self, values: np.ndarray, columns: list[str] | None = None) -> dict[str, np.ndarray]:
        draws = values.shape[0]
        env = {k: np.tile(v, draws) for k, v in self.base.items()}
        for j, p in enumerate(self.params):
            for member, mask in zip(p.members, self.masks[j]):
                if not mask.any():
                    continue
                y = follow(p, member, values[:, j])
                scale = y / member.value if member.value else np.ones(draws)  # a zero: its dependents stay 0
                for column, base in ((member.input, member.value), *member.dependents):
                    moved = y if column == member.input else base * scale
                    env[column].reshape(draws, self.n)[:, mask] = moved[:, None]
        out = compute(env)
        keep = columns or list(out)
        return {k: np.asarray(out[k]).reshape(draws, self.n) for k in keep}


RANK_COLUMNS = list(rule.COLUMNS.values())  # what the rule reads of each draw


def picks(cols: dict[str, np.ndarray], groups: list[np.ndarray]) -> list[np.ndarray]:
    """Per group of row positions (a summary line's options, in the frame's order), the position
    the rule (``rule.rank``) picks in each draw (shape (draws,)), -1 when no option is recommendable
    (the line's status is then 'needs a price' or 'closest')."""
    out = []
    for g in groups:
        order, _, status = rule.rank(*rule.of({c: cols[c][:, g] for c in RANK_COLUMNS}))
        out.append(np.where(status == 0, np.asarray(g)[order[:, 0]], -1))
    return out


def quantiles(values: np.ndarray) -> dict[str, float | None]:
    """P10/P50/P90 of the finite values (None each when there are none: an unpriced cost)."""
    finite = values[np.isfinite(values)]
    return {f"p{round(q * 100)}": float(np.quantile(finite, q)) if len(finite) else None for q in QUANTILES}


def base_values(params: list[Param]) -> np.ndarray:
    return np.array([[p.value for p in params]])


# ---- the tornado: one input at a time, low and high ------------------------------------------------

@dataclass(frozen=True)
class Swing:
    """What one input, swept from low to high with the others held, does to a summary line."""

    param: Param
    low: dict  # at the input's low: the pick (option label) and its metrics
    high: dict
    flips: bool  # the recommendation differs at low or high from the base's

    def swing(self, metric: str) -> float:
        a, b = self.low.get(metric), self.high.get(metric)
        return abs(b - a) if a is not None and b is not None and math.isfinite(a) and math.isfinite(b) else math.inf


def _option(rows: pd.DataFrame, pos: int) -> str:
    if pos < 0:
        return rule.NONE
    r = rows.iloc[pos]
    return rule.label(r["strategy"], r["tier"], r["engine"])


def _options(rows: pd.DataFrame) -> list[str]:
    """Every row's option label (``_option`` of each), read column by column, not row by row."""
    return [rule.label(s, t, e) for s, t, e in zip(rows["strategy"], rows["tier"], rows["engine"])]


def _at(labels: list[str], cols: dict[str, np.ndarray], draw: int, pos: int) -> dict:
    out = {"option": labels[pos] if pos >= 0 else rule.NONE}
    for m in METRICS:
        out[m] = float(cols[m][draw, pos]) if pos >= 0 else None
    return out


def tornado(rows: pd.DataFrame, params: list[Param], rank_by: str = "total_usd",
            ev: Evaluator | None = None) -> tuple[dict, list[Swing]]:
    """One summary line's options (``rows``, in the frame's order): the base pick, and per uncertain
    input that touches them its swing, largest first by ``rank_by``. ``ev``: the rows' Evaluator,
    when the caller has one."""
    ev = ev or Evaluator(rows, params)
    return _tornadoes(rows, ev, [np.arange(len(rows))], rank_by)[0]


def tornadoes(frame: pd.DataFrame, lines: list[list[int]], params: list[Param],
              rank_by: str = "total_usd") -> list[tuple[dict, list[Swing]]]:
    """``tornado`` of every summary line at once (``lines``: each line's options, frame rows): one
    evaluation of the engine's columns over all their rows, each line decided on its own rows. The
    same answer as one ``tornado`` per line (``line_rows``), at a fraction of the cost."""
    if not lines:
        return []
    rows = frame.loc[[i for line in lines for i in sorted(line)]]
    starts = np.cumsum([0, *(len(line) for line in lines)])
    return _tornadoes(rows, Evaluator(rows, params), [np.arange(a, b) for a, b in zip(starts[:-1], starts[1:])],
                      rank_by)


def _tornadoes(rows: pd.DataFrame, ev: Evaluator, groups: list[np.ndarray],
               rank_by: str) -> list[tuple[dict, list[Swing]]]:
    params = ev.params
    used = [j for j in range(len(params)) if ev.touches(j)]
    base = base_values(params)[0]
    values = [base]
    for j in used:
        for end in ("low", "high"):
            v = base.copy()
            v[j] = getattr(params[j], end)
            values.append(v)
    cols = ev.run(np.array(values), RANK_COLUMNS + METRICS)
    labels = _options(rows)
    out = []
    for g, chosen in zip(groups, picks(cols, groups)):
        at_base = _at(labels, cols, 0, int(chosen[0]))
        swings = []
        for k, j in enumerate(used):
            if not any(mask[g].any() for mask in ev.masks[j]):
                continue  # an input of another line's entities
            lo, hi = 1 + 2 * k, 2 + 2 * k
            low, high = _at(labels, cols, lo, int(chosen[lo])), _at(labels, cols, hi, int(chosen[hi]))
            swings.append(Swing(params[j], low, high, low["option"] != at_base["option"] or
                                high["option"] != at_base["option"]))
        swings.sort(key=lambda s: (-s.swing(rank_by) if math.isfinite(s.swing(rank_by)) else -math.inf,
                                   s.param.label))
        out.append((at_base, swings))
    return out


# ---- one option's sweeps: what the workbook's Sensitivity sheet recomputes ----------------------------

@dataclass(frozen=True)
class Sweep:
    """One uncertain input moved alone to its low and to its high, the others held, for one option
    (a frame row): every column at each end, and the swing of its cost over the run."""

    param: Param
    member: Member  # the figure of the param that the option reads
    columns: dict[str, np.ndarray]  # every column, shape (2,): at the low, at the high
    swing: float  # |total_usd at the high - at the low|


def sweeps(row: pd.DataFrame, params: list[Param]) -> list[Sweep]:
    """The sweep of each uncertain input that ``row`` (one frame row) reads, largest swing first, as
    the terminal and the brief rank a tornado."""
    ev = Evaluator(row, params)
    base = base_values(params)[0]
    out = []
    for j in (j for j in range(len(params)) if ev.touches(j)):
        p = params[j]
        member = next(m for m, mask in zip(p.members, ev.masks[j]) if mask.any())
        values = np.repeat(base[None, :], 2, axis=0)
        values[:, j] = [p.low, p.high]
        cols = {k: v[:, 0] for k, v in ev.run(values).items()}
        low, high = (float(v) for v in cols["total_usd"])  # Python floats: an unpriced end is nan, silently
        out.append(Sweep(p, member, cols, abs(high - low)))
    out.sort(key=lambda b: (-b.swing if math.isfinite(b.swing) else math.inf, b.param.label))
    return out


# ---- break-even: where the recommendation flips -----------------------------------------------------

@dataclass(frozen=True)
class BreakEven:
    """The value of one input at which the line's recommendation changes, nearest the base on one
    side (``direction``: 'above' or 'below'), and the option it changes to."""

    param: Param
    direction: str
    value: float
    to: str


def _span(p: Param) -> tuple[float, float]:
    """How far a break-even is looked for: a factor of 10 either side of the value (or the range, if
    wider), never past what the unit allows (a share stays within 0-100%)."""
    low, high = min(p.low, p.value / 10), max(p.high, p.value * 10)
    if INPUTS[p.input].unit == "pct":
        high = min(high, 100.0)
    return max(low, 0.0), high


def break_even(rows: pd.DataFrame, params: list[Param], grid: int = 48, rounds: int = 6, points: int = 32,
               ev: Evaluator | None = None) -> list[BreakEven]:
    """Per uncertain input touching ``rows``, the nearest value above and below its own at which the
    pick changes, found on the engine itself (each within a factor of 10): a grid of ``grid`` points
    each way, then ``rounds`` of ``points`` evenly between the last value that keeps the pick and the
    first that changes it (the bracket shrinks ``points + 1`` times a round: 6 rounds of 32, 1.3e9,
    as fine as 30 bisection steps). Every input's grid is one evaluation, and so is each round."""
    ev = ev or Evaluator(rows, params)
    used = [j for j in range(len(params)) if ev.touches(j)]
    base = base_values(params)[0]
    everything = np.arange(len(rows))

    def pick_at(js: list[int], xs: np.ndarray) -> np.ndarray:
        values = np.repeat(base[None, :], len(js), axis=0)
        values[np.arange(len(js)), js] = xs
        cols = ev.run(values, RANK_COLUMNS)
        return picks(cols, [everything])[0]

    start = int(pick_at([0], base[:1])[0]) if params else -1
    searches = []  # (param position, direction, the grid's values)
    for j in used:
        p = params[j]
        lo_end, hi_end = _span(p)
        for direction, end in (("above", hi_end), ("below", lo_end)):
            if (direction == "above" and end <= p.value) or (direction == "below" and end >= p.value):
                continue
            if p.value > 0 and end > 0:
                xs = p.value * (end / p.value) ** (np.arange(1, grid + 1) / grid)
            else:
                xs = p.value + (end - p.value) * np.arange(1, grid + 1) / grid
            searches.append((j, direction, xs))
    if not searches:
        return []
    got = pick_at([j for j, _, xs in searches for _ in xs], np.concatenate([xs for *_, xs in searches]))
    brackets = []  # (j, direction, inside, outside, the pick outside)
    for k, (j, direction, xs) in enumerate(searches):
        row = got[k * grid:(k + 1) * grid]
        changed = np.flatnonzero(row != start)
        if len(changed):
            c = int(changed[0])
            brackets.append([j, direction, params[j].value if c == 0 else xs[c - 1], xs[c], int(row[c])])
    fractions = np.arange(1, points + 1) / (points + 1)
    for _ in range(rounds if brackets else 0):
        xs = np.concatenate([b[2] + (b[3] - b[2]) * fractions for b in brackets])
        now = pick_at([b[0] for b in brackets for _ in fractions], xs).reshape(len(brackets), points)
        for b, picked, tried in zip(brackets, now, xs.reshape(len(brackets), points)):
            moved = np.flatnonzero(picked != start)
            c = int(moved[0]) if len(moved) else points  # the first point that changes the pick
            b[2], b[3], b[4] = (tried[c - 1] if c else b[2]), (tried[c] if c < points else b[3]), \
                (int(picked[c]) if c < points else b[4])
    return [BreakEven(params[j], direction, float(outside), _option(rows, to))
            for j, direction, _, outside, to in brackets]


# ---- Monte Carlo: every uncertain input at once ----------------------------------------------------

BLOCK = 32  # samples drawn from one seeded stream per input: a chunk of work is whole blocks


def block_draws(params: list[Param], seed: int, first_block: int, blocks: int, samples: int) -> np.ndarray:
    """The draws of samples ``first_block * BLOCK`` onwards, ``blocks`` blocks of them (fewer at the
    end of ``samples``), shape (k, params). Block b of input j comes from its own stream, seeded by
    (seed, j, b): any partition of the samples into whole blocks, in any order, on any machine,
    draws the same values."""
    start = first_block * BLOCK
    stop = min(samples, (first_block + blocks) * BLOCK)
    out = np.empty((max(stop - start, 0), len(params)))
    for b in range(first_block, first_block + blocks):
        lo, hi = b * BLOCK, min(samples, (b + 1) * BLOCK)
        if lo >= hi:
            break
        for j, p in enumerate(params):
            rng = np.random.default_rng(np.random.SeedSequence(seed, spawn_key=(j, b)))
            out[lo - start:hi - start, j] = p.sample(rng, BLOCK)[:hi - lo]
    return out


# ---- per summary line: what the terminal, the brief and the manifest show --------------------------

@dataclass(frozen=True)
class Sensitivity:
    """One summary line's sensitivity: its options, the base pick, the tornado and the break-evens."""

    line: dict  # model, sku, recipe, gpus, interval_s
    base: dict
    swings: list[Swing]
    breaks: list[BreakEven]


def line_rows(report, line: int) -> pd.DataFrame:
    """The options of summary line ``line`` (frame rows), in the frame's order."""
    return report.frame.loc[sorted(report.candidates[line])]


def sensitivity(report, params: list[Param], line: int) -> Sensitivity:
    rows = line_rows(report, line)
    ev = Evaluator(rows, params)
    base, swings = tornado(rows, params, ev=ev)
    head = report.summary.iloc[line]
    return Sensitivity({k: head[k] for k in ("model", "sku", "recipe", "gpus", "interval_s")}, base, swings,
                       break_even(rows, params, ev=ev))


def as_dict(s: Sensitivity) -> dict:
    """For --json and the manifest: finite numbers or null."""
    from .units import json_number

    def point(d: dict) -> dict:
        return {"option": d["option"], **{m: json_number(d[m]) for m in METRICS}}

    return {"line": {k: (v.item() if hasattr(v, "item") else v) for k, v in s.line.items()}, "base": point(s.base),
            "swings": [{"input": w.param.label, "file": w.param.prov.file, "line": w.param.prov.line,
                        "basis": w.param.prov.basis, "low": w.param.low, "value": w.param.value, "high": w.param.high,
                        "distribution": w.param.distribution, "at_low": point(w.low), "at_high": point(w.high),
                        "flips": w.flips} for w in s.swings],
            "break_even": [{"input": b.param.label, "direction": b.direction, "value": b.value, "to": b.to}
                           for b in s.breaks]}


# ---- Monte Carlo over the summary lines --------------------------------------------------------------

ROWS_PER_CHUNK = 100_000  # rows of options x draws evaluated at once: ~150 MB of columns


@dataclass
class Sampled:
    """What ``monte_carlo`` found: per summary line, the base recommendation's P10/P50/P90 of each
    metric over the draws, and the share of draws in which each option is the recommendation."""

    samples: int
    seed: int
    params: list[Param]
    lines: list[dict]


@dataclass(frozen=True)
class SamplePlan:
    """What a Monte Carlo run evaluates, in one picklable piece a worker process (or a Dask worker)
    receives: every summary line's options (frame rows), the lines as positions into them, each
    line's base recommendation, the uncertain inputs, the number of draws and the seed. ``chunks``
    splits the draws into independent pieces; ``evaluate`` computes one; ``Tally`` adds them up."""

    rows: pd.DataFrame
    groups: tuple[np.ndarray, ...]
    base: tuple[int, ...]  # per line: the position of its recommendation in ``rows``
    lines: pd.DataFrame  # per line: model, sku, recipe, gpus, interval_s, status
    params: tuple[Param, ...]
    samples: int
    seed: int

    @classmethod
    def of(cls, report, params: list[Param], samples: int, seed: int) -> SamplePlan:
        table = report.summary
        labels = sorted({int(i) for c in report.candidates for i in c})
        at = {label: k for k, label in enumerate(labels)}
        groups = tuple(np.array([at[int(i)] for i in sorted(c)]) for c in report.candidates)
        lines = table[["model", "sku", "recipe", "gpus", "interval_s", "option_status"]].astype(
            {"model": str, "sku": str, "recipe": str})
        return cls(report.frame.loc[labels], groups, tuple(at[int(i)] for i in table["option_index"]),
                   lines.reset_index(drop=True), tuple(params), samples, seed)

    @functools.cached_property
    def evaluator(self) -> Evaluator:
        return Evaluator(self.rows, list(self.params))

    @property
    def options(self) -> list[str]:
        return [rule.label(s, t, e) for s, t, e in zip(*(self.rows[c].astype(str) for c in ("strategy", "tier", "engine")))]

    def chunks(self, rows_per_chunk: int | None = None) -> list[tuple[int, int]]:
        """(first block, blocks) pieces of about ``rows_per_chunk`` option x draw rows each."""
        per = max(1, (rows_per_chunk or ROWS_PER_CHUNK) // max(len(self.rows) * BLOCK, 1))
        total = -(-self.samples // BLOCK)
        return [(b, min(per, total - b)) for b in range(0, total, per)]

    def evaluate(self, piece: tuple[int, int], frame: bool = False) -> Chunk:
        """One piece of the draws: which option each line recommends in each, the metrics of each
        line's base recommendation, and (``frame``) the rows samples.parquet holds."""
        first_block, blocks = piece
        values = block_draws(list(self.params), self.seed, first_block, blocks, self.samples)
        k = len(values)
        first = first_block * BLOCK
        cols = self.evaluator.run(values, RANK_COLUMNS + METRICS)
        chosen = picks(cols, list(self.groups))
        metrics = np.stack([np.stack([cols[m][:, b] for m in METRICS]) for b in self.base])  # (lines, M, k)
        out = None
        if frame:  # line after line, each its k draws: built as whole columns (one frame a chunk)
            names, code = self._codes()
            lines = len(chosen)
            out = pd.DataFrame({
                "sample": np.tile(np.arange(first, first + k, dtype=np.int64), lines),
                "model": np.repeat(self.lines["model"].to_numpy(object), k),
                "sku": np.repeat(self.lines["sku"].to_numpy(object), k),
                "recommended": pd.Categorical.from_codes(code[np.concatenate(chosen)], names),
                **{m: metrics[:, i, :].reshape(-1) for i, m in enumerate(METRICS)},
                **{f"input {p.name}": np.tile(values[:, j], lines) for j, p in enumerate(self.params)}})
        return Chunk(first, np.stack(chosen), metrics, out)

    def tally(self) -> Tally:
        """A Tally holding the metrics in memory: (lines x metrics x samples) floats, enough for
        millions of draws of the default summary (60 lines: 2.4 GB per million)."""
        return Tally(self, InMemory(len(self.groups) * len(METRICS), max(self.samples, 1)))

    def _codes(self) -> tuple[list[str], np.ndarray]:
        option = self.options
        names = sorted(set(option)) + [rule.NONE]
        return names, np.array([names.index(o) for o in option] + [len(names) - 1])


@dataclass
class Chunk:
    first: int  # the first sample
    picked: np.ndarray  # (lines, k): the position of the option recommended; -1 none
    metrics: np.ndarray  # (lines, len(METRICS), k): the base recommendation's
    frame: pd.DataFrame | None = None


class Tally:
    """The chunks added up as they arrive, in any order: wins per option, and the metrics in a
    ``Scratch`` file (or in memory) for exact quantiles."""

    def __init__(self, plan: SamplePlan, store):
        self.plan, self.store = plan, store
        self.wins = np.zeros((len(plan.groups), len(plan.rows)), dtype=np.int64)
        self.none = np.zeros(len(plan.groups), dtype=np.int64)

    def add(self, chunk: Chunk) -> None:
        k = chunk.picked.shape[1]
        for line, picked in enumerate(chunk.picked):
            ok = picked >= 0
            np.add.at(self.wins[line], picked[ok], 1)
            self.none[line] += int((~ok).sum())
        lines, m, _ = chunk.metrics.shape
        self.store.array[:, chunk.first:chunk.first + k] = chunk.metrics.reshape(lines * m, k)
        self.store.release()

    def result(self) -> Sampled:
        plan, option, n = self.plan, self.plan.options, self.plan.samples
        out = []
        for line in range(len(plan.groups)):
            head = plan.lines.iloc[line]
            quant = {}
            for m, metric in enumerate(METRICS):
                quant[metric] = quantiles(np.array(self.store.array[line * len(METRICS) + m, :n]))
                self.store.release()
            share: dict[str, float] = {}
            for r in np.flatnonzero(self.wins[line]):
                share[option[r]] = share.get(option[r], 0.0) + int(self.wins[line, r]) / n
            if self.none[line]:
                share[rule.NONE] = int(self.none[line]) / n
            out.append({"model": head["model"], "sku": head["sku"], "recipe": head["recipe"], "gpus": int(head["gpus"]),
                        "interval_s": float(head["interval_s"]), "option": option[plan.base[line]],
                        "status": str(head["option_status"]), "quantiles": quant,
                        "wins": dict(sorted(share.items(), key=lambda kv: (-kv[1], kv[0])))})
        return Sampled(n, plan.seed, list(plan.params), out)


def evaluate(plan: SamplePlan, piece: tuple[int, int]) -> Chunk:
    """``plan.evaluate(piece)`` as a plain function: what a Dask client maps over ``plan.chunks()``."""
    return plan.evaluate(piece)


class InMemory:
    """A Tally's store held in memory (a Dask client gathering a modest run)."""

    def __init__(self, rows: int, columns: int):
        self.array = np.empty((rows, columns))

    def release(self) -> None:
        pass

    def close(self) -> None:
        pass


def monte_carlo(report, params: list[Param], samples: int, seed: int, scratch, sink=None,
                progress=lambda _: None) -> Sampled:
    """Draw every uncertain input together ``samples`` times (seeded) and re-evaluate every summary
    line's options, a chunk of draws at a time: memory stays bounded whatever ``samples``. ``sink``
    receives a frame per chunk (one row per draw x line: the draw's inputs, the option recommended
    in it, the base recommendation's metrics). The metrics of each line's base recommendation go to
    a scratch file in ``scratch`` (a directory), so the quantiles are exact and the memory flat:
    one line's values are read at a time. Each chunk is independent (``SamplePlan.evaluate``): a
    Dask cluster maps the same pieces (README: Monte Carlo on Dask)."""
    from .progress import task

    plan = SamplePlan.of(report, params, samples, seed)
    path = Path(scratch) / "metrics.f64"
    store = Scratch(path, len(plan.groups) * len(METRICS), max(samples, 1))
    try:
        tally = Tally(plan, store)
        with task(progress, "samples", samples) as advance:
            for piece in plan.chunks():
                chunk = plan.evaluate(piece, frame=sink is not None)
                tally.add(chunk)
                if sink is not None:
                    sink(chunk.frame)
                advance(chunk.picked.shape[1])
        return tally.result()
    finally:
        store.close()
        path.unlink(missing_ok=True)


class Scratch:
    """A float64 array of shape (rows, columns) in a file: written a chunk of columns at a time, read
    a row at a time, its pages handed back to the kernel after each (``release``), so the process's
    memory stays flat however many samples there are (the disk holds 8 bytes per value)."""

    def __init__(self, path: Path, rows: int, columns: int):
        import mmap

        self._file = open(path, "w+b")  # noqa: SIM115 - closed by close()
        self._file.truncate(rows * columns * 8)
        self._map = mmap.mmap(self._file.fileno(), rows * columns * 8)
        self.array = np.frombuffer(self._map, dtype=np.float64).reshape(rows, columns)

    def release(self) -> None:
        import mmap

        self._map.flush()
        if hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(mmap.MADV_DONTNEED)  # written back: the pages leave this process's memory

    def close(self) -> None:
        del self.array
        self._map.close()
        self._file.close()


# ---- a brief's robustness: one decision, its tornado, break-evens and band --------------------------

BRIEF_SAMPLES = 1000  # draws behind a brief's P10/P50/P90 (seed 1): a second on the largest brief


@dataclass(frozen=True)
class Robustness:
    """What a brief says about how sure its recommendation is."""

    params: list[Param]
    base: dict
    swings: list[Swing]
    breaks: list[BreakEven]
    samples: int
    seed: int
    wins: dict[str, float]  # option -> share of the draws it is recommended in
    quantiles: dict[str, dict[str, float | None]]  # metric -> p10/p50/p90 of the recommendation's


def robustness(rows: pd.DataFrame, params: list[Param], samples: int = BRIEF_SAMPLES, seed: int = 1) -> Robustness:
    """The tornado, break-even values and a Monte Carlo band of one decision among ``rows`` (a brief's
    options, every one of them a candidate), re-evaluated by the engine's columns."""
    ev = Evaluator(rows, params)
    base, swings = tornado(rows, params, ev=ev)
    breaks = break_even(rows, params, ev=ev)
    touching = [p for j, p in enumerate(params) if ev.touches(j)]
    wins: dict[str, float] = {}
    quant: dict[str, dict[str, float | None]] = {m: {"p10": None, "p50": None, "p90": None} for m in METRICS}
    if touching:
        ev = Evaluator(rows, touching)
        values = block_draws(touching, seed, 0, -(-samples // BLOCK), samples)
        cols = ev.run(values, RANK_COLUMNS + METRICS)
        (chosen,) = picks(cols, [np.arange(len(rows))])
        labels = [_option(rows, int(i)) for i in range(len(rows))] + [rule.NONE]
        for code, count in zip(*np.unique(chosen, return_counts=True)):
            wins[labels[int(code)]] = int(count) / samples
        at = [i for i in range(len(rows)) if _option(rows, i) == base["option"]]
        if at:
            quant = {m: quantiles(cols[m][:, at[0]]) for m in METRICS}
    return Robustness(touching, base, swings, breaks, samples if touching else 0, seed,
                      dict(sorted(wins.items(), key=lambda kv: (-kv[1], kv[0]))), quant)
