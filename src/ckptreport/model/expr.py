"""One definition, three readings: numbers, formulas, and words.

A column definition is a small function written with Python operators and the functions in this
module (``minimum``, ``where``, ...). Called with numpy arrays it computes the column; called with
``Var`` leaves it returns an expression tree, which ``render`` prints as an Excel formula, as the
formula a planner reads in ``explain``, or with the numbers substituted. The workbook and ``explain``
therefore cannot drift from the evaluator: they read the same definition.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

from ..read.units import INF_CELL


class Named(float):
    """A constant with a name: in a workbook's formulas it is the defined name ``name`` (listed on
    Assumptions), never a typed number; in the text a planner reads, the name too."""

    name: str

    def __new__(cls, value: float, name: str) -> Named:
        named = super().__new__(cls, value)
        named.name = name
        return named


class Scale(Named):
    """A unit conversion factor: computed with, but left out of the formula a planner reads
    (the values printed beside it already carry their units)."""


GB = Scale(1e9, "BYTES_PER_GB")  # bytes in a GB; bandwidth columns are in GB/s
TERA = Scale(1e12, "PER_TERA")  # FLOP/s in a TFLOP/s; bytes in a TB
TIB = Scale(2.0**40, "BYTES_PER_TIB")  # bytes in a TiB
HOUR = Scale(3600.0, "SECONDS_PER_HOUR")
DAY = Scale(86400.0, "SECONDS_PER_DAY")
THOUSAND = Scale(1000.0, "PER_THOUSAND")  # prices per 1,000 requests
PERCENT = Scale(
    100.0, "PERCENT"
)  # a _pct figure per unit fraction: whole numbers here, fractions in a workbook
SCALES = (GB, TERA, TIB, HOUR, DAY, THOUSAND)
INF = math.inf
INFINITY = "INFINITY"  # the workbook's name for infinity (units.INF_CELL) inside formulas


class Expr:
    """A node of an expression tree. Python operators build larger trees."""

    def _bin(self, op: str, other, swap: bool = False) -> Expr:
        a, b = (wrap(other), self) if swap else (self, wrap(other))
        return BinOp(op, a, b)

    def __add__(self, o):
        return self._bin("+", o)

    def __radd__(self, o):
        return self._bin("+", o, True)

    def __sub__(self, o):
        return self._bin("-", o)

    def __rsub__(self, o):
        return self._bin("-", o, True)

    def __mul__(self, o):
        return self._bin("*", o)

    def __rmul__(self, o):
        return self._bin("*", o, True)

    def __truediv__(self, o):
        return self._bin("/", o)

    def __rtruediv__(self, o):
        return self._bin("/", o, True)

    def __pow__(self, o):
        return self._bin("^", o)

    def __lt__(self, o):
        return self._bin("<", o)

    def __le__(self, o):
        return self._bin("<=", o)

    def __gt__(self, o):
        return self._bin(">", o)

    def __ge__(self, o):
        return self._bin(">=", o)

    def __eq__(self, o):
        return self._bin("=", o)  # type: ignore[override]

    def __ne__(self, o):
        return self._bin("<>", o)  # type: ignore[override]

    def __and__(self, o):
        return Call("AND", (self, wrap(o)))

    def __rand__(self, o):
        return Call("AND", (wrap(o), self))

    def __or__(self, o):
        return Call("OR", (self, wrap(o)))

    def __invert__(self):
        return Call("NOT", (self,))

    def __neg__(self):
        return BinOp("-", Const(0), self)

    __hash__ = object.__hash__


@dataclass(frozen=True, eq=False)
class Var(Expr):
    name: str


@dataclass(frozen=True, eq=False)
class Const(Expr):
    value: float | str
    scale: bool = False  # a unit conversion: omitted from the text a planner reads
    name: str | None = None  # in a workbook formula: the defined name that holds the value


@dataclass(frozen=True, eq=False)
class BinOp(Expr):
    op: str
    a: Expr
    b: Expr


@dataclass(frozen=True, eq=False)
class Call(Expr):
    fn: str  # the spreadsheet function name: MIN, MAX, SQRT, IF, ROUNDUP, ROUNDDOWN, AND, OR
    args: tuple[Expr, ...]


@dataclass(frozen=True, eq=False)
class Label(Expr):
    """The name of the largest of several values (first wins a tie)."""

    options: tuple[tuple[str, Expr], ...]


def wrap(x) -> Expr:
    if isinstance(x, Expr):
        return x
    if isinstance(x, Named):
        return Const(float(x), scale=isinstance(x, Scale), name=x.name)
    if isinstance(x, (bool, np.bool_)):
        return Const(float(x))
    if isinstance(x, (int, float, np.integer, np.floating)):
        return Const(float(x))
    if isinstance(x, str):
        return Const(x)
    raise TypeError(f"cannot use {type(x).__name__} in a column definition")


def _symbolic(*xs) -> bool:
    for x in xs:  # a loop, not any(generator): called for every operation of every evaluation
        if isinstance(x, Expr):
            return True
    return False


# ---- the functions a definition may use -------------------------------------------------------


def minimum(a, b):
    return Call("MIN", (wrap(a), wrap(b))) if _symbolic(a, b) else np.minimum(a, b)


def maximum(a, b):
    return Call("MAX", (wrap(a), wrap(b))) if _symbolic(a, b) else np.maximum(a, b)


def sqrt(a):
    return Call("SQRT", (wrap(a),)) if _symbolic(a) else np.sqrt(a)


def ceil(a):
    return Call("ROUNDUP", (wrap(a), Const(0))) if _symbolic(a) else np.ceil(a)


def floor(a):
    return Call("ROUNDDOWN", (wrap(a), Const(0))) if _symbolic(a) else np.floor(a)


def isna(a):
    """True where a value is unknown (NaN here, #N/A in a spreadsheet)."""
    return Call("ISNA", (wrap(a),)) if _symbolic(a) else np.isnan(a)


def known(a):
    """True where a value is a number (not NaN / #N/A)."""
    return Call("ISNUMBER", (wrap(a),)) if _symbolic(a) else ~np.isnan(a)


def where(cond, a, b):
    if _symbolic(cond, a, b):
        return Call("IF", (wrap(cond), wrap(a), wrap(b)))
    return np.where(cond, a, b)


def largest(**options):
    """Name of the largest option per row: ``largest(d2h=d2h_s, tier=tier_s)``."""
    if _symbolic(*options.values()):
        return Label(tuple((k, wrap(v)) for k, v in options.items()))
    names = np.array(list(options))
    stacked = np.stack(np.broadcast_arrays(*(np.asarray(v, dtype=float) for v in options.values())))
    return names[np.argmax(stacked, axis=0)]


# ---- printing ---------------------------------------------------------------------------------

_PREC = {"=": 1, "<>": 1, "<": 1, "<=": 1, ">": 1, ">=": 1, "+": 2, "-": 2, "*": 3, "/": 3, "^": 4}
_TEXT_OPS = {
    "*": " × ",
    "/": " / ",
    "+": " + ",
    "-": " − ",
    "^": "^",
    "=": " = ",
    "<>": " ≠ ",
    "<": " < ",
    "<=": " ≤ ",
    ">": " > ",
    ">=": " ≥ ",
}
_TEXT_FN = {
    "MIN": "min",
    "MAX": "max",
    "SQRT": "sqrt",
    "IF": "if",
    "ROUNDUP": "ceil",
    "ROUNDDOWN": "floor",
    "AND": "and",
    "OR": "or",
    "ISNA": "unknown",
    "ISNUMBER": "known",
    "NOT": "not",
}


def excel_number(v: float) -> str:
    if math.isinf(v):  # the one spelling of infinity in a cell or formula (units.INF_CELL)
        return excel_number(math.copysign(INF_CELL, v))
    if v == int(v) and abs(v) < 1e15:
        return str(int(v))
    return repr(v).replace("e+", "E+").replace("e-", "E-")


def _percent(n: Expr) -> bool:
    return isinstance(n, Const) and n.name == PERCENT.name


def render(e: Expr, leaf: Callable[[str], str], style: str = "excel") -> str:
    """Print ``e``; ``leaf(name)`` prints a variable (a cell reference, a name, a value).

    In a workbook (``excel``) a percentage is stored as a fraction (1% is 0.01, as typing ``1%``
    stores it), so the conversion ``PERCENT`` disappears: ``x * PERCENT`` and ``x / PERCENT`` print as
    ``x``, and ``PERCENT`` alone (``overhead > PERCENT``) as 1. The evaluator and ``explain`` keep whole
    percents (3.6 means 3.6%)."""
    text = style != "excel"

    def go(n: Expr, parent: int = 0, right: bool = False, parent_op: str = "") -> str:
        if isinstance(n, Var):
            return leaf(n.name)
        if isinstance(n, Const):
            if isinstance(n.value, str):
                return '"' + n.value.replace('"', '""') + '"'
            if _percent(n):
                return "100%" if text else "1"
            if n.name:
                return n.name
            if text:
                return "∞" if math.isinf(n.value) else f"{n.value:g}"
            if math.isinf(n.value):
                return INFINITY if n.value > 0 else f"-{INFINITY}"
            return excel_number(n.value)
        if isinstance(n, BinOp):
            p = _PREC[n.op]
            if not text and (n.op == "*" and _percent(n.a)):
                return go(n.b, parent, right, parent_op)
            if not text and n.op in "*/" and _percent(n.b):
                return go(n.a, parent, right, parent_op)
            if text and n.op in "*/" and isinstance(n.b, Const) and n.b.scale:
                return go(n.a, parent, right, parent_op)
            if text and n.op == "*" and isinstance(n.a, Const) and n.a.scale:
                return go(n.b, parent, right, parent_op)
            if n.op == "-" and isinstance(n.a, Const) and n.a.value == 0:
                s = "-" + go(n.b, 4)
            else:
                sep = _TEXT_OPS[n.op] if text else n.op
                s = go(n.a, p, False, n.op) + sep + go(n.b, p, True, n.op)
            # a right operand of -, / or ^ at the same precedence needs brackets: a/(b*c), a-(b+c)
            tighter = p < parent or (right and p == parent and parent_op in ("-", "/", "^"))
            return f"({s})" if tighter else s
        if isinstance(n, Call):
            name = _TEXT_FN[n.fn] if text else n.fn
            if n.fn in ("ROUNDUP", "ROUNDDOWN") and text:
                return f"{_TEXT_FN[n.fn]}({go(n.args[0])})"
            return (
                f"{name}(" + ", ".join(go(a) for a in n.args) + ")"
                if text
                else f"{name}(" + ",".join(go(a) for a in n.args) + ")"
            )
        if isinstance(n, Label):
            if text:
                return "the largest of " + ", ".join(f"{k} {go(v)}" for k, v in n.options)
            values = ",".join(go(v) for _, v in n.options)
            out = '"' + n.options[-1][0] + '"'
            for k, v in reversed(n.options[:-1]):
                out = f'IF({go(v)}>=MAX({values}),"{k}",{out})'
            return out
        raise TypeError(n)

    return go(e)


def evaluate(e: Expr, env: Mapping[str, object]):
    """Evaluate a tree with scalar values (used to check the tree against the function)."""
    if isinstance(e, Var):
        return env[e.name]
    if isinstance(e, Const):
        return e.value
    if isinstance(e, BinOp):
        a, b = evaluate(e.a, env), evaluate(e.b, env)
        return {
            "+": lambda: a + b,
            "-": lambda: a - b,
            "*": lambda: a * b,
            "/": lambda: a / b if b else math.copysign(math.inf, a) if a else math.nan,
            "^": lambda: a**b,
            "=": lambda: a == b,
            "<>": lambda: a != b,
            "<": lambda: a < b,
            "<=": lambda: a <= b,
            ">": lambda: a > b,
            ">=": lambda: a >= b,
        }[e.op]()
    if isinstance(e, Call):
        if e.fn == "IF":
            return (
                evaluate(e.args[1], env) if evaluate(e.args[0], env) else evaluate(e.args[2], env)
            )
        args = [evaluate(a, env) for a in e.args]
        return {
            "MIN": min,
            "MAX": max,
            "SQRT": math.sqrt,
            "ROUNDUP": lambda x, _: math.ceil(x),
            "ROUNDDOWN": lambda x, _: math.floor(x),
            "AND": lambda *x: all(x),
            "OR": lambda *x: any(x),
            "ISNA": lambda x: math.isnan(x),
            "ISNUMBER": lambda x: not math.isnan(x),
            "NOT": lambda x: not x,
        }[e.fn](*args)
    if isinstance(e, Label):
        values = [evaluate(v, env) for _, v in e.options]
        return e.options[values.index(max(values))][0]
    raise TypeError(e)


# ---- the page's reading: JavaScript ----------------------------------------------------------

_JS_OPS = {"=": "==", "<>": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "+": "+", "-": "-"}
_JS_OPS.update({"*": "*", "/": "/"})
_JS_FN = {"MIN": "Math.min", "MAX": "Math.max", "SQRT": "Math.sqrt", "ROUNDUP": "Math.ceil"}
_JS_FN.update({"ROUNDDOWN": "Math.floor"})


def javascript(e: Expr) -> str:
    """Print ``e`` as a JavaScript expression over ``v`` (a row's values by name), evaluated in the
    evaluator's order and units (whole percents; numbers as IEEE doubles, as numpy's): the review
    page's reading of the definition. ``==`` compares as Python does (a flag equals 1); ``L`` is the
    page's largest-of helper (first wins a tie)."""

    def go(n: Expr) -> str:
        if isinstance(n, Var):
            return f"v[{_js_string(n.name)}]"
        if isinstance(n, Const):
            if isinstance(n.value, str):
                return _js_string(n.value)
            if math.isinf(n.value):
                return "Infinity" if n.value > 0 else "-Infinity"
            return repr(float(n.value))
        if isinstance(n, BinOp):
            if n.op == "^":
                return f"Math.pow({go(n.a)}, {go(n.b)})"
            return f"({go(n.a)} {_JS_OPS[n.op]} {go(n.b)})"
        if isinstance(n, Call):
            args = [go(a) for a in n.args]
            if n.fn == "IF":
                return f"({args[0]} ? {args[1]} : {args[2]})"
            if n.fn in ("AND", "OR"):
                return "(" + (" && " if n.fn == "AND" else " || ").join(args) + ")"
            if n.fn == "NOT":
                return f"(!{args[0]})"
            if n.fn in ("ISNA", "ISNUMBER"):
                return ("" if n.fn == "ISNA" else "!") + f"Number.isNaN({args[0]})"
            return (
                f"{_JS_FN[n.fn]}({args[0]})"
                if n.fn.startswith("ROUND")
                else f"{_JS_FN[n.fn]}({', '.join(args)})"
            )
        if isinstance(n, Label):
            names = ", ".join(_js_string(k) for k, _ in n.options)
            return f"L([{names}], [{', '.join(go(v) for _, v in n.options)}])"
        raise TypeError(n)

    return go(e)


def _js_string(s: str) -> str:
    """A JavaScript string literal that stays text inside a page's script element."""
    import json

    return json.dumps(s).replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
