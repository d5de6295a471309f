"""Progress of the steps that take more than a second (scenario chunks, workbook rows, briefs):
click's progress bar on a terminal, plain lines when the output is a file or a pipe (a CI log reads
them one per line), nothing at all with ``-q``.

The stages take ``progress``, a function of one message. ``Progress`` is such a function that also
knows counted steps: ``with task(progress, "workbook rows", n) as advance: advance(k)``. With a
plain function (a test's, a library caller's) a counted step says nothing, so the stages never
depend on where they print."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import IO

import click

Advance = Callable[..., None]  # advance(n=1, item=None)
SLOW_S = 1.0  # in a log, a counted step says how far it is only once it has taken this long
HEARTBEAT_S = 15.0  # in a log, a line at least this often while a long command works


class Progress:
    """Messages as ``ckptreport: ...`` lines on ``stream``, each flushed as it is written; counted steps
    as a bar when ``bars`` (a terminal), else, once a step has run a second, a line at each tenth of the
    way and at the end (and always one for each named item, as the briefs are). In a log, ``beating``
    adds a heartbeat: a line whenever nothing was said for ``HEARTBEAT_S``. Threads may call it: a
    line is written whole."""

    def __init__(self, stream: IO[str], bars: bool):
        self.stream, self.bars = stream, bars
        self.lock = threading.RLock()
        self.said_at = time.monotonic()
        self.doing = ""  # the counted step under way and how far it is, for the heartbeat

    def __call__(self, message: str) -> None:
        with self.lock:
            click.echo(f"ckptreport: {message}", file=self.stream)
            self.stream.flush()
            self.said_at = time.monotonic()

    @contextmanager
    def beating(self, every_s: float | None = None) -> Iterator[None]:
        """While the block runs, in a log (not on a terminal, whose bars move), a line whenever
        nothing was said for ``every_s`` seconds: what is under way and how long the command has run."""
        every_s = HEARTBEAT_S if every_s is None else every_s
        if self.bars:
            yield
            return
        stop, began = threading.Event(), time.monotonic()

        def beat() -> None:
            while not stop.wait(min(every_s, 1.0)):
                with self.lock:
                    quiet = time.monotonic() - self.said_at
                    if quiet >= every_s and not stop.is_set():
                        doing = f"{self.doing}, " if self.doing else ""
                        self(f"still working ({doing}{time.monotonic() - began:,.0f} s in)")

        thread = threading.Thread(target=beat, name="ckptreport-heartbeat", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

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
        self.doing = f"{label} 0/{total:,}"

        def advance(n: int = 1, item: str | None = None) -> None:
            with self.lock:
                state["done"] = done = min(state["done"] + n, total)
                self.doing = f"{label} {done:,}/{total:,}"
                slow = time.perf_counter() - state["t"] >= SLOW_S
                if item is not None or (
                    slow and done < total and done - state["shown"] >= total / 10
                ):
                    state["shown"] = done
                    self(f"{label} {done:,}/{total:,}" + (f": {item}" if item else ""))

        try:
            yield advance
        finally:
            self.doing = ""
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


@contextmanager
def beating(progress: Callable[[str], None]) -> Iterator[None]:
    """A heartbeat while the block runs when ``progress`` is a Progress writing to a log."""
    if isinstance(progress, Progress):
        with progress.beating():
            yield
    else:
        yield


def advance_as_done(progress: Callable[[str], None], label: str, total: int) -> Advance | None:
    """For work finishing on other threads (the briefs' PDF layouts): ``advance(n, item)`` that says so
    at once, one line per item, in a log; None on a terminal (its bar moves when it is waited for)
    or for a plain function."""
    if not isinstance(progress, Progress) or progress.bars or total <= 0:
        return None
    state = {"done": 0}

    def advance(n: int = 1, item: str | None = None) -> None:
        with progress.lock:
            state["done"] = done = min(state["done"] + n, total)
            progress(f"{label} {done:,}/{total:,}" + (f": {item}" if item else ""))

    return advance
