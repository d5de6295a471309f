"""The worked arithmetic of one scenario, step by step, from the same column definitions the evaluator
computes: every input with its place and source, every derived figure with its formula."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

from ..base.errors import InputError, Problem, did_you_mean
from ..model import display
from ..model.columns import COLUMNS
from ..model.evaluate import columns, row_at
from ..model.expr import Var, render
from ..model.plan import runs
from ..read.inputs import ENTITY_COLUMN, INPUTS, PLAN, SCALING, SCENARIO, widening
from ..read.provenance import provenance
from ..read.quantity import Q
from ..read.strategies import BASELINE, STRATEGIES, read_only_by
from ..read.validated import Inputs


@dataclass(frozen=True)
class Scenario:
    model: str
    sku: str
    tier: str
    gpus: int
    interval_s: float
    strategy: str = BASELINE
    recipe: str | None = None
    engine: str | None = None  # None: the plan's first engine that implements the strategy


def _unknown(name: str, kind: str, known) -> str | None:
    if name in known:
        return None
    return f"unknown {kind} '{name}'{did_you_mean(name, known)}; known: {', '.join(sorted(known))}"


def one_row(inputs: Inputs, s: Scenario):
    problems = [
        _unknown(s.model, "model", inputs.models),
        _unknown(s.sku, "SKU", inputs.skus),
        _unknown(s.tier, "tier", inputs.tiers),
        _unknown(s.strategy, "strategy", STRATEGIES),
        _unknown(s.recipe, "recipe", inputs.recipes) if s.recipe is not None else None,
    ]
    problems.append(_unknown(s.engine, "engine", inputs.engines) if s.engine is not None else None)
    problems = [p for p in problems if p]
    if problems:
        raise InputError([Problem("", 0, 0, "", p) for p in problems])
    model = inputs.models[s.model]
    if model.tp is not None and model.pp is not None and s.gpus < model.tp.value * model.pp.value:
        raise InputError(
            f"no such scenario: {s.gpus:,} GPUs hold less than one replica of {s.model} (tp "
            f"{model.tp.value:g} x pp {model.pp.value:g} = {model.tp.value * model.pp.value:,.0f} GPUs)"
        )
    engine = s.engine or default_engine(inputs, s.strategy)
    plan = inputs.plan.model_copy(
        update={
            "models": [s.model],
            "skus": [s.sku],
            "tiers": [s.tier],
            "strategies": [s.strategy],
            "engines": [engine],
            "recipes": [s.recipe] if s.recipe else None,
            "gpus": [Q(float(s.gpus), str(s.gpus), "count")],
            "intervals": [Q(float(s.interval_s), f"{s.interval_s:g} s", "duration")],
        }
    )
    one = dataclasses.replace(inputs, plan=plan)
    cols, dropped = columns(one)  # numpy alone: explain does not wait for pandas
    if len(cols["gpus"]) == 0:
        raise InputError(f"no such scenario: {dropped[0].reason}")
    return row_at(cols, 0)


def default_engine(inputs: Inputs, strategy: str) -> str:
    """The plan's first engine that runs ``strategy`` (else the first of engines.yaml that does): it
    implements it, or the strategy it is built on (``plan.runs``)."""
    listed = [*(inputs.plan.engines or []), *inputs.engines]
    some = any(strategy in inputs.engines[e].strategies for e in listed)
    return next((e for e in listed if runs(inputs.engines[e], strategy, some)), listed[0])


def _finite(v):
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def explanation(inputs: Inputs, s: Scenario) -> dict:
    """The arithmetic of one scenario, named by ``s``."""
    return explain_row(inputs, one_row(inputs, s))


def explain_row(inputs: Inputs, row) -> dict:
    """The arithmetic of one row of a scenario frame: every input it uses with its provenance, and
    every column with its formula, the formula with the values substituted, and its value."""
    values = {k: (v.item() if hasattr(v, "item") else v) for k, v in row.items()}
    shown = {k: display.of(k, v) for k, v in values.items()}
    quoted = {k: f'"{v}"' if display.unit_of(k) == "label" else v for k, v in shown.items()}
    strategy = str(values.get("strategy", ""))
    only = read_only_by()
    used = [
        n
        for n in INPUTS
        if any(n in c.params for c in COLUMNS.values()) and strategy in only.get(n, (strategy,))
    ]  # a layered strategy's inputs: its rows only
    names = {section: row[column] for section, column in ENTITY_COLUMN.items()}
    inputs_out = []
    for name in used:
        prov = provenance(inputs, INPUTS[name], names)
        inp = INPUTS[name]
        raw = (
            None
            if inp.entity == SCENARIO
            else inp.raw(
                inputs.entity(inp.entity, PLAN if inp.entity == PLAN else str(names[inp.entity]))
            )
        )
        inputs_out.append(
            {
                "name": name,
                "value": _finite(values[name]),
                "display": shown[name],
                "unit": display.unit_of(name),
                "doc": INPUTS[name].doc,
                "file": prov.file if prov else None,
                "line": prov.line if prov else None,
                "basis": prov.basis if prov else "scenario",
                "source": prov.source if prov else None,
                "date": prov.date if prov else None,
                "region": prov.region if prov else None,
                "range": _range(name, raw, values),
            }
        )
    steps = []
    for col in COLUMNS.values():
        tree = col.fn(*(Var(p) for p in col.params))
        steps.append(
            {
                "section": col.section,
                "name": col.name,
                "unit": col.unit,
                "doc": col.doc,
                "formula": render(tree, lambda n: n, style="text"),
                "substituted": render(tree, lambda n: quoted[n], style="text"),
                "value": _finite(values[col.name]),
                "display": shown[col.name],
            }
        )
    scenario = {
        "model": str(values["model"]),
        "sku": str(values["sku"]),
        "tier": str(values["tier"]),
        "gpus": int(values["gpus"]),
        "interval_s": float(values["interval_s"]),
        "strategy": str(values["strategy"]),
        "recipe": str(values["recipe"]),
        "engine": str(values["engine"]),
    }
    return {
        "scenario": scenario,
        "headline": headline(values),
        "inputs": inputs_out,
        "steps": steps,
        "input_hash": inputs.input_hash,
    }


def _range(name: str, raw, values: dict) -> str | None:
    """An input's range as written, and where the row uses a scaling term of its engine beyond the
    largest case it rests on, the range widened for it (``read.inputs.widening``)."""
    if not (isinstance(raw, Q) and raw.uncertain):
        return None
    k = widening(values["gpus"], values["largest_case_ranks"]) if name in SCALING else 1.0
    if k <= 1:
        return raw.range_text()
    inp = INPUTS[name]
    return (
        f"{raw.range_text()}; widened x{k:.3g} at {int(values['gpus']):,} ranks, "
        f"{values['gpus'] / values['largest_case_ranks']:.3g}x its largest case: "
        f"{display.of(name, raw.low / inp.scale / k)} to {display.of(name, raw.high / inp.scale * k)}"
    )


def _cannot(v: dict) -> str:
    """Why the scenario cannot exist as asked ('' when it can): too few replicas or nodes for the
    strategy, staging that does not fit host memory or NVMe."""
    f = display.of
    out = []
    if not v["layout_ok"]:
        if v["dp_ranks"] < v["min_replicas"]:
            out.append(
                f"{v['strategy']} needs at least {v['min_replicas']:g} data-parallel replicas, the job "
                f"has {v['dp_ranks']:,}"
            )
        else:
            out.append(
                f"{v['strategy']} copies each node's snapshot to {v['peer_replicas']:g} peer(s), which "
                f"needs more nodes than that; the job has {v['nodes']:,}"
            )
    if not v["host_memory_ok"]:
        out.append(
            f"its staging needs {f('host_memory_needed_bytes', v['host_memory_needed_bytes'])} of host "
            f"memory a node, which has {f('host_memory_bytes', v['host_memory_bytes'])}"
        )
    if not v["nvme_ok"]:
        out.append(
            f"it needs {f('nvme_needed_bytes', v['nvme_needed_bytes'])} of local NVMe a node, which "
            f"has {f('nvme_capacity_bytes', v['nvme_capacity_bytes'])}"
        )
    return "; ".join(out)


def headline(v: dict) -> str:
    f = display.of
    met = "met" if v["meets_target"] else "missed"
    parts = [
        f"{f('ckpt_bytes', v['ckpt_bytes'])} per checkpoint ({f('params', v['params'])} params x "
        f"{f('bytes_per_param', v['bytes_per_param'])});",
        f"{f('bytes_per_node', v['bytes_per_node'])} per node over {v['nodes']:,} nodes"
        + (
            f" ({v['idle_gpus']:,} GPUs stand idle: {v['dp_ranks']:,} whole replicas of tp {v['tp']:g} x pp "
            f"{v['pp']:g} train on {v['training_gpus']:,})"
            if v["idle_gpus"]
            else ""
        )
        + ".",
        f"Persisting with {v['engine']} takes {f('write_s', v['write_s'])} (bottleneck: {v['bottleneck']}; "
        f"coordination {f('coordination_s', v['coordination_s'])}"
        + (
            f" a save with cached plans, {f('first_coordination_s', v['first_coordination_s'])} at the first"
            if v["first_coordination_s"] != v["coordination_s"]
            else ""
        )
        + ");",
        f"training stalls {f('stall_s', v['stall_s'])} every {f('interval_s', v['interval_s'])}:",
        f"{f('overhead_pct', v['overhead_pct'])} overhead "
        f"(target {f('target_overhead_pct', v['target_overhead_pct'])}: {met}).",
        f"With failures every {f('cluster_mtbf_s', v['cluster_mtbf_s'])}, the best interval is "
        f"{f('optimal_interval_s', v['optimal_interval_s'])}; a restart reads the checkpoint back in "
        f"{f('restore_s', v['restore_s'])} on average ({f('host_restore_pct', v['host_restore_pct'])} of "
        f"failures from host memory).",
        (
            f"Storage costs {f('storage_usd_month', v['storage_usd_month'])} a month for "
            f"{f('tier_bought_GBps', v['tier_bought_GBps'])} and {f('provisioned_bytes', v['provisioned_bytes'])}; "
            f"GPU time lost costs {f('lost_gpu_usd_month', v['lost_gpu_usd_month'])} a month; over the run "
            f"{f('total_usd', v['total_usd'])}."
            if v["storage_usd_month"] == v["storage_usd_month"]
            else f"The tier has no price: storage cost is left out; GPU time lost costs "
            f"{f('lost_gpu_usd_month', v['lost_gpu_usd_month'])} a month."
        ),
    ]
    cannot = _cannot(v)
    if cannot:  # never a normal headline over a layout that cannot exist
        parts.insert(
            0, f"Cannot run as asked: {cannot}; the figures below are what it would be if it could."
        )
    if v["extrapolated"]:
        parts.append(
            f"Caution: {v['engine']}'s terms rest on published jobs of up to "
            f"{f('largest_case_ranks', v['largest_case_ranks'])} ranks; at {v['gpus']:,} its coordination "
            f"is an extrapolation, {f('beyond_largest_case_x', v['beyond_largest_case_x'])} beyond them "
            "(its scaling terms' ranges widen by that)."
        )
    if v["stalls_more_than_trains"]:
        parts.append(
            "Warning: each checkpoint stalls training longer than the interval between checkpoints "
            "(overhead above 100%): lengthen the interval or buy bandwidth."
        )
    return " ".join(parts)
