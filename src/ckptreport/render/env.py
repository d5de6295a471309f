"""The templates of the briefs and the review page (``render/templates/``, inside the package: a wheel
carries them) and the one jinja2 environment that renders them: autoescaped, an undefined variable
an error, built once per process."""

from __future__ import annotations

import functools
from pathlib import Path

import jinja2

TEMPLATES = Path(__file__).resolve().parent / "templates"


def templates_dir() -> Path:
    """Where the templates are: beside this module, in the package."""
    return TEMPLATES


@functools.cache
def environment() -> jinja2.Environment:
    """The templates' environment, built once per process (its templates compiled once): the briefs' and
    the review page's."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES)),
        autoescape=jinja2.select_autoescape(["html", "j2", "svg"], default=True),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
