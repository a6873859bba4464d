"""Branching by ``os.fork()``: run a prefix once, start every branch from its state.

A *holder* process (forked from the sweep's process, in a process group of
its own) runs the base schedule. At the first choice at or after each
checkpoint (``FocusChooser``'s hook) it parks inside the simulation and
takes the sweep's requests: each ``branch`` or ``replay`` is one child,
forked there, which takes its window and inner strategy
(``FocusChooser.enter``), returns from the hook, runs the rest of the
simulation and writes what the sweep needs into a pipe of its own; the
holder relays it. ``continue`` sends the holder on to the next checkpoint
(and, after the last, to the end of its base run, whose outcome it sends).

The sweep drives it through :class:`HolderProcess`: how many children run at
once (one per core) and in which order results are taken are the sweep's,
so a report never depends on which child finished first. The shrinker uses
the same parked holder (``replay`` requests) while the sweep waits.

Why it is safe: a simulation runs in one thread and touches no real I/O
(the escape guards see to it), so a copy of the process at a choice is the
same run at that choice; the sweep replays every failure from scratch in
its own process, so a report never rests on a copy alone. Memory stays
bounded: children share the holder's pages until they write them (the heap
is frozen for the cyclic GC meanwhile, which would otherwise touch every
object), and only as many exist as the sweep asked for at once.
"""

from __future__ import annotations

import asyncio
import gc
import os
import pickle
import selectors
import signal
import time
import traceback
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from .._kernel.core import SimulationCore, current_core
from .._kernel.scheduling import SchedulingPolicy
from .._kernel.scheduling.focus import FocusChooser, FocusedPolicy, replay_after
from ._parallel import fresh_std_streams
from ._runner import Runner

#: What a finished run sends back: ``report(result, policy) -> picklable``.
Report = Callable[[Any, FocusedPolicy], Any]


@dataclass(frozen=True)
class Branch:
    """One branch to run: ``key`` names it back, at checkpoint ``checkpoint``
    (an index), with ``window`` (ticks) and ``inner`` strategy."""

    key: Hashable
    checkpoint: int
    window: tuple[int, int]
    inner: SchedulingPolicy


@dataclass(frozen=True)
class Checkpoint:
    """Where the holder parked: checkpoint ``index``, at ``seconds`` of
    virtual time, after ``choices`` choices; ``cpu``: the prefix's CPU seconds."""

    index: int
    seconds: float
    choices: int
    cpu: float


class BranchingUnavailable(Exception):
    """The holder process ended without answering (it died, or failed)."""


def fork_available() -> bool:
    """Whether this platform branches by ``os.fork()``."""
    return hasattr(os, "fork") and hasattr(os, "setpgid")


def cpu_seconds() -> float:
    """This process's own CPU time (a forked child's starts at 0), to the
    nanosecond: ``os.times`` counts in clock ticks (10 ms), which a short
    run's whole cost can fall under."""
    return time.process_time()


# -- the holder's side ---------------------------------------------------------


class _Holder:
    """Runs the base schedule in the holder process; parks at each checkpoint."""

    def __init__(self, runner: Runner, seed: int, drift: SchedulingPolicy | None, checkpoints: Sequence[int], branches: dict[Hashable, Branch], report: Report, commands: Connection, out: Connection) -> None:
        self.runner, self.seed, self.drift, self.checkpoints = runner, seed, drift, checkpoints
        self.branches, self.report, self.commands, self.out = branches, report, commands, out
        #: Set in a child: the pipe it answers on (-1 in the holder).
        self.answer_fd = -1
        #: Whether the run's wall-timeout alarm was armed at the checkpoint.
        self.alarm = False

    def run(self) -> None:
        policy = FocusedPolicy(None, base=self.drift, checkpoints=self.checkpoints, on_checkpoint=self._park)
        result = self.runner.run_policy(self.seed, policy)
        payload = pickle.dumps((self.report(result, policy), cpu_seconds()))
        if self.answer_fd >= 0:  # a child, its run ended
            view = memoryview(payload)
            while view:
                view = view[os.write(self.answer_fd, view) :]
            return
        self.out.send(("done", payload))

    def _park(self, index: int, chooser: FocusChooser) -> None:
        core = current_core()
        assert core is not None
        self.out.send(("checkpoint", Checkpoint(index, core.now, chooser.choices_made, cpu_seconds())))
        core.guards_armed = False  # the holder's own pipes and forks are not the program's
        self.alarm = signal.setitimer(signal.ITIMER_REAL, 0) != (0.0, 0.0)
        gc.freeze()  # children share the heap: the cyclic GC would copy every page it scans
        try:
            if self._serve(chooser, core):
                return  # a child: its branch goes on from here
        finally:
            if self.answer_fd < 0:
                gc.unfreeze()
        self._resume(core)

    def _serve(self, chooser: FocusChooser, core: SimulationCore) -> bool:
        """The sweep's requests until ``continue``; True in a child (which returns into its run)."""
        selector = selectors.DefaultSelector()
        selector.register(self.commands.fileno(), selectors.EVENT_READ)
        running: dict[int, tuple[int, Hashable, bytearray]] = {}
        going_on = False
        while not going_on or running:
            for key, _ in selector.select():
                fd = key.fd
                if fd == self.commands.fileno():
                    request = self.commands.recv()
                    if request[0] == "continue":
                        going_on = True
                        selector.unregister(fd)
                        continue
                    window, inner = self._request(request, chooser)
                    read_end, write_end = os.pipe()
                    loop_state = _asyncio_loop_state()
                    pid = os.fork()
                    if pid == 0:
                        _restore_asyncio_loop_state(loop_state)
                        selector.close()
                        os.close(read_end)
                        for other in running:
                            os.close(other)
                        self.answer_fd = write_end
                        chooser.enter(window, inner)
                        self._resume(core)
                        return True
                    os.close(write_end)
                    running[read_end] = (pid, request[1], bytearray())
                    selector.register(read_end, selectors.EVENT_READ)
                    continue
                pid, name, data = running[fd]
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    data += chunk
                    continue
                selector.unregister(fd)
                os.close(fd)
                del running[fd]
                _, status = os.waitpid(pid, 0)
                code = os.waitstatus_to_exitcode(status)
                self.out.send(("result", name, bytes(data)) if data and code == 0 else ("lost", name, f"the branch's process ended with status {code}"))
        selector.close()
        return False

    def _request(self, request: tuple[Any, ...], chooser: FocusChooser) -> tuple[tuple[int, int], SchedulingPolicy]:
        """The window and inner strategy a request asks for."""
        if request[0] == "branch":
            branch = self.branches[request[1]]
            return branch.window, branch.inner
        # ("replay", key, start, deviations): every choice from here on is
        # the replay's, numbered from this checkpoint's first.
        return (request[2], 2**62), replay_after(request[3], chooser.choices_made)

    def _resume(self, core: SimulationCore) -> None:
        """Back to the simulation: guards on, the wall clock and its alarm
        started afresh (an alarm is not inherited by a child, and waiting for
        branches is no part of a run's wall time)."""
        core.guards_armed = True
        core.start_wall_clock()
        if self.alarm and core.wall_timeout is not None:
            signal.setitimer(signal.ITIMER_REAL, core.wall_timeout, 1.0)


