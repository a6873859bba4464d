"""Branching by ``os.fork()``: run a prefix once, start every branch from its state.

A *holder* process (forked from the sweep's process, in a process group of
its own) runs the base schedule. At the first choice at or after each
checkpoint (``FocusChooser``'s hook) it stops inside the simulation and
forks one child per branch, at most ``at_once`` alive at a time. A child
takes its window and inner strategy (``FocusChooser.enter``), returns
from the hook, runs the rest of the simulation, and writes what the report
needs (a :class:`RunOutcome`, its CPU seconds) into a pipe of its own; the
holder relays each one to the sweep, then continues the base run to the
next checkpoint. The sweep reads the relayed messages (``BranchMessage``).

Why it is safe: a simulation runs in one thread and touches no real I/O
(the escape guards see to it), so a copy of the process at a choice is the
same run at that choice; the children's schedules are checked by replaying
failures from scratch in the sweep's own process. Memory stays bounded:
children share the holder's pages until they write them (the heap is
frozen for the cyclic GC meanwhile, which would otherwise touch every
object), and at most ``at_once`` exist at a time.
"""

from __future__ import annotations

import asyncio
import gc
import os
import pickle
import selectors
import signal
import traceback
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from .._kernel.core import SimulationCore, current_core
from .._kernel.scheduling import SchedulingPolicy
from .._kernel.scheduling.focus import FocusChooser, FocusedPolicy
from ._parallel import RunOutcome, fresh_std_streams
from ._runner import Runner

#: A branch's fate as the holder relays it: ``("checkpoint", index, seconds, prefix_cpu)``,
#: ``("branch", key, outcome, cpu)``, ``("lost", key, why)``,
#: ``("done", base_cpu, checkpoints_reached, base_outcome)``, ``("error", text)``.
BranchMessage = tuple[Any, ...]


@dataclass(frozen=True)
class Branch:
    """One branch to run: ``key`` names it back, at checkpoint ``checkpoint``
    (an index), with ``window`` (ticks) and ``inner`` strategy."""

    key: int
    checkpoint: int
    window: tuple[int, int]
    inner: SchedulingPolicy


def fork_available() -> bool:
    """Whether this platform branches by ``os.fork()``."""
    return hasattr(os, "fork") and hasattr(os, "setpgid")


def cpu_seconds() -> float:
    """This process's own CPU time (a forked child's starts at 0)."""
    times = os.times()
    return times.user + times.system


class _Child:
    """What the holder knows of a running child."""

    def __init__(self, pid: int, key: int) -> None:
        self.pid, self.key = pid, key
        self.data = bytearray()


