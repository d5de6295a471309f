"""Run length and money: the run's days and the GPU time its waste costs."""

from __future__ import annotations

from ..expr import DAY, HOUR, PERCENT
from .define import column, section

section("Run length and money")


@column("days")
def run_days(compute_s, waste_pct):
    """Wall-clock run length: compute time plus waste."""
    return compute_s * (1 + waste_pct / PERCENT) / DAY


@column("usd")
def overhead_usd(gpus, compute_s, usd_per_gpu_hour, overhead_pct):
    """GPU-hours stalled on checkpoints over the run, in dollars."""
    return gpus * compute_s / HOUR * usd_per_gpu_hour * overhead_pct / PERCENT


@column("usd")
def waste_usd(gpus, compute_s, usd_per_gpu_hour, waste_pct):
    """GPU-hours lost to checkpoint stalls and failure rework over the run, in dollars."""
    return gpus * compute_s / HOUR * usd_per_gpu_hour * waste_pct / PERCENT


@column("usd")
def run_usd(gpus, run_days, usd_per_gpu_hour):
    """GPU-hours of the whole run, in dollars."""
    return gpus * run_days * DAY / HOUR * usd_per_gpu_hour
