"""Timed sandbox doubles: the SDK's scripted sandbox session, with durations.

``timed_sandbox_session`` takes the same steps as
``agents.testing.scripted_sandbox_session`` plus an optional ``"duration"``
per step, and builds the SDK's own session from them: each call takes its
duration in virtual time, and an ``exec`` that would run past its
``timeout`` raises ``ExecTimeoutError`` at the virtual deadline, as a real
sandbox does.
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "doubles"

from ._timed import timed_sandbox_session as timed_sandbox_session

__all__ = [
    "timed_sandbox_session",
]

