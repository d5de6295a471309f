"""Where things are: the models directory (--models, ./models, or the set shipped inside the package)
and the templates of the briefs."""

from __future__ import annotations

from importlib import resources
from pathlib import Path


def shipped_models() -> Path:
    """The default inputs that ship with the package (a source checkout: its models/)."""
    packaged = Path(str(resources.files("ckptreport") / "defaults" / "models"))
    if packaged.is_dir():
        return packaged
    return Path(__file__).resolve().parents[2] / "models"


def templates_dir() -> Path:
    """The brief templates that ship with the package (a source checkout: its templates/)."""
    packaged = Path(str(resources.files("ckptreport") / "defaults" / "templates"))
    return packaged if packaged.is_dir() else Path(__file__).resolve().parents[2] / "templates"


def resolve_models(models: str | Path | None) -> Path:
    """--models if given, else ./models if present, else the shipped set."""
    if models is not None:
        return Path(models)
    if Path("models").is_dir():
        return Path("models")
    return shipped_models()
