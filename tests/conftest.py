"""Shared fixtures: most kernel tests run once per backend."""

from __future__ import annotations

import pytest

BACKENDS = ("asyncio", "trio")


@pytest.fixture(params=BACKENDS)
def backend(request: pytest.FixtureRequest) -> str:
    """The simulation backend under test (``asyncio`` or ``trio``)."""
    return str(request.param)



def _sdk_has_testing() -> bool:
    import importlib.util

    return importlib.util.find_spec("agents.testing") is not None


def sdk_release() -> tuple[int, ...]:
    """The installed openai-agents release as numbers (``(0, 21, 1)``)."""
    from importlib.metadata import version

    return tuple(int(part) for part in version("openai-agents").split(".")[:3] if part.isdigit())


def sdk_at_least(minimum: str) -> bool:
    """Whether the installed openai-agents is ``minimum`` or newer."""
    return sdk_release() >= tuple(int(part) for part in minimum.split("."))


def requires_sdk(minimum: str, why: str) -> None:
    """Skip the calling test module on releases older than ``minimum``.

    Called at the top of a module, before it imports what the older release
    lacks. Not a hidden failure: on those releases agentsim raises
    ``SdkVersionError`` naming ``minimum`` instead, which
    ``tests/kernel/test_validation.py`` checks there (CI runs 0.2.11 and 0.13.6).
    """
    if not sdk_at_least(minimum):
        pytest.skip(f"needs openai-agents >= {minimum} ({why})", allow_module_level=True)


#: The SDK's scripted doubles (agents.testing) arrived in openai-agents 0.21;
#: CI also runs the suite on 0.13.6 and the kernel's tests on 0.2.11, where they are missing.
SDK_HAS_TESTING = _sdk_has_testing()
needs_sdk_testing = pytest.mark.skipif(not SDK_HAS_TESTING, reason="needs openai-agents >= 0.21 (agents.testing); this release predates it")


def check_trace_events(records: list[dict[str, object]]) -> None:
    """A Trace Event Format document is well formed for Perfetto: each ``B``
    has its ``E`` on the same track, in order, and no ``E`` comes first."""
    depth: dict[object, int] = {}
    for record in records:
        if record["ph"] == "B":
            depth[record["tid"]] = depth.get(record["tid"], 0) + 1
        elif record["ph"] == "E":
            assert depth.get(record["tid"], 0) > 0, f"an E without its B on track {record['tid']}: {record}"
            depth[record["tid"]] -= 1
    unclosed = {tid: count for tid, count in depth.items() if count}
    assert not unclosed, f"B events without their E, by track: {unclosed}"


@pytest.fixture(autouse=True)
def _every_exported_timeline_is_well_formed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every timeline the suite exports in-process is checked (spans balanced per track)."""
    from agentsim import timeline

    convert = timeline.to_trace_events

    def checked(events: object) -> list[dict[str, object]]:
        records = convert(events)  # type: ignore[arg-type]
        check_trace_events(records)
        return records

    monkeypatch.setattr(timeline, "to_trace_events", checked)
