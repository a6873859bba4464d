"""Errors of scripted scenarios: mismatches, incomplete scripts, timeouts, misuse.

Every error carries what a test needs as fields (call index, expected and
actual kinds, what is still pending), so a test never parses a message.
Doubles subclass these with their own names (``UnexpectedRealtimeCallError``
…), so ``except UnexpectedCallError`` catches every double's mismatch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .._kernel.errors import AgentsimError, UsageError


@dataclass(frozen=True)
class PendingExpectation:
    """An ``expect_call`` that is waiting: the kind it wants, since when (virtual s)."""

    kind: str
    since: float
    matcher: str | None = None

    def describe(self) -> str:
        matcher = f" matching {self.matcher}" if self.matcher else ""
        return f"{self.kind!r}{matcher} (waiting since {self.since:.3f}s)"


@dataclass(frozen=True)
class PendingFailure:
    """A failure queued by ``fail_next_call`` that no call has consumed yet."""

    kind: str
    error: BaseException

    def describe(self) -> str:
        return f"{self.kind!r} -> {type(self.error).__name__}: {self.error}"


def _listing(items: Sequence[Any], describe: str = "describe") -> str:
    if not items:
        return "none"
    return "; ".join(getattr(item, describe)() for item in items)


class ScenarioError(AgentsimError):
    """Base class of scripted-scenario failures (a test that does not hold)."""


class ScenarioUsageError(ScenarioError, UsageError, RuntimeError):
    """A double was used in a way its script cannot honour (e.g. emitting on a
    closed connection). ``operation`` names the call, ``state`` why it failed."""

    def __init__(self, operation: str, state: str, advice: str) -> None:
        self.operation = operation
        self.state = state
        super().__init__(f"{operation} is not possible while {state}: {advice}")


class InvalidCallKindError(ScenarioError, UsageError, ValueError):
    """``expect_call``/``fail_next_call`` got a kind the double does not have.

    ``kind`` is what was given, ``accepted`` every valid name.
    """

    def __init__(self, kind: object, accepted: Sequence[str]) -> None:
        self.kind = kind
        self.accepted = tuple(accepted)
        super().__init__(f"unknown call kind {kind!r}; use one of: {', '.join(self.accepted)}")


class UnexpectedCallError(ScenarioError):
    """The next call in order is not the kind the scenario expected.

    ``call_index`` is 0-based (index into ``calls``); ``expected`` and
    ``actual`` are kinds; ``call`` is the recorded call itself.
    """

    def __init__(self, call_index: int, expected: str, actual: str, call: Any) -> None:
        self.call_index = call_index
        self.expected = expected
        self.actual = actual
        self.call = call
        super().__init__(
            f"call #{call_index + 1} was {actual!r} but the scenario expected {expected!r}. "
            f"If the application legitimately makes this call first, expect it before "
            f"{expected!r}; otherwise the application changed its order of calls."
        )


class CallMatcherError(ScenarioError):
    """The matcher given to ``expect_call`` returned False for the call.

    ``call_index`` (0-based) and ``actual`` (its kind) locate it; ``call`` is it.
    """

    def __init__(self, call_index: int, actual: str, call: Any) -> None:
        self.call_index = call_index
        self.actual = actual
        self.call = call
        super().__init__(
            f"call #{call_index + 1} ({actual!r}) was rejected by its matcher. Inspect "
            f"`error.call` to see what the application sent; assert inside the matcher "
            f"for a more specific message."
        )


class IncompleteScenarioError(ScenarioError):
    """The exercise finished while the scenario still waited for calls.

    ``pending_expectations`` are the waiting ``expect_call``s,
    ``unconsumed_calls`` calls nobody expected, ``pending_failures`` injected
    failures no call consumed.
    """

    def __init__(self, unconsumed_calls: Sequence[Any], pending_expectations: Sequence[PendingExpectation], pending_failures: Sequence[PendingFailure]) -> None:
        self.unconsumed_calls = tuple(unconsumed_calls)
        self.pending_expectations = tuple(pending_expectations)
        self.pending_failures = tuple(pending_failures)
        super().__init__(
            f"the scenario is incomplete. Waiting for: {_listing(self.pending_expectations)}. "
            f"Unconsumed calls: {_listing(self.unconsumed_calls)}. Unused failures: "
            f"{_listing(self.pending_failures)}. Either the application never made the "
            f"expected call, or the exercise returned before it could."
        )


class _ScenarioStopped(ScenarioError):
    """Both sides were stopped before they finished: what was pending then."""

    def __init__(self, what: str, when: str, pending_expectations: Sequence[PendingExpectation], unconsumed_calls: Sequence[Any], tasks: Sequence[Any]) -> None:
        self.pending_expectations = tuple(pending_expectations)
        self.unconsumed_calls = tuple(unconsumed_calls)
        self.tasks = tuple(tasks)
        stacks = "".join(f"\n{task.format()}" for task in self.tasks)
        super().__init__(
            f"{what}. Waiting for: {_listing(self.pending_expectations)}. "
            f"Unconsumed calls: {_listing(self.unconsumed_calls)}." + (f" Tasks {when}:{stacks}" if stacks else "")
        )


class ScenarioCancelledError(_ScenarioStopped):
    """The ``signal`` given to ``run_scenario`` was set before both sides
    finished: both were cancelled (their clean-up ran), as the JS guide's
    ``AbortSignal`` cancels ``runScenario``.

    ``pending_expectations`` shows what the scenario was still waiting for,
    ``unconsumed_calls`` what the application sent that no expectation took,
    ``tasks`` where every task was when the signal came.
    """

    def __init__(self, pending_expectations: Sequence[PendingExpectation], unconsumed_calls: Sequence[Any], tasks: Sequence[Any] = ()) -> None:
        super().__init__("the scenario was cancelled by its signal", "when it was cancelled", pending_expectations, unconsumed_calls, tasks)


class ScenarioTimeoutError(_ScenarioStopped, TimeoutError):
    """Scenario and exercise did not finish within ``timeout`` (virtual) seconds.

    ``pending_expectations`` shows what the scenario was still waiting for;
    usually one side waits for the other forever. ``tasks`` is where every
    task was at the deadline (each a ``TaskSnapshot``: its ``await`` chain).
    """

    def __init__(
        self, timeout: float, pending_expectations: Sequence[PendingExpectation], unconsumed_calls: Sequence[Any], tasks: Sequence[Any] = ()
    ) -> None:
        self.timeout = timeout
        super().__init__(f"the scenario did not finish within {timeout}s of virtual time", "at the deadline", pending_expectations, unconsumed_calls, tasks)
