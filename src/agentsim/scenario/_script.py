"""The call script: calls recorded in order, matched against expectations.

The application side *records* calls; the scenario side *expects* them. A
call that arrives before its expectation is buffered, an expectation
registered before its call waits; either way calls are matched in one global
order, oldest expectation first. Failure injection is per kind and queued.

Matching happens at the moment a call is recorded (no await in between), so
"waiting expectations" always means "waiting for a call nobody has made yet"
— which is what makes an incomplete scenario decidable.
"""

from __future__ import annotations

import inspect
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

import anyio

from .errors import (
    ScenarioCancelledError,
    CallMatcherError,
    IncompleteScenarioError,
    PendingExpectation,
    PendingFailure,
    ScenarioTimeoutError,
    UnexpectedCallError,
)


class RecordedCall(Protocol):
    """What a double records per call: its 0-based index and its kind."""

    @property
    def index(self) -> int: ...

    @property
    def kind(self) -> str: ...

    def describe(self) -> str: ...


C = TypeVar("C", bound=RecordedCall)
Matcher = Callable[[Any], "bool | None | Awaitable[bool | None]"]


@dataclass(frozen=True)
class ScenarioErrors:
    """The error classes a double raises (its own names for the generic errors)."""

    unexpected: type[UnexpectedCallError] = UnexpectedCallError
    matcher: type[CallMatcherError] = CallMatcherError
    incomplete: type[IncompleteScenarioError] = IncompleteScenarioError
    timeout: type[ScenarioTimeoutError] = ScenarioTimeoutError
    cancelled: type[ScenarioCancelledError] = ScenarioCancelledError


class Notifier:
    """Wake whoever waits for "something changed" (events are made lazily, so a
    script can be created outside any event loop)."""

    def __init__(self) -> None:
        self._event: anyio.Event | None = None

    def notify(self) -> None:
        if self._event is not None:
            self._event.set()
            self._event = None

    async def wait(self) -> None:
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()


@dataclass
class _Waiter(Generic[C]):
    kind: str | None
    matcher: Matcher | None
    since: float
    event: anyio.Event = field(default_factory=anyio.Event)
    call: C | None = None
    error: BaseException | None = None

    def pending(self) -> PendingExpectation:
        name = None
        if self.matcher is not None:
            name = getattr(self.matcher, "__qualname__", None) or type(self.matcher).__name__
        return PendingExpectation(self.kind or "any", self.since, name)


def _now() -> float:
    try:
        return anyio.current_time()
    except Exception:  # noqa: BLE001 - outside an event loop there is no "since"
        return 0.0


class CallScript(Generic[C]):
    """Ordered calls and the expectations that consume them."""

    def __init__(self, errors: ScenarioErrors | None = None) -> None:
        self.errors = errors or ScenarioErrors()
        self._calls: list[C] = []
        self._unconsumed: deque[C] = deque()
        self._waiters: deque[_Waiter[C]] = deque()
        self._failures: dict[str, deque[BaseException]] = {}
        #: The kinds with injected failures pending (read only: a membership
        #: test on the doubles' hot path, where most calls have none).
        self.failing_kinds: Mapping[str, object] = self._failures
        self.changed = Notifier()

    # -- application side ----------------------------------------------------

    @property
    def next_index(self) -> int:
        return len(self._calls)

    def take_failure(self, kind: str) -> BaseException | None:
        """The next injected failure for ``kind``, if any (consumed)."""
        queue = self._failures.get(kind)
        if not queue:
            return None
        error = queue.popleft()
        if not queue:
            del self._failures[kind]
        return error

    def add(self, call: C) -> None:
        """Record a call and hand it to the oldest waiting expectation."""
        self._calls.append(call)
        self._unconsumed.append(call)
        self._dispatch()
        self.changed.notify()

    # -- scenario side -------------------------------------------------------

    def fail_next(self, kind: str, error: BaseException) -> None:
        self._failures.setdefault(kind, deque()).append(error)

    async def expect(self, kind: str | None, matcher: Matcher | None = None) -> C:
        """The next call in order; ``kind`` None accepts any kind."""
        waiter: _Waiter[C] = _Waiter(kind, matcher, _now())
        self._waiters.append(waiter)
        self._dispatch()
        self.changed.notify()
        try:
            await waiter.event.wait()
        finally:
            if waiter in self._waiters:  # cancelled while waiting
                self._waiters.remove(waiter)
                self.changed.notify()
        if waiter.error is not None:
            raise waiter.error
        call = waiter.call
        assert call is not None
        if matcher is not None:
            verdict = matcher(call)
            if inspect.isawaitable(verdict):
                verdict = await verdict
            if verdict is False:
                self._unconsumed.appendleft(call)  # rejected: still unconsumed
                raise self.errors.matcher(call.index, call.kind, call)
        return call

    def _dispatch(self) -> None:
        while self._waiters and self._unconsumed:
            waiter, call = self._waiters[0], self._unconsumed[0]
            self._waiters.popleft()
            if waiter.kind is not None and call.kind != waiter.kind:
                waiter.error = self.errors.unexpected(call.index, waiter.kind, call.kind, call)
            else:
                self._unconsumed.popleft()
                waiter.call = call
            waiter.event.set()
            if waiter.error is not None:
                break

    # -- state ---------------------------------------------------------------

    @property
    def calls(self) -> tuple[C, ...]:
        return tuple(self._calls)

    @property
    def waiting(self) -> bool:
        """True if an expectation waits for a call that has not been made."""
        return bool(self._waiters)

    @property
    def unconsumed_calls(self) -> tuple[C, ...]:
        return tuple(self._unconsumed)

    @property
    def pending_expectations(self) -> tuple[PendingExpectation, ...]:
        return tuple(waiter.pending() for waiter in self._waiters)

    @property
    def pending_failures(self) -> tuple[PendingFailure, ...]:
        return tuple(PendingFailure(kind, error) for kind, queue in self._failures.items() for error in queue)

    def incomplete_error(self) -> IncompleteScenarioError:
        return self.errors.incomplete(self.unconsumed_calls, self.pending_expectations, self.pending_failures)

    def assert_complete(self) -> None:
        """Raise the double's incomplete error if anything is left over."""
        if self._unconsumed or self._waiters or self._failures:
            raise self.incomplete_error()
