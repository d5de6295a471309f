"""The types of input keys: quantities with units and a source, dtypes, names and free text.

Every quantity is a string with a unit (``100 GB/s``), or a mapping that also says where the figure
comes from: ``{value: 100 GB/s, basis: spec, source: "vendor datasheet ..."}``, and how uncertain it
is: ``low`` and ``high`` (in the same unit) and a ``distribution`` (triangular, the default, from
low to high with its mode at the value; uniform from low to high; lognormal with its median at the
value and low and high its 10th and 90th percentiles). ``Q`` is what a validated quantity holds:
its value in base units, the text the user wrote, its basis and source, and its range.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Annotated, Any

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, WithJsonSchema
from pydantic_core import PydanticCustomError

from . import units
from .vocab import BASES

MAPPING_KEYS = (
    "value",
    "basis",
    "source",
    "date",
    "region",
    "low",
    "high",
    "distribution",
    "driver",
)
DISTRIBUTIONS = ("triangular", "uniform", "lognormal")  # the first is a range's default
DATE = re.compile(r"(19|20)\d\d(-(0[1-9]|1[0-2])(-(0[1-9]|[12]\d|3[01]))?)?")


@dataclass(frozen=True)
class Q:
    """A parsed quantity: value in base units, the text the user wrote, and where it comes from."""

    value: float
    text: str
    kind: str
    basis: str | None = None  # None: take the entry's (spec when the entry has a source)
    source: str | None = None
    date: str | None = None  # when the figure was published or quoted: 2025-07 or 2025-07-08
    region: str | None = None  # where a price applies: us-east-1, us-central1, any
    low: float | None = None  # the range, in base units: None when the figure is taken as certain
    high: float | None = None
    distribution: str | None = None  # one of DISTRIBUTIONS when the figure has a range
    driver: str | None = (
        None  # figures naming the same driver move together (one draw, one tornado bar)
    )
    low_text: str | None = None  # the bounds as written
    high_text: str | None = None

    def range_text(self) -> str:
        """'22600 h to 83500 h (triangular)' as written, or '' when the figure is taken as certain."""
        if not self.uncertain:
            return ""
        return f"{self.low_text} to {self.high_text} ({self.distribution}" + (
            f", driver {self.driver})" if self.driver else ")"
        )

    @property
    def uncertain(self) -> bool:
        return self.low is not None


def _sourced(raw: dict) -> dict:
    """The keys of a sourced quantity's mapping, checked: value, basis, source, date, region, the
    bounds of its range, its distribution and driver."""
    unknown = set(raw) - set(MAPPING_KEYS)
    if unknown or "value" not in raw:
        raise PydanticCustomError(
            "quantity_mapping",
            f"a sourced quantity is a mapping with keys {', '.join(MAPPING_KEYS)}; "
            + (
                f"unknown key(s) {', '.join(sorted(map(repr, unknown)))}"
                if unknown
                else "'value' is missing"
            ),
        )
    basis, date, driver = raw.get("basis"), raw.get("date"), raw.get("driver")
    if basis is not None and basis not in BASES:
        raise PydanticCustomError(
            "basis",
            "basis must be one of {bases}, got {got}",
            {"bases": ", ".join(BASES), "got": repr(basis)},
        )
    if date is not None and not DATE.fullmatch(str(date)):
        raise PydanticCustomError(
            "date",
            "date must be a year, month or day like 2025, 2025-07 or 2025-07-08, got {got}",
            {"got": repr(date)},
        )
    for name in ("source", "region"):
        text = raw.get(name)
        if text is not None and (not isinstance(text, str) or len(text) > 4000):
            raise PydanticCustomError(
                "text", "{name} must be text of at most 4000 characters", {"name": name}
            )
        if text is not None and not printable_text(text):
            raise PydanticCustomError(
                "text",
                "{name} is printable text, without control characters or escape "
                "sequences, got {got}",
                {"name": name, "got": ascii(text)[:80]},
            )
    if driver is not None and (not isinstance(driver, str) or name_problem(driver)):
        raise PydanticCustomError(
            "range", "driver is a name shared by the figures that move together, e.g. gpu-mtbf"
        )
    if driver is not None and "low" not in raw:
        raise PydanticCustomError("range", "a driver goes with a range: give low and high too")
    return {
        **{
            k: raw.get(k)
            for k in ("value", "basis", "source", "date", "region", "distribution", "driver")
        },
        "bounds": {k: raw[k] for k in ("low", "high") if k in raw},
    }


def _range(
    raw: Any, value: float, bounds: dict, distribution: str | None, check
) -> tuple[float, float, str]:
    """A range's low and high (each parsed and checked by ``check``) and its distribution."""
    if set(bounds) != {"low", "high"}:
        raise PydanticCustomError(
            "range",
            "a range gives both low and high, in the value's unit (value: 50000 h, "
            "low: 20000 h, high: 120000 h)",
        )
    distribution = DISTRIBUTIONS[0] if distribution is None else distribution
    if distribution not in DISTRIBUTIONS:
        raise PydanticCustomError(
            "range",
            "distribution must be one of {known}, got {got}",
            {"known": ", ".join(DISTRIBUTIONS), "got": repr(distribution)},
        )
    low, high = check(bounds["low"], "low: "), check(bounds["high"], "high: ")
    if not low <= value <= high or low == high:
        raise PydanticCustomError(
            "range",
            "expected low <= value <= high with low below high, got low {low}, "
            "value {value}, high {high}",
            {"low": repr(bounds["low"]), "value": repr(raw), "high": repr(bounds["high"])},
        )
    if distribution == "lognormal" and low <= 0:
        raise PydanticCustomError(
            "range", "a lognormal range needs low above 0, got {low}", {"low": repr(bounds["low"])}
        )
    if not all(math.isfinite(v) for v in (low, value, high)):
        raise PydanticCustomError(
            "range", "a range is finite: low, value and high are numbers with units"
        )
    return low, high, distribution


