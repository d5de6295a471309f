"""Load a models directory into validated, typed Inputs — or one InputError listing every problem.

Errors name file, line, column and key path, say what was expected and what was found, and offer a
"did you mean" for unknown keys and unknown references.
"""

from __future__ import annotations

import hashlib
import math
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from ..base.errors import InputError, Problem, did_you_mean, printable
from ..base.paths import shipped_models
from ..base.safeio import read_regular
from .inputs import INPUTS, PLAN, SHARES, attribute, of
from .quantity import Q, name_problem
from .schema import FILES, MOVED, SECTIONS, Plan
from .strategies import STRATEGIES
from .validated import Inputs, Prov
from .yamlfile import Marks, dotted, leaves
from .yamlfile import parse as parse_yaml

# ---- pydantic errors -> Problems --------------------------------------------------------------


def _submodel(annotation: Any) -> type[BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        found = _submodel(arg)
        if found:
            return found
    return None


def _walk(model: type[BaseModel], loc: tuple) -> tuple[type[BaseModel], bool]:
    """The model that the key path ``loc`` leads into, and whether the whole path was followed (it
    stops at a list index, an unknown key or a key that holds no mapping)."""
    for part in loc:
        if not isinstance(part, str) or part not in model.model_fields:
            return model, False
        sub = _submodel(model.model_fields[part].annotation)
        if sub is None:
            return model, False
        model = sub
    return model, True


def _fields_at(model: type[BaseModel], loc: tuple) -> list[str]:
    return list(_walk(model, loc)[0].model_fields)


def _what(model: type[BaseModel], loc: tuple) -> str:
    """What a missing key means, from its declaration: ' (model FLOPs utilisation, e.g. 40%)'."""
    model, whole = _walk(model, loc[:-1])
    info = model.model_fields.get(str(loc[-1])) if whole else None
    return f" ({info.description})" if info is not None and info.description else ""


def _describe(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if value is None:
        return "nothing"
    return repr(value)


def _message(err: dict, model: type[BaseModel]) -> str:
    kind, loc = err["type"], err["loc"]
    if kind == "extra_forbidden":
        if model is Plan and len(loc) == 1 and loc[0] in MOVED:
            return (
                f"'{loc[0]}' is an engine's term now: it moved to engines.yaml, as {MOVED[loc[0]]}"
            )
        allowed = _fields_at(model, loc[:-1])
        return (
            f"unknown key '{loc[-1]}'{did_you_mean(str(loc[-1]), allowed)}; "
            f"allowed keys: {', '.join(allowed)}"
        )
    if kind == "missing":
        return f"missing required key '{loc[-1]}'" + _what(model, loc)
    if kind in ("model_type", "dict_type", "model_attributes_type"):
        return f"expected a mapping of keys, got {_describe(err.get('input'))}"
    if kind == "list_type":
        return f"expected a list like [a, b], got {_describe(err.get('input'))}"
    if kind in ("bool_parsing", "bool_type"):
        return f"expected yes or no, got {_describe(err.get('input'))}"
    if kind == "literal_error":
        return f"expected {err['ctx']['expected']}, got {_describe(err.get('input'))}"
    if (
        kind == "too_short"
        and len(loc) == 1
        and loc[0] in ("models", "recipes", "skus", "tiers", "engines")
    ):
        return f"an empty list names none; omit {loc[-1]} for every one"
    if kind in ("string_type", "string_too_long", "string_too_short", "too_short"):
        return f"{err['msg'][0].lower()}{err['msg'][1:]}"
    msg = err["msg"]
    return msg.removeprefix("Value error, ")


def _loc_path(prefix: tuple, loc: tuple) -> tuple:
    out = list(prefix)
    for part in loc:
        if isinstance(part, str) and part.startswith("function-"):
            continue  # pydantic's validator names, not user keys
        out.append(part)
    return tuple(out)


def place(marks: Marks, path: tuple) -> tuple[int, int]:
    """The line and column of a key path, or of the nearest enclosing key that has one."""
    for n in range(len(path), -1, -1):
        if path[:n] in marks:
            return marks[path[:n]]
    return (1, 1)


def validate_model(
    model: type[BaseModel],
    data: Any,
    prefix: tuple,
    file: str,
    marks: Marks,
    problems: list[Problem],
) -> Any:
    """``data`` validated as ``model``, or None with every problem appended to ``problems``, each at
    its file, line and key (``prefix`` is where ``data`` sits in its file)."""
    try:
        return model.model_validate(data)
    except ValidationError as e:
        for err in e.errors(include_url=False):
            path = _loc_path(prefix, err["loc"])
            line, col = place(marks, path)
            problems.append(Problem(file, line, col, dotted(path), _message(err, model)))
        return None


# ---- loading ------------------------------------------------------------------------------------

# Files added since the first release: a models directory without one is read with the shipped
# file, and the build says so once (a directory that built keeps building after an upgrade).
ADDED = {
    "engines.yaml": "the checkpointing engines, an axis of the cross product",
}


def added_note(name: str, root: Path) -> str:
    """What a build says when the models directory lacks a file added since the first release."""
    return (
        f"{name} is not in {root}: the shipped one is used ({ADDED[name]}, added after the "
        f"first release); copy it there to edit it (ckptreport init writes a complete set)"
    )


def _read_files(
    root: Path, problems: list[Problem], notes: list[str] | None = None
) -> dict[str, tuple[Any, Marks, str, bytes]]:
    try:
        is_dir = root.is_dir()
    except OSError:  # a loop of links, a name too long
        is_dir = False
    if not is_dir:
        raise InputError(
            Problem(
                str(root),
                0,
                0,
                "",
                "is not a directory; a models directory holds " + ", ".join(FILES),
            )
        )
    found: dict[str, tuple[Any, Marks, str, bytes]] = {}
    for extra in sorted(p for p in root.iterdir() if p.suffix in (".yaml", ".yml")):
        if extra.name not in FILES:
            problems.append(
                Problem(
                    shown_path(root, extra.name),
                    0,
                    0,
                    "",
                    f"unexpected file{did_you_mean(extra.name, FILES)}; a models "
                    f"directory holds {', '.join(FILES)}",
                )
            )
    for name in FILES:
        path = root / name
        shown = shown_path(root, name)
        if not path.exists() and not path.is_symlink() and name in ADDED:
            path = shipped_models() / name
            shown = f"{name} (shipped)"
            if notes is not None:
                notes.append(added_note(name, root))
        if not path.exists() and not path.is_symlink():
            problems.append(
                Problem(
                    shown,
                    0,
                    0,
                    "",
                    "file is missing (ckptreport init DIR writes a complete starting set)",
                )
            )
            continue
        try:
            raw = read_regular(path, shown)
            data, marks = parse_yaml(raw, shown)
        except InputError as e:
            problems.extend(e.problems)
            continue
        found[name] = (data, marks, shown, raw)
    return found


def plan_file(inputs: Inputs) -> str:
    """The plan's file as error messages name it (``shown_path``)."""
    return shown_path(Path(inputs.root), "plan.yaml")


def shown_path(root: Path, name: str) -> str:
    """A file of the models directory as error messages name it: relative to the working directory
    when it is below it (errors are for the person at the terminal; outputs never use this)."""
    path = root / name
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (
        ValueError,
        OSError,
        RuntimeError,
    ):  # not below it; a symlink loop (reported on reading)
        return str(path)


def _prov_for(
    entry: BaseModel,
    section: str,
    name: str,
    file: str,
    marks: Marks,
    out: dict[tuple[str, str, str], Prov],
    prefix: tuple = (),
    entry_source: str | None = None,
    keys: frozenset[str] = frozenset(),
):
    """Record where every quantity of ``entry``, and every other input key it holds, came from."""
    entry_source = getattr(entry, "source", None) or entry_source
    keys = keys or frozenset(i.key for i in of(section))
    for attr, info in type(entry).model_fields.items():
        value = getattr(entry, attr)
        path = (*prefix, info.alias or attr)
        dotted_key = ".".join(path)
        if isinstance(value, BaseModel):
            _prov_for(value, section, name, file, marks, out, path, entry_source, keys)
        elif isinstance(value, Q) or (value is not None and dotted_key in keys):
            line = place(marks, (section, name, *path) if section != PLAN else path)[0]
            source = (value.source if isinstance(value, Q) else None) or entry_source
            basis = (value.basis if isinstance(value, Q) else None) or (
                "spec" if source else "input"
            )
            date, region = (value.date, value.region) if isinstance(value, Q) else (None, None)
            out[(section, name, dotted_key)] = Prov(
                file, line, basis, source, date=date, region=region
            )


@dataclass
class _Read:
    """What reading a models directory has found so far: the valid entries by section, every name
    declared (valid or not), where each figure and entry came from, the plan, and every problem."""

    problems: list[Problem] = field(default_factory=list)
    sections: dict[str, dict[str, Any]] = field(default_factory=lambda: {s: {} for s in SECTIONS})
    declared: dict[str, set[str]] = field(default_factory=lambda: {s: set() for s in SECTIONS})
    prov: dict[tuple[str, str, str], Prov] = field(default_factory=dict)
    places: dict[tuple[str, str], Prov] = field(default_factory=dict)
    plan: Plan | None = None


def load(root: Path | str) -> Inputs:
    """Read and validate a models directory. Raises InputError with every problem found. What only
    the model can check (the plan's size: ``model.plan.checked``) is checked by the caller that
    builds the plan."""
    root = Path(root)
    r = _Read()
    notes: list[str] = []
    files = _read_files(root, r.problems, notes)
    for fname, (data, marks, shown, _raw) in files.items():
        if fname == "plan.yaml":
            _read_plan(r, fname, data, marks, shown)
        else:
            _read_entities(r, fname, data, marks, shown)
    if "models.yaml" in files:
        _check_model_recipes(r.sections, r.declared, files["models.yaml"], r.problems)
    if r.plan is not None:
        _check_plan(r.plan, r.declared, files["plan.yaml"], r.problems)
        _check_layouts(r.plan, r.sections["models"], files["plan.yaml"], r.problems)
        _check_strategies(r.plan, r.sections["skus"], files["plan.yaml"], r.problems)
    if r.problems:
        raise InputError(r.problems)
    digest = hashlib.sha256()
    for fname in sorted(files):
        digest.update(fname.encode() + b"\0" + files[fname][3] + b"\0")
    s = r.sections
    return Inputs(
        s["recipes"],
        s["models"],
        s["skus"],
        s["tiers"],
        s["engines"],
        r.plan,
        r.prov,
        digest.hexdigest(),
        str(root),
        places=r.places,
        files={f: hashlib.sha256(files[f][3]).hexdigest() for f in sorted(files)},
        values={f: leaves(files[f][0], files[f][1]) for f in sorted(files)},
        marks={f: files[f][1] for f in sorted(files)},
        notes=notes,
    )


def _read_plan(r: _Read, fname: str, data: Any, marks: Marks, shown: str) -> None:
    """plan.yaml: the plan validated, where its figures and each brief are."""
    if not isinstance(data, dict):
        r.problems.append(
            Problem(shown, 1, 1, "", f"expected a mapping of plan keys, got {_describe(data)}")
        )
        return
    r.plan = validate_model(Plan, data, (), shown, marks, r.problems)
    if r.plan is not None:
        _prov_for(r.plan, PLAN, PLAN, fname, marks, r.prov)
        r.places[(PLAN, PLAN)] = Prov(fname, 1, "input", None)
        for i, b in enumerate(r.plan.briefs):  # where each brief is, for errors found later
            line, col = place(marks, ("briefs", i, "name"))
            r.places[("briefs", b.name)] = Prov(fname, line, "input", f"briefs[{i}]", col)
        for i, j in enumerate(r.plan.jobs):  # and each job
            line, col = place(marks, ("jobs", i, "name"))
            r.places[("jobs", j.name)] = Prov(fname, line, "input", f"jobs[{i}]", col)


def _read_entities(r: _Read, fname: str, data: Any, marks: Marks, shown: str) -> None:
    """A file of entities (models.yaml, hardware.yaml, ...): its top-level keys, each a mapping of
    names to entries."""
    allowed = FILES[fname]
    if not isinstance(data, dict):
        got = _describe(data)
        r.problems.append(
            Problem(shown, 1, 1, "", f"expected top-level keys {', '.join(allowed)}, got {got}")
        )
        return
    for top, body in data.items():
        line, col = marks[(top,)]
        if top not in allowed:
            elsewhere = next((f for f, secs in FILES.items() if top in secs), None)
            hint = f" ({top} belong in {elsewhere})" if elsewhere else did_you_mean(top, allowed)
            message = f"unknown top-level key{hint}; {fname} holds {', '.join(allowed)}"
            r.problems.append(Problem(shown, line, col, top, message))
        elif not isinstance(body, dict) or not body:
            message = f"expected a mapping of names to entries, got {_describe(body)}"
            r.problems.append(Problem(shown, line, col, top, message))
        else:
            _read_entries(r, fname, top, body, marks, shown)
    for top in allowed:
        if top not in data:
            r.problems.append(Problem(shown, 1, 1, "", f"missing top-level key '{top}'"))


def _read_entries(r: _Read, fname: str, top: str, body: dict, marks: Marks, shown: str) -> None:
    """The entries of one section: each name checked, each entry validated, where it came from kept."""
    r.declared[top].update(body)
    for name, entry in body.items():
        why = name_problem(name)
        if why:
            line, col = marks[(top, name)]
            r.problems.append(Problem(shown, line, col, f"{top}.{printable(name)[:40]}", why))
            continue
        obj = validate_model(SECTIONS[top], entry, (top, name), shown, marks, r.problems)
        if obj is not None:
            r.sections[top][name] = obj
            _prov_for(obj, top, name, fname, marks, r.prov)
            r.places[(top, name)] = Prov(fname, marks[(top, name)][0], "input", obj.source)


def _check_model_recipes(sections, declared, file, problems: list[Problem]) -> None:
    _, marks, shown, _ = file
    for name, model in sections["models"].items():
        if model.recipe not in declared["recipes"]:
            line, col = place(marks, ("models", name, "recipe"))
            problems.append(
                Problem(
                    shown,
                    line,
                    col,
                    f"models.{name}.recipe",
                    _unknown("recipe", model.recipe, declared["recipes"]),
                )
            )
        layers = getattr(model, "layers", None)
        pp = getattr(model, "pp", None)
        if layers is not None and pp is not None and 0 < layers.value < pp.value:
            line, col = place(marks, ("models", name, "pp"))
            problems.append(
                Problem(
                    shown,
                    line,
                    col,
                    f"models.{name}.pp",
                    f"a pipeline of {pp.value:g} stages over {layers.value:g} layers: every stage "
                    f"needs at least one layer (pp at most {layers.value:g})",
                )
            )


def _check_layouts(plan: Plan, models: dict, file, problems: list[Problem]) -> None:
    """A cluster size of the plan smaller than one replica of a model it trains (tp x pp GPUs) is a job
    that cannot run: refused at the size, naming the model. (Sizes that one replica does not divide
    run on whole replicas; the rest stand idle, and every output says how many.)"""
    _, pmarks, pshown, _ = file
    for name in plan.models or list(models):
        model = models.get(name)
        if model is None or model.tp is None or model.pp is None:
            continue
        replica = model.tp.value * model.pp.value
        for i, q in enumerate(plan.gpus):
            if q.value < replica:
                line, col = place(pmarks, ("gpus", i))
                problems.append(
                    Problem(
                        pshown,
                        line,
                        col,
                        f"gpus[{i}]",
                        f"{_text(q)} GPUs hold less than one replica of {name} (tp {model.tp.value:g} x "
                        f"pp {model.pp.value:g} = {replica:,.0f} GPUs)",
                    )
                )
    for i, job in enumerate(plan.jobs):
        model = models.get(job.model)
        if model is None or model.tp is None or model.pp is None:
            continue
        replica = model.tp.value * model.pp.value
        if job.gpus.value < replica:
            line, col = place(pmarks, ("jobs", i, "gpus"))
            message = (
                f"{_text(job.gpus)} GPUs hold less than one replica of {job.model} (tp "
                f"{model.tp.value:g} x pp {model.pp.value:g} = {replica:,.0f} GPUs)"
            )
            problems.append(Problem(pshown, line, col, f"jobs[{i}].gpus", message))


def _check_strategies(plan: Plan, skus: dict, file, problems: list[Problem]) -> None:
    """The layered strategies' inputs that contradict the plan: a strategy that needs more nodes than its
    peers (peer_memory) with as many peers as a job of the plan has nodes (a node cannot hold its own
    copy for itself), and failure shares that add up to more than every failure."""
    _, pmarks, pshown, _ = file
    named = "strategies" in plan.model_fields_set  # omitted: every strategy, not a request for jit
    for i, name in enumerate(plan.strategies if named else ()):
        # a strategy the plan names, with an input only it reads that has no default and is not given
        for key in STRATEGIES[name].reads if name in STRATEGIES else ():
            inp = INPUTS[key]
            given = getattr(plan, attribute(inp.key), None) is not None
            if not given and inp.default is not None and inp.default != inp.default:  # nan: none
                line, col = place(pmarks, ("strategies", i))
                problems.append(
                    Problem(
                        pshown,
                        line,
                        col,
                        f"strategies[{i}]",
                        f"{name} needs {inp.key} in plan.yaml ({inp.doc}); give it, or leave "
                        f"{name} out of strategies",
                    )
                )
    peered = [s for s in plan.strategies if s in STRATEGIES and STRATEGIES[s].peers_below_nodes]
    if peered and plan.peer_replicas is not None:
        k = plan.peer_replicas.value
        names = plan.skus or list(skus)
        jobs = [
            (math.ceil(q.value / skus[n].gpus_per_node.value), q.value, n)
            for q in plan.gpus
            for n in names
            if n in skus
        ]
        if jobs:
            nodes, gpus, sku = min(jobs)
            if k >= nodes:
                line, col = place(pmarks, ("peer_replicas",))
                problems.append(
                    Problem(
                        pshown,
                        line,
                        col,
                        "peer_replicas",
                        f"{k:g} peer(s) per node need at least {k + 1:g} nodes, but the plan's "
                        f"{gpus:,.0f} GPUs on {sku} are {nodes:,} node(s): lower peer_replicas, or "
                        f"leave {' and '.join(peered)} out of strategies",
                    )
                )
    for group in SHARES:
        _check_shares(plan, [INPUTS[name] for name in group], file, problems)


def _check_shares(plan: Plan, shares, file, problems: list[Problem]) -> None:
    """Shares of one whole (``SHARES``) add up to at most 100%: their values, and each one's high with
    the others at their values (every sweep end of a range stays inside what the plan can mean)."""
    _, pmarks, pshown, _ = file
    given = [(inp, getattr(plan, inp.key)) for inp in shares]
    given = [(inp, q) for inp, q in given if q is not None]
    whole = sum(q.value for _, q in given)
    tops = [(inp, q, q.high + whole - q.value) for inp, q in given if q.uncertain]
    over = [(given[-1][0], given[-1][1], whole)] if whole > 1 + 1e-12 else []
    for inp, q, _top in over or [t for t in tops if t[2] > 1 + 1e-12]:
        line, col = place(pmarks, (inp.key,))
        rest = " and ".join(f"{o.key} {p.value:.4g}" for o, p in given if o is not inp)
        what = f"{inp.key} {q.value:.4g}" if over else f"{inp.key}'s high {q.high:.4g}"
        cap = "" if over else f"; its high can be at most {1 - whole + q.value:.4g}"
        problems.append(
            Problem(
                pshown,
                line,
                col,
                inp.key,
                f"{what} and {rest} (as fractions) add up to more than every failure: the "
                f"{'two ' if len(given) == 2 else ''}shares and the rest (the durable tier's) must "
                f"add up to 100%{cap}",
            )
        )


def _check_plan(plan: Plan, declared, file, problems: list[Problem]) -> None:
    """The plan's names exist and none is listed twice; its briefs name what exists, once each; its
    summary names a model, SKU, cluster size and cadence of the plan."""
    _, pmarks, pshown, _ = file

    def problem(path: tuple, key: str, message: str) -> None:
        line, col = place(pmarks, path)
        problems.append(Problem(pshown, line, col, key, message))

    for key in ("models", "recipes", "skus", "tiers", "engines"):
        names = getattr(plan, key)
        for i, name in enumerate(names or []):
            if name not in declared[key]:
                problem((key, i), f"{key}[{i}]", _unknown(key[:-1], name, declared[key]))
            elif name in names[:i]:
                problem((key, i), f"{key}[{i}]", f"'{name}' is listed twice")
    for key in ("gpus", "intervals", "strategies"):
        seen: list = []
        for i, item in enumerate(getattr(plan, key)):
            value = item.value if isinstance(item, Q) else item
            if value in seen:
                problem((key, i), f"{key}[{i}]", f"{_text(item)!r} is listed twice")
            seen.append(value)
    _check_briefs(plan, declared, problem)
    _check_jobs(plan, declared, problem)
    _check_clusters(plan, declared, problem)
    if plan.summary is not None:
        _check_summary(plan, declared, problem)


def _check_jobs(plan: Plan, declared, problem) -> None:
    """Each job names a model, SKU and recipe that exist, once; its brief's name is its own (a
    ``briefs:`` entry may not take it)."""
    taken = {b.name for b in plan.briefs}
    seen: set[str] = set()
    for i, job in enumerate(plan.jobs):
        checks = [("model", "models", job.model), ("sku", "skus", job.sku)]
        checks += [("recipe", "recipes", job.recipe)] if job.recipe else []
        for key, section, name in checks:
            if name not in declared[section]:
                problem(
                    ("jobs", i, key),
                    f"jobs[{i}].{key}",
                    _unknown(section[:-1], name, declared[section]),
                )
        if job.name in seen:
            problem(("jobs", i, "name"), f"jobs[{i}].name", f"'{job.name}' is used twice")
        elif job.name in taken:
            problem(
                ("jobs", i, "name"),
                f"jobs[{i}].name",
                f"'{job.name}' is also a brief's name: each writes briefs/NAME.pdf",
            )
        seen.add(job.name)


def _check_clusters(plan: Plan, declared, problem) -> None:
    """Each cluster names a SKU and tiers that exist, once; each job that names a cluster names one of
    them, runs on its SKU and fits in its GPUs. (Jobs that run at the same time and need more GPUs
    together than the cluster has are refused by the purchase, which knows how long each runs.)"""
    clusters = {}
    for i, c in enumerate(plan.clusters):
        if c.name in clusters:
            problem(("clusters", i, "name"), f"clusters[{i}].name", f"'{c.name}' is used twice")
        clusters[c.name] = c
        if c.sku not in declared["skus"]:
            problem(
                ("clusters", i, "sku"),
                f"clusters[{i}].sku",
                _unknown("sku", c.sku, declared["skus"]),
            )
        for t, name in enumerate(c.tiers or []):
            if name not in declared["tiers"]:
                problem(
                    ("clusters", i, "tiers", t),
                    f"clusters[{i}].tiers[{t}]",
                    _unknown("tier", name, declared["tiers"]),
                )
            elif name in c.tiers[:t]:
                problem(
                    ("clusters", i, "tiers", t),
                    f"clusters[{i}].tiers[{t}]",
                    f"'{name}' is listed twice",
                )
    for i, job in enumerate(plan.jobs):
        if job.cluster is None:
            continue
        c = clusters.get(job.cluster)
        if c is None:
            problem(
                ("jobs", i, "cluster"),
                f"jobs[{i}].cluster",
                _unknown("cluster", job.cluster, clusters),
            )
            continue
        if job.sku != c.sku:
            problem(
                ("jobs", i, "sku"),
                f"jobs[{i}].sku",
                f"job '{job.name}' runs on {job.sku}, but its cluster '{c.name}' is of {c.sku}",
            )
        if job.gpus.value > c.gpus.value:
            problem(
                ("jobs", i, "gpus"),
                f"jobs[{i}].gpus",
                f"job '{job.name}' needs {job.gpus.value:,.0f} GPUs; its cluster '{c.name}' has "
                f"{c.gpus.value:,.0f}",
            )


def _check_briefs(plan: Plan, declared, problem) -> None:
    seen: set[str] = set()
    for i, brief in enumerate(plan.briefs):
        checks = (
            [("model", "models", brief.model)]
            + [("skus", "skus", n) for n in brief.skus]
            + [("tiers", "tiers", n) for n in brief.tiers]
            + ([("recipe", "recipes", brief.recipe)] if brief.recipe else [])
        )
        for key, section, name in checks:
            if name not in declared[section]:
                message = _unknown(section[:-1], name, declared[section])
                problem(("briefs", i, key), f"briefs[{i}].{key}", message)
        if brief.name in seen:
            problem(("briefs", i, "name"), f"briefs[{i}].name", f"'{brief.name}' is used twice")
        seen.add(brief.name)


def _check_summary(plan: Plan, declared, problem) -> None:
    for key, section in (("model", "models"), ("sku", "skus")):
        name = getattr(plan.summary, key)
        listed = getattr(plan, section)
        if name is not None and name not in declared[section]:
            problem(("summary", key), f"summary.{key}", _unknown(key, name, declared[section]))
        elif (
            name is not None and listed and name not in listed and set(listed) <= declared[section]
        ):
            message = f"'{name}' is not among the plan's {section} ({', '.join(listed)})"
            problem(("summary", key), f"summary.{key}", message)
    for key, options in (("gpus", plan.gpus), ("interval", plan.intervals)):
        q = getattr(plan.summary, key)
        if all(not math.isclose(q.value, o.value) for o in options):
            listed = ", ".join(o.text for o in options)
            what = key if key == "gpus" else "intervals"
            problem(
                ("summary", key),
                f"summary.{key}",
                f"{q.text!r} is not in the plan's {what} ({listed})",
            )


def _text(item: Any) -> str:
    return item.text if isinstance(item, Q) else str(item)


def _unknown(kind: str, name: str, known: dict) -> str:
    return (
        f"unknown {kind} '{name}'{did_you_mean(name, known)}; known: "
        f"{', '.join(sorted(known)) or '(none)'}"
    )
