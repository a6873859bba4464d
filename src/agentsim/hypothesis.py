"""``agentsim.hypothesis``: hypothesis strategies (schedules, conversations).

The module lives in :mod:`agentsim.integrations.hypothesis` (the integrations layer); this
public name stays, as the very same module object.
"""

import sys

from .integrations import hypothesis as _module
from .integrations.hypothesis import *  # noqa: F403 - the names type checkers see

sys.modules[__name__] = _module
