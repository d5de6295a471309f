"""The uncertain inputs: every figure whose quantity carries a range, as a ``Param`` (figures sharing
a driver move together), how its other members follow its first, and seeded draws from the ranges
(any partition of the samples into blocks draws the same values)."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ...read.inputs import (
    ENGINES,
    ENTITY_COLUMN,
    INPUTS,
    PLAN,
    SCALING,
    Input,
    of,
    replaced,
    widening,
)
from ...read.quantity import Q
from ...read.validated import Inputs
from ..types import Member, Param

QUANTILES = (0.1, 0.5, 0.9)


def parameters(inputs: Inputs, ranks: float | None = None) -> list[Param]:
    """Every uncertain figure of the inputs, in declaration order (plan first, then each entity);
    figures sharing a driver are one Param. Figures of one driver share a distribution and a unit
    (else an InputError names the one that does not). An engine's scaling term used at ``ranks`` (the
    rows' GPUs; omitted: the plan's largest) beyond its largest case has its range
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
                k = (
                    widening(ranks, INPUTS["largest_case_ranks"].value(entity, name))
                    if section == ENGINES and inp.name in SCALING
                    else 1.0
                )
                floor, ceiling = inp.bounds
                member = Member(
                    section,
                    name,
                    inp.key,
                    inp.name,
                    raw.value / inp.scale,
                    inputs.prov[(section, name, inp.key)],
                    _dependents(inp, entity, raw),
                    max(raw.low / inp.scale / k, floor),  # widened, never past the key's bounds
                    min(raw.high / inp.scale * k, ceiling),
                    "" if k > 1 else raw.low_text or "",
                    "" if k > 1 else raw.high_text or "",
                    k,
                    floor,
                    ceiling,
                )
                if raw.driver is not None and raw.driver in drivers:
                    k = drivers[raw.driver]
                    _agree(out[k], member, raw)
                    out[k] = dataclasses.replace(out[k], members=(*out[k].members, member))
                    continue
                if raw.driver is not None:
                    drivers[raw.driver] = len(out)
                out.append(
                    Param(
                        (member,),
                        member.value,
                        member.low,
                        member.high,
                        raw.distribution,
                        raw.driver,
                    )
                )
    return out


def _agree(param: Param, member: Member, raw: Q) -> None:
    """Figures of one driver share a distribution and a unit: they are one uncertain quantity."""
    from ...base.errors import InputError, Problem

    first = param.first
    if (
        raw.distribution != param.distribution
        or INPUTS[member.input].unit != INPUTS[first.input].unit
    ):
        raise InputError(
            Problem(
                member.prov.file,
                member.prov.line,
                0,
                member.label,
                f"driver '{raw.driver}' moves its figures together: they share a distribution and a "
                f"unit; {first.label} ({first.prov.file}:{first.prov.line}) is a "
                f"{param.distribution} {INPUTS[first.input].unit}, this one a {raw.distribution} "
                f"{INPUTS[member.input].unit}",
            )
        )


def follow(p: Param, m: Member, x: np.ndarray) -> np.ndarray:
    """Where member ``m`` of ``p`` is when ``p``'s first member is at ``x``: the same place in its own
    range (piecewise linear through low, value and high, extended beyond them; uniform: linear from
    low to high; lognormal: the same in logarithms), never below zero nor outside its key's bounds."""
    return follow_all(p, [m], x)[:, 0]


@dataclasses.dataclass(frozen=True)
class Terms:
    """What ``follow_all`` reads of its members, as arrays (one entry a member): formed once per
    members, not per draw (a chunked evaluation follows the same members many times)."""

    value: np.ndarray
    low: np.ndarray
    high: np.ndarray
    slopes: tuple[np.ndarray, ...]  # lognormal: (power,); piecewise: (down, up); uniform: ()
    floor: np.ndarray
    ceiling: np.ndarray
    first: list[int]  # which member is the param's first


def follow_terms(p: Param, members: list[Member]) -> Terms:
    """``follow_all``'s per-member terms, each formed in Python floats as the member alone forms it."""
    if p.distribution == "lognormal":
        slopes: tuple[np.ndarray, ...] = (
            np.array([math.log(m.high / m.low) / math.log(p.high / p.low) for m in members]),
        )
    elif p.distribution == "uniform":
        slopes = ()
    else:
        slopes = (
            np.array(
                [(m.value - m.low) / (p.value - p.low) if p.value > p.low else 0.0 for m in members]
            ),
            np.array(
                [
                    (m.high - m.value) / (p.high - p.value) if p.high > p.value else 0.0
                    for m in members
                ]
            ),
        )
    return Terms(
        value=np.array([m.value for m in members]),
        low=np.array([m.low for m in members]),
        high=np.array([m.high for m in members]),
        slopes=slopes,
        floor=np.array([max(m.floor, 0.0) for m in members]),
        ceiling=np.array([m.ceiling for m in members]),
        first=[k for k, m in enumerate(members) if m is p.first],
    )


def follow_all(
    p: Param, members: list[Member], x: np.ndarray, terms: Terms | None = None
) -> np.ndarray:
    """``follow`` of several members at once: shape (draws, members), each column computed with the
    same arithmetic as the member alone (its terms formed in Python floats, then elementwise).
    ``terms``: ``follow_terms(p, members)``, when the caller keeps them."""
    t = terms if terms is not None else follow_terms(p, members)
    x = np.asarray(x, dtype=float)[:, None]
    with np.errstate(divide="ignore", invalid="ignore"):
        if p.distribution == "lognormal":
            out = t.value * (x / p.value) ** t.slopes[0]
        elif p.distribution == "uniform":
            out = t.low + (x - p.low) * (t.high - t.low) / (p.high - p.low)
        else:
            below = t.value + (x - p.value) * t.slopes[0]
            above = t.value + (x - p.value) * t.slopes[1]
            out = np.where(x < p.value, below, above)
    out = np.clip(out, t.floor, t.ceiling)
    out[:, t.first] = x  # the first member is the draw itself
    return out


def _dependents(inp: Input, entity, raw: Q) -> tuple[tuple[str, float], ...]:
    """The inputs of the entity derived from ``inp``'s key when omitted, each with its value; each
    must move in proportion (every derive rule is a product), which is checked here."""
    out = []
    for other in of(inp.entity):
        if other.key and inp.key in other.derived_from and other.derived(entity) is not None:
            base = other.value(entity)
            doubled = other.value(
                replaced(entity, inp.key, dataclasses.replace(raw, value=2 * raw.value))
            )
            if not math.isclose(doubled, 2 * base, rel_tol=1e-9):
                raise ValueError(f"{other.name} is not proportional to {inp.key}")
            out.append((other.name, float(base)))
    return tuple(out)


def quantiles(values: np.ndarray) -> dict[str, float | None]:
    """P10/P50/P90 of the finite values (None each when there are none: an unpriced cost)."""
    finite = values[np.isfinite(values)]
    return {
        f"p{round(q * 100)}": float(np.quantile(finite, q)) if len(finite) else None
        for q in QUANTILES
    }


def base_values(params: list[Param]) -> np.ndarray:
    return np.array([[p.value for p in params]])


BLOCK = 32  # samples drawn from one seeded stream per input: a chunk of work is whole blocks


def block_draws(
    params: list[Param], seed: int, first_block: int, blocks: int, samples: int
) -> np.ndarray:
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
            out[lo - start : hi - start, j] = p.sample(rng, BLOCK)[: hi - lo]
    return out
