"""Reading inputs as a hostile world might hand them over: only a regular file, never more than a
limit, never blocking. A link to /dev/zero, a FIFO, a directory or a loop of symbolic links is a
clean error naming the file, not an out-of-memory, a hang or a traceback."""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from .errors import InputError, Problem, printable

MAX_INPUT_BYTES = (
    8 * 2**20
)  # inputs are written by hand or by a measuring tool: anything larger is a mistake


def _kind(mode: int) -> str:
    for test, word in (
        (stat.S_ISDIR, "a directory"),
        (stat.S_ISFIFO, "a FIFO (named pipe)"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
    ):
        if test(mode):
            return word
    return "not a regular file"


def read_regular(path: Path | str, shown: str | None = None, limit: int = MAX_INPUT_BYTES) -> bytes:
    """The bytes of a regular file (links followed), at most ``limit`` of them; InputError otherwise."""
    name = shown or str(path)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as e:
        why = (
            "a loop of symbolic links" if e.errno == errno.ELOOP else (e.strerror or str(e)).lower()
        )
        raise InputError(Problem(name, 0, 0, "", f"cannot read: {why}")) from None
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise InputError(
                Problem(name, 0, 0, "", f"is {_kind(mode)}; an input must be a regular file")
            )
        chunks, size = [], 0
        while size <= limit:
            chunk = os.read(fd, min(1 << 20, limit + 1 - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > limit:
            raise InputError(
                Problem(
                    name,
                    0,
                    0,
                    "",
                    f"is larger than {limit:,} bytes, the most an input file may hold",
                )
            )
        return b"".join(chunks)
    except OSError as e:
        raise InputError(
            Problem(name, 0, 0, "", f"cannot read: {(e.strerror or str(e)).lower()}")
        ) from None
    finally:
        os.close(fd)


def refuse_link(path: Path, what: str) -> None:
    """InputError when ``path`` is a symbolic link: ckptreport never writes through one."""
    if path.is_symlink():
        raise InputError(
            Problem(
                printable(str(path)),
                0,
                0,
                "",
                f"is a symbolic link; ckptreport never writes through a link ({what}: remove the "
                "link or choose another place)",
            )
        )


def write_text_here(path: Path | str, text: str) -> Path:
    """Write ``text`` to ``path`` all at once and never through a link: a target, or a directory
    on its way below the working tree's ``path.parent``, that is a symbolic link is refused; the
    bytes go to a new temporary file of a random name (O_EXCL, so no planted link is followed) in the
    same directory, renamed into place."""
    import tempfile

    path = Path(path)
    refuse_link(path.parent, "its directory")
    refuse_link(path, "the file")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path


def make_dir_here(path: Path | str) -> Path:
    """``mkdir -p`` that refuses a directory that is a symbolic link (writing below it would write
    outside the place asked for)."""
    path = Path(path)
    refuse_link(path, "a directory to write into")
    path.mkdir(parents=True, exist_ok=True)
    return path
