"""The agentsim command and the trace timelines (Perfetto JSON and text)."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

import agentsim
from agentsim import timeline
from agentsim.cli import main

RACE = textwrap.dedent(
    """
    import asyncio

    class DoubleBooking(Exception):
        pass

    async def racy(fixed=False):
        seats = {"left": 1}

        async def book(check_after):
            await asyncio.sleep(1.0)
            if check_after:
                await asyncio.sleep(check_after)
            if seats["left"] > 0:
                await asyncio.sleep(0.05)
                seats["left"] -= 1
            if seats["left"] < 0:
                raise DoubleBooking(f"seats left: {seats['left']}")

        await asyncio.gather(book(0.0), book(0.05))

    async def with_sim(sim):
        await asyncio.sleep(1.5)
        assert sim.now == 1.5
    """
)


async def traced_program() -> None:
    import asyncio

    async def worker() -> None:
        await asyncio.sleep(0.25)

    task = asyncio.create_task(worker(), name="worker")
    await asyncio.sleep(0.1)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    agentsim.record_event("send", "user_input")


def test_perfetto_export_has_a_track_per_task_spans_and_instants(tmp_path: Path) -> None:
    result = agentsim.simulate(traced_program)
    path = tmp_path / "trace.json"
    timeline.export(result.trace, path, metadata={"seed": 0})
    document = json.loads(path.read_text())
    records = document["traceEvents"]
    tracks = {record["args"]["name"] for record in records if record.get("name") == "thread_name"}
    assert {"main", "worker#2"} <= tracks
    phases = {(record["ph"], record.get("cat")) for record in records if record["ph"] != "M"}
    assert ("B", "spawn") in phases and ("E", "exit") in phases
    assert ("i", "cancel") in phases and ("i", "send") in phases
    cancel = next(record for record in records if record.get("cat") == "cancel")
    assert cancel["ts"] == 100_000.0  # virtual microseconds
    assert document["otherData"]["digest"] == result.trace.digest() and document["otherData"]["seed"] == 0
    # Round trip: the text timeline from the file equals the one from the trace.
    assert timeline.render(timeline.load(path)) == timeline.render(result.trace)
    assert "100.000" in timeline.render(result.trace, kinds=["cancel"])


def test_trio_runs_have_spawns_exits_cancels_and_perfetto_spans(tmp_path: Path) -> None:
    import trio

    async def program() -> None:
        async def worker(seconds: float) -> None:
            await trio.sleep(seconds)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(worker, 1.0, name="quick")
            nursery.start_soon(worker, 10.0, name="slow")
            await trio.sleep(2.0)
            nursery.cancel_scope.cancel()

    for strategy, seed in (("fifo", 0), ("random", 1), ("random", 2)):
        result = agentsim.simulate(program, backend="trio", strategy=strategy, seed=seed)
        assert result.ok, result.exception
        kinds = [(event.kind, event.task.split("#")[0], event.detail) for event in result.trace.events if event.kind in ("spawn", "exit", "cancel")]
        assert kinds[0] == ("spawn", "main", "")
        assert {("spawn", "quick", "by main"), ("spawn", "slow", "by main"), ("cancel", "main", "a cancel scope")} <= set(kinds)
        assert [kind for kind in kinds if kind[0] == "exit"][-1] == ("exit", "main", "exited")
        cancel = next(event for event in result.trace.events if event.kind == "cancel")
        assert cancel.time == 2.0
    path = tmp_path / "trio.json"
    timeline.export(result.trace, path)
    records = json.loads(path.read_text())["traceEvents"]
    spans = {(record["ph"], record["name"].split("#")[0]) for record in records if record["ph"] in ("B", "E")}
    assert {("B", "main"), ("E", "main"), ("B", "quick"), ("E", "quick"), ("B", "slow"), ("E", "slow")} <= spans


def test_cli_explore_replay_and_timeline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "booking.py"
    target.write_text(RACE)
    database = tmp_path / "db"
    assert main(["explore", f"{target}::racy", "--runs", "50", "--db", str(database)]) == 1
    output = capsys.readouterr().out
    assert "DoubleBooking: seats left: -1" in output and "minimal schedule" in output
    command = re.search(r"replay: agentsim replay (\S+) --schedule (\S+)", output)
    assert command is not None and command.group(1) == f"{target}::racy"
    traces = list((database / "traces").glob("racy-*.json"))
    assert len(traces) == 1

    assert main(["replay", f"{target}::racy", "--schedule", command.group(2)]) == 1
    assert "failed at virtual time 1.100s: DoubleBooking" in capsys.readouterr().out
    assert main(["replay", f"{target}::racy", "--strategy", "fifo"]) == 0
    assert "passed" in capsys.readouterr().out

    assert main(["timeline", str(traces[0]), "--kinds", "exit"]) == 0
    assert "raised DoubleBooking" in capsys.readouterr().out

    assert main(["explore", f"{target}::with_sim", "--runs", "3", "--db", "none"]) == 0


def test_cli_errors_say_what_to_fix(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "booking.py"
    target.write_text(RACE)
    assert main(["explore", str(target)]) == 2
    assert "PATH::NAME" in capsys.readouterr().err
    assert main(["explore", f"{target}::missing"]) == 2
    assert "has no `async def missing`" in capsys.readouterr().err
    assert main(["timeline", str(tmp_path / "nope.json")]) == 2
    assert "is not a file" in capsys.readouterr().err
    # --db naming a file: a usage error before the sweep, not a crash after it.
    assert main(["explore", f"{target}::racy", "--runs", "50", "--db", str(target)]) == 2
    assert "invalid database=" in capsys.readouterr().err


def test_cli_reads_profiles_and_takes_time_limits(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "slow.py"
    target.write_text(
        textwrap.dedent(
            """
            import asyncio

            async def long_call():
                await asyncio.sleep(120)
            """
        )
    )
    (tmp_path / "pyproject.toml").write_text('[tool.agentsim]\nruns = 4\n\n[tool.agentsim.profiles.quick]\nruns = 2\nmax_virtual_time = 60\n')
    monkeypatch.chdir(tmp_path)
    assert main(["explore", f"{target}::long_call", "--db", "none"]) == 0
    assert "4 run(s)" in capsys.readouterr().out
    # The profile's limit: the two-minute call exceeds one virtual minute.
    assert main(["explore", f"{target}::long_call", "--db", "none", "--profile", "quick"]) == 1
    assert "VirtualTimeLimitError" in capsys.readouterr().out
    # The command line wins over the profile (0: no limit).
    assert main(["explore", f"{target}::long_call", "--db", "none", "--profile", "quick", "--max-virtual-time", "0"]) == 0
    assert main(["replay", f"{target}::long_call", "--max-virtual-time", "30"]) == 1
    assert "VirtualTimeLimitError" in capsys.readouterr().out
    assert main(["explore", f"{target}::long_call", "--profile", "nightly"]) == 2
    assert "it has: quick" in capsys.readouterr().err


def test_cli_version_exit_codes_and_closed_pipes(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"agentsim {agentsim.__version__}"
    # Bad input: exit 2, a message, no traceback.
    assert main(["explore", "x.py::y", "--strategy", "fastest"]) == 2
    error = capsys.readouterr().err
    assert "--strategy" in error and "Traceback" not in error
    assert main(["explore", "x.py::y", "--runs", "many"]) == 2
    assert main(["explore", "--profile"]) == 2
    capsys.readouterr()
    target = tmp_path / "slow.py"
    target.write_text("import asyncio\n\nasync def main():\n    await asyncio.sleep(1)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["explore", f"{target}::main", "--runs", "-1", "--db", "none"]) == 2
    assert "invalid runs=-1" in capsys.readouterr().err

    # A reader that goes away (`| head`) ends the command quietly.
    def broken(*args: object, **kwargs: object) -> None:
        raise BrokenPipeError

    monkeypatch.setattr("builtins.print", broken)
    assert main(["replay", f"{target}::main"]) == 0


def test_cli_imports_project_modules_from_the_project_root(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'demo'\n")
    (tmp_path / "myapp").mkdir()
    (tmp_path / "myapp" / "__init__.py").write_text("RESULT = 42\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "scenario.py").write_text("import asyncio\nfrom myapp import RESULT\n\nasync def main():\n    await asyncio.sleep(RESULT)\n")
    monkeypatch.chdir(tmp_path)
    assert main(["replay", "tests/scenario.py::main"]) == 0
    assert "virtual time 42.000s" in capsys.readouterr().out


def test_cli_explore_over_workers_and_a_dask_cluster_reports_what_a_serial_sweep_does(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "booking.py"
    target.write_text(RACE)

    def sweep(*extra: str) -> str:
        assert main(["explore", f"{target}::racy", "--runs", "50", "--db", "none", *extra]) == 1
        output = capsys.readouterr().out
        assert "DoubleBooking: seats left: -1" in output
        return re.sub(r"\d+\.\d+ s", "", output)  # wall times differ

    serial = sweep()
    assert sweep("--workers", "2") == serial
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        # The target module is loaded from a path the workers cannot import: it travels by value.
        assert sweep("--scheduler", cluster.scheduler_address) == serial
    assert main(["explore", f"{target}::racy", "--workers", "none"]) == 2
    assert "--workers 'none'" in capsys.readouterr().err


def test_a_task_renamed_after_it_started_keeps_its_track_and_spans_balance(tmp_path: Path) -> None:
    """The SDK names its tasks after creating them (set_name): the exported
    file stays valid, the renamed task on one track, its new name shown."""
    import asyncio

    from tests.conftest import check_trace_events

    async def worker() -> None:
        await asyncio.sleep(0.5)

    async def main() -> None:
        task = asyncio.get_running_loop().create_task(worker())
        await asyncio.sleep(0.1)
        task.set_name("Session._process_events")
        await task

    result = agentsim.simulate(main)
    path = tmp_path / "trace.json"
    timeline.export(result.trace, path)
    records = json.loads(path.read_text())["traceEvents"]
    check_trace_events(records)
    spans = [r for r in records if r["ph"] in ("B", "E") and r["args"]["task"] != "main"]
    first_name = f"{worker.__qualname__}#2"
    assert [r["args"]["task"] for r in spans] == [first_name, "Session._process_events#2"]
    assert spans[0]["tid"] == spans[1]["tid"]  # one track for one task
    track = spans[0]["tid"]
    names = [r["args"]["name"] for r in records if r.get("name") == "thread_name" and r["tid"] == track]
    assert names == [first_name, "Session._process_events#2"]
    assert any(r.get("name") == "renamed" and r["tid"] == track for r in records)
    # Loading gives back exactly the recorded events (nothing synthetic).
    assert [(e.kind, e.task, e.detail) for e in timeline.load(path)] == [(e.kind, e.task, e.detail) for e in result.trace.events]


def test_a_task_still_running_when_the_trace_ends_is_closed() -> None:
    import asyncio

    from tests.conftest import check_trace_events
    from agentsim.timeline import to_trace_events

    async def main() -> None:
        asyncio.get_running_loop().create_task(asyncio.sleep(10))
        await asyncio.sleep(1)

    with pytest.warns(agentsim.LeftoverTasksWarning):
        result = agentsim.simulate(main)
    events = [e for e in result.trace.events if not (e.kind == "exit" and e.task != "main")]  # as if cut before the exits
    check_trace_events(to_trace_events(events))
    check_trace_events(to_trace_events(result.trace.events[3:]))  # spawns dropped by a bounded trace


def _bad_inputs(tmp_path: Path) -> dict[str, list[str]]:
    target = tmp_path / "booking.py"
    target.write_text(RACE)
    (tmp_path / "broken.py").write_text("def broken(:\n")
    (tmp_path / "failing_import.py").write_text("import agentsim_no_such_module\nasync def f():\n    pass\n")
    (tmp_path / "notes.txt").write_text("hello")
    (tmp_path / "other.json").write_text('{"a": 1}')
    (tmp_path / "records.json").write_text('{"traceEvents": [{"ph": "i"}]}')
    (tmp_path / "binary.json").write_bytes(b"\xff\xfe\x00")
    return {
        "timeline of a text file": ["timeline", str(tmp_path / "notes.txt")],
        "timeline of other JSON": ["timeline", str(tmp_path / "other.json")],
        "timeline of broken records": ["timeline", str(tmp_path / "records.json")],
        "timeline of bytes": ["timeline", str(tmp_path / "binary.json")],
        "timeline of a folder": ["timeline", str(tmp_path)],
        "a target with a syntax error": ["explore", f"{tmp_path / 'broken.py'}::f"],
        "a target whose import fails": ["explore", f"{tmp_path / 'failing_import.py'}::f"],
        "a database that is a file": ["explore", f"{target}::racy", "--db", str(tmp_path / "notes.txt")],
        "an export path that cannot be written": ["replay", f"{target}::with_sim", "--schedule", "0:fifo", "--export", str(tmp_path / "no" / "such" / "dir.json")],
        "a bad schedule": ["replay", f"{target}::racy", "--schedule", "1:pct+"],
        "no such function": ["explore", f"{target}::nothing"],
        "negative runs": ["explore", f"{target}::racy", "--runs", "-1"],
    }


@pytest.mark.parametrize("case", [
    "timeline of a text file", "timeline of other JSON", "timeline of broken records", "timeline of bytes", "timeline of a folder",
    "a target with a syntax error", "a target whose import fails", "a database that is a file", "an export path that cannot be written",
    "a bad schedule", "no such function", "negative runs",
])
def test_bad_input_exits_2_with_one_line_and_no_traceback(case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    arguments = _bad_inputs(tmp_path)[case]
    assert main(arguments) == 2
    error = capsys.readouterr().err
    assert error.startswith("agentsim: ") and "Traceback" not in error


def test_bad_input_through_the_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    import subprocess
    import sys

    cases = _bad_inputs(tmp_path)
    for case in ("timeline of a text file", "a target with a syntax error", "an export path that cannot be written"):
        finished = subprocess.run([sys.executable, "-m", "agentsim.cli", *cases[case]], capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert finished.returncode == 2, (case, finished.stderr)
        assert "Traceback" not in finished.stderr and finished.stderr.startswith("agentsim: "), (case, finished.stderr)


def test_the_cli_never_writes_a_trace_through_a_symlink(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "booking.py").write_text(RACE)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    traces = tmp_path / ".agentsim" / "traces"
    traces.mkdir(parents=True)
    (traces / "racy-1.json").symlink_to(victim)
    for seed_file in ("racy-%d.json" % seed for seed in range(2, 60)):
        (traces / seed_file).symlink_to(victim)
    assert main(["explore", "booking.py::racy", "--runs", "60"]) == 1  # the failure is still reported
    assert victim.read_text() == "precious"
    assert "symbolic link" in capsys.readouterr().err
    # A linked traces folder is refused too.
    for link in traces.iterdir():
        link.unlink()
    traces.rmdir()
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    traces.symlink_to(elsewhere)
    assert main(["explore", "booking.py::racy", "--runs", "60", "--db", "none"]) == 1
    assert list(elsewhere.iterdir()) == []
    # A plain file path is written as before.
    assert main(["replay", "booking.py::with_sim", "--schedule", "0:fifo", "--export", "out.json"]) == 0
    assert timeline.load(tmp_path / "out.json")
