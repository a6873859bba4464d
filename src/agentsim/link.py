"""``agentsim.link``: links with latency and loss between doubles.

The module lives in :mod:`agentsim.toolkit.link` (the toolkit layer); this
public name stays, as the very same module object.
"""

import sys

from .toolkit import link as _module
from .toolkit.link import *  # noqa: F403 - the names type checkers see

sys.modules[__name__] = _module
