"""Every quantity ckptreport reads is parsed here, once, into base units.

Base units inside the program: bytes, seconds, bytes/s, FLOP/s, US dollars, plain counts, and
fractions for percentages. Sizes and bandwidths go through a pint registry that defines only what
this domain needs (bytes ``B``, bits ``b``, seconds, FLOP) with decimal *and* binary prefixes, so
``GB`` (1e9 bytes) and ``GiB`` (2**30 bytes) are never confused and ``Gb`` is a gigabit, not pint's
default gigabarn. Counts (``405.85B`` = 405.85e9), percentages, dollars and dtypes have their own
small grammars.

``parse(text, kind)`` raises ``UnitError`` whose message says what was expected and what was found;
``fmt(value, kind)`` prints a value the way a planner reads it and ``fmt_exact`` prints one that
parses back to the same float.
"""

from __future__ import annotations

import functools
import math
import re
from dataclasses import dataclass

__all__ = [
    "KINDS",
    "DTYPE_BYTES",
    "UnitError",
    "parse",
    "fmt",
    "fmt_exact",
]


class UnitError(ValueError):
    """A quantity that does not parse as the kind that was due."""


_DEFINITIONS = """
byte = [information] = B
bit = byte / 8 = b
second = [time] = s = sec
minute = 60 * second = min
hour = 60 * minute = h = hr
day = 24 * hour = d = days
week = 7 * day = wk
year = 365.25 * day = y = yr = years
flop = [compute] = FLOP
FLOPS = flop / second
kilo- = 1e3 = k
mega- = 1e6 = M
giga- = 1e9 = G
tera- = 1e12 = T
peta- = 1e15 = P
exa- = 1e18 = E
kibi- = 2**10 = Ki
mebi- = 2**20 = Mi
gibi- = 2**30 = Gi
tebi- = 2**40 = Ti
pebi- = 2**50 = Pi
exbi- = 2**60 = Ei
"""


@functools.cache
def _registry():
    """The pint registry, built on first use: the common spellings never need it (``_FAST``)."""
    import pint

    ureg = pint.UnitRegistry(None, case_sensitive=True)
    for line in _DEFINITIONS.strip().splitlines():
        ureg.define(line)
    return ureg


def _fast_units() -> dict[str, tuple[str, float]]:
    """Unit spellings -> (kind, factor to the base unit), for the forms every models file uses
    (``80 GB``, ``400 Gb/s``, ``30 min``, ``989 TFLOPS``). They are read without pint, which takes
    a fifth of a second to import; every entry is checked against pint by the tests, and anything
    else (``GB/min``, ``kilobyte``, an unknown unit) goes to pint as before."""
    prefixes = {
        "": 1.0,
        "k": 1e3,
        "M": 1e6,
        "G": 1e9,
        "T": 1e12,
        "P": 1e15,
        "E": 1e18,
        "Ki": 2.0**10,
        "Mi": 2.0**20,
        "Gi": 2.0**30,
        "Ti": 2.0**40,
        "Pi": 2.0**50,
        "Ei": 2.0**60,
    }
    out: dict[str, tuple[str, float]] = {}
    for p, f in prefixes.items():
        out[f"{p}B"] = ("bytes", f)
        out[f"{p}b"] = ("bytes", f / 8)
        for per in ("/s", "/sec"):
            out[f"{p}B{per}"] = ("bandwidth", f)
            out[f"{p}b{per}"] = ("bandwidth", f / 8)
        out[f"{p}FLOPS"] = ("flops", f)
        out[f"{p}FLOP/s"] = ("flops", f)
    for name, f in (
        ("s", 1.0),
        ("sec", 1.0),
        ("second", 1.0),
        ("min", 60.0),
        ("minute", 60.0),
        ("h", 3600.0),
        ("hr", 3600.0),
        ("hour", 3600.0),
        ("d", 86400.0),
        ("day", 86400.0),
        ("days", 86400.0),
        ("wk", 604800.0),
        ("week", 604800.0),
        ("y", 31557600.0),
        ("yr", 31557600.0),
        ("year", 31557600.0),
        ("years", 31557600.0),
    ):
        out[name] = ("duration", f)
    return out


