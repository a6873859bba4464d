"""Errors of the simulation kernel, and the root of every agentsim error.

Each error says what happened, where (virtual time, task, call site) and what
to do, and carries the same facts as structured fields so that a test never
has to parse a message.

The tree: :class:`AgentsimError` is the root of everything agentsim raises;
under it :class:`SimulationError` (what happened in a simulation: deadlock,
limits, escapes), :class:`UsageError` (agentsim was called wrongly: a bad
argument, an object used in a second simulation, a call outside one) and
``agentsim.scenario.ScenarioError`` (a scripted scenario did not hold).
Warnings derive from :class:`AgentsimWarning`.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskSnapshot:
    """One task of a simulation as it stood when an error was raised.

    ``stack`` lists ``"file:line in function"`` entries, outermost first; for a
    blocked task the last entry is the ``await`` it is blocked on.
    """

    name: str
    stack: tuple[str, ...]

    def format(self) -> str:
        lines = [f"  task {self.name!r}"]
        lines += [f"    {frame}" for frame in self.stack] or ["    (no frames: not started)"]
        return "\n".join(lines)


def _format_tasks(tasks: tuple[TaskSnapshot, ...]) -> str:
    return "\n".join(task.format() for task in tasks) if tasks else "  (no tasks)"


class AgentsimError(Exception):
    """Base class of every error agentsim raises: ``except agentsim.AgentsimError``
    catches agentsim's own verdicts and nothing of the program's."""


class SimulationError(AgentsimError):
    """Base class of the errors about what happened in a simulation (deadlock,
    limits, escapes, wall timeout)."""


class UsageError(AgentsimError):
    """Base class of the errors about how agentsim was called: fix the call
    (the message names the argument or the object and what is expected)."""


class AgentsimWarning(UserWarning):
    """Base class of agentsim's warnings."""


class NotInSimulationError(UsageError, SimulationError, RuntimeError):
    """An API that needs a running simulation was called outside one.

    Call it from code running under :func:`agentsim.run` or
    :func:`agentsim.simulate`.
    """

    def __init__(self, api: str) -> None:
        self.api = api
        super().__init__(
            f"{api}() was called outside a simulation. It reads the simulation's "
            f"virtual clock, which only exists inside agentsim.run(...) or "
            f"agentsim.simulate(...); call it from the simulated code."
        )


class SimulationConfigError(UsageError, SimulationError, ValueError):
    """An argument of an agentsim function or double is invalid, or an object
    was used where it cannot be (a double in a second simulation).

    ``parameter`` names the argument, ``value`` is what was given and
    ``expected`` says what is accepted.
    """

    def __init__(self, parameter: str, value: object, expected: str) -> None:
        self.parameter = parameter
        self.value = value
        self.expected = expected
        super().__init__(f"invalid {parameter}={value!r}: expected {expected}.")


class NestedSimulationError(UsageError, SimulationError, RuntimeError):
    """:func:`agentsim.run` was called where an event loop is already running.

    A simulation owns its event loop. Call ``agentsim.run`` from synchronous
    code (a plain test function), or use the pytest plugin's marker.
    """

    def __init__(self, running: str) -> None:
        self.running = running
        super().__init__(
            f"agentsim cannot start a simulation inside a running {running} event loop: "
            f"a simulation owns its loop. Call agentsim.run()/simulate() from synchronous "
            f"code (e.g. a plain `def test_...`), not from an async function."
        )


class ConcurrentSimulationError(UsageError, SimulationError, RuntimeError):
    """A simulation was started while another runs in another thread.

    A simulation patches process-wide state (the clocks, the global
    ``random`` generator, the SDK's trace provider, the escape guards); two at
    once in two threads would see each other's. Run them one after another
    (pytest-xdist runs them in parallel processes). ``running`` names the
    thread whose simulation is running.
    """

    def __init__(self, running: str) -> None:
        self.running = running
        super().__init__(
            f"a simulation is already running in thread {running!r}; simulations patch process-wide state "
            f"(clocks, global random, the SDK's trace provider), so one process runs one at a time. "
            f"Run them one after another, or in separate processes (pytest-xdist, multiprocessing)."
        )


class UnawaitedCallError(UsageError, SimulationError):
    """One of agentsim's coroutines (``transport.emit(...)``,
    ``ctx.expect_call(...)``, ``ctx.disconnect()`` ...) was called without
    ``await``: it never ran, so the step it stands for never happened.
    ``call`` names the coroutine and ``site`` the program's line; add
    ``await`` there (or use the ``_nowait`` form where one exists)."""

    def __init__(self, call: str, site: str) -> None:
        self.call = call
        self.site = site
        super().__init__(f"{call}(...) was called without await at {site}: it never ran. Add `await` before the call.")


class DeadlockError(SimulationError):
    """Every task is blocked, no timer is pending, and the main task is not done.

    Nothing can ever happen again, so the simulation stops instead of hanging.
    ``tasks`` lists every task with the ``await`` it is stuck on; usually one of
    them waits for an event, a queue item or a response that nobody will send.
    """

    def __init__(self, virtual_time: float, tasks: tuple[TaskSnapshot, ...]) -> None:
        self.virtual_time = virtual_time
        self.tasks = tasks
        super().__init__(
            f"deadlock at virtual time {virtual_time:.9f}s: every task is blocked and no "
            f"timer is pending, so nothing can wake them. Find the await below that "
            f"waits for something nobody will provide (a missing event, response or "
            f"cancellation). Tasks:\n{_format_tasks(tasks)}"
        )


