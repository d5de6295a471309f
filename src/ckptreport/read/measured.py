"""Measured bandwidths: files written by `ckptreport probe` or `ckptreport import`, read back by
`ckptreport build --measured PATH ...`.

A measured file names the SKU its host is (and, for storage, the tier it wrote to) and holds one or
more metrics, each a bandwidth with its samples and method. Files from several hosts are
aggregated per hop (median, minimum, count); the median replaces the spec figure of that hop, and
every output then says "measured on N hosts" with the spec beside it.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import math
import os
import statistics
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import yaml
from pydantic import Field

from ..base.errors import InputError, Problem, did_you_mean
from ..base.safeio import read_regular
from . import units
from .inputs import ENGINES, INPUTS, TIERS, Input, attribute, measured_targets, replaced
from .load import place, validate_model
from .quantity import Name, Q, Quantity, Strict, Text
from .validated import Inputs, Prov
from .yamlfile import parse as parse_yaml

FORMAT = "1"
# metric -> the input it replaces (declared in inputs.py); None: recorded, informative only
TARGETS: dict[str, Input | None] = {
    **measured_targets(),
    "host_memcpy": None,
    "checkpoint_writer": None,
}
LOW, HIGH = 0.5, 1.1  # a measurement outside [50%, 110%] of spec is flagged


class Metric(Strict):
    """One measured figure."""

    value: Quantity("bandwidth") = Field(description="the figure used: median of the samples")
    samples: list[Quantity("bandwidth")] = Field(default_factory=list, description="every sample")
    method: Text = Field(description="how it was measured")
    tier: Name | None = Field(None, description="tier written to (tier_write, tier_write_per_node)")
    path: Text | None = Field(None, description="directory written to")
    writers: Quantity("count", integer=True) | None = Field(None, description="parallel writers")
    nodes: Quantity("count", integer=True) | None = Field(
        None, description="nodes writing at once (tier_write)"
    )


class Interference(Strict):
    """How much a background persist slowed a compute loop on this host (ckptreport probe
    --interference): it replaces the async_slowdown of the engines it names."""

    value: Quantity("percent", inclusive=True, maximum=1.0) = Field(
        description="the figure used: median of the samples"
    )
    samples: list[Quantity("percent", inclusive=True, maximum=1.0)] = Field(
        default_factory=list, description="every sample"
    )
    method: Text = Field(description="how it was measured")
    engines: list[Name] = Field(
        min_length=1, description="the engines whose background persist this stands for"
    )
    path: Text | None = Field(None, description="directory the background process wrote to")
    shard: Quantity("bytes") | None = Field(None, description="bytes written a pass")


class Gpus(Strict):
    model: Text
    count: Quantity("count", integer=True, minimum=0, inclusive=True)


class MeasuredFile(Strict):
    """A measured file (measured/*.yaml)."""

    ckptreport_measured: Literal["1"] = Field(description="format version")
    host: Name = Field(description="host the figures were measured on")
    time: Text = Field(description="when (UTC, ISO 8601)")
    tool: Text = Field(
        description="what measured: ckptreport probe, fio, IOR, nvbandwidth, with versions"
    )
    sku: Name = Field(description="the SKU (skus.NAME) this host is")
    gpus: Gpus | None = Field(None, description="GPU model and count seen")
    metrics: dict[Literal[tuple(TARGETS)], Metric] = Field(description="metric name -> figure")  # type: ignore[valid-type]
    skipped: list[Text] = Field(
        default_factory=list, description="what could not be measured, and why"
    )
    interference: Interference | None = Field(
        None,
        description="training slowed by a background persist (ckptreport probe --interference)",
    )


@dataclass(frozen=True)
class Measurement:
    """One hop's measurements aggregated over hosts."""

    section: str
    name: str
    field: str
    median: float
    minimum: float
    hosts: tuple[str, ...]
    files: tuple[str, ...]
    spec: float | None  # what the models directory said
    maximum: float | None = None  # the fastest host's figure

    @property
    def ratio(self) -> float | None:
        return self.median / self.spec if self.spec else None

    @property
    def unit(self) -> str:
        """How its figures read: a bandwidth, or a share (an engine's interference)."""
        return "percent" if self.section == ENGINES else "bandwidth"

    @property
    def flag(self) -> str:
        r = self.ratio
        if r is None or self.section == ENGINES:  # a measured share has no spec to fall short of
            return ""
        if r < LOW:
            return f"below {LOW:.0%} of spec"
        if r > HIGH:
            return f"above {HIGH:.0%} of spec"
        return ""

    @property
    def basis(self) -> str:
        n = len(set(self.hosts))
        return f"measured on {n} host{'s' if n != 1 else ''}"


def _files(paths: list[str | Path]) -> list[Path]:
    out: list[Path] = []
    for p in map(Path, paths):
        try:
            is_dir = p.is_dir()
        except OSError:
            is_dir = False
        if is_dir:
            out += sorted(q for q in p.iterdir() if q.suffix in (".yaml", ".yml"))
        else:
            out.append(p)
    return out


def read(paths: list[str | Path]) -> list[tuple[Path, MeasuredFile, dict, bytes]]:
    """Parse and validate measured files; one InputError lists every problem."""
    problems: list[Problem] = []
    out = []
    files = _files(paths)
    if not files:
        raise InputError(
            f"--measured {' '.join(map(str, paths))}: no measured files (*.yaml) found"
        )
    for path in files:
        shown = str(path)
        if not path.exists() and not path.is_symlink():
            problems.append(Problem(shown, 0, 0, "", "no such file"))
            continue
        try:
            raw = read_regular(path, shown)
            data, marks = parse_yaml(raw, shown)
        except InputError as e:
            problems += e.problems
            continue
        if not isinstance(data, dict):
            problems.append(
                Problem(
                    shown,
                    1,
                    1,
                    "",
                    "expected a measured file (a mapping with ckptreport_measured: 1)",
                )
            )
            continue
        parsed = validate_model(MeasuredFile, data, (), shown, marks, problems)
        if parsed is not None:
            out.append((path, parsed, marks, raw))
    if problems:
        raise InputError(problems)
    return out


def apply(inputs: Inputs, paths: list[str | Path]) -> Inputs:
    """Inputs with every measured hop replaced by the median over hosts, and provenance that says so."""
    parsed = read(paths)
    problems: list[Problem] = []
    samples: dict[tuple[str, str, str], list[tuple[float, str, str]]] = {}
    for path, mf, marks, _raw in parsed:
        shown = str(path)
        if mf.sku not in inputs.skus:
            line, col = place(marks, ("sku",))
            message = (
                f"unknown sku '{mf.sku}'{did_you_mean(mf.sku, inputs.skus)}; "
                f"known: {', '.join(sorted(inputs.skus))}"
            )
            problems.append(Problem(shown, line, col, "sku", message))
            continue
        for metric, m in mf.metrics.items():
            where = _measured_at(inputs, mf, metric, m, marks, shown, problems)
            if where is not None:
                samples.setdefault(where, []).append((m.value.value, mf.host, path.name))
        if mf.interference is not None:
            for k, engine in enumerate(mf.interference.engines):
                if _interference_at(inputs, engine, marks, shown, k, problems):
                    samples.setdefault((ENGINES, engine, "async_slowdown"), []).append(
                        (mf.interference.value.value, mf.host, path.name)
                    )
    if problems:
        raise InputError(problems)
    by_key = {(t.entity, t.key): t for t in TARGETS.values() if t is not None}
    by_key[(ENGINES, "async_slowdown")] = INPUTS["async_slowdown_pct"]
    measurements = {}
    for (section, name, field), rows in sorted(samples.items()):
        values = [v for v, _, _ in rows]
        spec = by_key[(section, field)].base_value(inputs.entity(section, name))
        spec = spec if math.isfinite(spec) and spec > 0 else None
        measurements[(section, name, field)] = Measurement(
            section,
            name,
            field,
            statistics.median(values),
            min(values),
            tuple(h for _, h, _ in rows),
            tuple(f for _, _, f in rows),
            spec,
            max(values),
        )
    return _replace(inputs, measurements, parsed)


def _interference_at(inputs: Inputs, engine: str, marks, shown: str, k: int, problems) -> bool:
    """Whether a measured interference may replace ``engine``'s async_slowdown: the engine exists
    and runs a save in the background (else the problem is appended, at its place)."""
    path = ("interference", "engines", k)
    line, col = place(marks, path)
    if engine not in inputs.engines:
        message = (
            f"unknown engine '{engine}'{did_you_mean(engine, inputs.engines)}; "
            f"known: {', '.join(sorted(inputs.engines))}"
        )
    elif not set(inputs.engines[engine].strategies) - {"sync"}:
        message = (
            f"engine '{engine}' saves only in sync: no background persist to slow training "
            "(name an engine with async, tiered or a layered strategy)"
        )
    else:
        return True
    problems.append(Problem(shown, line, col, f"interference.engines[{k}]", message))
    return False


def _measured_at(inputs: Inputs, mf, metric: str, m, marks, shown: str, problems: list[Problem]):
    """(section, name, key) of the input one metric of a measured file replaces; None for a metric
    that replaces nothing, or one that names what does not exist (the problem appended)."""
    target = TARGETS[metric]
    if target is None:
        return None
    section, field, name = target.entity, target.key, mf.sku

    def refuse(path: tuple, message: str) -> None:
        line, col = place(marks, path)
        problems.append(Problem(shown, line, col, ".".join(str(k) for k in path), message))

    if section == TIERS:
        if m.tier is None or m.tier not in inputs.tiers:
            what = (
                "names no tier"
                if m.tier is None
                else f"unknown tier '{m.tier}'{did_you_mean(m.tier, inputs.tiers)}"
            )
            refuse(("metrics", metric, "tier"), f"{what}; known: {', '.join(sorted(inputs.tiers))}")
            return None
        name = m.tier
    if section == TIERS and field == "write" and inputs.tiers[name].kind == "local_nvme":
        refuse(
            ("metrics", metric),
            f"tier '{name}' is node-local NVMe: it has no aggregate write to "
            "measure (measure tier_write_per_node, or the SKU's local_nvme_write)",
        )
        return None
    parent = field.rpartition(".")[0]
    if parent and getattr(inputs.entity(section, name), attribute(parent)) is None:
        refuse(
            ("metrics", metric),
            f"{section[:-1]} '{name}' has no {parent} in the models directory to measure",
        )
        return None
    return section, name, field


def _replace(inputs: Inputs, measurements: dict, parsed) -> Inputs:
    sections = {s: dict(inputs.section(s)) for s in ("skus", "tiers", "engines")}
    prov = dict(inputs.prov)
    for key, m in measurements.items():
        section, name, field = key
        unit = m.unit
        spec_text = units.fmt(m.spec, unit) if m.spec else "none"
        text = units.fmt(m.median, unit, 4)
        source = (
            f"median of {len(m.hosts)} measurement(s) on {', '.join(sorted(set(m.hosts)))} "
            f"(min {units.fmt(m.minimum, unit)}; {'shipped' if unit == 'percent' else 'spec'} {spec_text}"
            + (f"; {m.flag}" if m.flag else "")
            + f"): {', '.join(sorted(set(m.files)))}"
        )
        spread = (
            m.maximum is not None and m.minimum < m.maximum
        )  # hosts differ: the spread is the range
        q = Q(
            m.median,
            text,
            unit,
            m.basis,
            source,
            **(
                {
                    "low": m.minimum,
                    "high": m.maximum,
                    "distribution": "triangular",
                    "low_text": units.fmt(m.minimum, unit, 4),
                    "high_text": units.fmt(m.maximum, unit, 4),
                }
                if spread
                else {}
            ),
        )
        sections[section][name] = replaced(
            sections[section][name], field, q
        )  # a measured key wins over any derive rule
        prov[key] = Prov(sorted(set(m.files))[0], 0, m.basis, source)
    digest = hashlib.sha256(inputs.input_hash.encode())
    for path, _, _, raw in sorted(
        parsed, key=lambda p: (p[0].name, str(p[0]))
    ):  # named, not placed: cwd-free
        digest.update(path.name.encode() + b"\0" + raw)
    files = {
        **inputs.files,
        **{
            f"measured/{p.name}": hashlib.sha256(raw).hexdigest()
            for p, _, _, raw in sorted(parsed, key=lambda p: p[0].name)
        },
    }
    return dataclasses.replace(
        inputs,
        skus=sections["skus"],
        tiers=sections["tiers"],
        engines=sections["engines"],
        prov=prov,
        input_hash=digest.hexdigest(),
        measured=measurements,
        files=files,
    )


# ---- writing measured files -------------------------------------------------------------------


def document(
    host: str,
    tool: str,
    sku: str,
    metrics: dict[str, dict],
    gpus: dict | None = None,
    skipped: list[str] | None = None,
    when: dt.datetime | None = None,
    interference: dict | None = None,
) -> dict:
    """A measured file's content; metric values are bytes/s, written with units; ``interference``
    a share (0-1) with the engines it stands for."""
    when = when or dt.datetime.now(dt.UTC).replace(microsecond=0)
    out_metrics = {}
    for name, m in metrics.items():
        entry = {
            "value": units.fmt(m["value"], "bandwidth", 6),
            "samples": [units.fmt(s, "bandwidth", 6) for s in m.get("samples", [])],
            "method": m["method"],
        }
        for key in ("tier", "path"):
            if m.get(key) is not None:
                entry[key] = str(m[key])
        for key in ("writers", "nodes"):
            if m.get(key) is not None:
                entry[key] = str(int(m[key]))
        out_metrics[name] = entry
    doc = {
        "ckptreport_measured": FORMAT,
        "host": host,
        "time": when.isoformat().replace("+00:00", "Z"),
        "tool": tool,
        "sku": sku,
        "metrics": out_metrics,
    }
    if gpus:
        doc["gpus"] = {"model": gpus["model"], "count": str(gpus["count"])}
    if skipped:
        doc["skipped"] = skipped
    if interference:
        doc["interference"] = {
            "value": units.fmt(interference["value"], "percent", 4),
            "samples": [units.fmt(v, "percent", 4) for v in interference.get("samples", [])],
            "method": interference["method"],
            "engines": list(interference["engines"]),
            **({"path": str(interference["path"])} if interference.get("path") else {}),
            **(
                {"shard": units.fmt(interference["shard"], "bytes", 6)}
                if interference.get("shard")
                else {}
            ),
        }
    return doc


def dump(doc: dict, shown: str) -> str:
    """The measured file's text, read back with the reader ``build --measured`` uses: a file the
    reader would refuse is never written (InputError says why)."""
    text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=100)
    data, marks = parse_yaml(text.encode("utf-8"), shown)
    problems: list[Problem] = []
    validate_model(MeasuredFile, data, (), shown, marks, problems)
    if problems:
        raise InputError(
            [
                Problem(shown, 0, 0, p.path, f"the measured file would be invalid: {p.message}")
                for p in problems
            ]
        )
    return text


def write(doc: dict, path: Path) -> Path:
    """Write atomically: a temp file in the same directory, renamed into place."""
    path = Path(path)
    text = dump(doc, str(path))
    tmp = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".measured-", suffix=".yaml", dir=path.parent)
        with os.fdopen(fd, "w") as f:
            f.write(text)
        os.replace(tmp, path)
    except OSError as e:
        if tmp:
            Path(tmp).unlink(missing_ok=True)
        raise InputError(
            Problem(str(path), 0, 0, "", f"cannot write: {(e.strerror or str(e)).lower()}")
        ) from None
    except BaseException:
        if tmp:
            Path(tmp).unlink(missing_ok=True)
        raise
    return path
