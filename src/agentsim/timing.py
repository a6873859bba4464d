"""``agentsim.timing``: the doubles' delays as ranges (distributions, windows).

The module lives in :mod:`agentsim.toolkit.timing` (the toolkit layer); this
public name stays, as the very same module object.
"""

import sys

from .toolkit import timing as _module
from .toolkit.timing import *  # noqa: F403 - the names type checkers see

sys.modules[__name__] = _module
