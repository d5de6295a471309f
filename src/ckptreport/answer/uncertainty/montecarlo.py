"""Monte Carlo: every uncertain input drawn at once, the summary lines re-evaluated a chunk of draws at
a time (memory bounded), each chunk independent so that a pool or a Dask cluster maps the same pieces."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from ...base.workers import InProcess
from ..types import NONE, Param, Sampled, option_label
from .evaluator import METRICS, RANK_COLUMNS, Evaluator, picks
from .ranges import BLOCK, block_draws, quantiles

RELEASE_EVERY = 16  # chunks between handing the scratch file's pages back: memory stays bounded

ROWS_PER_CHUNK = 100_000  # rows of options x draws evaluated at once: ~150 MB of columns


@dataclass(frozen=True)
class SamplePlan:
    """What a Monte Carlo run evaluates, in one picklable piece a worker process (or a Dask worker)
    receives: every summary line's options (frame rows), the lines as positions into them, each
    line's base recommendation, the uncertain inputs, the number of draws and the seed. ``chunks``
    splits the draws into independent pieces; ``evaluate`` computes one; ``Tally`` adds them up."""

    rows: pd.DataFrame
    groups: tuple[np.ndarray, ...]
    base: tuple[int, ...]  # per line: the position of its recommendation in ``rows``
    lines: pd.DataFrame  # per line: model, sku, recipe, gpus, interval_s, status
    params: tuple[Param, ...]
    samples: int
    seed: int

    @classmethod
    def of(cls, report, params: list[Param], samples: int, seed: int) -> SamplePlan:
        table = report.summary
        labels = sorted({int(i) for c in report.candidates for i in c})
        at = {label: k for k, label in enumerate(labels)}
        groups = tuple(np.array([at[int(i)] for i in sorted(c)]) for c in report.candidates)
        lines = table[["model", "sku", "recipe", "gpus", "interval_s", "option_status"]].astype(
            {"model": str, "sku": str, "recipe": str}
        )
        return cls(
            report.frame.loc[labels],
            groups,
            tuple(at[int(i)] for i in table["option_index"]),
            lines.reset_index(drop=True),
            tuple(params),
            samples,
            seed,
        )

    @functools.cached_property
    def evaluator(self) -> Evaluator:
        return Evaluator(self.rows, list(self.params))

    @functools.cached_property
    def options(self) -> list[str]:
        return [
            option_label(s, t, e)
            for s, t, e in zip(*(self.rows[c].astype(str) for c in ("strategy", "tier", "engine")))
        ]

    def chunks(self, rows_per_chunk: int | None = None) -> list[tuple[int, int]]:
        """(first block, blocks) pieces of about ``rows_per_chunk`` option x draw rows each."""
        per = max(1, (rows_per_chunk or ROWS_PER_CHUNK) // max(len(self.rows) * BLOCK, 1))
        total = -(-self.samples // BLOCK)
        return [(b, min(per, total - b)) for b in range(0, total, per)]

    def evaluate(self, piece: tuple[int, int], frame: bool = False) -> Chunk:
        """One piece of the draws: which option each line recommends in each, the metrics of each
        line's base recommendation, and (``frame``) the rows samples.parquet holds."""
        first_block, blocks = piece
        values = block_draws(list(self.params), self.seed, first_block, blocks, self.samples)
        k = len(values)
        first = first_block * BLOCK
        cols = self.evaluator.run(values, RANK_COLUMNS + METRICS)
        chosen = picks(cols, list(self.groups))
        metrics = np.stack(
            [np.stack([cols[m][:, b] for m in METRICS]) for b in self.base]
        )  # (lines, M, k)
        out = None
        if frame:  # line after line, each its k draws: built as whole columns (one frame a chunk)
            names, code = self.codes
            lines = len(chosen)
            out = pd.DataFrame(
                {
                    "sample": np.tile(np.arange(first, first + k, dtype=np.int64), lines),
                    "model": np.repeat(self.lines["model"].to_numpy(object), k),
                    "sku": np.repeat(self.lines["sku"].to_numpy(object), k),
                    "recommended": pd.Categorical.from_codes(code[np.concatenate(chosen)], names),
                    **{m: metrics[:, i, :].reshape(-1) for i, m in enumerate(METRICS)},
                    **{
                        f"input {p.name}": np.tile(values[:, j], lines)
                        for j, p in enumerate(self.params)
                    },
                }
            )
        return Chunk(first, np.stack(chosen), metrics, out)

    def tally(self) -> Tally:
        """A Tally holding the metrics in memory: (lines x metrics x samples) floats, enough for
        millions of draws of the default summary (60 lines: 2.4 GB per million)."""
        return Tally(self, InMemory(len(self.groups) * len(METRICS), max(self.samples, 1)))

    @functools.cached_property
    def codes(self) -> tuple[list[str], np.ndarray]:
        option = self.options
        names = sorted(set(option)) + [NONE]
        return names, np.array([names.index(o) for o in option] + [len(names) - 1])


@dataclass
class Chunk:
    first: int  # the first sample
    picked: np.ndarray  # (lines, k): the position of the option recommended; -1 none
    metrics: np.ndarray  # (lines, len(METRICS), k): the base recommendation's
    frame: pd.DataFrame | None = None


