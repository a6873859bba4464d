"""Wrappers of the SDK's doubles: what the wrapper lacks is the wrapped one's."""

from __future__ import annotations

from typing import Any


class Wrapping:
    """Mixin for a double that wraps another in ``self.model``: attributes the
    wrapper does not define (``calls``, ``assert_complete`` …) fall through."""

    model: Any

    def __getattr__(self, name: str) -> Any:
        # Only reached for attributes the wrapper lacks; "model" itself
        # missing (mid-construction) must not recurse.
        if name == "model":
            raise AttributeError(name)
        return getattr(self.model, name)