_FAST = _fast_units()
_FAST_RE = re.compile(r"^([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([A-Za-z/]+)$")


@dataclass(frozen=True)
class Kind:
    name: str
    example: str
    dimensionality: str | None  # pint dimensionality, for the kinds pint parses
    base: str | None  # pint unit to convert to


KINDS: dict[str, Kind] = {
    "bytes": Kind("size", "'80 GB' or '2 TiB'", "[information]", "B"),
    "bandwidth": Kind(
        "bandwidth", "'100 GB/s' or '400 Gb/s' or '2 x 400 Gb/s'", "[information] / [time]", "B/s"
    ),
    "duration": Kind("duration", "'30 min', '3 h', '50000 h' or '5 y'", "[time]", "s"),
    "flops": Kind("FLOP rate", "'989 TFLOPS'", "[compute] / [time]", "FLOPS"),
    "count": Kind("count", "'405.85B', '15.6T' or '1024'", None, None),
    "percent": Kind("percentage", "'40%'", None, None),
    "usd": Kind("dollar amount", "'$4.92'", None, None),
    "dtype": Kind("dtype", "one of bf16, fp16, fp32, fp8, int8", None, None),
}

# The range a figure of each kind can plausibly take (a value of 0 aside, where a key allows it).
# Outside it is a typo or a hostile input, and would give infinite times or overflowing counts.
PLAUSIBLE: dict[str, tuple[float, float]] = {
    "bytes": (1.0, 1e21),  # a byte to a zettabyte
    "bandwidth": (1.0, 1e16),  # a byte per second to 10 PB/s
    "duration": (1e-3, 1000 * 365.25 * 86400),  # a millisecond to a thousand years
    "flops": (1e9, 1e19),  # a GFLOP/s to 10 EFLOP/s per GPU
    "count": (1.0, 1e15),  # within int64 after every product the evaluator forms
    "percent": (0.0, 100.0),  # 0% to 10,000%
    "usd": (0.0, 1e12),
}

DTYPE_BYTES: dict[str, float] = {
    "fp64": 8,
    "fp32": 4,
    "tf32": 4,
    "bf16": 2,
    "fp16": 2,
    "fp8": 1,
    "int8": 1,
    "fp4": 0.5,
    "int4": 0.5,
}

_COUNT_SUFFIX = {"": 1.0, "K": 1e3, "k": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12, "P": 1e15}
_NUMBER = r"[-+]?(?:\d[\d_,]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_COUNT_RE = re.compile(rf"^({_NUMBER})\s*([KkMBGTP]?)$")
_PERCENT_RE = re.compile(rf"^({_NUMBER})\s*%$")
# a bare number is dollars too: every key of this kind says usd in its name (usd_per_gpu_hour: 4.92)
_USD_RE = re.compile(rf"^(?:\$\s*({_NUMBER})|({_NUMBER})\s*(?:USD|usd|\$)?)$")
_MULT_RE = re.compile(rf"^({_NUMBER})\s*[x×*]\s*(.+)$")


def _editor(regex: re.Pattern) -> str:
    """A parser pattern as an editor's JSON Schema pattern: the same, around the spaces parse strips."""
    return r"^\s*(?:" + regex.pattern.removeprefix("^").removesuffix("$") + r")\s*$"


# What an editor's JSON Schema says each kind looks like (``ckptreport schema``). Counts, percentages
# and dollars are the parser's own patterns; sizes, bandwidths, durations and FLOP rates go through
# pint, so theirs are lenient: a number and a unit of the family. The parser stays the judge.
EDITOR_PATTERNS = {
    "count": _editor(_COUNT_RE),
    "percent": _editor(_PERCENT_RE),
    "usd": _editor(_USD_RE),
    "bytes": rf"^\s*{_NUMBER}\s*[kMGTPE]?i?B\s*$",
    "bandwidth": rf"^\s*(?:{_NUMBER}\s*[x×*]\s*)?{_NUMBER}\s*[kMGTPE]?i?(?:B|b)(?:/s|ps|/min|/h)\s*$",
    "duration": rf"^\s*{_NUMBER}\s*[A-Za-z]+\s*$",
    "flops": rf"^\s*{_NUMBER}\s*[kMGTPE]?FLOPS\s*$",
}
_PLAIN_NUMBER_RE = re.compile(rf"^{_NUMBER}$")
_LEADING_NUMBER_RE = re.compile(r"^[-+]?\.?\d")


