"""Measure a GPU host: GPU -> pinned host copy (per GPU, then all at once), host memory copy,
sequential writes with fsync into local NVMe and tier mounts, torch.save throughput, and how much
a background process writing a node's shard to storage slows a GPU compute loop (interference).

PyTorch is optional (``pip install 'ckptreport[probe]'``): without it, or without a CUDA device,
the GPU steps are skipped and the file says so. Files written for the test are removed, also on
Ctrl-C; the measured file is written only when every step is done.
"""

from __future__ import annotations

import mmap
import os
import shutil
import socket
import statistics
import threading
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

from . import __version__
from .read import measured

CHUNK = 16 * 2**20
Progress = Callable[[str, int, Callable[[], int]], None]  # (label, total, done()) -> shows progress


def _rate(nbytes: int, seconds: float) -> float:
    return nbytes / max(seconds, 1e-9)


def host_memcpy(size: int, repeat: int) -> dict:
    n = max(size, 2**20) // 8
    src = np.ones(n, dtype=np.float64)
    dst = np.empty_like(src)
    np.copyto(dst, src)  # first touch of the pages, not counted
    samples = []
    for _ in range(repeat):
        t = time.perf_counter()
        np.copyto(dst, src)
        samples.append(_rate(src.nbytes, time.perf_counter() - t))
    return {
        "value": statistics.median(samples),
        "samples": samples,
        "method": f"numpy copy of {src.nbytes / 2**20:.0f} MiB in host memory, {repeat} repetitions; median",
    }


def _buffer(direct: bool) -> memoryview:
    data = np.random.default_rng(0).bytes(
        CHUNK
    )  # incompressible, so a compressing filesystem is not flattered
    if not direct:
        return memoryview(data)
    buf = mmap.mmap(-1, CHUNK)  # page-aligned, as O_DIRECT needs
    buf.write(data)
    return memoryview(buf)


