"""ckptreport: how big a training checkpoint is, how long it takes to write, what it stalls and costs."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("ckptreport")
except PackageNotFoundError:  # running from a source tree that is not installed
    __version__ = "0+unknown"
