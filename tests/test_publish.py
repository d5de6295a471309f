"""publish.py: a build's outputs land all at once, beside whatever else the user keeps there."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ckptreport import publish
from ckptreport.base.errors import InputError


def _publish(out: Path, files: dict[str, str], monkeypatch=None, during=None) -> list[str]:
    """One publication of ``files`` (and a manifest listing them) into ``out``; ``during`` runs after
    the user's files were carried over and before the switch."""
    publisher = publish.Publisher(out)
    with publisher as staging:
        for name, text in files.items():
            (staging / name).parent.mkdir(parents=True, exist_ok=True)
            (staging / name).write_text(text)
        (staging / "manifest.json").write_text(json.dumps({"files": {n: "" for n in files}}))
        if during:
            carry = publisher.carry_over

            def carry_then_write() -> list[str]:
                carried = carry()
                during()
                return carried

            monkeypatch.setattr(publisher, "carry_over", carry_then_write)
        return publisher.commit()


@pytest.mark.parametrize("exchange", [True, False], ids=["renameat2", "two-renames"])
def test_the_switch_keeps_the_users_files_and_leaves_nothing_beside(
    tmp_path, monkeypatch, exchange
):
    """With the atomic exchange and with its two-rename fallback: the new set replaces the old one
    (an output the new build no longer writes goes), the user's files stay, including one written in
    the moment between carrying over and switching; a killed build's staging is cleared; nothing is
    left beside out/."""
    if not exchange:
        monkeypatch.setattr(publish, "_exchange", lambda a, b: False)
    out = tmp_path / "out"
    _publish(out, {"a.txt": "old", "briefs/x.pdf": "old", "gone.txt": "old"})
    (out / "mine.txt").write_text("mine")
    (out / "briefs" / "mine.pdf").write_text("mine")
    stale = tmp_path / ".out.ckptreport-deadbeef"
    stale.mkdir()
    (stale / "half.xlsx").write_text("half")
    not_ours = tmp_path / ".out.ckptreport-notours"
    not_ours.mkdir()
    carried = _publish(
        out,
        {"a.txt": "new", "briefs/x.pdf": "new"},
        monkeypatch,
        during=lambda: (out / "late.txt").write_text("late"),
    )
    assert sorted(carried) == ["briefs/mine.pdf", "late.txt", "mine.txt"]
    files = {p.relative_to(out).as_posix(): p.read_text() for p in out.rglob("*") if p.is_file()}
    assert files.pop("manifest.json")
    assert files == {
        "a.txt": "new",
        "briefs/x.pdf": "new",
        "briefs/mine.pdf": "mine",
        "mine.txt": "mine",
        "late.txt": "late",
    }
    assert sorted(p.name for p in tmp_path.iterdir()) == [".out.ckptreport-notours", "out"]


def test_a_second_build_waits_for_the_lock_and_says_so(tmp_path):
    out = tmp_path / "out"
    said = []
    with publish.Publisher(out):
        done = subprocess.run(
            [
                sys.executable,
                "-c",
                "import fcntl, os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); "
                "fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)",
                str(tmp_path),
            ],
            capture_output=True,
            text=True,
        )
        assert (
            done.returncode != 0 and "BlockingIOError" in done.stderr
        )  # held while a build writes
    with publish.Publisher(out, said.append):
        pass
    assert said == []  # free again once the first is done


def test_a_failed_build_leaves_the_previous_set_and_nothing_beside(tmp_path):
    out = tmp_path / "out"
    _publish(out, {"a.txt": "old"})
    with pytest.raises(RuntimeError), publish.Publisher(out) as staging:
        (staging / "a.txt").write_text("half")
        raise RuntimeError("killed while writing")
    assert (out / "a.txt").read_text() == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]


def test_a_new_output_never_replaces_a_file_of_the_users(tmp_path):
    out = tmp_path / "out"
    _publish(out, {"a.txt": "old"})
    (out / "report.html").write_text("mine")
    with pytest.raises(InputError) as e:
        _publish(out, {"a.txt": "new", "report.html": "ours"})
    assert "was not written by ckptreport" in str(e.value)
    assert (out / "report.html").read_text() == "mine" and (out / "a.txt").read_text() == "old"


def test_out_must_be_a_directory_and_a_link_publishes_where_it_points(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(InputError, match="is not a directory"):
        _publish(tmp_path / "file", {"a.txt": "new"})
    real = tmp_path / "real"
    (tmp_path / "link").symlink_to(real, target_is_directory=True)
    real.mkdir()
    _publish(tmp_path / "link", {"a.txt": "new"})
    assert (tmp_path / "link").is_symlink() and (real / "a.txt").read_text() == "new"
