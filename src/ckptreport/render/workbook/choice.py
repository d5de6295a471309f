"""The recommendation as formulas: the Choice sheet (per summary line, its options, live) and the
Purchase sheet (what each step of bandwidth costs and saves); the Summary (``summary``) names the
option each Choice block ranks first. ``Choices`` says where each Choice block is and what it ranks
first as built."""

from __future__ import annotations

from dataclasses import dataclass

from ...model import display
from ...read.units import INF_AT, INF_CELL
from ..cluster import facts as cluster_facts
from .book import BOLD, INFINITE_FROM, TITLE, USD, Context, Sheet
from .bought import write_cluster
from .scenarios import Table

SCHEDULE_YEARS = (
    10  # rows of the schedule at least: a life edited up to this many years still adds up
)
HOURS_PER_YEAR = 8766.0

CHOICE_COLUMNS = (
    "tier",
    "strategy",
    "engine",
    "choice_usd",
    "tier_bought_GBps",
    "storage_usd_month",
    "lost_gpu_usd_month",
    "total_usd",
    "overhead_pct",
    "ettr_pct",
    "run_days",
)


CHOICE_HEAD = (*CHOICE_COLUMNS, "assumed prices")


LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"


@dataclass(frozen=True)
class Block:
    """One summary line's block on the Choice sheet: its title row (whose C cell holds the position
    of the option chosen, 0 when none may be), and its first and last option rows."""

    title: int
    first: int
    last: int

    def chosen(self, column: str) -> str:
        """A formula for ``column`` of the option this block ranks first."""
        letter = LETTERS[CHOICE_HEAD.index(column)]
        return f"INDEX(Choice!${letter}${self.first}:${letter}${self.last},Choice!$C${self.title})"

    @property
    def none(self) -> str:
        """A formula: true when no option of the block may be chosen."""
        return f"Choice!$C${self.title}=0"


@dataclass(frozen=True)
class Choices:
    """Per summary line, its Choice block and the option it ranks first as built (None: none)."""

    blocks: list[Block]
    chosen: list[int | None]


def write_choice(sh: Sheet, ctx: Context, table: Table) -> Choices:
    """Per summary line, its options, each a live reference to its Scenarios row: the Summary picks the
    least `choice_usd` among them by formula, so an edited price or $/GPU-hour changes the choice."""
    widths = (22, 10, 20, 20, 12, 16, 16, 18, 12, 10, 10, 40)  # D: "not recommendable"
    sh.layout(
        {k + 1: max(w, len(h) + 3) for k, (w, h) in enumerate(zip(widths, CHOICE_HEAD))}, "A3"
    )  # bold headers need a little more than their letters
    sh.append(
        [
            sh.text(
                "Choice: the options of each summary line, as the recommendation ranks them",
                font=TITLE,
            )
        ]
    )
    sh.append(
        [
            sh.text(
                "choice_usd is an option's cost over the run (storage + GPU time lost) when it meets the "
                "target, is feasible, durable and priced; unbounded otherwise. The Summary names the least; "
                "rows are in the order ties are broken (smaller system, then lower overhead)."
            )
        ]
    )
    tiers, strategies, engines = ctx.frame["tier"], ctx.frame["strategy"], ctx.frame["engine"]
    formats = {c: display.excel_format(c) for c in CHOICE_COLUMNS}
    blocks, picked = [], []
    for line, rows in zip(ctx.summary.to_dict("records"), ctx.report.candidates):
        sh.append([])
        title = sh.row + 1
        block = Block(title, title + 2, title + 1 + len(rows))
        usd_col = LETTERS[CHOICE_HEAD.index("choice_usd")]
        rank = f"${usd_col}${block.first}:${usd_col}${block.last}"
        usd = [ctx.value(idx, "choice_usd") for idx in rows]
        best = min(usd, default=INF_CELL)
        chosen = 0 if best >= INF_AT else usd.index(best) + 1
        picked.append(rows[chosen - 1] if chosen else None)
        sh.append(
            [
                sh.text(f"{line['model']} / {line['sku']}", font=BOLD),
                sh.text("chosen:"),
                sh.cell(
                    f"=IF(MIN({rank})>={INFINITE_FROM.name},0,MATCH(MIN({rank}),{rank},0))",
                    fmt="0",
                    result=chosen,
                ),
            ]
        )
        sh.header(CHOICE_HEAD)
        for idx in rows:
            sh.append(
                [
                    sh.text(str(tiers[idx])),
                    sh.text(str(strategies[idx])),
                    sh.text(str(engines[idx])),
                ]
                + [table.live(sh, idx, c, formats[c]) for c in CHOICE_COLUMNS[3:]]
                + [sh.text(", ".join(ctx.report.assumed.get(idx, [])) or "none")]
            )
        blocks.append(block)
    return Choices(blocks, picked)


def write_purchase(sh: Sheet, ctx: Context, table: Table) -> None:
    """Per summary line, the purchase curve of its recommended option: monthly cost against the
    bandwidth bought over the steps a buyer chooses between, every figure a live reference."""
    head = (
        "tier",
        "strategy",
        "engine",
        "bought",
        "storage $/month",
        "lost GPU $/month",
        "total $/month",
        "optimum",
    )
    sh.layout(
        {
            k + 1: max(w, len(h) + 3)
            for k, (w, h) in enumerate(zip((46, 16, 20, 16, 16, 16, 16, 12), head))
        },
        "A3",
    )
    sh.append(
        [sh.text("Purchase: what each step of bandwidth costs, and what it saves", font=TITLE)]
    )
    sh.append(
        [
            sh.text(
                "Per summary line, the steps a buyer chooses between (the recommended tier's family, or the "
                "priced durable tiers of the SKU): storage rises with the bandwidth bought, lost GPU time "
                "falls; the optimum is the step the recommendation ranks first."
            )
        ]
    )
    for cp in getattr(ctx.report, "clusters", []):  # the clusters' purchases first
        write_cluster(sh, cluster_facts(cp))
    for line, curve in zip(ctx.summary.to_dict("records"), ctx.report.purchases):
        points = curve.points[curve.points["strategy"] == line["option_strategy"]]
        if points.empty:
            continue
        sh.append([])
        sh.append(
            [
                sh.text(
                    f"{line['model']} / {line['sku']}: {curve.what}, {line['option_strategy']}",
                    font=BOLD,
                )
            ]
        )
        sh.header(head)
        ranks = ",".join(table.ref(int(i), "choice_usd") for i in points.index)
        usd = {int(i): ctx.value(int(i), "choice_usd") for i in points.index}
        least = min(usd.values())
        optimum = {i for i, v in usd.items() if v == least < INF_AT}  # ties: each is marked
        for idx, row in points.iterrows():
            idx = int(idx)
            mark = (
                f"=IF(AND({table.ref(idx, 'choice_usd')}<{INFINITE_FROM.name},"
                f'{table.ref(idx, "choice_usd")}=MIN({ranks})),"◀ optimum","")'
            )
            sh.append(
                [
                    sh.text(str(row["tier"])),
                    sh.text(str(row["strategy"])),
                    sh.text(str(row["engine"])),
                    table.live(
                        sh, idx, "tier_bought_GBps", display.excel_format("tier_bought_GBps")
                    ),
                    table.live(sh, idx, "storage_usd_month", USD),
                    table.live(sh, idx, "lost_gpu_usd_month", USD),
                    table.live(sh, idx, "total_usd_month", USD),
                    sh.cell(mark, result="◀ optimum" if idx in optimum else ""),
                ]
            )
