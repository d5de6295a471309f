"""Laying out a brief's HTML as PDF (WeasyPrint), in this process or in worker processes.

This module imports only WeasyPrint (when it lays out) so that a worker process starts quickly: the
build renders each brief's HTML (charts, words) itself and hands the HTML here. ``Pool`` lays out
several at once on the machine's cores, on worker processes kept for the process's later builds;
the PDF's bytes do not depend on where, or after what, it was laid out.
The renderer fetches nothing: every URL is refused, and the refusals are returned.
"""

from __future__ import annotations

import logging
import os
from concurrent.futures import Future, wait
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

from ..base.workers import detach, fresh_pool, kept_pool


def RefusingFetcher():
    """WeasyPrint's URL fetcher for briefs: nothing is fetched (no file:, no http:, nothing else);
    every attempt is refused and recorded in ``.refused``."""
    from weasyprint.urls import URLFetcher

    class Refusing(URLFetcher):
        def __init__(self):
            super().__init__(allowed_protocols=[], fail_on_errors=False)
            self.refused: list[str] = []

        def fetch(self, url, headers=None):
            self.refused.append(url)
            raise ValueError(f"ckptreport briefs fetch nothing (refused {url[:80]!r})")

        def __call__(self, url):
            return self.fetch(url)

    return Refusing()


def write_pdf(html: str, path: Path, fetcher=None):
    """Lay ``html`` out as a PDF at ``path``; returns the fetcher (its ``.refused`` URLs)."""
    import weasyprint

    fetcher = fetcher or RefusingFetcher()
    log = logging.getLogger("weasyprint")
    level = log.level
    log.setLevel(
        logging.ERROR
    )  # warnings of CSS WeasyPrint ignores are noise; refusals are recorded
    try:
        weasyprint.HTML(string=html, base_url=None, url_fetcher=fetcher).write_pdf(
            str(path), uncompressed_pdf=False, pdf_identifier=b"ckptreport", attachments=[]
        )
    finally:
        log.setLevel(level)
    return fetcher


class NoRenderer(Exception):
    """WeasyPrint or the system libraries it needs (Pango) cannot be loaded."""


def _lay_out(html: str, path: str) -> list[str]:
    """A worker's job: one PDF; returns the URLs refused."""
    try:
        import weasyprint  # noqa: F401  (needs the Pango library from the system)
    except (OSError, ImportError) as e:
        raise NoRenderer(str(e)) from None
    return write_pdf(html, Path(path)).refused


def _worker_start() -> None:
    """In each worker: die with the build and leave Ctrl-C to it (``workers.detach``), and import
    WeasyPrint before the first job arrives."""
    detach()
    try:
        import weasyprint  # noqa: F401  (before the first job; a failure is reported by the job)
    except (OSError, ImportError):
        pass


class Pool:
    """Lays one build's PDFs out on ``workers`` processes of this process's kept pool
    (``workers.kept_pool``; spawned: they share nothing with the build's threads), or in this
    process when ``workers`` is 0. ``submit`` returns a future of the refused URLs; ``close`` waits
    for this build's PDFs (cancelling those not started, with ``cancel``), so none is still being
    written once it returns."""

    def __init__(self, workers: int):
        self.workers = workers
        self.futures: list[Future] = []

    def submit(self, html: str, path: Path) -> Future:
        if self.workers > 0:  # the path made absolute: a kept worker is where the first build was
            job = (_lay_out, html, os.path.abspath(path))
            try:
                future = kept_pool(self.workers, _worker_start).submit(*job)
            except BrokenProcessPool:  # a worker died since it was last used: a fresh pool
                future = fresh_pool(self.workers, _worker_start).submit(*job)
            self.futures.append(future)
            return future
        done: Future = Future()
        try:
            done.set_result(_lay_out(html, str(path)))
        except BaseException as e:  # noqa: BLE001  (handed to whoever waits, as a worker's would be)
            done.set_exception(e)
        return done

    def close(self, cancel: bool = False) -> None:
        if cancel:
            for future in self.futures:
                future.cancel()
        wait(self.futures)  # a pool that broke is replaced by the next build's first submit
        self.futures = []
