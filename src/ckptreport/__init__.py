"""ckptreport: how big a training checkpoint is, how long it takes to write, what it stalls and costs."""

# The one place the version is written: pyproject.toml reads it from here (hatch's version source),
# and reading it needs no importlib.metadata at start-up.
__version__ = "0.1.0"
