"""The types every stage shares: a models directory read and validated (``load``), its entities typed
by ``schema``, and where each figure came from (``Prov``). The model, the answer and the renderers take it; none
of them reads a file."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from . import schema
from .inputs import PLAN
from .strategies import STRATEGIES, Strategy
from .yamlfile import Marks


@dataclass(frozen=True)
class Prov:
    """Where one input figure came from. ``file`` is named relative to the models directory (or is a
    measured file's name), so that outputs do not depend on where the build ran."""

    file: str
    line: int
    basis: str  # spec, measured, derived, assumption, input; default: the key was omitted; definition: a trait
    source: str | None
    column: int = 0  # 1-based, where known
    date: str | None = None  # a price's date (or any figure's), as the input says
    region: str | None = None  # where a price applies


@dataclass(frozen=True)
class Inputs:
    """A models directory, validated: its recipes, models, SKUs, tiers, engines and plan."""

    recipes: dict[str, schema.Recipe]
    models: dict[str, schema.Model]
    skus: dict[str, schema.Sku]
    tiers: dict[str, schema.Tier]
    engines: dict[str, schema.Engine]
    plan: schema.Plan
    prov: dict[tuple[str, str, str], Prov] = field(
        repr=False
    )  # (section, name, key) -> where it came from
    input_hash: str = ""
    root: str = ""
    measured: dict = field(
        default_factory=dict, repr=False
    )  # (section, name, key) -> measured.Measurement
    places: dict[tuple[str, str], Prov] = field(
        default_factory=dict, repr=False
    )  # (section, name) -> entry
    files: dict[str, str] = field(default_factory=dict)  # every input file by name -> its sha256
    values: dict[str, dict[str, tuple[int, str]]] = field(
        default_factory=dict, repr=False
    )  # file -> key -> (line, text)
    marks: dict[str, Marks] = field(
        default_factory=dict, repr=False
    )  # file -> where each key is (line, column)
    notes: list[str] = field(default_factory=list)  # what reading it took from defaults, once

    @property
    def strategies(self) -> dict[str, Strategy]:
        """The strategy table (strategies.py): every strategy a plan may name, with its traits."""
        return STRATEGIES

    def section(self, name: str) -> dict[str, Any]:
        return getattr(self, name)

    def entity(self, section: str, name: str):
        """One validated entry: ``entity("skus", "dgx-h100")``; the plan is ``entity("plan", "plan")``."""
        return self.plan if section == PLAN else getattr(self, section)[name]
