"""The templates of the briefs and the review page (``render/templates/``, inside the package: a wheel
carries them) and the one jinja2 environment that renders them: autoescaped, an undefined variable
an error, built once per process."""

from __future__ import annotations

import functools
import re
from pathlib import Path

import jinja2
from markupsafe import Markup, escape

TEMPLATES = Path(__file__).resolve().parent / "templates"


def templates_dir() -> Path:
    """Where the templates are: beside this module, in the package."""
    return TEMPLATES


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment, built once per process (its templates compiled once): the briefs' and
    the review page's."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html", "j2", "svg"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["linked"] = linked
    return env


# What in a source's words points somewhere a reader can open: an address; a public repository's
# issue or pull request (owner/name PR #N, owner/name issue #N); an arXiv paper.
_URL = r"https?://[A-Za-z0-9._~:/?#@!$&*+,;=%-]+[A-Za-z0-9/_=-]"
_REPO = r"\b([A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*) (PR|issue) #(\d+)"
_ARXIV = r"\barXiv:? ?(\d{4}\.\d{4,5})"
_LINKS = re.compile(f"({_URL})|{_REPO}|{_ARXIV}")


def _href(m: re.Match) -> str:
    if m.group(1):
        return m.group(1)
    if m.group(2):
        kind = "pull" if m.group(3) == "PR" else "issues"
        return f"https://github.com/{m.group(2)}/{kind}/{m.group(4)}"
    return f"https://arxiv.org/abs/{m.group(5)}"


def linked(text) -> Markup:
    """A source's words, escaped, with each address, repository issue or PR and arXiv paper a link
    that opens in a new tab (the page itself still fetches nothing): text from the inputs stays text."""
    text = str(text)
    out, at = [], 0
    for m in _LINKS.finditer(text):
        out.append(escape(text[at : m.start()]))
        out.append(
            Markup('<a href="{}" target="_blank" rel="noopener noreferrer">{}</a>').format(
                _href(m), m.group(0)
            )
        )
        at = m.end()
    out.append(escape(text[at:]))
    return Markup("").join(out)
