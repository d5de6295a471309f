"""Read YAML with every key's place kept, and without YAML's implicit typing.

Every scalar comes back as the string the user wrote (``1e9``, ``no`` and ``08`` stay text) or
``None`` for an empty value; quantities are then parsed by ``units``. Duplicate keys, anchors and
tags are errors rather than surprises. ``Marks`` maps a key path to its line and column.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import yaml

from .errors import InputError, Problem
from .safeio import read_regular

Path_ = tuple[str | int, ...]
Marks = dict[Path_, tuple[int, int]]


def _problem(file: str, mark, path: Path_, message: str) -> Problem:
    line, col = (mark.line + 1, mark.column + 1) if mark is not None else (0, 0)
    return Problem(file, line, col, dotted(path), message)


def dotted(path: Path_) -> str:
    out = ""
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else (f".{p}" if out else str(p))
    return out


_SURROGATE = re.compile("[\ud800-\udfff]")
_PLAIN_TAGS = {f"tag:yaml.org,2002:{t}" for t in ("str", "int", "float", "bool", "null")}
_NULLS = ("", "~", "null", "Null", "NULL")
_DEPTH = 64  # deeper than any models file: beyond it, a clean error rather than a deep recursion
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml parses about 14x faster when present


class _Refused(Exception):
    def __init__(self, mark, message: str):
        self.mark, self.message = mark, message


def _compose(events, file: str, marks: Marks, problems: list[Problem]) -> Any:
    """Build the document from YAML's event stream, without recursion: scalars as the text written
    (plain empty, ``~`` or ``null`` as None), every key's place in ``marks``. Aliases and a second
    document are refused (``_Refused``); explicit tags, merge keys, duplicate keys, keys that are
    not text and lone surrogates are problems, all reported at once."""
    root: list = []
    stack: list[list] = []  # frames: [container, path, pending key, its mark, skip its value, is a key]
    documents = 0

    def place(value, mark, path_of_value):
        if not stack:
            root.append(value)
            return
        frame = stack[-1]
        container, path = frame[0], frame[1]
        if isinstance(container, list):
            container.append(value)
            return
        if frame[2] is None:  # this value is a key
            if not isinstance(value, str):
                problems.append(_problem(file, mark, path, "a key must be plain text"))
                frame[2], frame[4] = _SKIP, True
            elif value == "<<":
                problems.append(_problem(file, mark, path, "merge keys ('<<') are not supported; write the keys out"))
                frame[2], frame[4] = _SKIP, True
            elif value in container:
                first = marks.get((*path, value), (0, 0))[0]
                problems.append(_problem(file, mark, (*path, value), f"duplicate key (first defined on line {first})"))
                frame[2], frame[4] = _SKIP, True
            else:
                frame[2], frame[3], frame[4] = value, mark, False
                marks[(*path, value)] = (mark.line + 1, mark.column + 1)
            return
        if not frame[4]:
            container[frame[2]] = value
            marks[(*path, frame[2])] = (frame[3].line + 1, frame[3].column + 1)
        frame[2] = None

    def child_path() -> Path_:
        if not stack:
            return ()
        container, path = stack[-1][0], stack[-1][1]
        if isinstance(container, list):
            return (*path, len(container))
        return (*path, stack[-1][2]) if stack[-1][2] not in (None, _SKIP) else path

    for event in events:
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(event.start_mark, "aliases ('*name') are not supported")
        if isinstance(event, yaml.DocumentStartEvent):
            documents += 1
            if documents > 1:
                raise _Refused(event.start_mark, "a file holds one YAML document; found a second ('---')")
            continue
        if isinstance(event, yaml.ScalarEvent):
            path = child_path()
            is_key = bool(stack) and isinstance(stack[-1][0], dict) and stack[-1][2] is None
            if event.tag is not None and event.tag not in _PLAIN_TAGS and event.tag != "!":
                problems.append(_problem(file, event.start_mark, path, f"tag {event.tag} is not allowed"))
            value: Any = event.value
            if _SURROGATE.search(value):
                problems.append(_problem(file, event.start_mark, path,
                                         "not printable text (a lone surrogate escape such as \\ud800)"))
                value = ""
            elif not is_key and value in _NULLS and (event.implicit[0] or event.tag == "tag:yaml.org,2002:null"):
                value = None
            if not is_key:
                marks.setdefault(path, (event.start_mark.line + 1, event.start_mark.column + 1))
            place(value, event.start_mark, path)
        elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
            path = child_path()
            is_seq = isinstance(event, yaml.SequenceStartEvent)
            if event.tag is not None and event.tag != ("tag:yaml.org,2002:seq" if is_seq else "tag:yaml.org,2002:map"):
                problems.append(_problem(file, event.start_mark, path, f"tag {event.tag} is not allowed"))
            if len(stack) >= _DEPTH:
                raise _Refused(event.start_mark, "nested too deeply to be a models file")
            if stack and isinstance(stack[-1][0], dict) and stack[-1][2] is None:  # a structure as a key
                problems.append(_problem(file, event.start_mark, stack[-1][1], "a key must be plain text"))
                stack[-1][2], stack[-1][4] = _SKIP, True
                stack.append([[] if is_seq else {}, path, None, None, False, True])
                continue
            marks.setdefault(path, (event.start_mark.line + 1, event.start_mark.column + 1))
            stack.append([[] if is_seq else {}, path, None, None, False, False])
        elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
            container, path, _, _, _, as_key = stack.pop()
            if as_key:  # the structure was a key: dropped, its value skipped
                continue
            place(container, event.start_mark, path)
    if not root:
        raise _Refused(None, "file is empty")
    return root[0]


_SKIP = object()  # the pending key of a mapping entry that is dropped (its value is skipped)


def load(path: Path, display: str | None = None) -> tuple[Any, Marks]:
    """Return (data, marks) of a YAML file. Raises InputError naming the file and line on any problem."""
    name = display or str(path)
    return parse(read_regular(path, name), name)


def parse(raw: bytes, name: str) -> tuple[Any, Marks]:
    """Return (data, marks) of YAML text. Raises InputError naming the file and line on any problem."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise InputError(Problem(name, 0, 0, "", f"not UTF-8 text (byte {e.start})")) from None
    marks: Marks = {}
    problems: list[Problem] = []
    try:
        data = _compose(yaml.parse(text, Loader=_LOADER), name, marks, problems)
    except _Refused as e:
        if e.mark is None:
            raise InputError(Problem(name, 1, 1, "", e.message)) from None
        raise InputError(_problem(name, e.mark, (), e.message)) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = e.problem or e.context or "syntax error"
        if "maximum nesting depth" in what:  # libyaml's own limit
            raise InputError(_problem(name, mark, (), "nested too deeply to be a models file")) from None
        prefix = "" if "not supported" in what else "YAML syntax error: "
        raise InputError(_problem(name, mark, (), f"{prefix}{what}")) from None
    except yaml.YAMLError as e:
        raise InputError(Problem(name, 0, 0, "", f"YAML error: {e}")) from None
    if problems:
        raise InputError(problems)
    return data, marks


def leaves(data: Any, marks: Marks) -> dict[str, tuple[int, str]]:
    """Every value of a document as written, by dotted key: ``{"tiers.pfs-100.write.value": (12,
    "100 GB/s")}`` with its line. A list of plain values is one value (``[1024, 4096]``), so that
    adding a GPU count reads as one change; a list of mappings is walked by index. Empty values are
    ``~``. What ``ckptreport diff`` compares."""
    out: dict[str, tuple[int, str]] = {}

    def text(value) -> str:
        return "~" if value is None else value

    def walk(value, path: Path_) -> None:
        line = marks.get(path, (0, 0))[0]
        if isinstance(value, dict):
            if not value:
                out[dotted(path)] = (line, "{}")
            for k, v in value.items():
                walk(v, (*path, k))
        elif isinstance(value, list) and not any(isinstance(v, (dict, list)) for v in value):
            out[dotted(path)] = (line, "[" + ", ".join(text(v) for v in value) + "]")
        elif isinstance(value, list):
            for i, v in enumerate(value):
                walk(v, (*path, i))
        else:
            out[dotted(path)] = (line, text(value))

    walk(data, ())
    return out
