"""Durations for scripted sandbox steps, composed onto the SDK's scripted session."""

from __future__ import annotations

import inspect
from collections.abc import Iterable, Mapping
from typing import Any

import anyio

from .._kernel.core import record_event
from .._kernel.errors import SimulationConfigError
from ..toolkit.timing import DelaySource, DelaySpec
from ..contrib.openai_agents.sdk import sandbox_errors, testing
from ._pty import PtyProcesses


def timed_sandbox_session(
    steps: Iterable[Mapping[str, Any]] = (),
    *,
    manifest: Any = None,
    latency: DelaySpec = 0.0,
) -> Any:
    """A scripted sandbox session whose calls take virtual time.

    Steps are ``scripted_sandbox_session`` steps (``method``, ``match``, one of
    ``result``/``responder``/``error``) with an optional ``"duration"`` (a
    delay spec, see :mod:`agentsim.timing`); steps without one take
    ``latency`` (indexed by call). The result is the SDK's own session object::

        sandbox = timed_sandbox_session([
            {"method": "exec", "duration": 42.0, "result": ExecResult(stdout=b"done", stderr=b"", exit_code=0)},
        ])
        # an exec_command with yield_time_ms=10000 now times out at exactly 10 s

    On the PTY path a ``pty_exec_start`` step's duration is the command's run
    time: the call yields at its ``yield_time_s`` with a running update
    (``process_id``, no exit code) if the command is still running, and a
    ``pty_write_stdin`` step *without* an outcome polls it — returning the
    step's result once the command has ended (see ``_pty``)::

        {"method": "pty_exec_start", "duration": 42.0, "result": PtyExecUpdate(process_id=None, output=b"built", exit_code=0, original_token_count=None)},
        {"method": "pty_write_stdin"},   # polled at 10 s: still running
        {"method": "pty_write_stdin"},   # ...until the poll that sees it end
    """
    scripted_sandbox_session = testing("agentsim.sandbox.timed_sandbox_session (built on agents.testing.scripted_sandbox_session)").scripted_sandbox_session

    default = DelaySource(latency, name="latency", stream="sandbox:latency")
    processes = PtyProcesses()
    if isinstance(steps, (str, bytes, Mapping)) or not isinstance(steps, Iterable):
        raise SimulationConfigError("steps", steps, "a list of step dicts, as agents.testing.scripted_sandbox_session takes")
    steps = list(steps)
    for index, step in enumerate(steps):
        if not isinstance(step, Mapping):
            raise SimulationConfigError(f"steps[{index}]", step, "a step dict ({'method': ..., 'result': ...})")
    converted = [_with_duration(dict(step), index, default, processes) for index, step in enumerate(steps)]
    try:
        return scripted_sandbox_session(converted, manifest=manifest)
    except (TypeError, ValueError) as error:  # the SDK's own checks (pydantic's ValidationError is a ValueError)
        raise SimulationConfigError("steps/manifest", manifest, f"what agents.testing.scripted_sandbox_session accepts ({error})") from error


def _with_duration(step: dict[str, Any], index: int, default: DelaySource, processes: PtyProcesses) -> dict[str, Any]:
    if "duration" in step:
        source = DelaySource(step.pop("duration"), name=f"steps[{index}].duration", stream=f"sandbox:step{index}")
    else:
        source = default
    outcomes = [key for key in ("result", "responder", "error") if key in step]
    method = step.get("method")
    if not outcomes and method == "pty_write_stdin":
        if source is not default:
            raise SimulationConfigError(f"steps[{index}].duration", source.delay, "no duration on a polling pty_write_stdin step (it waits for the running command, up to its yield time)")
        step["responder"] = processes.poll
        return step
    if len(outcomes) != 1:
        raise SimulationConfigError(f"steps[{index}]", sorted(step), "exactly one of 'result', 'responder' or 'error' (or none, on a pty_write_stdin step that polls a running command)")
    outcome = outcomes[0]
    value = step.pop(outcome)

    def finish(call: Any) -> Any:
        record_event("sandbox", f"{method} call {call.call_index} done")
        if outcome == "error":
            raise value
        if outcome == "responder":
            return value(call)
        return value

    async def timed_responder(call: Any) -> Any:
        if method == "pty_exec_start":
            record_event("sandbox", f"{method} call {call.call_index} starts")
            process_id = getattr(value, "process_id", None) if outcome == "result" else None
            return await processes.start(call, source, index, lambda: finish(call), process_id)
        timeout = call.kwargs.get("timeout") if method == "exec" else None
        record_event("sandbox", f"{method} call {call.call_index} starts")
        if timeout is None:
            await source.sleep(index)
        else:
            # The command's duration against the caller's timeout: when the
            # duration is a window that straddles the timeout, which one ends
            # first is a scheduling choice (a late result vs. the timeout).
            with anyio.move_on_after(timeout) as scope:
                await source.sleep(index)
            if scope.cancelled_caught:
                ExecTimeoutError = sandbox_errors().ExecTimeoutError  # noqa: N806 - the SDK's class
                record_event("sandbox", f"{method} call {call.call_index} timed out after {timeout}s")
                raise ExecTimeoutError(command=call.args, timeout_s=timeout)
        result = finish(call)
        return await result if inspect.isawaitable(result) else result

    step["responder"] = timed_responder
    return step
