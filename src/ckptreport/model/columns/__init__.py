"""The model: one small function per derived column, named after it, its parameters named after
the columns it reads. The evaluator (``model.evaluate``) computes them with numpy; ``explain`` and the workbook read the
same functions as formulas (see ``expr``). Units are in the names: bytes, seconds (``_s``), GB/s
(``_GBps``, 1 GB = 1e9 bytes), percent (``_pct``), US dollars (``_usd``).

The order of definition is the order of evaluation; a column may read inputs and earlier columns.

Each section of columns is a module of its own, imported here in the order of evaluation; importing
this package registers every column (``define.COLUMNS``).
"""

from .define import (
    COLUMNS,
    DAYS_PER_MONTH,
    MONTHS_PER_YEAR,
    SECONDS_PER_MONTH,
    WITHIN_TARGET,
    Column,
    column,
    section,
)

# isort: off
# each registers its columns, in this order (the order of evaluation)
from . import size  # noqa: F401
from . import placement  # noqa: F401
from . import demand  # noqa: F401
from . import needs  # noqa: F401
from . import bought  # noqa: F401
from . import chain  # noqa: F401
from . import stall  # noqa: F401
from . import restore  # noqa: F401
from . import cadence  # noqa: F401
from . import goodput  # noqa: F401
from . import money  # noqa: F401
from . import tco  # noqa: F401
# isort: on

__all__ = [
    "COLUMNS",
    "DAYS_PER_MONTH",
    "MONTHS_PER_YEAR",
    "SECONDS_PER_MONTH",
    "WITHIN_TARGET",
    "Column",
    "column",
    "section",
]
