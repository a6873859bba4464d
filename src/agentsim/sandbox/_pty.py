"""The PTY path of a timed sandbox: commands that outlive their yield time.

A real sandbox's ``pty_exec_start`` waits at most ``yield_time_s`` (10 s by
default, clamped to 0.25-30 s) and then returns what the process printed so
far with its ``process_id`` and no exit code; the model polls it with
``pty_write_stdin`` (0.25 s by default, at least 5 s when it sends nothing),
which returns the exit code once the process has ended. The SDK's clamping
functions decide the yield times, so the double yields where a real sandbox
would.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import anyio

from .._kernel.core import record_event
from ..contrib.openai_agents.sdk import sandbox_errors, sandbox_pty
from ..toolkit.timing import DelaySource

#: Process ids of running commands start here (the SDK's lowest).
FIRST_PROCESS_ID = 1000


@dataclass
class _Process:
    started_at: float
    duration: DelaySource
    index: int
    finish: Callable[[], Any]  # the step's outcome, produced when the command ends


class PtyProcesses:
    """Commands started on the PTY path that were still running at their yield."""

    def __init__(self) -> None:
        self._running: dict[int, _Process] = {}
        self._next_id = FIRST_PROCESS_ID

    async def start(self, call: Any, duration: DelaySource, index: int, finish: Callable[[], Any], process_id: int | None) -> Any:
        """Run a ``pty_exec_start`` for up to its yield time: the final update if
        the command ended by then, else a running update with a process id."""
        requested = call.kwargs.get("yield_time_s")
        yield_s = sandbox_pty().clamp_pty_yield_time_ms(10_000 if requested is None else int(requested * 1000)) / 1000
        process = _Process(anyio.current_time(), duration, index, finish)
        if await _ends_within(process, yield_s):
            return await _outcome(finish)
        if process_id is None:
            process_id = self._allocate()
        self._running[process_id] = process
        record_event("sandbox", f"pty process {process_id} still running after {yield_s}s")
        return _running_update(process_id)

    async def poll(self, call: Any) -> Any:
        """A ``pty_write_stdin`` step without an outcome: wait up to its yield
        time for the process to end."""
        session_id = call.kwargs.get("session_id")
        process = self._running.get(session_id)
        if process is None:
            raise sandbox_errors().PtySessionNotFoundError(session_id=session_id)
        requested = call.kwargs.get("yield_time_s")
        chars = call.kwargs.get("chars") or ""
        yield_s = sandbox_pty().resolve_pty_write_yield_time_ms(yield_time_ms=250 if requested is None else int(requested * 1000), input_empty=chars == "") / 1000
        if await _ends_within(process, yield_s):
            del self._running[session_id]
            record_event("sandbox", f"pty process {session_id} ended")
            return await _outcome(process.finish)
        return _running_update(session_id)

    def _allocate(self) -> int:
        while self._next_id in self._running:
            self._next_id += 1
        self._next_id += 1
        return self._next_id - 1


async def _ends_within(process: _Process, seconds: float) -> bool:
    """Whether the command ends within ``seconds`` from now (a window that
    straddles the yield is a scheduling choice: output now, or a poll later)."""
    with anyio.move_on_after(seconds):
        await process.duration.sleep_from(process.started_at, process.index)
        return True
    return False


async def _outcome(finish: Callable[[], Any]) -> Any:
    result = finish()
    return await result if inspect.isawaitable(result) else result


def _running_update(process_id: int) -> Any:
    return sandbox_pty().PtyExecUpdate(process_id=process_id, output=b"", exit_code=None, original_token_count=None)