class _Holder:
    """The holder's side: runs the base schedule, forks branches at checkpoints."""

    def __init__(
        self,
        runner: Runner,
        seed: int,
        base: SchedulingPolicy | None,
        checkpoints: Sequence[int],
        branches: Sequence[Branch],
        at_once: int,
        out: Connection,
        outcome: Callable[[Any, FocusedPolicy], RunOutcome],
    ) -> None:
        self.runner, self.seed, self.base = runner, seed, base
        self.checkpoints, self.branches, self.at_once, self.out = checkpoints, branches, at_once, out
        self.outcome = outcome
        #: Set in a child: the branch it runs and the pipe it answers on.
        self.branch: Branch | None = None
        self.answer_fd = -1
        self.reached = 0
        #: Whether the run's wall-timeout alarm was armed at the checkpoint.
        self.alarm = False

    def run(self) -> None:
        policy = FocusedPolicy(None, base=self.base, checkpoints=self.checkpoints, on_checkpoint=self._at_checkpoint)
        result = self.runner.run_policy(self.seed, policy)
        if self.branch is not None:  # a child, its branch run to the end
            payload = pickle.dumps((self.outcome(result, policy), cpu_seconds()))
            view = memoryview(payload)
            while view:
                view = view[os.write(self.answer_fd, view) :]
            return
        self.out.send(("done", cpu_seconds(), self.reached, self.outcome(result, policy)))

    def _at_checkpoint(self, index: int, chooser: FocusChooser) -> None:
        core = current_core()
        assert core is not None
        self.reached = index + 1
        ticks = core.clock.ticks
        self.out.send(("checkpoint", index, core.now, cpu_seconds()))
        mine = [branch for branch in self.branches if branch.checkpoint == index]
        if not mine:
            return
        core.guards_armed = False  # the holder's own pipes and forks are not the program's
        self.alarm = signal.setitimer(signal.ITIMER_REAL, 0) != (0.0, 0.0)
        gc.freeze()  # children share the heap: the cyclic GC would copy every page it scans
        try:
            if self._fork_all(mine, ticks, core):
                return  # a child: its branch goes on from here
        finally:
            if self.branch is None:
                gc.unfreeze()
        self._resume(core)

    def _fork_all(self, mine: list[Branch], ticks: int, core: SimulationCore) -> bool:
        """Run ``mine``, ``at_once`` at a time; True in a child (which returns into its run)."""
        selector = selectors.DefaultSelector()
        running: dict[int, _Child] = {}
        pending = list(mine)
        while pending or running:
            while pending and len(running) < self.at_once:
                branch = pending.pop(0)
                if ticks >= branch.window[1]:
                    self.out.send(("lost", branch.key, "the window had no choice left when its checkpoint was reached"))
                    continue
                read_end, write_end = os.pipe()
                loop_state = _asyncio_loop_state()
                pid = os.fork()
                if pid == 0:
                    _restore_asyncio_loop_state(loop_state)
                    selector.close()
                    os.close(read_end)
                    for fd in running:
                        os.close(fd)
                    self._become(branch, write_end, core)
                    return True
                os.close(write_end)
                running[read_end] = _Child(pid, branch.key)
                selector.register(read_end, selectors.EVENT_READ)
            for key, _ in selector.select():
                fd = key.fd
                child = running[fd]
                chunk = os.read(fd, 1 << 16)
                if chunk:
                    child.data += chunk
                    continue
                selector.unregister(fd)
                os.close(fd)
                del running[fd]
                _, status = os.waitpid(child.pid, 0)
                if child.data and os.waitstatus_to_exitcode(status) == 0:
                    self.out.send(("branch", child.key, bytes(child.data)))
                else:
                    self.out.send(("lost", child.key, f"the branch's process ended with status {os.waitstatus_to_exitcode(status)}"))
        selector.close()
        return False

    def _become(self, branch: Branch, answer_fd: int, core: SimulationCore) -> None:
        """In a fresh child: take the branch's window and strategy, re-arm the guards and the wall alarm."""
        self.branch, self.answer_fd = branch, answer_fd
        chooser = core.chooser
        assert isinstance(chooser, FocusChooser)
        chooser.enter(branch.window, branch.inner)
        self._resume(core)

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
    asyncio forgets in a forked child (``os.register_at_fork``)."""
    policy = asyncio.events._event_loop_policy
    return asyncio.events._get_running_loop(), getattr(policy, "_local", None)


def _restore_asyncio_loop_state(state: tuple[Any, Any]) -> None:
    running, local = state
    asyncio.events._set_running_loop(running)
    policy = asyncio.events._event_loop_policy
    if policy is not None and local is not None:
        policy._local = local  # type: ignore[attr-defined]


def forked_branches(
    runner: Runner,
    seed: int,
    base: SchedulingPolicy | None,
    checkpoints: Sequence[int],
    branches: Sequence[Branch],
    *,
    at_once: int,
    outcome: Callable[[Any, FocusedPolicy], RunOutcome],
) -> Iterator[BranchMessage]:
    """The holder's messages, as they come (see :data:`BranchMessage`).
    Stop iterating to end the holder and every branch at once."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # the holder
        code = 0
        try:
            os.setpgid(0, 0)
            os.close(read_end)
            fresh_std_streams()
            out = Connection(write_end, readable=False)
            try:
                _Holder(runner, seed, base, checkpoints, branches, at_once, out, outcome).run()
            except BaseException:  # noqa: BLE001 - reported to the sweep, whatever it was
                out.send(("error", traceback.format_exc()))
                code = 1
        finally:
            os._exit(code)
    os.close(write_end)
    reader = Connection(read_end, writable=False)
    try:
        while True:
            try:
                message = reader.recv()
            except EOFError:
                return
            if message[0] == "branch":
                outcome, cpu = pickle.loads(message[2])
                message = ("branch", message[1], outcome, cpu)
            yield message
            if message[0] in ("done", "error"):
                return
    finally:
        reader.close()
        try:
            os.killpg(pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        try:
            os.waitpid(pid, 0)
        except ChildProcessError:
            pass