def _figure(
    kind: str,
    minimum: float,
    inclusive: bool,
    integer: bool,
    maximum: float | None,
    plausible: tuple[float, float, str, str] | None = None,
):
    """``check(raw, where)``: one figure of a quantity of ``kind`` (its value, or a bound of its
    range) parsed and checked against the key's floor, the kind's plausible range, its ceiling and
    wholeness; ``where`` prefixes the message ('low: ')."""

    def check(raw: Any, where: str) -> float:
        try:
            value = units.parse(raw, kind)
        except units.UnitError as e:
            raise PydanticCustomError("unit", where + str(e)) from None
        if value < minimum or (value == minimum and not inclusive):
            word = "at least" if inclusive else "greater than"
            floor = units.fmt(minimum, kind) if minimum else "0"
            raise PydanticCustomError(
                "unit_range",
                where + "expected a {kind} {word} {floor}, got {got}",
                {"kind": units.KINDS[kind].name, "word": word, "floor": floor, "got": repr(raw)},
            )
        if (
            maximum is not None and value > maximum
        ):  # the key's own ceiling first: a share is at most 100%
            raise PydanticCustomError(
                "unit_range",
                where + "expected a {kind} of at most {ceiling}, got {got}",
                {
                    "kind": units.KINDS[kind].name,
                    "ceiling": units.fmt(maximum, kind),
                    "got": repr(raw),
                },
            )
        low, high = plausible[:2] if plausible else units.PLAUSIBLE.get(kind, (0.0, math.inf))
        if value != 0 and not low <= value <= high:
            shown = plausible[2:] if plausible else (units.fmt(low, kind), units.fmt(high, kind))
            raise PydanticCustomError(
                "unit_range",
                where + "expected a {kind} from {low} to {high}, got {got}",
                {
                    "kind": units.KINDS[kind].name,
                    "low": shown[0],
                    "high": shown[1],
                    "got": repr(raw),
                },
            )
        if integer and value != int(value):
            raise PydanticCustomError(
                "unit_int", where + "expected a whole number, got {got}", {"got": repr(raw)}
            )
        return value

    return check