def _expected(kind: str, text: object, why: str = "") -> UnitError:
    k = KINDS[kind]
    found = repr(text) if isinstance(text, str) else f"a {type(text).__name__}"
    msg = f"expected a {k.name} like {k.example}, got {found}"
    if kind == "dtype":
        msg = f"expected a dtype ({k.example}), got {found}"
    return UnitError(msg + (f" ({why})" if why else ""))


def _number(text: str) -> float:
    return float(text.replace("_", "").replace(",", ""))


def _parse_pint(text: str, kind: str) -> float:
    if _PLAIN_NUMBER_RE.match(text):
        raise _expected(kind, text, "a unit is required")
    if not _LEADING_NUMBER_RE.match(text):  # pint reads a bare 'GB/s' as 1 GB/s
        raise _expected(kind, text, "a number is required before the unit")
    if kind == "bandwidth":
        text = re.sub(r"(?<=[A-Za-z])ps\b", "/s", text)  # 'GBps' -> 'GB/s', 'Gbps' -> 'Gb/s'
    fast = _FAST_RE.match(text)
    if fast and _FAST.get(fast.group(2), ("", 0.0))[0] == kind:
        return float(fast.group(1)) * _FAST[fast.group(2)][1]
    return _parse_with_pint(text, kind)


def _parse_with_pint(text: str, kind: str) -> float:
    import pint

    k = KINDS[kind]
    ureg = _registry()
    try:
        q = ureg.Quantity(text)
    except pint.errors.UndefinedUnitError as e:
        names = ", ".join(repr(u) for u in e.unit_names) if e.unit_names else repr(text)
        hint = "units are case-sensitive: GB = 1e9 bytes, Gb = 1e9 bits, GiB = 2**30 bytes"
        raise _expected(kind, text, f"unknown unit {names}; {hint}") from None
    except Exception:  # pint's expression parser raises many types on garbage
        raise _expected(kind, text) from None
    if (
        not isinstance(q, pint.Quantity)
        or q.dimensionality != ureg.parse_units(k.base).dimensionality
    ):
        got = "a plain number" if not isinstance(q, pint.Quantity) else _describe_dim(q)
        raise _expected(kind, text, f"that is {got}")
    value = float(q.to(k.base).magnitude)
    return value


def _describe_dim(q) -> str:
    for kind in KINDS.values():
        if kind.base and q.dimensionality == _registry().parse_units(kind.base).dimensionality:
            return f"a {kind.name}"
    return f"in {q.units:~}"


def parse(text: object, kind: str) -> float:
    """Parse ``text`` as a quantity of ``kind`` and return it in base units (always finite)."""
    try:
        value = _parse(text, kind)
    except OverflowError:
        raise _expected(kind, text, "too large") from None
    if not math.isfinite(value):
        raise _expected(kind, text, "too large")
    return value


def _parse(text: object, kind: str) -> float:
    if kind not in KINDS:
        raise KeyError(kind)
    if isinstance(text, bool) or not isinstance(text, (str, int, float)):
        raise _expected(kind, text)
    s = str(text).strip()
    if not s:
        raise _expected(kind, text, "it is empty")
    if kind == "dtype":
        key = s.lower()
        if key not in DTYPE_BYTES:
            raise _expected(kind, text)
        return DTYPE_BYTES[key]
    if kind == "count":
        m = _COUNT_RE.match(s)
        if not m:
            raise _expected(kind, text)
        return _number(m.group(1)) * _COUNT_SUFFIX[m.group(2)]
    if kind == "percent":
        m = _PERCENT_RE.match(s)
        if not m:
            raise _expected(kind, text)
        return _number(m.group(1)) / 100.0
    if kind == "usd":
        m = _USD_RE.match(s)
        if not m:
            raise _expected(kind, text)
        return _number(m.group(1) or m.group(2))
    if kind == "bandwidth":
        m = _MULT_RE.match(s)
        if m:
            return _number(m.group(1)) * _parse_pint(m.group(2).strip(), kind)
    return _parse_pint(s, kind)


