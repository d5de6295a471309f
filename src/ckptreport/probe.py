"""Measure a GPU host: GPU -> pinned host copy (per GPU, then all at once), host memory copy,
sequential writes with fsync into local NVMe and tier mounts, and torch.save throughput.

PyTorch is optional (``pip install 'ckptreport[probe]'``): without it, or without a CUDA device,
the GPU steps are skipped and the file says so. Files written for the test are removed, also on
Ctrl-C; the measured file is written only when every step is done.
"""

from __future__ import annotations

import mmap
import os
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


def write_files(
    dirs: list[Path], size: int, writers: int, direct: bool, progress: Progress | None, label: str
) -> float:
    """N writers, spread over dirs, each writes its share sequentially then fsyncs; returns bytes/s."""
    share = max(CHUNK, (size // writers) // CHUNK * CHUNK)
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
) -> dict:
    """Measure what exists on this host; return the measured file's content."""
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
    return measured.document(
        socket.gethostname(), f"ckptreport probe {__version__}", sku, metrics, gpus, skipped
    )
