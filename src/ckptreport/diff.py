"""Compare two builds for a planning review: what changed in the inputs, and what it changed in the
headline (the recommendation, overhead, stall, cost, bandwidth needed).

Each side is an output directory (its manifest.json records every input value with its file and
line, and every recommendation) or a models directory (loaded and computed here, nothing written).
Both reduce to the same snapshot, the manifest's own fields, so a build and its models compare
equal. ``ckptreport diff`` prints ``compare``'s dict as text (``render.terminal.diff``) or as JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path

from .answer.headline import FIELDS
from .answer.types import RECOMMENDED, option_label
from .base.errors import InputError, Problem
from .base.safeio import read_regular
from .read import units

MANIFEST = "manifest.json"
MAX_MANIFEST_BYTES = 64 * 2**20


MAX_DIGITS = 30  # an integer a manifest writes (rows, GPUs, lines) has far fewer


def _int(text: str) -> int:
    """A JSON integer, refused when longer than any a manifest writes (a 400-digit one overflows a
    float; Python refuses 4,300 digits with an error of its own)."""
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"an integer of {len(text.lstrip('-')):,} digits (at most {MAX_DIGITS})")
    return int(text)


def _manifest(path: Path, shown: str) -> dict:
    try:
        doc = json.loads(read_regular(path, shown, MAX_MANIFEST_BYTES), parse_int=_int)
    except (UnicodeDecodeError, ValueError, RecursionError) as e:  # JSONDecodeError is a ValueError
        why = "nested too deeply" if isinstance(e, RecursionError) else str(e)
        raise InputError(
            Problem(shown, 0, 0, "", f"not a ckptreport manifest (not JSON: {why})")
        ) from None
    if not isinstance(doc, dict) or not isinstance(doc.get("recommendations"), list):
        raise InputError(
            Problem(
                shown, 0, 0, "recommendations", "not a ckptreport manifest (no recommendations)"
            )
        )
    return doc


def snapshot(where: str | Path, progress=lambda _: None) -> dict:
    """One side of a diff: ``{"where", "kind", "values", "measured", "recommendations", "briefs"}``.
    ``values`` is None for a manifest written before inputs were recorded."""
    path = Path(where)
    if (path / MANIFEST).exists():
        doc = _manifest(path / MANIFEST, str(path / MANIFEST))
        kind = "build"
    elif (path / "plan.yaml").exists() or (path / "models.yaml").exists():
        from .answer.report import compute
        from .answer.types import BRIEFS
        from .build import load_inputs
        from .render.manifest import manifest

        progress(f"computing {path}")
        report = compute(load_inputs(path), needs=frozenset({BRIEFS}))
        doc = manifest(report, {}, {})
        kind = "models"
    else:
        raise InputError(
            Problem(
                str(path),
                0,
                0,
                "",
                f"is neither a build (no {MANIFEST}) nor a models directory "
                "(no plan.yaml): pass two output directories of ckptreport build, or two models "
                "directories",
            )
        )
    _check(doc, str(path / MANIFEST) if kind == "build" else str(path))
    return {
        "where": str(path),
        "kind": kind,
        "values": doc.get("input_values"),
        "measured": {m["hop"]: m for m in doc.get("measured") or []},
        "recommendations": doc["recommendations"],
        "briefs": doc.get("briefs") or [],
    }


def _text_or_none(v) -> bool:
    return v is None or (isinstance(v, str) and v.isprintable())


def _texts(v) -> bool:
    return isinstance(v, list) and all(isinstance(t, str) and t.isprintable() for t in v)


def _positive(v) -> bool:
    return type(v) in (int, float) and math.isfinite(v) and v > 0


def _runner(v) -> bool:
    return v is None or (
        isinstance(v, dict)
        and all(_text_or_none(v.get(k)) for k in ("tier", "strategy", "engine"))
        and (
            v.get("extra_usd") is None
            or (type(v["extra_usd"]) in (int, float) and math.isfinite(v["extra_usd"]))
        )
    )


# What the identity of a recommendation or a brief holds: the diff prints and matches on these.
_IDENTITY = [
    (k, "printable text or null", _text_or_none)
    for k in ("model", "recipe", "sku", "tier", "strategy", "engine", "status", "name")
]
_SHAPES = {
    "recommendations": [
        *_IDENTITY,
        ("gpus", "a number of GPUs", _positive),
        ("interval_s", "seconds", _positive),
        ("meets_target", "true or false", lambda v: isinstance(v, bool)),
        ("runner_up", "null or a mapping of tier, strategy, engine and extra_usd", _runner),
        ("assumed_prices", "a list of text", _texts),
        ("needs_price", "a list of text", _texts),
    ],
    "briefs": [
        *_IDENTITY,
        ("gpus", "a number of GPUs", _positive),
        ("interval_s", "seconds", _positive),
        ("meets_target", "true or false", lambda v: isinstance(v, bool)),
        ("assumed_prices", "a list of text", _texts),
        ("needs_price", "a list of text", _texts),
    ],
}


def _check(doc: dict, shown: str) -> None:
    """A manifest edited by hand or cut short is refused with the key at fault, not compared wrongly."""

    def bad(key: str, what: str):
        raise InputError(
            Problem(shown, 0, 0, key, f"expected {what}; is this a ckptreport manifest?")
        )

    values = doc.get("input_values")
    if values is not None:
        if not isinstance(values, dict):
            bad("input_values", "a mapping of files")
        for file, keys in values.items():
            if not isinstance(keys, dict) or not all(
                isinstance(v, list) and len(v) == 2 and type(v[0]) is int and isinstance(v[1], str)
                for v in keys.values()
            ):
                bad(f"input_values.{file}", "a mapping of keys to [line, text]")
    for section, fields in (
        ("recommendations", [f.key for f in FIELDS]),
        ("briefs", []),
        ("measured", ["median_Bps", "median_fraction"]),
    ):
        items = doc.get(section) or []
        if not isinstance(items, list):
            bad(section, "a list")
        for i, item in enumerate(items):
            if not isinstance(item, dict):
                bad(f"{section}[{i}]", "a mapping")
            for key in fields:
                v = item.get(key)
                if v is not None and (type(v) not in (int, float) or not math.isfinite(v)):
                    bad(f"{section}[{i}].{key}", "a number or null")
            for key, what, ok in _SHAPES.get(section, ()):
                if key in item and not ok(item[key]):
                    bad(f"{section}[{i}].{key}", what)
            if section == "measured" and not isinstance(item.get("hop"), str):
                bad(f"{section}[{i}].hop", "text")


def _inputs(old: dict, new: dict) -> list[dict]:
    """Every input value that differs, with file and line on both sides."""
    if old["values"] is None or new["values"] is None:
        return []
    out = []
    for file in sorted(set(old["values"]) | set(new["values"])):
        a, b = old["values"].get(file, {}), new["values"].get(file, {})
        for key in [*a, *(k for k in b if k not in a)]:
            was, now = a.get(key), b.get(key)
            if was is not None and now is not None and was[1] == now[1]:
                continue
            out.append(
                {
                    "file": file,
                    "key": key,
                    "old": None if was is None else {"line": was[0], "value": was[1]},
                    "new": None if now is None else {"line": now[0], "value": now[1]},
                }
            )
    for hop in sorted(set(old["measured"]) | set(new["measured"]), key=str):
        was, now = old["measured"].get(hop), new["measured"].get(hop)
        shown = [
            None
            if m is None
            else {
                "line": 0,
                "value": f"{m.get('basis')} "
                + (
                    f"{100 * m['median_fraction']:.3g}%"
                    if m.get("median_fraction") is not None
                    else units.fmt(m.get("median_Bps") or 0, "bandwidth")
                ),
            }
            for m in (was, now)
        ]
        if shown[0] != shown[1]:
            out.append({"file": "measured", "key": str(hop), "old": shown[0], "new": shown[1]})
    return out


def _option(r: dict | None) -> str | None:
    if r is None:
        return None
    text = option_label(r.get("strategy"), r.get("tier"), r.get("engine"))
    status = r.get("status")
    return text if status == RECOMMENDED else f"{text} ({status})"


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)


def _line_key(r: dict) -> tuple:
    return (r.get("model"), r.get("recipe"), r.get("sku"), r.get("gpus"), r.get("interval_s"))


def _headline(old: dict, new: dict) -> list[dict]:
    a = {_line_key(r): r for r in old["recommendations"]}
    b = {_line_key(r): r for r in new["recommendations"]}
    out = []
    for key in [*a, *(k for k in b if k not in a)]:
        was, now = a.get(key), b.get(key)
        model, recipe, sku, gpus, interval_s = key
        line = {
            "model": model,
            "recipe": recipe,
            "sku": sku,
            "gpus": gpus,
            "interval_s": interval_s,
            "recommendation": {"old": _option(was), "new": _option(now)},
            "changed": {},
        }
        line["recommendation_changed"] = (
            line["recommendation"]["old"] != line["recommendation"]["new"]
        )
        if was is not None and now is not None:
            for f in FIELDS:
                if not _same(was.get(f.key), now.get(f.key)):
                    line["changed"][f.key] = {"old": was.get(f.key), "new": now.get(f.key)}
            runner = [
                None
                if r.get("runner_up") is None
                else option_label(
                    r["runner_up"].get("strategy"),
                    r["runner_up"].get("tier"),
                    r["runner_up"].get("engine"),
                )
                for r in (was, now)
            ]
            if runner[0] != runner[1]:
                line["changed"]["runner_up"] = {"old": runner[0], "new": runner[1]}
            prices = [sorted(r.get("assumed_prices") or []) for r in (was, now)]
            if prices[0] != prices[1]:
                line["changed"]["assumed_prices"] = {"old": prices[0], "new": prices[1]}
        if line["recommendation_changed"] or line["changed"]:
            out.append(line)
    return out


def _briefs(old: dict, new: dict) -> list[dict]:
    if (
        not old["briefs"] or not new["briefs"]
    ):  # a build without briefs (--no-briefs): nothing to compare
        return []
    a = {b.get("name"): b for b in old["briefs"]}
    b = {x.get("name"): x for x in new["briefs"]}
    out = []
    for name in [*a, *(k for k in b if k not in a)]:
        options = [
            None if x is None else f"{_option(x)} on {x.get('sku')}"
            for x in (a.get(name), b.get(name))
        ]
        if options[0] != options[1]:
            out.append({"brief": name, "old": options[0], "new": options[1]})
    return out


def compare(old: dict, new: dict) -> dict:
    """What changed from ``old`` to ``new`` (two snapshots). ``recommendation_changed`` is true when
    any summary line or brief recommends another option (or a line appears or goes)."""
    headline = _headline(old, new)
    briefs = _briefs(old, new)
    return {
        "old": old["where"],
        "new": new["where"],
        "inputs_recorded": old["values"] is not None and new["values"] is not None,
        "inputs": _inputs(old, new),
        "headline": headline,
        "briefs": briefs,
        "briefs_compared": bool(old["briefs"]) and bool(new["briefs"]),
        "recommendation_changed": any(h["recommendation_changed"] for h in headline)
        or bool(briefs),
    }