def _quantity_validator(
    kind: str,
    minimum: float,
    inclusive: bool,
    integer: bool,
    maximum: float | None,
    ranged: bool,
    plausible: tuple[float, float, str, str] | None = None,
):
    check = _figure(kind, minimum, inclusive, integer, maximum, plausible)

    def validate(raw: Any) -> Q:
        if isinstance(raw, Q):
            return raw
        meta = _sourced(raw) if isinstance(raw, dict) else {"value": raw, "bounds": {}}
        raw = meta["value"]
        value = check(raw, "")
        sourced = [meta.get(k) for k in ("basis", "source", "date", "region")]
        if not meta["bounds"] and meta.get("distribution") is None:
            return Q(value, str(raw).strip(), kind, *sourced)
        if not ranged:
            raise PydanticCustomError(
                "range",
                "this key takes one figure, not a range (low, high, distribution): "
                + ("a whole number is not sampled" if integer else "it names a point of the plan"),
            )
        low, high, distribution = _range(
            raw, value, meta["bounds"], meta.get("distribution"), check
        )
        bounds = meta["bounds"]
        return Q(
            value,
            str(raw).strip(),
            kind,
            *sourced,
            low,
            high,
            distribution,
            meta.get("driver"),
            str(bounds["low"]).strip(),
            str(bounds["high"]).strip(),
        )

    return validate


@dataclass(frozen=True)
class Kind:
    """Marks a field's unit kind: ``key`` in ``units.KINDS``, ``name`` as the docs print it."""

    name: str
    key: str = ""


_BARE_NUMBER_OK = {"usd", "count"}  # a YAML number is read in the key's unit only for these


def json_schema(kind: str, ranged: bool = True) -> dict:
    """The JSON Schema of a quantity of ``kind``: its text (a pattern, with examples), or a mapping that
    also gives its basis and source."""
    info = units.KINDS[kind]
    text = {
        "type": "string",
        "pattern": units.EDITOR_PATTERNS[kind],
        "examples": re.findall(r"'([^']*)'", info.example),
    }
    plain = {"anyOf": [text, {"type": "number"}]} if kind in _BARE_NUMBER_OK else text
    mapping = {
        "type": "object",
        "additionalProperties": False,
        "required": ["value"],
        "properties": {
            "value": plain,
            **(
                {
                    "low": plain,
                    "high": plain,
                    "distribution": {"enum": list(DISTRIBUTIONS)},
                    "driver": {"type": "string"},
                }
                if ranged
                else {}
            ),
            "basis": {"enum": list(BASES)},
            "source": {"type": "string", "maxLength": 4000},
            "date": {"type": ["string", "integer"]},
            "region": {"type": "string"},
        },
    }
    return {"anyOf": [plain, mapping], "description": f"a {info.name}, e.g. {info.example}"}


def Quantity(
    kind: str,
    *,
    minimum: float = 0.0,
    inclusive: bool = False,
    integer: bool = False,
    maximum: float | None = None,
    ranged: bool | None = None,
    plausible: tuple[str, str] | None = None,
):
    """An annotated field type: a quantity of ``kind`` (see ``units.KINDS``), positive by default.
    ``ranged``: whether it may carry a range (default: unless it is a whole number). ``plausible``: the
    figures (as written, in the kind's units) between which a value of this key can be a plan rather
    than a typo; omitted, the kind's own range (``units.PLAUSIBLE``). Zero stays allowed where the key
    allows it."""
    ranged = not integer if ranged is None else ranged
    bounds = (
        None
        if plausible is None
        else (units.parse(plausible[0], kind), units.parse(plausible[1], kind), *plausible)
    )
    marks = () if plausible is None else (Plausible(*plausible),)
    low, high = bounds[:2] if bounds else units.PLAUSIBLE.get(kind, (0.0, math.inf))
    floor = (
        minimum if inclusive and minimum == 0 else max(minimum, low)
    )  # a zero skips the plausible range
    allowed = Bounds(floor, min(math.inf if maximum is None else maximum, high), ranged)
    return Annotated[
        Q,
        BeforeValidator(
            _quantity_validator(kind, minimum, inclusive, integer, maximum, ranged, bounds)
        ),
        WithJsonSchema(json_schema(kind, ranged)),
        Kind(units.KINDS[kind].name, kind),
        allowed,
        *marks,
    ]


