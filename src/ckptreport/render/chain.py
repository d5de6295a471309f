"""The write chain of an option: GPU HBM, host memory, the writers, (node-local NVMe,) the storage NIC
and the tier, each hop with its bandwidth per node and the time one node's part takes, the bottleneck
in red. Laid out here, drawn by the template ``chain.svg.j2``; the briefs and the review page show it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import jinja2
from markupsafe import Markup

from ..model import display
from .charts import short

if TYPE_CHECKING:
    import pandas as pd

BOX_W, GAP, BOX_H, TOP = 120, 84, 66, 30  # a box, the gap an arrow spans, in the SVG's units


def hops(row: pd.Series) -> tuple[list[tuple[str, list[str]]], list[tuple[str, str, str, str]]]:
    """The chain's boxes (title, lines) and the arrows between them (label, bandwidth, time, the hop
    the bottleneck column names), from the option's row: the copy to host (staged where the strategy
    stages a snapshot), the writers, NVMe where the persist lands there, the NIC unless the tier is
    the node's own drives, the tier."""
    f = display.of

    def arrow(label: str, bandwidth: str, time: str, hop: str) -> tuple[str, str, str, str]:
        return label, f(bandwidth, row[bandwidth]), f(time, row[time]), hop

    per_gpu = f("bytes_per_gpu_max", row["bytes_per_gpu_max"])
    boxes = [
        ("GPU HBM", [f"{int(row['writers_on_node'])} GPUs x {per_gpu}"]),
        ("host DRAM", [f"{f('host_memory_bytes', row['host_memory_bytes'])} per node"]),
        ("writers", [f"{int(row['writers_on_node'])} x {f('writer_GBps', row['writer_GBps'])}"]),
    ]
    arrows = [
        arrow("staged to host", "staging_GBps", "snapshot_s", "d2h")
        if row["stages_snapshot"]
        else arrow("GPU -> host", "d2h_GBps", "d2h_s", "d2h"),
        arrow("serialise", "writers_GBps", "writer_s", "writer"),
    ]
    if row["lands_on_nvme"]:
        boxes.append(("local NVMe", [f"{f('nvme_write_GBps', row['nvme_write_GBps'])} write"]))
        arrows.append(arrow("to NVMe", "nvme_write_GBps", "nvme_s", "nvme"))
    if row["tier_kind"] != "local_nvme":
        boxes.append(
            ("storage NIC", [f"{f('storage_nic_GBps', row['storage_nic_GBps'])} per node"])
        )
        arrows.append(arrow("host -> NIC", "storage_nic_GBps", "nic_s", "nic"))
    boxes.append(
        (
            short(str(row["tier"])),
            [
                f"{f('tier_share_GBps', row['tier_share_GBps'])} per node",
                f"of {f('tier_write_GBps', row['tier_write_GBps'])} total",
            ],
        )
    )
    arrows.append(arrow("into the tier", "tier_share_GBps", "tier_s", "tier"))
    return boxes, arrows


def chain_svg(env: jinja2.Environment, row: pd.Series) -> Markup:
    """The chain as SVG: its boxes in a row, each arrow between two, the bottleneck's red."""
    boxes, arrows = hops(row)
    laid = [
        {"x": 5 + i * (BOX_W + GAP), "y": TOP, "w": BOX_W, "h": BOX_H, "title": t, "lines": lines}
        for i, (t, lines) in enumerate(boxes)
    ]
    out_arrows = []
    for i, (label, bandwidth, time, hop) in enumerate(arrows):
        bottleneck = hop == row["bottleneck"]
        x1 = laid[i]["x"] + BOX_W + 4
        out_arrows.append(
            {
                "x1": x1,
                "x2": x1 + GAP - 8,
                "y": TOP + BOX_H / 2,
                "label": label,
                "bandwidth": bandwidth,
                "time": time,
                "bottleneck": bottleneck,
                "color": "#b3261e" if bottleneck else "#333",
            }
        )
    width = len(boxes) * BOX_W + (len(boxes) - 1) * GAP + 10
    svg = env.get_template("chain.svg.j2").render(
        width=width, height=TOP + BOX_H + 40, boxes=laid, arrows=out_arrows
    )
    return Markup(svg)
