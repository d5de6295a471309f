"""Where things are: the models directory (--models, ./models, or the set shipped inside the package).
The templates of the briefs and the page live inside the package too (``render.env``)."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped_models() -> Path:
    """The default inputs that ship with the package (a source checkout: its models/)."""
    packaged = Path(str(resources.files("ckptreport") / "defaults" / "models"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[3] / "models"


def resolve_models(models: str | Path | None) -> Path:
    """--models if given, else ./models if present, else the shipped set."""
    if models is not None:
        return Path(models)
    if Path("models").is_dir():
        return Path("models")
    return shipped_models()
