"""What every pytester-driven test of the plugin shares."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _inner_pytest_config(pytester: pytest.Pytester) -> None:
    # The inner pytest runs in a temp dir without this project's settings;
    # looptime's plugin (benchmark extra) needs pytest-asyncio, so keep it out.
    pytester.makeini(
        "[pytest]\naddopts = -p no:looptime_plugin -p no:looptime_chronometers -p no:looptime_timeproxies\n"
        "asyncio_default_fixture_loop_scope = function\n"
    )
