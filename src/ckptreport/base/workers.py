"""Where independent pieces of work run: in this process, on every core of this machine (a process
pool), or on a Dask cluster (a scheduler's address, or ``DASK_SCHEDULER_ADDRESS`` as Dask users
set it). Each is one call, ``map(fn, shared, items)``: ``fn(shared, item)`` for every item, the
results handed back in the items' order whatever order they finish in, so that what is built from
them does not depend on where they ran. ``shared`` (the inputs, a plan) is sent to each worker
once, not with every item. Nothing here knows what the pieces compute."""

from __future__ import annotations

import atexit
import collections
import ctypes
import multiprocessing
import os
import pickle
import secrets
import signal
import tempfile
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from .errors import InputError

SCHEDULER_ENV = "DASK_SCHEDULER_ADDRESS"

_SHARED: dict[
    tuple[str, str], object
] = {}  # in a pool's worker: what ``map`` shares, by the call's number


def bootstrapping() -> bool:
    """Whether this process is a spawned worker still importing the main script: a script that
    builds without ``if __name__ == "__main__":`` builds again in each worker it starts, which must
    stop at once (the build then runs its pieces in its own process)."""
    return bool(getattr(multiprocessing.current_process(), "_inheriting", False))


def spawn_works() -> bool:
    """False once a pool of this process broke: later pools (the briefs') are not started."""
    return not _BROKE


_BROKE: list[bool] = []


def cores() -> int:
    """The cores this process may run on (its affinity where the system says), at least one."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


class InProcess:
    """Every piece here, one after another: a machine of one core, or a plan of one piece."""

    name = "in-process"
    workers = 1

    def map(self, fn: Callable, shared, items: Iterable) -> Iterator:
        for item in items:
            yield fn(shared, item)

    def close(self) -> None:
        pass


def detach() -> None:
    """In a worker process: die with the build (a killed build leaves no worker running), and leave
    Ctrl-C to the build, which handles it."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG (Linux)
    except (AttributeError, OSError):
        pass
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def _call(fn: Callable, key: tuple[str, str], item):
    """In a pool's worker: ``fn(shared, item)``, ``shared`` read from its file (``key``) once per
    ``map`` call, not sent with every item."""
    if key not in _SHARED:
        _SHARED.clear()  # one map at a time: the last one's shared is done with
        with open(key[0], "rb") as f:
            _SHARED[key] = pickle.load(f)
    return fn(_SHARED[key], item)


_POOLS: dict[tuple, ProcessPoolExecutor] = {}  # by (size, initializer): kept for later builds


def kept_pool(workers: int, initializer: Callable = detach) -> ProcessPoolExecutor:
    """This process's pool of ``workers`` spawned processes started by ``initializer`` (the
    decisions' ``detach``; the briefs' layout its own), started on first use and kept: a second
    build in the same process (a notebook, a script's sweep, a test session) neither pays for
    starting Python again nor waits for the last build's workers to exit. ``shutdown`` stops them."""
    pool = _POOLS.get((workers, initializer))
    if pool is None:  # a pool that broke was dropped (``Local.map``)
        pool = _POOLS[workers, initializer] = ProcessPoolExecutor(
            workers, mp_context=multiprocessing.get_context("spawn"), initializer=initializer
        )
    return pool


def fresh_pool(workers: int, initializer: Callable = detach) -> ProcessPoolExecutor:
    """A new pool in place of a kept one found broken when work is first sent to it (a worker
    killed since the last build, by the out-of-memory killer or a person): what happened while it
    was idle does not move the build into this process for good."""
    _POOLS.pop((workers, initializer)).shutdown(wait=False)
    return kept_pool(workers, initializer)


@atexit.register
def shutdown() -> None:
    """Stop this process's kept pools and wait for their workers (at exit; or sooner, to free them)."""
    for pool in _POOLS.values():
        pool.shutdown(wait=True, cancel_futures=True)
    _POOLS.clear()


def _first(pending: collections.deque):
    """The first pending piece's result, taken off the queue once it has one (a broken pool leaves
    it there, to be computed again)."""
    result = pending[0][0].result()
    pending.popleft()
    return result


