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


def _convert(node: yaml.Node, path: Path_, file: str, marks: Marks, problems: list[Problem]) -> Any:
    marks[path] = (node.start_mark.line + 1, node.start_mark.column + 1)
    if isinstance(node, yaml.ScalarNode):
        if node.tag not in ("tag:yaml.org,2002:str", "tag:yaml.org,2002:int",
                            "tag:yaml.org,2002:float", "tag:yaml.org,2002:bool",
                            "tag:yaml.org,2002:null"):
            problems.append(_problem(file, node.start_mark, path, f"tag {node.tag} is not allowed"))
        if node.tag == "tag:yaml.org,2002:null" and node.value in ("", "~", "null", "Null", "NULL"):
            return None
        if _SURROGATE.search(node.value):
            problems.append(_problem(file, node.start_mark, path,
                                     "not printable text (a lone surrogate escape such as \\ud800)"))
            return ""
        return node.value
    if node.tag not in ("tag:yaml.org,2002:seq", "tag:yaml.org,2002:map"):
        problems.append(_problem(file, node.start_mark, path, f"tag {node.tag} is not allowed"))
    if isinstance(node, yaml.SequenceNode):
        return [_convert(n, (*path, i), file, marks, problems) for i, n in enumerate(node.value)]
    if isinstance(node, yaml.MappingNode):
        out: dict[str, Any] = {}
        for knode, vnode in node.value:
            if not isinstance(knode, yaml.ScalarNode):
                problems.append(_problem(file, knode.start_mark, path, "a key must be plain text"))
                continue
            key = knode.value
            if key == "<<":
                problems.append(_problem(file, knode.start_mark, path,
                                         "merge keys ('<<') are not supported; write the keys out"))
                continue
            if key in out:
                first = marks.get((*path, key), (0, 0))[0]
                problems.append(_problem(file, knode.start_mark, (*path, key),
                                         f"duplicate key (first defined on line {first})"))
                continue
            marks[(*path, key)] = (knode.start_mark.line + 1, knode.start_mark.column + 1)
            out[key] = _convert(vnode, (*path, key), file, marks, problems)
            marks[(*path, key)] = (knode.start_mark.line + 1, knode.start_mark.column + 1)
        return out
    problems.append(_problem(file, node.start_mark, path, "unsupported YAML node"))
    return None


class _NoAliasComposer(yaml.SafeLoader):
    def compose_node(self, parent, index):  # anchors and aliases: refuse, keep files plain
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.MarkedYAMLError(None, None, "aliases ('*name') are not supported",
                                       event.start_mark)
        return super().compose_node(parent, index)


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
    try:
        node = yaml.compose(text, Loader=_NoAliasComposer)
        if node is None:
            raise InputError(Problem(name, 1, 1, "", "file is empty"))
        marks: Marks = {}
        problems: list[Problem] = []
        data = _convert(node, (), name, marks, problems)
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        what = e.problem or e.context or "syntax error"
        prefix = "" if "not supported" in what else "YAML syntax error: "
        raise InputError(_problem(name, mark, (), f"{prefix}{what}")) from None
    except yaml.YAMLError as e:
        raise InputError(Problem(name, 0, 0, "", f"YAML error: {e}")) from None
    except RecursionError:
        raise InputError(Problem(name, 0, 0, "", "nested too deeply to be a models file")) from None
    if problems:
        raise InputError(problems)
    return data, marks