class VirtualTimeLimitError(SimulationError):
    """The simulation needed to move past ``max_virtual_time``.

    ``limit`` is the limit in seconds, ``next_event_time`` the instant the clock
    would have jumped to. Raise the limit, or find the loop that keeps
    scheduling timers (a heartbeat that never stops, a retry without a cap).
    """

    def __init__(self, limit: float, next_event_time: float, tasks: tuple[TaskSnapshot, ...]) -> None:
        self.limit = limit
        self.next_event_time = next_event_time
        self.tasks = tasks
        super().__init__(
            f"virtual time limit reached: the next event is at {next_event_time:.9f}s but "
            f"max_virtual_time={limit}s. Raise max_virtual_time if the program really runs "
            f"that long, otherwise look for a timer loop that never ends. Tasks:\n"
            f"{_format_tasks(tasks)}"
        )


class WallTimeoutError(SimulationError):
    """The simulation used more than ``wall_timeout`` real seconds.

    Virtual time costs nothing, so this means CPU work that never yields (a
    ``while True`` without ``await``), or a huge number of events. ``task`` is
    the task that was running when the timeout hit, if any; ``executing`` the
    frames that were executing when the alarm interrupted them, innermost
    first (``file:line in function``; empty when the loops' own check fired).
    """

    def __init__(self, wall_timeout: float, virtual_time: float, task: TaskSnapshot | None, executing: tuple[str, ...] = ()) -> None:
        self.wall_timeout = wall_timeout
        self.virtual_time = virtual_time
        self.task = task
        self.executing = executing
        if executing:
            where = "  executing, innermost first:\n" + "\n".join(f"    {site}" for site in executing)
            if task is not None:
                where += f"\n  in task {task.name!r}"
        else:
            where = task.format() if task is not None else "  (between tasks, in the scheduler)"
        super().__init__(
            f"simulation exceeded wall_timeout={wall_timeout}s of real time at virtual time "
            f"{virtual_time:.9f}s. A task is probably spinning without awaiting; raise "
            f"wall_timeout only if the simulation is genuinely that large. Running:\n{where}"
        )


class SimulationEscapeError(SimulationError):
    """Simulated code reached outside the simulation.

    ``kind`` is ``"socket"``, ``"thread"``, ``"sleep"`` (a blocking wall-clock
    wait), ``"subprocess"`` (a process, multiprocessing's included),
    ``"block"`` (a thread-blocking wait with a timeout) or ``"signal"`` (the
    program setting or silencing ``SIGALRM``, which the simulation's
    wall-clock alarm needs); ``site`` is the ``file:line in function`` that
    did it and ``api`` the call. Inside a simulation such a call would either
    leak wall time into the schedule or wait for something virtual time cannot
    control. Replace it with a double (agentsim's transports and models), an
    ``await`` of virtual time, or run the code outside the simulation.
    """

    def __init__(self, kind: str, api: str, site: str) -> None:
        self.kind = kind
        self.api = api
        self.site = site
        #: The files of the frames that led to the call, innermost first (set
        #: when the simulation records the escape): adapters read it to say
        #: which library call this was (a real model call, say).
        self.stack: tuple[str, ...] = ()
        advice = {
            "socket": "use an in-memory double instead of real network I/O",
            "thread": "use async code (agentsim runs asyncio.to_thread work inline)",
            "sleep": "use `await asyncio.sleep(...)`/`anyio.sleep(...)`, which run on virtual time",
            "subprocess": "use a scripted sandbox double instead of a real process",
            "block": "await an asyncio/anyio/trio primitive instead: nothing else runs to end this wait, so it could only time out in wall time",
            "signal": "the simulation's wall_timeout alarm needs SIGALRM; time work on virtual time (asyncio.timeout, anyio.fail_after) instead",
        }.get(kind, "replace it with a simulated equivalent")
        super().__init__(
            f"simulation escape: {api} ({kind}) called at {site}. Real {kind} activity is "
            f"not allowed inside a simulation; {advice}."
        )


class SwallowedCancellationWarning(AgentsimWarning):
    """A task was cancelled and then finished as if it had not been: it caught
    the ``CancelledError`` and returned without ``uncancel()``-ing, so whoever cancelled it believes it stopped. Two real
    openai-agents bugs had this shape. ``task`` is where the cancellation
    reached it (its ``await`` chain then). asyncio only (trio's cancellation
    cannot be swallowed). Opt out per test with
    ``@pytest.mark.filterwarnings("ignore::agentsim.SwallowedCancellationWarning")``.
    """

    def __init__(self, task: TaskSnapshot, outcome: str) -> None:
        self.task = task
        self.outcome = outcome
        super().__init__(
            f"task {task.name!r} was cancelled and then {outcome} instead of ending cancelled: the cancellation was "
            f"swallowed (caught without re-raising). Re-raise CancelledError, or call task.uncancel() if stopping the "
            f"cancellation is intended. The cancellation reached it at:\n{task.format()}"
        )


class LeftoverTasksWarning(AgentsimWarning):
    """Tasks were still running when the main function of a simulation returned.

    agentsim cancelled them (no task outlives a simulation). ``tasks`` names
    them; usually a background task that should have been awaited or placed in
    a task group.
    """

    def __init__(self, tasks: tuple[TaskSnapshot, ...]) -> None:
        self.tasks = tasks
        super().__init__(
            f"{len(tasks)} task(s) were still running when the simulation's main function "
            f"returned and were cancelled. Await them or run them in a task group:\n"
            f"{_format_tasks(tasks)}"
        )