class Tally:
    """The chunks added up as they arrive, in any order: wins per option, and the metrics in a
    ``Scratch`` file (or in memory) for exact quantiles."""

    def __init__(self, plan: SamplePlan, store):
        self.plan, self.store = plan, store
        self.wins = np.zeros((len(plan.groups), len(plan.rows)), dtype=np.int64)
        self.none = np.zeros(len(plan.groups), dtype=np.int64)
        self.added = 0

    def add(self, chunk: Chunk) -> None:
        k = chunk.picked.shape[1]
        for line, picked in enumerate(chunk.picked):
            ok = picked >= 0
            np.add.at(self.wins[line], picked[ok], 1)
            self.none[line] += int((~ok).sum())
        lines, m, _ = chunk.metrics.shape
        self.store.array[:, chunk.first : chunk.first + k] = chunk.metrics.reshape(lines * m, k)
        self.added += 1
        if self.added % RELEASE_EVERY == 0:  # a flush a chunk costs more than the draws' own time
            self.store.release()

    def result(self) -> Sampled:
        plan, option, n = self.plan, self.plan.options, self.plan.samples
        out = []
        for line in range(len(plan.groups)):
            head = plan.lines.iloc[line]
            quant = {}
            for m, metric in enumerate(METRICS):
                quant[metric] = quantiles(np.array(self.store.array[line * len(METRICS) + m, :n]))
                self.store.release()
            share: dict[str, float] = {}
            for r in np.flatnonzero(self.wins[line]):
                share[option[r]] = share.get(option[r], 0.0) + int(self.wins[line, r]) / n
            if self.none[line]:
                share[NONE] = int(self.none[line]) / n
            out.append(
                {
                    "model": head["model"],
                    "sku": head["sku"],
                    "recipe": head["recipe"],
                    "gpus": int(head["gpus"]),
                    "interval_s": float(head["interval_s"]),
                    "option": option[plan.base[line]],
                    "status": str(head["option_status"]),
                    "quantiles": quant,
                    "wins": dict(sorted(share.items(), key=lambda kv: (-kv[1], kv[0]))),
                }
            )
        return Sampled(n, plan.seed, list(plan.params), out)


def evaluate(plan: SamplePlan, piece: tuple[int, int]) -> Chunk:
    """``plan.evaluate(piece)`` as a plain function: what a Dask client maps over ``plan.chunks()``."""
    return plan.evaluate(piece)


def evaluate_with_frame(plan: SamplePlan, piece: tuple[int, int]) -> Chunk:
    """``plan.evaluate(piece, frame=True)``: a piece with the rows samples.parquet holds."""
    return plan.evaluate(piece, frame=True)


class InMemory:
    """A Tally's store held in memory (a Dask client gathering a modest run)."""

    def __init__(self, rows: int, columns: int):
        self.array = np.empty((rows, columns))

    def release(self) -> None:
        pass

    def close(self) -> None:
        pass


def monte_carlo(
    report,
    params: list[Param],
    samples: int,
    seed: int,
    scratch,
    sink=None,
    progress=lambda _: None,
    workers=None,
) -> Sampled:
    """Draw every uncertain input together ``samples`` times (seeded) and re-evaluate every summary
    line's options, a chunk of draws at a time: memory stays bounded whatever ``samples``. ``sink``
    receives a frame per chunk (one row per draw x line: the draw's inputs, the option recommended
    in it, the base recommendation's metrics). The metrics of each line's base recommendation go to
    a scratch file in ``scratch`` (a directory), so the quantiles are exact and the memory flat:
    one line's values are read at a time. Each chunk is independent (``SamplePlan.evaluate``): a
    Dask cluster maps the same pieces (README: Monte Carlo on Dask): ``workers`` (``base.workers``:
    this process by default, a local pool, a Dask cluster) computes them, handed back in order."""
    from ...base.progress import task

    plan = SamplePlan.of(report, params, samples, seed)
    path = Path(scratch) / "metrics.f64"
    store = Scratch(path, len(plan.groups) * len(METRICS), max(samples, 1))
    try:
        tally = Tally(plan, store)
        with task(progress, "samples", samples) as advance:
            fn = evaluate if sink is None else evaluate_with_frame
            for chunk in (workers or InProcess()).map(fn, plan, plan.chunks()):
                tally.add(chunk)
                if sink is not None:
                    sink(chunk.frame)
                advance(chunk.picked.shape[1])
        return tally.result()
    finally:
        store.close()
        path.unlink(missing_ok=True)


class Scratch:
    """A float64 array of shape (rows, columns) in a file: written a chunk of columns at a time, read
    a row at a time, its pages handed back to the kernel after each (``release``), so the process's
    memory stays flat however many samples there are (the disk holds 8 bytes per value)."""

    def __init__(self, path: Path, rows: int, columns: int):
        import mmap

        self._file = open(path, "w+b")  # noqa: SIM115 - closed by close()
        self._file.truncate(rows * columns * 8)
        self._map = mmap.mmap(self._file.fileno(), rows * columns * 8)
        self.array = np.frombuffer(self._map, dtype=np.float64).reshape(rows, columns)

    def release(self) -> None:
        import mmap

        self._map.flush()
        if hasattr(mmap, "MADV_DONTNEED"):
            self._map.madvise(
                mmap.MADV_DONTNEED
            )  # written back: the pages leave this process's memory

    def close(self) -> None:
        del self.array
        self._map.close()
        self._file.close()
