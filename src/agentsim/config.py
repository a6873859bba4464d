"""``agentsim.config``: [tool.agentsim] profiles.

The module lives in :mod:`agentsim.integrations.config` (the integrations layer); this
public name stays, as the very same module object.
"""

import sys

from .integrations import config as _module
from .integrations.config import *  # noqa: F403 - the names type checkers see

sys.modules[__name__] = _module
