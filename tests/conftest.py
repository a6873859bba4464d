"""Shared fixtures: most kernel tests run once per backend."""

from __future__ import annotations

import pytest

BACKENDS = ("asyncio", "trio")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The simulation backend under test (``asyncio`` or ``trio``)."""
    return request.param

