"""Shared fixtures: most kernel tests run once per backend."""

from __future__ import annotations

import pytest

BACKENDS = ("asyncio", "trio")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The simulation backend under test (``asyncio`` or ``trio``)."""
    return request.param



def _sdk_has_testing() -> bool:
    import importlib.util

    return importlib.util.find_spec("agents.testing") is not None


#: The SDK's scripted doubles (agents.testing) arrived in openai-agents 0.21;
#: CI also runs the kernel's tests on 0.2.11, where they are missing.
SDK_HAS_TESTING = _sdk_has_testing()
needs_sdk_testing = pytest.mark.skipif(not SDK_HAS_TESTING, reason="needs openai-agents >= 0.21 (agents.testing); this release predates it")