def _share(size: int, writers: int) -> int:
    """What each of ``writers`` writes of a ``size``-byte test: whole chunks, at least one."""
    return max(CHUNK, (size // writers) // CHUNK * CHUNK)


def write_files(
    dirs: list[Path], size: int, writers: int, direct: bool, progress: Progress | None, label: str
) -> float:
    """N writers, spread over dirs, each writes its share sequentially then fsyncs; returns bytes/s."""
    share = _share(size, writers)
    buf = _buffer(direct)
    written = [0] * writers
    errors: list[BaseException] = []
    paths = [
        Path(dirs[i % len(dirs)]) / f".ckptreport-probe-{os.getpid()}-{i}" for i in range(writers)
    ]
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | (getattr(os, "O_DIRECT", 0) if direct else 0)
    stop = threading.Event()

    def work(i: int) -> None:
        try:
            fd = os.open(paths[i], flags, 0o600)
            try:
                while written[i] < share and not stop.is_set():
                    written[i] += os.write(fd, buf)
                os.fsync(fd)
            finally:
                os.close(fd)
        except BaseException as e:  # noqa: BLE001  (reported by the caller)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(i,), daemon=True) for i in range(writers)]
    try:
        t = time.perf_counter()
        for th in threads:
            th.start()
        if progress:
            progress(label, share * writers, lambda: sum(written))
        for th in threads:
            th.join()
        elapsed = time.perf_counter() - t
    except BaseException:
        stop.set()
        for th in threads:
            th.join()
        raise
    finally:
        for p in paths:
            p.unlink(missing_ok=True)
    if errors:
        raise OSError(f"writing into {', '.join(map(str, dirs))} failed: {errors[0]}")
    return _rate(sum(written), elapsed)


def disk_write(
    dirs: list[Path], size: int, writers: int, direct: bool, repeat: int, progress, label
) -> dict:
    samples = [
        write_files(dirs, size, writers, direct, progress, f"{label} ({k + 1}/{repeat})")
        for k in range(repeat)
    ]
    return {
        "value": statistics.median(samples),
        "samples": samples,
        "writers": writers,
        "path": ", ".join(map(str, dirs)),
        "method": f"{writers} writer thread(s), {size / 2**20:.0f} MiB in all, {CHUNK // 2**20} MiB sequential "
        f"writes{' with O_DIRECT' if direct else ''}, fsync before the clock stops, "
        f"{repeat} repetitions; median",
    }


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch


def gpu_copies(torch, size: int, repeat: int) -> tuple[dict, dict, dict]:
    """Per-GPU and all-GPU copies from device memory into pinned host memory (copy engine)."""
    count = torch.cuda.device_count()
    n = max(size // count, 64 * 2**20)
    src = [torch.empty(n, dtype=torch.uint8, device=f"cuda:{i}") for i in range(count)]
    dst = [torch.empty(n, dtype=torch.uint8, pin_memory=True) for _ in range(count)]
    streams = [torch.cuda.Stream(device=i) for i in range(count)]
    for i in range(count):  # warm up each path once
        dst[i].copy_(src[i], non_blocking=True)
        torch.cuda.synchronize(i)
    per_gpu = []
    for i in range(count):
        times = []
        for _ in range(repeat):
            torch.cuda.synchronize(i)
            t = time.perf_counter()
            with torch.cuda.stream(streams[i]):
                dst[i].copy_(src[i], non_blocking=True)
            streams[i].synchronize()
            times.append(time.perf_counter() - t)
        per_gpu.append(_rate(n, statistics.median(times)))
    together = []
    for _ in range(repeat):
        for i in range(count):
            torch.cuda.synchronize(i)
        t = time.perf_counter()
        for i in range(count):
            with torch.cuda.stream(streams[i]):
                dst[i].copy_(src[i], non_blocking=True)
        for s in streams:
            s.synchronize()
        together.append(_rate(n * count, time.perf_counter() - t))
    name = torch.cuda.get_device_name(0)
    how = f"PyTorch {torch.__version__} CUDA copy_ (copy engine) of {n / 2**20:.0f} MiB per GPU into pinned memory"
    one = {
        "value": statistics.median(per_gpu),
        "samples": per_gpu,
        "method": f"{how}, one GPU at a time, median of {repeat} per GPU; median over {count} GPUs",
    }
    node = {
        "value": statistics.median(together),
        "samples": together,
        "method": f"{how}, all {count} GPUs at once on their own streams; {repeat} repetitions; median",
    }
    return one, node, {"model": name, "count": count}


def torch_save(torch, directory: Path, size: int, repeat: int) -> dict:
    n = max(size, 64 * 2**20)
    state = {f"shard{i}": torch.ones(n // 8 // 4, dtype=torch.float32) for i in range(8)}
    total = sum(t.numel() * t.element_size() for t in state.values())
    path = Path(directory) / f".ckptreport-probe-{os.getpid()}.pt"
    samples = []
    try:
        for _ in range(repeat):
            t = time.perf_counter()
            with open(path, "wb") as f:
                torch.save(state, f)
                f.flush()
                os.fsync(f.fileno())
            samples.append(_rate(total, time.perf_counter() - t))
    finally:
        path.unlink(missing_ok=True)
    return {
        "value": statistics.median(samples),
        "samples": samples,
        "path": str(directory),
        "method": f"torch.save of a {total / 2**20:.0f} MiB state dict (8 CPU tensors) to {directory}, "
        f"fsync, {repeat} repetitions; median",
    }


def _host_bytes() -> int:
    """This host's memory, where the OS says (else 16 GiB)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 16 * 2**30


def _background_writer(directory: str, nbytes: int, started, stop) -> None:
    """A process of its own (as a process-based async save persists): fill a host buffer of the
    node's shard size (at most a quarter of the host's memory), then write it to ``directory`` with
    fsync, again and again, until told to stop; the file is removed."""
    chunk = np.frombuffer(np.random.default_rng(1).bytes(CHUNK), dtype=np.uint8)
    held = max(CHUNK, min(nbytes, _host_bytes() // 4)) // CHUNK * CHUNK
    buf = np.empty(held, dtype=np.uint8)
    for at in range(0, held, CHUNK):  # incompressible, every page touched
        buf[at : at + CHUNK] = chunk
    view = memoryview(buf)
    path = Path(directory) / f".ckptreport-probe-bg-{os.getpid()}"
    try:
        started.set()
        while not stop.is_set():
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                done = 0
                while done < nbytes and not stop.is_set():
                    at = done % held
                    done += os.write(fd, view[at : at + min(CHUNK, nbytes - done)])
                os.fsync(fd)
            finally:
                os.close(fd)
    finally:
        path.unlink(missing_ok=True)


def _compute_loop(torch):
    """One step of a compute loop and what it is: bf16 matmuls on the first GPU where PyTorch sees
    one, else float64 matmuls in numpy (the CPU path: it measures CPU and memory contention only)."""
    if torch is not None and torch.cuda.is_available():
        a = torch.randn(8192, 8192, device="cuda:0", dtype=torch.bfloat16)

        def step() -> None:
            for _ in range(8):
                a @ a
            torch.cuda.synchronize(0)

        return step, f"8 bf16 matmuls of 8192 x 8192 on {torch.cuda.get_device_name(0)}"
    a = np.random.default_rng(2).standard_normal((384, 384))

    def step() -> None:
        for _ in range(4):
            a @ a

    return step, "4 float64 matmuls of 384 x 384 in numpy (CPU path, no GPU)"


def _step_time(step, window_s: float) -> float:
    """Median time of one step over ``window_s`` of steps (at least five)."""
    times = []
    end = time.perf_counter() + window_s
    while len(times) < 5 or time.perf_counter() < end:
        t = time.perf_counter()
        step()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def interference(
    torch, directory: Path, shard_bytes: int, repeat: int, engines: list[str], window_s: float = 2.0
) -> dict:
    """The slowdown of a compute loop while a background process writes a node's shard to
    ``directory``: 1 - (step time alone / step time during), each repetition alone then during;
    the median (a negative sample, noise, counts as 0)."""
    import multiprocessing

    step, loop = _compute_loop(torch)
    step()  # warm up (kernels, caches), not counted
    ctx = multiprocessing.get_context("spawn")
    samples = []
    for _ in range(repeat):
        alone = _step_time(step, window_s)
        started, stop = ctx.Event(), ctx.Event()
        writer = ctx.Process(
            target=_background_writer,
            args=(str(directory), shard_bytes, started, stop),
            daemon=True,
        )
        writer.start()
        try:
            if not started.wait(60):
                raise OSError("the background writer did not start")
            during = _step_time(step, window_s)
        finally:
            stop.set()
            writer.join(60)
            if writer.is_alive():
                writer.terminate()
                writer.join()
        if writer.exitcode and writer.exitcode > 0:
            raise OSError(f"the background writer into {directory} failed (exit {writer.exitcode})")
        samples.append(max(0.0, 1.0 - alone / during))
    return {
        "value": statistics.median(samples),
        "samples": samples,
        "engines": list(engines),
        "path": str(directory),
        "shard": shard_bytes,
        "method": f"step time of a compute loop ({loop}) over {window_s:g} s alone, then while a "
        f"background process writes {shard_bytes / 2**20:.0f} MiB from host memory to {directory} "
        f"with fsync, again and again; 1 - alone / during, {repeat} repetitions; median",
    }


ROOM = 0.9  # a write test may fill at most this share of a directory's free space


def _room(local: list[Path], tiers: dict[str, Path], size: int, writers: int, shard) -> None:
    """Refuse, before anything is written, a test that would not fit where it writes: each local
    directory takes its share of ``size`` (at least a chunk per writer), each tier all of it, the
    interference's target a shard at a time (an error names the directory, the need and the room)."""
    from .base.errors import InputError
    from .read.units import fmt

    per_writer = _share(size, writers)
    need: dict[Path, int] = {}
    for i in range(writers if local else 0):
        d = Path(local[i % len(local)])
        need[d] = need.get(d, 0) + per_writer
    for d in tiers.values():
        need[Path(d)] = max(need.get(Path(d), 0), per_writer * writers)
    if shard:
        d = Path((list(tiers.values()) or local or [Path.cwd()])[0])
        need[d] = max(need.get(d, 0), int(shard))
    for d, bytes_ in need.items():
        try:
            free = shutil.disk_usage(d).free
        except OSError as e:
            raise InputError(f"{d}: cannot be written into ({e.strerror or e})") from None
        if bytes_ > ROOM * free:
            raise InputError(
                f"{d}: the test writes {fmt(bytes_, 'bytes')} there, but it has {fmt(free, 'bytes')} "
                f"free: lower --size (or --shard), or choose a directory with room"
            )


def run(
    sku: str,
    local: list[Path],
    tiers: dict[str, Path],
    size: int,
    writers: int,
    direct: bool,
    repeat: int = 3,
    progress: Progress | None = None,
    note: Callable[[str], None] = lambda _: None,
    engines: list[str] | None = None,
    shard: int | None = None,
    cpu_loop: bool = False,
) -> dict:
    """Measure what exists on this host; return the measured file's content. ``engines``: measure
    the interference a background persist causes, for these engines (``shard`` bytes a pass; a CPU
    compute loop where there is no GPU only with ``cpu_loop``)."""
    _room(local, tiers, size, writers, engines and (shard or size))
    metrics: dict[str, dict] = {}
    skipped: list[str] = []
    gpus = None
    torch = _torch()
    if torch is None:
        skipped.append(
            "GPU -> host copies and torch.save: PyTorch is not installed (pip install 'ckptreport[probe]')"
        )
    elif not torch.cuda.is_available():
        skipped.append(f"GPU -> host copies: PyTorch {torch.__version__} sees no CUDA device")
    else:
        note("GPU -> pinned host copies, per GPU and all at once")
        metrics["d2h_per_gpu"], metrics["d2h_per_node"], gpus = gpu_copies(torch, size, repeat)
    note("host memory copy")
    metrics["host_memcpy"] = host_memcpy(min(size, 2**30), repeat)
    if local:
        metrics["local_nvme_write"] = disk_write(
            local, size, writers, direct, repeat, progress, "local write"
        )
    for tier, directory in tiers.items():
        m = disk_write([directory], size, writers, direct, repeat, progress, f"write into {tier}")
        metrics["tier_write_per_node"] = {**m, "tier": tier}
    if torch is not None:
        target = (local or list(tiers.values()) or [Path.cwd()])[0]
        note(f"torch.save into {target}")
        metrics["checkpoint_writer"] = torch_save(torch, target, min(size, 2**30), repeat)
    if not local and not tiers:
        skipped.append("disk writes: no --path or --tier given")
    found = None
    if engines:
        gpu = torch is not None and torch.cuda.is_available()
        if gpu or cpu_loop:
            target = (list(tiers.values()) or local or [Path.cwd()])[0]
            note(f"interference: a compute loop alone, then while a process writes into {target}")
            found = interference(torch if gpu else None, target, shard or size, repeat, engines)
        else:
            skipped.append(
                "interference: no CUDA device for the GPU compute loop (--cpu-loop measures a CPU "
                "one, which says nothing of a GPU's training step)"
            )
    return measured.document(
        socket.gethostname(),
        f"ckptreport probe {__version__}",
        sku,
        metrics,
        gpus,
        skipped,
        interference=found,
    )
