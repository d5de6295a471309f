"""The one error type users see. It carries every problem found, each with its place."""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class Problem:
    file: str
    line: int  # 1-based; 0 when the problem has no line (a missing file)
    column: int  # 1-based
    path: str  # dotted key path, e.g. skus.dgx-h100.storage_nic
    message: str

    def __str__(self) -> str:
        where = self.file
        if self.line:
            where += f":{self.line}:{self.column}"
        key = f" {self.path}:" if self.path else ""
        return printable(f"{where}:{key} {self.message}")


class InputError(Exception):
    """Bad input from the user: printed without a traceback, exit code 2."""

    exit_code = 2

    def __init__(self, problems: list[Problem] | Problem | str):
        if isinstance(problems, str):
            problems = [Problem("", 0, 0, "", problems)]
        elif isinstance(problems, Problem):
            problems = [problems]
        self.problems = sorted(set(problems))
        super().__init__(self.render())

    def render(self) -> str:
        lines = [str(p).lstrip(": ") if not p.file else str(p) for p in self.problems]
        if len(lines) > 1:
            lines.append(f"{len(lines)} problems found.")
        return "\n".join(lines)


def printable(text: str, limit: int = 2000) -> str:
    """Text safe to print to a terminal: control characters, escape sequences and lone surrogates
    shown as escapes (\\x1b, \\u200e), never acted on; very long text shortened."""
    out = "".join(ch if ch.isprintable() or ch == "\n" else ascii(ch)[1:-1] for ch in text)
    return out if len(out) <= limit else out[: limit - 3] + "..."


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """' (did you mean 'storage_nic'?)' when a choice is close to ``word``, else ''."""
    close = difflib.get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return f" (did you mean '{close[0]}'?)" if close else ""