# ---- printing -------------------------------------------------------------------------------

_BYTE_STEPS = [(1e18, "EB"), (1e15, "PB"), (1e12, "TB"), (1e9, "GB"), (1e6, "MB"), (1e3, "kB")]
_BW_STEPS = [(1e15, "PB/s"), (1e12, "TB/s"), (1e9, "GB/s"), (1e6, "MB/s"), (1e3, "kB/s")]
_FLOP_STEPS = [(1e18, "EFLOPS"), (1e15, "PFLOPS"), (1e12, "TFLOPS"), (1e9, "GFLOPS")]
_COUNT_STEPS = [(1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")]


def _sig(x: float, digits: int) -> str:
    if x == 0:
        return "0"
    out = f"{x:.{digits}g}"
    if "e" in out:  # keep plain notation for readability
        out = f"{x:.{max(digits - 1 - int(math.floor(math.log10(abs(x)))), 0)}f}"
    return out


def _stepped(value: float, steps, unit: str, digits: int, sep: str = " ") -> str:
    for scale, name in steps:
        if abs(value) >= scale:
            return f"{_sig(value / scale, digits)}{sep}{name}"
    return f"{_sig(value, digits)}{sep}{unit}" if unit else _sig(value, digits)


def fmt(value: float, kind: str, digits: int = 3) -> str:
    """A value in base units as a planner reads it: '6.49 TB', '100 GB/s', '65.1 s', '3.6%'."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "n/a"
    if isinstance(value, float) and math.isinf(value):
        return "unreachable" if value > 0 else "-inf"
    if kind == "bytes":
        return _stepped(value, _BYTE_STEPS, "B", digits)
    if kind == "bandwidth":
        return _stepped(value, _BW_STEPS, "B/s", digits)
    if kind == "flops":
        return _stepped(value, _FLOP_STEPS, "FLOPS", digits)
    if kind == "count":
        return _stepped(value, _COUNT_STEPS, "", digits, sep="")
    if kind == "percent":
        return f"{_sig(value * 100, digits)}%"
    if kind == "usd":
        return f"${value:,.0f}" if abs(value) >= 1000 else f"${value:,.2f}"
    if kind == "dtype":
        return next((k for k, v in DTYPE_BYTES.items() if v == value), f"{value} B")
    if kind == "duration":
        a = abs(value)
        if a < 120:
            return f"{_sig(value, digits)} s"
        if a < 120 * 60:
            return f"{_sig(value / 60, digits)} min"
        if a < 72 * 3600:
            return f"{_sig(value / 3600, digits)} h"
        if a < 2 * 365.25 * 86400:
            return f"{_sig(value / 86400, digits)} d"
        return f"{_sig(value / (365.25 * 86400), digits)} y"
    raise KeyError(kind)


_EXACT_UNIT = {"bytes": "B", "bandwidth": "B/s", "duration": "s", "flops": "FLOPS"}


def fmt_exact(value: float, kind: str) -> str:
    """A string that ``parse(.., kind)`` turns back into exactly ``value``."""
    r = repr(float(value))
    if kind in _EXACT_UNIT:
        return f"{r} {_EXACT_UNIT[kind]}"
    if kind == "count":
        return r
    if kind == "percent":  # x100 may lose the last ulp, and overflows above ~1.8e306
        return f"{float(value) * 100!r}%"
    if kind == "usd":
        return f"${r}"
    if kind == "dtype":
        return fmt(value, kind)
    raise KeyError(kind)


# ---- the units of columns: one table for words, scale, printing and spreadsheet formats ------

INF_CELL = 1e290  # how a spreadsheet cell holds infinity (x 1e12 for TFLOP/s must not overflow)
INF_AT = 1e280  # a cell at least this large reads as infinite: 'unbounded' or 'unreachable'
INF_FMT = f'[>={INF_AT:.0E}]"{{inf}}";'  # an Excel number-format section: infinite reads as words


@dataclass(frozen=True)
class Unit:
    """The unit of a column (the suffix of its name): how it reads in words, what it is in base
    units, how a planner reads a value of it, and its spreadsheet number formats."""

    key: str  # bytes, s, GBps, pct, usd, days, count, B/param, x, TFLOPS, label, bool
    words: str  # in the README's tables: 'GB/s (1e9 B/s)'
    short: str  # beside a bare number (the Assumptions sheet): 'GB/s'
    scale: float  # base units in one of these: GB/s -> 1e9 B/s, percent -> 0.01
    kind: str | None  # the KINDS key ``fmt`` prints the base value with; None: see ``show``
    excel: str | None  # number format in a table, the unit inside the format
    plain: str | None  # number format beside a unit column

    def excel_format(self, infinite: str = "unbounded", override: str | None = None) -> str | None:
        fmt_ = override or self.excel
        return fmt_.format(inf=infinite) if fmt_ else None

    def plain_format(self, infinite: str = "unbounded") -> str | None:
        return self.plain.format(inf=infinite) if self.plain else None

    def show(self, value, digits: int = 3, infinite: str = "unbounded") -> str:
        """'6.49 TB', '359 GB/s', '65.1 s', '3.62%', '$4,740,809', '405.85B', '16 B/param'."""
        if self.key == "label":
            return str(value)
        if self.key == "bool":
            return "yes" if bool(value) else "no"
        v = float(value)
        if math.isnan(v):
            return "n/a"
        if math.isinf(v):
            return infinite if v > 0 else "-inf"
        if self.key == "days":
            return f"{v:,.1f} days"
        if self.key == "B/param":
            return f"{v:g} B/param"
        if self.key == "x":
            return f"{v:.3g}x"
        if self.key == "count":
            return f"{v:,.0f}" if abs(v) < 1e6 else fmt(v, "count", 5)
        return fmt(v * self.scale, self.kind, digits)


BOOL_EXCEL = '"TRUE";"TRUE";"FALSE"'
BYTES_EXCEL = '[>=1000000000000]#,##0.00,,,," TB";[>=1000000000]#,##0.00,,," GB";#,##0.00,," MB"'
COLUMN_UNITS: dict[str, Unit] = {
    u.key: u
    for u in (
        Unit(
            "bytes", "bytes", "bytes", 1.0, "bytes", BYTES_EXCEL, INF_FMT + "#,##0"
        ),  # an omitted part size: unbounded
        Unit("s", "seconds", "s", 1.0, "duration", '[<1]0.000" s";#,##0.0" s"', "#,##0.0##"),
        Unit(
            "GBps",
            "GB/s (1e9 B/s)",
            "GB/s",
            1e9,
            "bandwidth",
            INF_FMT + '#,##0.00" GB/s"',
            INF_FMT + "#,##0.00##",
        ),
        # in a workbook a percentage is a fraction (0.036 shows 3.60%); small ones with more decimals, so
        # an overhead of 0.00002% does not read as 0.0000%
        Unit(
            "pct",
            "percent",
            "%",
            0.01,
            "percent",
            "[<0.00001]0.000000%;[<0.001]0.0000%;0.00%",
            "0.0##%",
        ),
        Unit(
            "usd", "US dollars", "$", 1.0, "usd", INF_FMT + '"$"#,##0', "#,##0.00##"
        ),  # choice_usd: not recommendable
        Unit("days", "days", "days", 86400.0, None, '#,##0.0" d"', "#,##0.0"),
        Unit(
            "count", "count", "", 1.0, None, INF_FMT + "#,##0", INF_FMT + "#,##0"
        ),  # an omitted request rate: unbounded
        Unit("B/param", "bytes per parameter", "B/param", 1.0, None, '0" B/param"', "0.##"),
        Unit("x", "times (a ratio)", "x", 1.0, None, '0.0"x"', "0.0##"),
        Unit("TFLOPS", "TFLOP/s", "TFLOP/s", 1e12, "flops", '#,##0.0" TFLOPS"', "#,##0.0"),
        Unit("label", "text", "", 1.0, None, None, None),
        # a formula's cached TRUE reads TRUE before any recalculation (LibreOffice shows a bare 1 otherwise)
        Unit("bool", "true/false", "", 1.0, None, BOOL_EXCEL, BOOL_EXCEL),
    )
}


def json_number(v) -> float | None:
    """A number for JSON (manifest, --json): None for unknown (NaN, None) or unbounded."""
    return float(v) if v is not None and math.isfinite(float(v)) else None
