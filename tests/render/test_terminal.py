"""render/terminal.py: the one table layout every command prints, and the texts built on it."""

from __future__ import annotations

from ckptreport.render.terminal import table


def test_columns_are_as_wide_as_their_widest_cell_and_lines_end_without_spaces():
    lines = table(["tier", "overhead"], [["superpod-good", "0.9%"], ["pfs", ""]])
    assert lines == [
        "tier           overhead",
        "-------------  --------",
        "superpod-good  0.9%",
        "pfs",
    ]


def test_right_alignment_minimum_widths_no_header_and_indent():
    lines = table(
        None,
        [["gpus", "384", "scenario"], ["sharding", "optimizer_sharded", "spec"]],
        align="<>",
        indent="  ",
        minimum=(0, 14),
    )
    assert lines == [
        "  gpus                    384  scenario",
        "  sharding  optimizer_sharded  spec",
    ]
    assert table(None, [["a", "1"]], align="<>", minimum=(0, 4)) == ["a     1"]


def test_a_header_wider_than_its_cells_sets_the_width():
    assert table(["recommendation"], [["x"]])[1] == "-" * len("recommendation")
