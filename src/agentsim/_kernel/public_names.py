"""Modules that moved keep the name users know, in what Python shows too.

``agentsim.timing`` lives in ``agentsim/toolkit/timing.py``; the public name
is the same module object (see ``agentsim/timing.py``). Classes and
functions still say where they were defined (``__module__``), which is what
a traceback's exception line, a repr and a pickle show: so a moved module
presents its own as defined under its public name.
"""

from __future__ import annotations

from typing import Any


def present_as(public: str, namespace: dict[str, Any]) -> None:
    """Give every class and function defined in the module of ``namespace``
    the module name ``public`` (the module is importable under both)."""
    own = namespace["__name__"]
    for value in list(namespace.values()):
        if isinstance(value, type) or callable(value) and hasattr(value, "__code__"):
            if getattr(value, "__module__", None) == own:
                value.__module__ = public