@dataclass(frozen=True)
class Bounds:
    """Where a key's figures may lie (base units): its floor and the plausible range's low, its ceiling
    and the plausible range's high. A draw or a sweep end of its range stays inside them."""

    low: float
    high: float
    ranged: bool  # whether the key may carry a range at all (a whole number is never drawn)


def bounds_of(annotation) -> Bounds | None:
    """A quantity field type's allowed bounds (None for any other type)."""
    return next((m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, Bounds)), None)


@dataclass(frozen=True)
class Plausible:
    """Marks a key's plausible range (as written): the docs print it, the tests try both sides of it."""

    low: str
    high: str


def plausible_of(annotation) -> Plausible | None:
    """A field type's plausible range, where its key declares one."""
    return next(
        (m for m in getattr(annotation, "__metadata__", ()) if isinstance(m, Plausible)), None
    )


def _dtype(raw: Any) -> float:
    try:
        return units.parse(raw, "dtype")
    except units.UnitError as e:
        raise PydanticCustomError("unit", str(e)) from None


Dtype = Annotated[
    float,
    BeforeValidator(_dtype),
    WithJsonSchema({"enum": sorted(units.DTYPE_BYTES)}),
    Kind("dtype", "dtype"),
]
# yes or no: what pydantic reads as a boolean (YAML 1.2 editors see 'no' as text, so the schema says so)
Flag = Annotated[
    bool,
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "boolean"},
                {
                    "enum": [
                        "yes",
                        "no",
                        "true",
                        "false",
                        "on",
                        "off",
                        "y",
                        "n",
                        "Yes",
                        "No",
                        "True",
                        "False",
                    ]
                },
            ]
        }
    ),
    Kind("yes or no", "bool"),
]
NAME_MAX = 100  # a name becomes a file name, a sheet cell, a chart label: it must stay short


def name_problem(name: object) -> str | None:
    """Why ``name`` cannot name a model, SKU, tier, recipe or host (None when it can)."""
    if not isinstance(name, str) or not name:
        return "a name is needed (printable text)"
    if len(name) > NAME_MAX:
        return f"a name is at most {NAME_MAX} characters, got {len(name):,}"
    if not name.isprintable():
        return f"a name is printable text, without control characters or escape sequences, got {ascii(name)}"
    if name != name.strip():
        return f"a name does not begin or end with spaces, got {name!r}"
    return None


def _name(value: str) -> str:
    why = name_problem(value)
    if why:
        raise PydanticCustomError("name", why)
    return value


def printable_text(value: str) -> bool:
    """Free text a models file may hold (a description, a source): printable, lines and tabs allowed;
    no control character or escape sequence (a terminal, a PDF or a workbook's XML would act on it)."""
    return all(ch.isprintable() or ch in "\n\t" for ch in value)


def _text(value: str) -> str:
    if not printable_text(value):
        raise PydanticCustomError(
            "text", "text is printable, without control characters or escape sequences"
        )
    return value


Name = Annotated[str, Field(min_length=1), AfterValidator(_name)]
Text = Annotated[str, Field(max_length=4000), AfterValidator(_text)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, hide_input_in_errors=True)
