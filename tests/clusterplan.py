"""A small plan whose jobs run on one cluster (the purchase's tests share it): two jobs on dgx-h100, a
few engines and strategies, power and space priced."""

from __future__ import annotations

import copy


def cluster_plan(**changes) -> dict:
    """The plan, with top-level keys replaced by ``changes``; each call a fresh copy."""
    plan = {
        "recipes": ["adamw-bf16"],
        "gpus": [4096],
        "intervals": ["30 min"],
        "strategies": ["sync", "async"],
        "engines": ["dcp-async-cached", "torch-save"],
        "target_overhead": "1%",
        "mfu": "40%",
        "restart": "10 min",
        "retention": "3",
        "clusters": [
            {
                "name": "c",
                "sku": "dgx-h100",
                "gpus": 8192,
                "usd_per_kwh": "$0.10",
                "usd_per_rack_unit_month": "$20",
                "discount_rate": "8%",
                "life": "5 y",
            }
        ],
        "jobs": [
            {
                "name": "big",
                "model": "llama3-405b",
                "sku": "dgx-h100",
                "gpus": 4096,
                "cluster": "c",
            },
            {
                "name": "small",
                "model": "llama3-70b",
                "sku": "dgx-h100",
                "gpus": 2048,
                "cluster": "c",
            },
        ],
    }
    return copy.deepcopy({**plan, **changes})
