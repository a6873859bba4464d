"""Errors of the scripted realtime transport.

Each is the realtime name of a generic scenario error (so ``except
UnexpectedCallError`` still catches it) with the same structured fields.
"""

from __future__ import annotations

from .._kernel.errors import AgentsimError
from ..scenario.errors import (
    CallMatcherError,
    IncompleteScenarioError,
    ScenarioCancelledError,
    ScenarioError,
    ScenarioTimeoutError,
    ScenarioUsageError,
    UnexpectedCallError,
)


class UnexpectedRealtimeCallError(UnexpectedCallError):
    """The application's next transport call is not the kind the scenario expected.

    Fields: ``call_index`` (0-based, into ``transport.calls``), ``expected``,
    ``actual``, ``call``.
    """


class RealtimeCallMatcherError(CallMatcherError):
    """An ``expect_call`` matcher returned False. Fields: ``call_index``, ``actual``, ``call``."""


class IncompleteRealtimeScenarioError(IncompleteScenarioError):
    """The exercise ended while the scenario still waited for transport calls, or
    ``assert_complete()`` found leftovers.

    Fields: ``unconsumed_calls``, ``pending_expectations``, ``pending_failures``.
    """


class RealtimeScenarioTimeoutError(ScenarioTimeoutError):
    """``run_scenario`` hit its (virtual) ``timeout``.

    Fields: ``timeout``, ``pending_expectations``, ``unconsumed_calls``.
    """


class ScriptedRealtimeScenarioCancelledError(ScenarioCancelledError):
    """``run_scenario(..., signal=event)``: the event was set before both sides
    finished; both were cancelled (clean-up ran), as the JS guide's
    ``ScriptedRealtimeScenarioCancelledError``.

    Fields: ``pending_expectations``, ``unconsumed_calls``, ``tasks``.
    """


class RealtimeTransportNotClosedError(ScenarioError):
    """``assert_closed()`` found the transport still ``status`` (not disconnected).

    The application did not close its session: use ``async with session`` or
    call ``await session.close()`` in a ``finally``.
    """

    def __init__(self, status: str) -> None:
        self.status = status
        super().__init__(
            f"the realtime transport is still {status!r}; the application never closed its "
            f"session. Use `async with session:` or `await session.close()` in a finally block."
        )


class RealtimeScriptError(ScenarioUsageError):
    """The scenario used the transport in a state that cannot honour it (emitting
    while disconnected, disconnecting twice). Fields: ``operation``, ``state``."""


class RealtimeTransportDisconnectedError(AgentsimError, ConnectionError):
    """What the application gets when it sends on a transport that is disconnected
    (after ``disconnect()`` or ``close()``), as a real connection would fail.

    Fields: ``operation`` (the call kind) and ``status``.
    """

    def __init__(self, operation: str, status: str) -> None:
        self.operation = operation
        self.status = status
        super().__init__(f"cannot {operation}: the realtime transport is {status}")


class ScriptedRealtimeConnectionSupersededError(AgentsimError, ConnectionError):
    """An operation of a connection that a later close or connect superseded,
    as the JS guide's error of that name. Field: ``operation``.

    Raised by a ``connect`` still connecting (``connect_latency``) when the
    application closed the transport — or a disconnect ended it —
    meanwhile: that connection never opens, so it cannot come alive behind
    the newer state. Events scheduled for an old connection
    (``emit_at``/``emit_after``) are dropped, never delivered to a newer one.
    """

    def __init__(self, operation: str) -> None:
        self.operation = operation
        super().__init__(f"{operation} belongs to a realtime connection that was superseded (closed, or replaced by a newer connect) before it completed")
