"""Storage cost and total cost of ownership: capacity, bandwidth and requests a month, the total over
the run, and what the recommendation may choose."""

from __future__ import annotations

from ..expr import DAY, HOUR, INF, PERCENT, TERA, THOUSAND, known, where
from .define import MONTHS_PER_YEAR, SECONDS_PER_MONTH, column, section

section("Storage cost and total cost of ownership")


@column("pct")
def capex_pct_month(life_s, support_pct):
    """Bought storage: the share of its purchase price charged per month, its life spread evenly plus support."""
    return SECONDS_PER_MONTH / life_s * PERCENT + support_pct / MONTHS_PER_YEAR


@column("usd", excel='"$"#,##0.00')
def tb_usd_month(usd_per_tb_month, capex_usd_per_tb, capex_pct_month):
    """Price of one TB (1e12 bytes) for a month: the rent, else the purchase price's monthly share
    (empty when the tier has no price)."""
    return where(
        known(usd_per_tb_month), usd_per_tb_month, capex_usd_per_tb * capex_pct_month / PERCENT
    )


@column("usd", excel='"$"#,##0.00')
def GBps_usd_month(usd_per_GBps_month, capex_usd_per_GBps, capex_pct_month):
    """Price of one GB/s of write bandwidth for a month: its rent plus the purchase price's monthly share."""
    return usd_per_GBps_month + where(
        capex_usd_per_GBps > 0, capex_usd_per_GBps * capex_pct_month / PERCENT, 0
    )


@column("usd", excel='"$"#,##0.00')
def capacity_usd_month(provisioned_bytes, tb_usd_month):
    """The capacity bought, for a month."""
    return provisioned_bytes / TERA * tb_usd_month


@column("usd", excel='"$"#,##0.00')
def bandwidth_usd_month(tier_bought_GBps, GBps_usd_month):
    """The write bandwidth bought, for a month (where bandwidth is priced apart from capacity)."""
    return where(GBps_usd_month > 0, tier_bought_GBps * GBps_usd_month, 0)


@column("usd", excel='"$"#,##0.00')
def requests_usd_month(puts_per_ckpt, interval_s, usd_per_1k_puts):
    """Object stores: the write requests of a month of checkpoints."""
    return puts_per_ckpt * SECONDS_PER_MONTH / interval_s * usd_per_1k_puts / THOUSAND


@column("usd", excel='"$"#,##0.00')
def storage_usd_month(capacity_usd_month, bandwidth_usd_month, requests_usd_month):
    """Monthly cost of the storage: capacity, bandwidth and requests (empty when the tier is unpriced)."""
    return capacity_usd_month + bandwidth_usd_month + requests_usd_month


@column("usd")
def lost_gpu_usd_month(gpus, usd_per_gpu_hour, ettr_pct):
    """GPU time a month of the run loses to checkpointing (stalls, and rework, restarts and restores
    after failures), at the job's $/GPU-hour: the month's share of wall-clock time that does not
    train (100% - ETTR), so never more than the cluster's GPU bill for the month."""
    return gpus * usd_per_gpu_hour * SECONDS_PER_MONTH / HOUR * (PERCENT - ettr_pct) / PERCENT


@column("usd")
def total_usd_month(storage_usd_month, lost_gpu_usd_month):
    """What checkpointing costs a month: the storage, plus the GPU time it loses."""
    return storage_usd_month + lost_gpu_usd_month


@column("usd")
def storage_run_usd(storage_usd_month, run_days):
    """The storage over the run's length (empty when the tier is unpriced)."""
    return storage_usd_month * run_days * DAY / SECONDS_PER_MONTH


@column("usd")
def purchase_usd(capex_usd_per_tb, provisioned_bytes, capex_usd_per_GBps, tier_bought_GBps):
    """Bought storage: the purchase price a proposal carries, the capacity bought at its price per TB
    and the bandwidth bought at its price per GB/s (0 for rented storage; empty when unpriced)."""
    return where(known(capex_usd_per_tb), provisioned_bytes / TERA * capex_usd_per_tb, 0) + where(
        capex_usd_per_GBps > 0, tier_bought_GBps * capex_usd_per_GBps, 0
    )


@column("usd")
def support_usd_year(purchase_usd, support_pct):
    """Bought storage: support and operations a year, support_per_year of the purchase price."""
    return purchase_usd * support_pct / PERCENT


@column("bool")
def run_outlives_storage(capex_usd_per_tb, run_days, life_s):
    """Bought storage: whether the run lasts longer than the life its purchase is spread over (the
    monthly figure then buys it again, as a second purchase would)."""
    return where(known(capex_usd_per_tb), run_days * DAY > life_s, False)


@column("usd")
def total_usd(storage_run_usd, waste_usd):
    """What checkpointing costs over the run: the storage plus the GPU time lost (empty when the tier
    is unpriced). Recommendations rank options by it."""
    return storage_run_usd + waste_usd


@column("bool")
def recommendable(meets_target, tier_durable, total_usd):
    """An option the recommendation may choose: it meets the target, is feasible, is durable and has a price."""
    return meets_target & tier_durable & known(total_usd)


@column("usd", infinite="not recommendable")
def choice_usd(recommendable, total_usd):
    """The option's cost as the recommendation ranks it: its total, or unbounded when it may not be chosen."""
    return where(recommendable, total_usd, INF)
