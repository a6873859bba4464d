"""``run_scenario``: the scripted side and the application side, together.

Both run as sibling tasks of one task group, under one deadline (virtual
seconds inside a simulation). Structured concurrency gives the guarantees
that the JS SDK's ``runScenario`` leaves to the test author:

* when either side raises, the other is cancelled, its clean-up (``finally``,
  ``async with session``) runs, and the *original* exception is raised — not an
  exception group, and not the cancellation it caused;
* nothing keeps waiting after a failure: gates between the sides can be plain
  ``anyio.Event``/``asyncio.Event`` objects, no fail-forwarding needed;
* when the exercise returns, the scenario may finish what it is doing, but if
  it waits for a call that was never made, the run ends with the double's
  ``IncompleteScenarioError``;
* on the deadline, both sides are cancelled (clean-up runs) and the double's
  ``ScenarioTimeoutError`` lists what the scenario was waiting for;
* when the ``signal`` event is set (the JS guide's ``AbortSignal``), both
  sides are cancelled the same way and the double's
  ``ScenarioCancelledError`` lists what was pending.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio

from .._kernel.core import task_snapshots
from .._kernel.errors import SimulationConfigError
from .._kernel.validation import limit
from ._script import CallScript

Ctx = TypeVar("Ctx")


def _awaitable(name: str, function: object, result: object) -> Awaitable[Any]:
    """What a side returned, which must be awaited: a side given as a plain
    function is a usage error naming it, not a TypeError from ``await``."""
    if not inspect.isawaitable(result):
        raise SimulationConfigError(name, function, f"an async function; calling it returned {type(result).__name__}, not an awaitable")
    return result


def _first_real_error(exc: BaseException) -> BaseException:
    """The first non-cancellation leaf of an exception group (or ``exc``)."""
    if isinstance(exc, BaseExceptionGroup):
        for inner in exc.exceptions:
            found = _first_real_error(inner)
            if not isinstance(found, anyio.get_cancelled_exc_class()):
                return found
    return exc


def _checked(scenario: object, exercise: object, script: object, timeout: float | None, attach_background: object, signal: object) -> float | None:
    """``run_scenario``'s arguments checked; returns the timeout (None: none)."""
    for name, function in (("scenario", scenario), ("exercise", exercise), ("attach_background", attach_background)):
        if not callable(function):
            raise SimulationConfigError(name, function, "a function (the scenario side takes the context; the exercise side takes nothing)")
    if not isinstance(script, CallScript):
        raise SimulationConfigError("script", script, "the CallScript that records and matches the calls")
    if signal is not None and not (callable(getattr(signal, "wait", None)) and callable(getattr(signal, "is_set", None))):
        raise SimulationConfigError("signal", signal, "an event that cancels the scenario when set (anyio.Event, asyncio.Event or trio.Event), or None")
    return limit("timeout", timeout)


async def run_scenario(
    scenario: Callable[[Ctx], Awaitable[Any]],
    exercise: Callable[[], Awaitable[Any]],
    *,
    context: Ctx,
    script: CallScript[Any],
    timeout: float | None,
    attach_background: Callable[[anyio.abc.TaskGroup | None], None],
    signal: Any = None,
) -> None:
    """Run ``scenario(context)`` beside ``exercise()`` (see the module docstring).

    ``attach_background`` hands the scenario's own task group to the context
    (for scheduled emits and streams); the scenario side ends only when that
    background work has ended too.
    """
    timeout = _checked(scenario, exercise, script, timeout, attach_background, signal)
    cancelled: list[tuple[Any, ...]] = []
    failures: list[BaseException] = []
    scenario_finished = False
    sides_running = 2
    timed_out: list[tuple[Any, ...]] = []

    def fail(exc: BaseException, group: anyio.abc.TaskGroup) -> None:
        failures.append(_first_real_error(exc))
        group.cancel_scope.cancel()

    def side_done(group: anyio.abc.TaskGroup) -> None:
        nonlocal sides_running
        sides_running -= 1
        if not sides_running:
            group.cancel_scope.cancel()  # only the watchdog is left

    async def scenario_side(group: anyio.abc.TaskGroup) -> None:
        nonlocal scenario_finished
        try:
            async with anyio.create_task_group() as background:
                attach_background(background)
                await _awaitable("scenario", scenario, scenario(context))
        except Exception as exc:  # noqa: BLE001 - re-raised by run_scenario
            fail(exc, group)
        except BaseExceptionGroup as exc:
            if not isinstance(_first_real_error(exc), anyio.get_cancelled_exc_class()):
                fail(exc, group)
            else:
                raise
        finally:
            attach_background(None)
            scenario_finished = True
            script.changed.notify()
            side_done(group)

    async def exercise_side(group: anyio.abc.TaskGroup) -> None:
        try:
            await _awaitable("exercise", exercise, exercise())
            # Let the scenario finish what it is doing; a scenario that waits
            # for a call nobody made can never finish.
            while not scenario_finished:
                if script.waiting:
                    raise script.incomplete_error()
                await script.changed.wait()
        except Exception as exc:  # noqa: BLE001 - re-raised by run_scenario
            fail(exc, group)
        finally:
            side_done(group)

    async def watchdog(group: anyio.abc.TaskGroup, seconds: float) -> None:
        await anyio.sleep(seconds)
        # Snapshot before cancelling: cancelled expectations leave the script,
        # and the tasks' stacks say who waits for what.
        timed_out.append((script.pending_expectations, script.unconsumed_calls, task_snapshots()))
        group.cancel_scope.cancel()

    async def on_signal(group: anyio.abc.TaskGroup) -> None:
        await signal.wait()
        cancelled.append((script.pending_expectations, script.unconsumed_calls, task_snapshots()))
        group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        group.start_soon(scenario_side, group, name="scenario")
        group.start_soon(exercise_side, group, name="exercise")
        if timeout is not None:
            group.start_soon(watchdog, group, timeout, name="scenario-deadline")
        if signal is not None:
            group.start_soon(on_signal, group, name="scenario-signal")
    if failures:
        first = failures[0]
        for other in failures[1:]:
            first.add_note(f"also raised while the run was ending: {type(other).__name__}: {other}")
        raise first
    if cancelled:
        pending, unconsumed, tasks = cancelled[0]
        raise script.errors.cancelled(pending, unconsumed, tasks)
    if timed_out:
        pending, unconsumed, tasks = timed_out[0]
        raise script.errors.timeout(timeout or 0.0, pending, unconsumed, tasks)
