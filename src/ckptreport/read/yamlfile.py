"""Read YAML with every key's place kept, and without YAML's implicit typing.

Every scalar comes back as the string the user wrote (``1e9``, ``no`` and ``08`` stay text) or
``None`` for an empty value; quantities are then parsed by ``units``. Duplicate keys, anchors and
tags are errors rather than surprises. ``Marks`` maps a key path to its line and column.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ..base.errors import InputError, Problem
from ..base.safeio import read_regular

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
_LOADER = getattr(
    yaml, "CSafeLoader", yaml.SafeLoader
)  # libyaml parses about 14x faster when present


class _Refused(Exception):
    def __init__(self, mark, message: str):
        self.mark, self.message = mark, message


@dataclass
class _Frame:
    """An open mapping or sequence while its events arrive."""

    container: dict | list
    path: Path_
    key: Any = None  # a mapping's pending key (None: the next scalar is a key; _SKIP: its value is dropped)
    key_mark: Any = None  # where that key is
    skip: bool = False  # the pending key was refused: drop its value
    as_key: bool = False  # this structure is itself a key (refused): dropped when it ends


class _Composer:
    """Builds the document from YAML's event stream, without recursion: scalars as the text written
    (plain empty, ``~`` or ``null`` as None), every key's place in ``marks``. Aliases and a second
    document are refused (``_Refused``); explicit tags, merge keys, duplicate keys, keys that are
    not text and lone surrogates are problems, all reported at once."""

    def __init__(self, file: str, marks: Marks, problems: list[Problem]):
        self.file, self.marks, self.problems = file, marks, problems
        self.root: list = []
        self.stack: list[_Frame] = []
        self.documents = 0

    def compose(self, events) -> Any:
        for event in events:
            if isinstance(event, yaml.AliasEvent):
                raise _Refused(event.start_mark, "aliases ('*name') are not supported")
            if isinstance(event, yaml.DocumentStartEvent):
                self.documents += 1
                if self.documents > 1:
                    raise _Refused(
                        event.start_mark, "a file holds one YAML document; found a second ('---')"
                    )
            elif isinstance(event, yaml.ScalarEvent):
                self.scalar(event)
            elif isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                self.start(event)
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                frame = self.stack.pop()
                if not frame.as_key:  # a structure that was a key is dropped, its value skipped
                    self.place(frame.container, event.start_mark)
        if not self.root:
            raise _Refused(None, "file is empty")
        return self.root[0]

    def problem(self, mark, path: Path_, message: str) -> None:
        self.problems.append(_problem(self.file, mark, path, message))

    def awaiting_key(self) -> bool:
        return (
            bool(self.stack)
            and isinstance(self.stack[-1].container, dict)
            and self.stack[-1].key is None
        )

    def child_path(self) -> Path_:
        if not self.stack:
            return ()
        frame = self.stack[-1]
        if isinstance(frame.container, list):
            return (*frame.path, len(frame.container))
        return (*frame.path, frame.key) if frame.key not in (None, _SKIP) else frame.path

    def scalar(self, event) -> None:
        path = self.child_path()
        is_key = self.awaiting_key()
        if event.tag is not None and event.tag not in _PLAIN_TAGS and event.tag != "!":
            self.problem(event.start_mark, path, f"tag {event.tag} is not allowed")
        value: Any = event.value
        if _SURROGATE.search(value):
            self.problem(
                event.start_mark,
                path,
                "not printable text (a lone surrogate escape such as \\ud800)",
            )
            value = ""
        elif (
            not is_key
            and value in _NULLS
            and (event.implicit[0] or event.tag == "tag:yaml.org,2002:null")
        ):
            value = None
        if not is_key:
            self.marks.setdefault(path, (event.start_mark.line + 1, event.start_mark.column + 1))
        self.place(value, event.start_mark)

    def start(self, event) -> None:
        path = self.child_path()
        is_seq = isinstance(event, yaml.SequenceStartEvent)
        if event.tag is not None and event.tag != (
            "tag:yaml.org,2002:seq" if is_seq else "tag:yaml.org,2002:map"
        ):
            self.problem(event.start_mark, path, f"tag {event.tag} is not allowed")
        if len(self.stack) >= _DEPTH:
            raise _Refused(event.start_mark, "nested too deeply to be a models file")
        if self.awaiting_key():  # a structure as a key
            self.problem(event.start_mark, self.stack[-1].path, "a key must be plain text")
            self.stack[-1].key, self.stack[-1].skip = _SKIP, True
            self.stack.append(_Frame([] if is_seq else {}, path, as_key=True))
            return
        self.marks.setdefault(path, (event.start_mark.line + 1, event.start_mark.column + 1))
        self.stack.append(_Frame([] if is_seq else {}, path))

    def place(self, value, mark) -> None:
        """A finished value into its parent: a list item, a mapping's key, or the value of its key."""
        if not self.stack:
            self.root.append(value)
            return
        frame = self.stack[-1]
        if isinstance(frame.container, list):
            frame.container.append(value)
        elif frame.key is None:
            self.key(frame, value, mark)
        else:
            if not frame.skip:
                frame.container[frame.key] = value
                self.marks[(*frame.path, frame.key)] = (
                    frame.key_mark.line + 1,
                    frame.key_mark.column + 1,
                )
            frame.key = None

    def key(self, frame: _Frame, value, mark) -> None:
        """A mapping's next key, or a problem with it (its value is then dropped)."""
        container, path = frame.container, frame.path
        refused = None
        if not isinstance(value, str):
            refused = (path, "a key must be plain text")
        elif value == "<<":
            refused = (path, "merge keys ('<<') are not supported; write the keys out")
        elif value in container:
            first = self.marks.get((*path, value), (0, 0))[0]
            refused = ((*path, value), f"duplicate key (first defined on line {first})")
        if refused:
            self.problem(mark, *refused)
            frame.key, frame.skip = _SKIP, True
            return
        frame.key, frame.key_mark, frame.skip = value, mark, False
        self.marks[(*path, value)] = (mark.line + 1, mark.column + 1)


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
        data = _Composer(name, marks, problems).compose(yaml.parse(text, Loader=_LOADER))
    except _Refused as e:
        if e.mark is None:
            raise InputError(Problem(name, 1, 1, "", e.message)) from None
        raise InputError(_problem(name, e.mark, (), e.message)) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = e.problem or e.context or "syntax error"
        if "maximum nesting depth" in what:  # libyaml's own limit
            raise InputError(
                _problem(name, mark, (), "nested too deeply to be a models file")
            ) from None
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
