"""Progress of the steps that take more than a second (scenario chunks, workbook rows, briefs):
click's progress bar on a terminal, plain lines when the output is a file or a pipe (a CI log reads
them one per line), nothing at all with ``-q``.

The stages take ``progress``, a function of one message. ``Progress`` is such a function that also
knows counted steps: ``with task(progress, "workbook rows", n) as advance: advance(k)``. With a
plain function (a test's, a library caller's) a counted step says nothing, so the stages never
depend on where they print."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

import click

Advance = Callable[..., None]  # advance(n=1, item=None)
SLOW_S = 1.0  # in a log, a counted step says how far it is only once it has taken this long


class Progress:
    """Messages as ``ckptreport: ...`` lines on ``stream``; counted steps as a bar when ``bars``
    (a terminal), else, once a step has run a second, a line at each tenth of the way and at the end
    (and always one for each named item, as the briefs are)."""

    def __init__(self, stream: IO[str], bars: bool):
        self.stream, self.bars = stream, bars

    def __call__(self, message: str) -> None:
        click.echo(f"ckptreport: {message}", file=self.stream)

    @contextmanager
    def task(self, label: str, total: int) -> Iterator[Advance]:
        if total <= 0:
            yield lambda n=1, item=None: None
            return
        if self.bars:
            with click.progressbar(
                length=total,
                label=f"ckptreport: {label}",
                file=self.stream,
                show_pos=True,
                show_eta=True,
                width=30,
            ) as bar:
                yield lambda n=1, item=None: bar.update(n)
            return
        state = {"done": 0, "shown": 0, "t": time.perf_counter()}

        def advance(n: int = 1, item: str | None = None) -> None:
            state["done"] = done = min(state["done"] + n, total)
            slow = time.perf_counter() - state["t"] >= SLOW_S
            if item is not None or (slow and done < total and done - state["shown"] >= total / 10):
                state["shown"] = done
                self(f"{label} {done:,}/{total:,}" + (f": {item}" if item else ""))

        yield advance
        took = time.perf_counter() - state["t"]
        if state["done"] >= total and state["shown"] < total and (state["shown"] or took >= SLOW_S):
            self(f"{label} {total:,}/{total:,} in {took:.1f} s")


def for_terminal(stream: IO[str], quiet: bool) -> Callable[[str], None]:
    """What the command line passes to the stages: nothing with ``quiet``; else a Progress that draws
    bars when ``stream`` is a terminal."""
    if quiet:
        return lambda _: None
    return Progress(stream, bars=stream.isatty())


@contextmanager
def task(progress: Callable[[str], None], label: str, total: int) -> Iterator[Advance]:
    """A counted step of ``total`` units: a bar or lines when ``progress`` is a Progress, silence
    otherwise."""
    if isinstance(progress, Progress):
        with progress.task(label, total) as advance:
            yield advance
    else:
        yield lambda n=1, item=None: None
