"""timed_sandbox_session: sandbox calls take virtual time; exec times out at its deadline."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "agents.sandbox and agents.testing's scripted sandbox session")
from agents import RunConfig, Runner
from agents.sandbox import ExecResult, SandboxAgent
from agents.sandbox.capabilities import Shell
from agents.testing import ScriptedModel, assistant_message, function_call

import agentsim
from agentsim.models import uniform
from agentsim.sandbox import timed_sandbox_session

SCHEDULES = [("fifo", 0), ("random", 1), ("random", 2), ("random", 3)]


async def run_shell_workflow(steps: list[dict[str, Any]], commands: list[dict[str, Any]]) -> tuple[list[str], list[float], Any]:
    sandbox = timed_sandbox_session(steps)
    script: list[Any] = [[function_call("exec_command", args, call_id=f"call_{i}")] for i, args in enumerate(commands)]
    outputs, turn_times = await run_shell_agent(sandbox, [*script, [assistant_message("done")]])
    return outputs, turn_times, sandbox


async def run_shell_agent(sandbox: Any, script: list[Any]) -> tuple[list[str], list[float]]:
    """A Shell agent on ``sandbox`` driven by ``script``: the tool outputs it
    saw, and when each model turn started."""
    model = ScriptedModel(script)
    turn_times: list[float] = []

    original = model.get_response

    async def timed_get_response(*args: Any, **kwargs: Any) -> Any:
        turn_times.append(agentsim.now())
        return await original(*args, **kwargs)

    model.get_response = timed_get_response  # type: ignore[method-assign]
    agent = SandboxAgent(name="Shell", model=model, capabilities=[Shell()])
    async with sandbox:
        await Runner.run(agent, "run it", run_config=RunConfig(sandbox={"session": sandbox}, tracing_disabled=True))
    outputs = [item["output"] for call in model.calls for item in call.input if isinstance(item, dict) and item.get("type") == "function_call_output"]
    sandbox.assert_complete()
    model.assert_complete()
    return outputs, turn_times


def test_exec_longer_than_its_timeout_times_out_at_the_virtual_deadline() -> None:
    async def main() -> tuple[list[str], list[float]]:
        outputs, times, _ = await run_shell_workflow(
            [{"method": "exec", "duration": 42.0, "result": ExecResult(stdout=b"finished\n", stderr=b"", exit_code=0)}],
            [{"cmd": "make build", "yield_time_ms": 2500}],
        )
        return outputs, times

    for strategy, seed in SCHEDULES:
        outputs, times = agentsim.run(main, strategy=strategy, seed=seed)
        # What the SDK does: the shell tool turns the timeout into model-visible text.
        last = outputs[-1]
        assert "Command timed out after 2.500 seconds." in last
        assert "Wall time: 2.5000 seconds" in last  # measured on the virtual clock
        assert "finished" not in last
        assert times == [0.0, 2.5]  # the model's next turn happened at the deadline


def test_exec_within_its_timeout_returns_after_its_duration() -> None:
    async def main() -> tuple[list[str], list[float]]:
        outputs, times, _ = await run_shell_workflow(
            [
                {"method": "exec", "duration": 1.25, "result": ExecResult(stdout=b"ok\n", stderr=b"", exit_code=0)},
                {"method": "exec", "duration": 0.5, "result": ExecResult(stdout=b"tests passed\n", stderr=b"", exit_code=0)},
            ],
            [{"cmd": "ls"}, {"cmd": "pytest"}],
        )
        return outputs, times

    outputs, times = agentsim.run(main)
    assert times == [0.0, 1.25, 1.75]
    assert "Wall time: 1.2500 seconds" in outputs[0] and "ok" in outputs[0]
    assert "Process exited with code 0" in outputs[-1] and "tests passed" in outputs[-1]


def test_default_latency_applies_per_call_and_is_seeded() -> None:
    async def main() -> float:
        sandbox = timed_sandbox_session(
            [{"method": "exec", "result": ExecResult(stdout=b"", stderr=b"", exit_code=0)}] * 3,
            latency=uniform(0.1, 0.9),
        )
        async with sandbox:
            for _ in range(3):
                await sandbox.exec("true")
        return agentsim.now()

    # Sampled timing: seeded draws per call, the same for the same seed.
    ends = {seed: agentsim.run(main, seed=seed, strategy="jitter") for seed in range(5)}
    assert all(0.3 <= end <= 2.7 for end in ends.values())
    assert ends == {seed: agentsim.run(main, seed=seed, strategy="jitter") for seed in range(5)}
    assert len(set(ends.values())) > 1
    # Nominal timing: three midpoints.
    assert agentsim.run(main) == pytest.approx(1.5)


def test_scripted_errors_and_responders_keep_working_with_durations() -> None:
    async def main() -> tuple[str, float]:
        sandbox = timed_sandbox_session(
            [
                {"method": "exec", "duration": 0.4, "error": PermissionError("denied")},
                {"method": "exec", "duration": 0.6, "responder": lambda call: ExecResult(stdout=str(call.args).encode(), stderr=b"", exit_code=0)},
            ]
        )
        async with sandbox:
            with pytest.raises(PermissionError):
                await sandbox.exec("rm", "-rf", "/")
            result = await sandbox.exec("echo", "hi")
        return result.stdout.decode(), agentsim.now()

    stdout, end = agentsim.run(main)
    assert "echo" in stdout and end == 1.0


def test_a_step_without_exactly_one_outcome_is_a_typed_error() -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        timed_sandbox_session([{"method": "exec", "duration": 1.0}])
    assert info.value.parameter == "steps[0]"


def _pty_update(output: bytes, exit_code: int | None, process_id: int | None = None) -> Any:
    from agents.sandbox.session.pty_types import PtyExecUpdate

    return PtyExecUpdate(process_id=process_id, output=output, exit_code=exit_code, original_token_count=None)


@pytest.mark.parametrize(("strategy", "seed"), SCHEDULES)
def test_a_pty_command_yields_at_its_yield_time_and_is_polled_until_it_ends(strategy: str, seed: int) -> None:
    # Before: pty_exec_start waited the command's whole 8 s and the model never polled.
    async def main() -> tuple[list[str], list[float]]:
        sandbox = timed_sandbox_session(
            [
                {"method": "pty_exec_start", "duration": 8.0, "result": _pty_update(b"build ok\n", 0)},
                {"method": "pty_write_stdin"},  # polls: at least 5 s with empty input -> 7 s, still running
                {"method": "pty_write_stdin"},  # ends at 8 s
            ]
        )
        script: list[Any] = [
            [function_call("exec_command", {"cmd": "make build", "yield_time_ms": 2000}, call_id="c0")],
            [function_call("write_stdin", {"session_id": 1000, "chars": "", "yield_time_ms": 1000}, call_id="c1")],
            [function_call("write_stdin", {"session_id": 1000, "chars": "", "yield_time_ms": 10000}, call_id="c2")],
            [assistant_message("built")],
        ]
        outputs, turn_times = await run_shell_agent(sandbox, script)
        return outputs[-3:], turn_times

    outputs, times = agentsim.run(main, strategy=strategy, seed=seed)
    assert times == [0.0, 2.0, 7.0, 8.0]
    started, still_running, ended = outputs
    assert "1000" in started and "build ok" not in started and "exited with code" not in started
    assert "1000" in still_running and "exited with code" not in still_running
    assert "Process exited with code 0" in ended and "build ok" in ended


def test_a_pty_command_shorter_than_its_yield_returns_its_result() -> None:
    async def main() -> tuple[Any, float]:
        sandbox = timed_sandbox_session([{"method": "pty_exec_start", "duration": 1.5, "result": _pty_update(b"hi\n", 0)}])
        async with sandbox:
            update = await sandbox.pty_exec_start("echo hi", yield_time_s=10.0)
        return update, agentsim.now()

    update, end = agentsim.run(main)
    assert (update.exit_code, update.output, end) == (0, b"hi\n", 1.5)


def test_polling_an_unknown_pty_session_is_the_sdks_error() -> None:
    from agents.sandbox.errors import PtySessionNotFoundError

    async def main() -> None:
        sandbox = timed_sandbox_session([{"method": "pty_write_stdin"}])
        async with sandbox:
            with pytest.raises(PtySessionNotFoundError):
                await sandbox.pty_write_stdin(session_id=4242, chars="")

    agentsim.run(main)
