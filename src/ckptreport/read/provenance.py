"""Where each input figure came from: its file and line, basis and source, or for an omitted key
what it was derived from or the default that applies. Read by the compute stage (the sources of
each hop, assumed prices, explain) and by the renderers that cite them."""

from __future__ import annotations

from collections.abc import Mapping

from .inputs import PLAN, SCENARIO, STRATEGY_ENTITY, Input
from .schema import FILES
from .strategies import STRATEGIES
from .validated import Inputs, Prov

TABLE = "the strategy table"  # where a strategy's traits are declared (ckptreport's strategies.py)


def provenance(inputs: Inputs, inp: Input, names: Mapping[str, str]) -> Prov | None:
    """Where the value of ``inp`` comes from for the named entities (``names``: section -> name, e.g.
    {"skus": "dgx-h100"}): the key's file, line, basis and source; for an omitted key, what was derived
    from which keys, or the declared default. None for the plan's axes (the scenario itself)."""
    if inp.entity == SCENARIO:
        return None
    name = PLAN if inp.entity == PLAN else str(names[inp.entity])
    if inp.entity == STRATEGY_ENTITY:
        return Prov(TABLE, 0, "definition", f"{name}: {STRATEGIES[name].doc}")
    entity = inputs.entity(inp.entity, name)
    if inp.given(entity):
        return inputs.prov[(inp.entity, name, inp.key)]
    place = inputs.places.get((inp.entity, name), Prov(FILE_OF[inp.entity], 0, "input", None))
    if inp.derived(entity) is not None:
        cited = [
            (k, inputs.prov[(inp.entity, name, k)])
            for k in inp.derived_from
            if (inp.entity, name, k) in inputs.prov
        ]
        first = cited[0][1] if cited else place
        sources = "; ".join(f"{k}: {p.source}" for k, p in cited if p.source)
        return Prov(
            first.file,
            first.line,
            "derived",
            inp.derived_doc + (f" ({sources})" if sources else ""),
        )
    return Prov(place.file, place.line, "default", f"omitted: {inp.absent}")


def basis(inputs: Inputs, inp: Input, names: Mapping[str, str]) -> str | None:
    """The basis of the figure used: that of the key, or of the keys it was derived from; None when
    the key was omitted and its default applies."""
    prov = provenance(inputs, inp, names)
    if prov is None or prov.basis == "default":
        return None
    if prov.basis != "derived":
        return prov.basis
    name = PLAN if inp.entity == PLAN else str(names[inp.entity])
    bases = {
        inputs.prov[(inp.entity, name, k)].basis
        for k in inp.derived_from
        if (inp.entity, name, k) in inputs.prov
    }
    return "+".join(sorted(bases)) or "derived"


FILE_OF = {section: fname for fname, sections in FILES.items() for section in sections}
