"""``agentsim.cli``: the ``agentsim`` command.

The module lives in :mod:`agentsim.integrations.cli` (the integrations layer);
this public name stays, as the very same module object, and
``python -m agentsim.cli`` still runs the command.
"""

import sys

from .integrations import cli as _module
from .integrations.cli import *  # noqa: F403 - the names type checkers see
from .integrations.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
sys.modules[__name__] = _module
