"""``agentsim.pytest_plugin``: the pytest plugin (the agentsim marker, the sim fixture).

The module lives in :mod:`agentsim.integrations.pytest_plugin` (the integrations layer); this
public name stays, as the very same module object.
"""

import sys

from .integrations import pytest_plugin as _module
from .integrations.pytest_plugin import *  # noqa: F403 - the names type checkers see

sys.modules[__name__] = _module
