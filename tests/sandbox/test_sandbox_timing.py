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
    model = ScriptedModel([*script, [assistant_message("done")]])
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
    return outputs, turn_times, sandbox


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
