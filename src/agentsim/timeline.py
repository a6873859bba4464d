"""``agentsim.timeline``: timelines (Perfetto export, load, render).

The module lives in :mod:`agentsim.integrations.timeline` (the integrations layer); this
public name stays, as the very same module object.
"""

import sys

from .integrations import timeline as _module
from .integrations.timeline import *  # noqa: F403 - the names type checkers see

sys.modules[__name__] = _module