def _asyncio_loop_state() -> tuple[Any, Any]:
    """The running asyncio loop and the policy's per-thread loop, which
    asyncio forgets in a forked child (its ``os.register_at_fork`` hook)."""
    policy = getattr(asyncio.events, "_event_loop_policy", None)
    return asyncio.events._get_running_loop(), getattr(policy, "_local", None)


def _restore_asyncio_loop_state(state: tuple[Any, Any]) -> None:
    running, local = state
    asyncio.events._set_running_loop(running)
    policy = getattr(asyncio.events, "_event_loop_policy", None)
    if policy is not None and local is not None:
        policy._local = local


# -- the sweep's side ----------------------------------------------------------


class HolderProcess:
    """The sweep's handle on one holder: start it, wait for its checkpoints,
    ask for branches and replays, take their results by key."""

    def __init__(self, runner: Runner, seed: int, drift: SchedulingPolicy | None, checkpoints: Sequence[int], branches: Sequence[Branch], report: Report) -> None:
        self._plan = (runner, seed, drift, tuple(checkpoints), {branch.key: branch for branch in branches}, report)
        self._results: dict[Hashable, bytes | None] = {}
        self._pid = -1
        self.checkpoint: Checkpoint | None = None
        #: The base run's report and CPU seconds, once it has ended.
        self.done: tuple[Any, float] | None = None
        self.lost_reasons: dict[Hashable, str] = {}

    def start(self) -> None:
        command_read, command_write = os.pipe()
        out_read, out_write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the holder
            code = 0
            try:
                os.setpgid(0, 0)
                os.close(command_write)
                os.close(out_read)
                fresh_std_streams()
                out = Connection(out_write, readable=False)
                try:
                    _Holder(*self._plan[:5], self._plan[5], Connection(command_read, writable=False), out).run()
                except BaseException:  # noqa: BLE001 - reported to the sweep, whatever it was
                    out.send(("error", traceback.format_exc()))
                    code = 1
            finally:
                os._exit(code)
        os.close(command_read)
        os.close(out_write)
        self._pid = pid
        self._commands = Connection(command_write, readable=False)
        self._messages = Connection(out_read, writable=False)

    def next_checkpoint(self) -> Checkpoint | None:
        """Send the holder on (after the first call) and wait for its next
        checkpoint; None once its base run has ended."""
        if self.checkpoint is not None:
            self._commands.send(("continue",))
            self.checkpoint = None
        while self.checkpoint is None and self.done is None:
            self._read()
        return self.checkpoint

    def branch(self, key: Hashable) -> None:
        self._commands.send(("branch", key))

    def replay(self, key: Hashable, start: int, deviations: dict[int, int]) -> None:
        self._commands.send(("replay", key, start, deviations))

    def result(self, key: Hashable) -> Any | None:
        """What the run ``key`` sent (None: its process was lost)."""
        while key not in self._results:
            self._read()
        payload = self._results.pop(key)
        return None if payload is None else pickle.loads(payload)

    def _read(self) -> None:
        try:
            message = self._messages.recv()
        except (EOFError, OSError):
            raise BranchingUnavailable("the branching process ended without answering") from None
        kind = message[0]
        if kind == "checkpoint":
            self.checkpoint = message[1]
        elif kind == "result":
            self._results[message[1]] = message[2]
        elif kind == "lost":
            self._results[message[1]] = None
            self.lost_reasons[message[1]] = message[2]
        elif kind == "done":
            self.done = pickle.loads(message[1])
        else:
            raise BranchingUnavailable(f"the branching process failed:\n{message[1]}")

    def finish(self) -> tuple[Any, float]:
        """Let the base run end; its report and CPU seconds."""
        while self.done is None:
            self.next_checkpoint()
        return self.done

    def close(self) -> None:
        """End the holder and every child it has."""
        if self._pid <= 0:
            return
        for connection in (self._commands, self._messages):
            connection.close()
        try:
            os.killpg(self._pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            os.waitpid(self._pid, 0)
        except ChildProcessError:
            pass
        self._pid = -1