class Local:
    """A pool of worker processes, one per core by default (spawned, so no lock or thread of this
    process is copied into them; each dies with this process), started on first use and kept for
    the process's later builds. ``shared`` is pickled once per ``map`` into a file the workers read
    once each; at most ``ahead`` pieces per worker are in flight, so finished results waiting their
    turn stay few. ``close`` cancels what a failed build left queued."""

    name = "local"

    def __init__(self, workers: int | None = None, ahead: int = 2):
        self.workers = workers or cores()
        self.ahead = ahead
        self._pending: list = []

    def map(self, fn: Callable, shared, items: Iterable) -> Iterator:
        if _BROKE:  # a pool broke before: this process cannot start workers
            yield from InProcess().map(fn, shared, items)
            return
        pool = kept_pool(self.workers)
        with tempfile.NamedTemporaryFile(prefix="ckptreport-shared-", suffix=".pickle") as f:
            pickle.dump(shared, f, protocol=pickle.HIGHEST_PROTOCOL)
            f.flush()
            key = (f.name, secrets.token_hex(8))  # this call's: a file name may come again
            pending: collections.deque = collections.deque()  # (future, item)
            self._pending.append(pending)
            todo = iter(items)
            taken: list = []  # an item taken from ``todo`` whose submit has not returned
            try:
                for n, item in enumerate(todo):
                    taken.append(item)
                    try:
                        future = pool.submit(_call, fn, key, item)
                    except BrokenProcessPool:
                        if n:
                            raise
                        pool = fresh_pool(self.workers)  # the kept pool broke while idle: once
                        future = pool.submit(_call, fn, key, item)
                    pending.append((future, item))
                    taken.clear()
                    if len(pending) >= self.workers * self.ahead:
                        yield _first(pending)
                while pending:
                    yield _first(pending)
            except BrokenProcessPool:
                # the workers could not run (a script without ``if __name__ == "__main__":`` that
                # builds again as each spawned worker imports it, or a worker killed): what is left is
                # computed here, in order, and gives the same results
                _BROKE.append(True)
                rest = [item for _, item in pending] + taken  # a pool broken while idle refuses
                # the submit itself: that item is computed here too
                pending.clear()
                _POOLS.pop((self.workers, detach), None)
                for item in [*rest, *todo]:
                    yield fn(shared, item)
            finally:
                for p, _ in pending:
                    p.cancel()
                self._pending.remove(pending)

    def close(self) -> None:
        for pending in self._pending:
            for p, _ in pending:
                p.cancel()


class Dask:
    """A Dask cluster: ``address`` names its scheduler (``tcp://host:8786``), or ``client`` is a
    ``distributed.Client`` already connected (a test's LocalCluster). ``shared`` is scattered to
    every worker once; the pieces are mapped onto the cluster, and handed back in order as they
    finish (at most ``ahead`` finished ones wait for an earlier one)."""

    name = "dask"

    def __init__(self, address: str | None = None, client=None, ahead: int = 2):
        self.address, self.ahead, self._own = address, ahead, client is None
        if client is None:
            client = _connect(address)
        self.client = client
        self.workers = max(
            1, sum(w.get("nthreads", 1) for w in self.client.scheduler_info()["workers"].values())
        )

    def map(self, fn: Callable, shared, items: Iterable) -> Iterator:
        # one future, whatever ``shared`` is; a key of its own (hash=False): a content-hashed key is
        # the same for the same data, so a map right after another with it would ask for the key
        # the first map's release is forgetting (the scheduler then reports it lost)
        [handle] = self.client.scatter([shared], broadcast=True, hash=False)
        pending: collections.deque = collections.deque()
        try:
            for item in items:
                pending.append(self.client.submit(fn, handle, item, pure=False))
                if len(pending) >= self.workers * self.ahead:
                    yield self._result(pending.popleft())
            while pending:
                yield self._result(pending.popleft())
        finally:
            for f in pending:
                f.cancel()
            handle.release()

    @staticmethod
    def _result(future):
        try:
            return future.result()
        finally:
            future.release()

    def close(self) -> None:
        if self._own:
            self.client.close()


def _connect(address: str | None):
    """A client of the scheduler at ``address``; a missing Dask or an unreachable scheduler is said
    in words (an InputError), with what to do."""
    try:
        from distributed import Client
    except ImportError:
        raise InputError(
            f"a Dask scheduler was named ({address}) but Dask is not installed here: "
            "pip install 'ckptreport[dask]'"
        ) from None
    try:  # within Dask's own connect timeout (DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT)
        return Client(address)
    except (OSError, TimeoutError, ValueError) as e:
        raise InputError(
            f"cannot reach the Dask scheduler at {address!r} ({type(e).__name__}: {e}); start one "
            f"(dask scheduler), or leave --scheduler and {SCHEDULER_ENV} unset to use this machine's cores"
        ) from None


def choose(scheduler: str | None = None, workers: int | None = None):
    """Where a build's pieces run: on the Dask scheduler ``scheduler`` names (or the one
    ``DASK_SCHEDULER_ADDRESS`` names), else a local pool of ``workers`` processes (default: every
    core), else (one worker) in this process."""
    address = scheduler or os.environ.get(SCHEDULER_ENV) or None
    if address:
        return Dask(address)
    n = workers or cores()
    return InProcess() if n <= 1 else Local(n)
