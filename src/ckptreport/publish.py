"""Landing a build's outputs all at once, beside whatever else the user keeps in the directory.

A build writes into a sibling staging directory (``.OUT.ckptreport-XXXXXXXX`` next to ``OUT``) and,
when everything is written, switches it with ``OUT`` in one step: Linux's ``renameat2`` with
``RENAME_EXCHANGE`` swaps the two directories atomically, so a reader (or a kill at any moment)
sees the old set or the new set, never a mix. Where that call is missing the switch is two renames
with a gap of microseconds, and the README says so.

Files in ``OUT`` that the previous build did not write (its ``manifest.json`` lists what it wrote)
are the user's: they are linked into the new set, never deleted (one written in the moment between
linking and switching is moved across after the switch); a new output that would replace one of them
is refused. A lock on ``OUT``'s parent directory makes a second build into the same place
wait. Staging directories left by a killed build are removed by the next build, under the lock.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import json
import os
import secrets
import shutil
from collections.abc import Callable
from pathlib import Path

from .base.errors import InputError, Problem

_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (Linux renameat2 RENAME_EXCHANGE); False where not supported."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (AttributeError, OSError):
        return False
    renameat2.argtypes = [
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_int,
        ctypes.c_char_p,
        ctypes.c_uint,
    ]
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    err = ctypes.get_errno()
    if err in (errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP):
        return False
    raise OSError(err, os.strerror(err), str(a))


def _manifest_files(directory: Path) -> set[str] | None:
    """The files a build wrote into ``directory`` (its manifest's list, and the manifest), or None."""
    try:
        manifest = json.loads((directory / "manifest.json").read_text())
        return set(manifest["files"]) | {"manifest.json"}
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _fail(out: Path, message: str) -> InputError:
    return InputError(Problem(str(out), 0, 0, "", message))


class Publisher:
    """``with Publisher(out) as staging: write there; publisher.commit()`` (see the module)."""

    def __init__(self, out: Path, progress: Callable[[str], None] = lambda _: None):
        self.out = Path(out)
        self.progress = progress
        self.staging: Path | None = None
        self._lock: int | None = None

    # ---- set-up: the place, the lock, the stale staging -------------------------------------

    def __enter__(self) -> Path:
        out = self.out
        try:
            if out.is_symlink():  # publish where the link points; the link stays
                try:
                    out = self.out = out.resolve(strict=True)
                except RuntimeError:  # Python < 3.13 says a loop this way
                    raise _fail(out, "is a symbolic link that loops or points nowhere") from None
                except FileNotFoundError:
                    raise _fail(out, "is a symbolic link that points nowhere") from None
            if out.exists() and not out.is_dir():
                raise _fail(out, "is not a directory; --out names the directory the outputs go to")
            out.parent.mkdir(parents=True, exist_ok=True)
            self._lock = os.open(out.parent, os.O_RDONLY)
        except OSError as e:
            raise _fail(
                out, f"cannot write the output directory: {(e.strerror or str(e)).lower()}"
            ) from None
        try:
            fcntl.flock(self._lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            self.progress(f"waiting for another build into {out.parent} to finish")
            fcntl.flock(self._lock, fcntl.LOCK_EX)
        try:
            for stale in out.parent.glob(f".{out.name}.ckptreport-*"):
                if (
                    stale.is_dir()
                    and not stale.is_symlink()
                    and len(stale.name) == len(out.name) + 21
                ):
                    shutil.rmtree(
                        stale, ignore_errors=True
                    )  # a killed build's: nobody else holds the lock
            self.staging = out.parent / f".{out.name}.ckptreport-{secrets.token_hex(4)}"
            self.staging.mkdir()
        except OSError as e:
            self._release()
            raise _fail(
                out, f"cannot write beside the output directory: {(e.strerror or str(e)).lower()}"
            ) from None
        return self.staging

    def __exit__(self, *exc) -> None:
        if self.staging is not None:
            shutil.rmtree(self.staging, ignore_errors=True)
        self._release()

    def _release(self) -> None:
        if self._lock is not None:
            os.close(self._lock)  # closing the descriptor releases the lock
            self._lock = None

    # ---- the switch --------------------------------------------------------------------------

    def previous_outputs(self) -> set[str] | None:
        """What the previous build wrote (its manifest's files), None when OUT holds no manifest."""
        return _manifest_files(self.out)

    def carry_over(self) -> list[str]:
        """Link every file of OUT the previous build did not write into the staging set; refuse when a
        new output would replace one. Returns what was carried."""
        if not self.out.is_dir():
            return []
        ours = self.previous_outputs() or set()
        new = {p.relative_to(self.staging).as_posix() for p in self.staging.rglob("*")}
        carried = []
        for path in sorted(self.out.rglob("*")):
            rel = path.relative_to(self.out).as_posix()
            if rel in ours or (
                path.is_dir() and not path.is_symlink() and (self.staging / rel).is_dir()
            ):
                continue  # the previous build's, or a directory both sets have (briefs/)
            if rel in new:
                raise _fail(
                    self.out / rel,
                    "was not written by ckptreport (out/manifest.json does not list it) "
                    "and a new output has its name: move it away, or build into another --out",
                )
            target = self.staging / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink():
                os.symlink(os.readlink(path), target)
            elif path.is_dir():
                target.mkdir(exist_ok=True)
            else:
                try:
                    os.link(path, target)
                except OSError:
                    shutil.copy2(path, target)
            carried.append(rel)
        return carried

    def commit(self) -> list[str]:
        """Switch the staging set in as OUT; returns the user's files carried into it."""
        try:
            carried = self.carry_over()
            if self.out.exists():
                if not _exchange(self.staging, self.out):
                    old = self.out.parent / f".{self.out.name}.ckptreport-{secrets.token_hex(4)}"
                    os.replace(self.out, old)
                    os.replace(self.staging, self.out)
                    self.staging = old
            else:
                os.replace(self.staging, self.out)
                self.staging = None
        except OSError as e:
            raise _fail(
                self.out, f"cannot replace the output directory: {(e.strerror or str(e)).lower()}"
            ) from None
        if self.staging is not None:
            carried += self._rescue(set(carried))
        return carried

    def _rescue(self, carried: set[str]) -> list[str]:
        """Move into OUT what the user wrote into the old set after it was carried over (the moment
        between carrying and switching), so removing the old set deletes only the build's files."""
        old = self.staging
        ours = _manifest_files(old) or set()
        rescued = []
        for path in sorted(old.rglob("*")):
            rel = path.relative_to(old).as_posix()
            if rel in ours or rel in carried or path.is_dir() and not path.is_symlink():
                continue
            target = self.out / rel
            if target.exists() or target.is_symlink():
                continue
            try:
                target.parent.mkdir(parents=True, exist_ok=True)
                os.replace(path, target)
                rescued.append(rel)
            except OSError:
                pass  # left in the old set, which is then removed with ignore_errors; nothing else to try
        return rescued
