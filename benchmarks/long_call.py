"""Wall time of a long call through the simulated Realtime server, beside the SDK's floor.

Runs ``examples/long_call.py`` (the real ``OpenAIRealtimeWebSocketModel``,
the simulated server with jittered latencies, a simulated player) in a fresh
process per case, so each peak RSS is its own, and prints side by side:
wall seconds, speed-up over real time, events through the wire per wall
second, peak RSS, each case's ratio to the 30-minute FIFO baseline, and its
ratio to the **SDK floor**.

The floor is the SDK alone doing the same work through the same adapter:
what the SDK was given in that case, recorded in a separate run of the same
seed (so the timed run records nothing) — the frames the simulated server
sent, the microphone chunks the application sent, and the playback the
simulated player reported to the session's ``RealtimePlaybackTracker`` — is
replayed: the frames to the real ``OpenAIRealtimeWebSocketModel`` over a
socket that yields them back to back, the chunks to the session, the
playback reports to the tracker (plain ``asyncio.run``, no agentsim, no
time, no server logic, no simulated device), with the application consuming
the session's events. What the simulation costs above it is time, the
server's rules and the doubles. The **timed floor** is the same replay with
each frame, chunk and playback report at its recorded instant, on the tuned
minimal virtual loop (``minimal_loop.py``): the same event stream, with its
timing, through the same adapter, on the cheapest loop that runs it in
virtual time. What the simulation costs above that is the server's rules,
the doubles (the player's simulated device among them) and the kernel's
guarantees.

    python benchmarks/long_call.py [--minutes 30] [--repeat 3]
    python benchmarks/long_call.py --memory     # peak RSS per simulated hour: flat
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def example() -> Any:
    """``examples/long_call.py``, loaded from its file under a name of its own:
    ``import long_call`` would find this benchmark instead whenever
    ``benchmarks/`` comes first on ``sys.path`` (or it was imported as
    ``long_call`` already)."""
    import importlib.util

    loaded = sys.modules.get("agentsim_example_long_call")
    if loaded is None:
        spec = importlib.util.spec_from_file_location("agentsim_example_long_call", EXAMPLES / "long_call.py")
        assert spec is not None and spec.loader is not None
        loaded = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = loaded
        spec.loader.exec_module(loaded)
    return loaded


def one_case(minutes: float, seed: int, strategy: str, microphone: bool, read_deviations: bool = False) -> dict[str, float]:
    long_call = example()

    import agentsim

    started = time.perf_counter()
    result = agentsim.simulate(long_call.long_call, minutes, microphone, seed=seed, strategy=strategy, wall_timeout=None)
    summary = result.unwrap()
    if read_deviations:
        # What a report or a test reads of a long run's schedule, twice.
        for _ in range(2):
            deviations = result.trace.deviations
            assert len(deviations) == len(list(deviations)) and all(deviations[number] >= 0 for number in list(deviations)[:1000])
    wall = time.perf_counter() - started
    return {
        "minutes": minutes,
        "wall": wall,
        "events": summary.wire_events,
        "violations": len(summary.violations),
        "turns": summary.turns,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def record_case(minutes: float, seed: int, strategy: str, microphone: bool, frames_path: str) -> None:
    """The same call (same seed: the same frames), recording for the floor
    what the SDK was given and when: the frames the adapter received, the
    microphone chunks the application sent, and the playback the device
    reported to the SDK's tracker. A run of its own, so that the timed run
    carries no recording."""
    long_call = example()
    from agents.realtime.model import RealtimePlaybackTracker

    import agentsim
    from agentsim.realtime.server import _wire

    frames: list[str] = []
    frame_times: list[float] = []
    microphone_times: list[float] = []
    plays: list[tuple[float, str, int, float]] = []
    receive, send = _wire.SimulatedWebSocket.receive, _wire.SimulatedWebSocket.send
    on_play_ms = RealtimePlaybackTracker.on_play_ms

    def recording_receive(self: Any, message: str) -> None:
        if not self.closed:
            frames.append(message)
            frame_times.append(asyncio.get_running_loop().time())
        receive(self, message)

    async def counting_send(self: Any, payload: str) -> None:
        if '"input_audio_buffer.append"' in payload:
            microphone_times.append(asyncio.get_running_loop().time())
        await send(self, payload)

    def recording_on_play_ms(self: Any, item_id: str, item_content_index: int, ms: float) -> None:
        plays.append((asyncio.get_running_loop().time(), item_id, item_content_index, ms))
        on_play_ms(self, item_id, item_content_index, ms)

    _wire.SimulatedWebSocket.receive = recording_receive  # type: ignore[method-assign]
    _wire.SimulatedWebSocket.send = counting_send  # type: ignore[method-assign]
    RealtimePlaybackTracker.on_play_ms = recording_on_play_ms  # type: ignore[method-assign]
    agentsim.run(long_call.long_call, minutes, microphone, seed=seed, strategy=strategy, wall_timeout=None)
    recorded = {"frames": frames, "frame_times": frame_times, "microphone_times": microphone_times, "plays": plays}
    Path(frames_path).write_text(json.dumps(recorded))


async def sdk_floor(recorded: dict[str, Any], timed: bool) -> int:
    """The SDK alone, given what ``record_case`` recorded: the frames through
    the real adapter and session, the microphone chunks to the session, the
    device's playback reports to the SDK's tracker; back to back, or (``timed``,
    on a virtual loop: the timed floor) each at its recorded instant."""
    loop = asyncio.get_running_loop()
    from agents import function_tool
    from agents.realtime import RealtimeAgent, RealtimeRunner
    from agents.realtime.model import RealtimePlaybackTracker
    from agents.realtime.openai_realtime import OpenAIRealtimeWebSocketModel

    frames: list[str] = recorded["frames"]

    @function_tool
    async def lookup_order(order_id: str) -> str:
        """Look up an order's status."""
        return f"order {order_id} ships tomorrow"

    class ReplayedSocket:
        """What the adapter uses of a websocket: the recorded frames, then silence."""

        def __init__(self) -> None:
            self.closed = asyncio.Event()

        async def send(self, payload: str) -> None:
            pass

        async def close(self, code: int = 1000, reason: str = "") -> None:
            self.closed.set()

        def __aiter__(self) -> Any:
            return self._messages()

        async def _messages(self) -> Any:
            for message, at in zip(frames, recorded["frame_times"]):
                if timed:
                    await asyncio.sleep(at - loop.time())
                yield message
            await self.closed.wait()

    class FloorModel(OpenAIRealtimeWebSocketModel):
        async def _create_websocket_connection(self, url: str, headers: dict[str, str], transport_config: Any = None) -> Any:
            return ReplayedSocket()

    agent = RealtimeAgent(name="Support", instructions="Help with orders.", tools=[lookup_order])
    tracker = RealtimePlaybackTracker()
    session = await RealtimeRunner(agent, model=FloorModel()).run(model_config={"api_key": "floor", "playback_tracker": tracker})
    seen = 0
    async with session:

        async def microphone() -> None:
            for at in recorded["microphone_times"]:
                if timed:
                    await asyncio.sleep(at - loop.time())
                await session.send_audio(bytes(960))
                if not timed:
                    await asyncio.sleep(0)  # interleaved with the frames, as in the call

        async def device() -> None:
            # The audio device's reports, as the simulated player made them:
            # the SDK's tracker work, without the simulation of the device.
            for at, item_id, content_index, ms in recorded["plays"]:
                if timed:
                    await asyncio.sleep(at - loop.time())
                tracker.on_play_ms(item_id, content_index, ms)
                if not timed:
                    await asyncio.sleep(0)

        streaming = loop.create_task(microphone())
        playing = loop.create_task(device())
        async for event in session:
            if event.type == "raw_model_event" and getattr(event.data, "type", None) == "raw_server_event":
                seen += 1
                if seen == len(frames):
                    break
        await streaming
        await playing
    return seen


def floor_case(frames_path: str, timed: bool) -> dict[str, float]:
    recorded = json.loads(Path(frames_path).read_text())
    import agents.realtime  # noqa: F401  (imported before the clock starts, as in the simulated case)

    started = time.perf_counter()
    if timed:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        from minimal_loop import run_minimal

        seen = run_minimal(lambda: sdk_floor(recorded, timed=True), tuned=True)
    else:
        seen = asyncio.run(sdk_floor(recorded, timed=False))
    wall = time.perf_counter() - started
    return {"wall": wall, "events": seen, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--case", help=argparse.SUPPRESS)
    parser.add_argument("--record", help=argparse.SUPPRESS)
    parser.add_argument("--floor", help=argparse.SUPPRESS)
    parser.add_argument("--timed", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=3, help="runs of each case and floor; the best wall time counts")
    parser.add_argument("--memory", action="store_true", help="only peak memory: calls of 1, 2 and 4 hours with the microphone, and a PCT hour read or not")
    parser.add_argument("--read-deviations", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.floor:
        print(json.dumps(floor_case(args.floor, args.timed)))
        return
    if args.case:
        minutes, seed, strategy, microphone = args.case.split(",")
        if args.record:
            record_case(float(minutes), int(seed), strategy, microphone == "mic", args.record)
        else:
            print(json.dumps(one_case(float(minutes), int(seed), strategy, microphone == "mic", args.read_deviations)))
        return
    if args.memory:
        memory_table()
        return
    cases = [
        (args.minutes, 0, "fifo", ""),
        (args.minutes, 3, "random", ""),
        (args.minutes, 3, "pct", ""),
        # Twice as long under every strategy: time and peak memory per
        # simulated hour (the bound: 200 MB under each).
        (args.minutes * 2, 0, "fifo", ""),
        (args.minutes * 2, 3, "random", ""),
        (args.minutes * 2, 3, "pct", ""),
        (args.minutes, 0, "fifo", "mic"),
    ]
    def best(command: list[str]) -> dict[str, Any]:
        """The run with the best wall time of ``--repeat`` (the largest RSS)."""
        outcomes = [json.loads(subprocess.run(command, capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]) for _ in range(args.repeat)]
        fastest = min(outcomes, key=lambda outcome: outcome["wall"])
        return {**fastest, "rss_mb": max(outcome["rss_mb"] for outcome in outcomes)}

    rows = []
    with tempfile.TemporaryDirectory() as directory:
        for number, (minutes, seed, strategy, microphone) in enumerate(cases):
            frames_path = str(Path(directory) / f"frames-{number}.json")
            case = f"{minutes},{seed},{strategy},{microphone}"
            subprocess.run([sys.executable, __file__, "--case", case, "--record", frames_path], capture_output=True, text=True, check=True)
            out = best([sys.executable, __file__, "--case", case])
            floor = best([sys.executable, __file__, "--floor", frames_path])
            timed = best([sys.executable, __file__, "--floor", frames_path, "--timed"])
            name = f"{minutes:g} min {strategy} seed {seed}" + (" + microphone" if microphone else "")
            rows.append((name, out, floor, timed))
    base = rows[0][1]["wall"]
    print(
        f"{'case':36} {'wall s':>7} {'x real time':>11} {'events/s':>9} {'RSS MB':>7} {'vs base':>8}"
        f" {'floor s':>8} {'vs floor':>9} {'timed s':>8} {'vs timed':>9} violations"
    )
    for name, row, floor, timed in rows:
        print(
            f"{name:36} {row['wall']:7.2f} {row['minutes'] * 60 / row['wall']:11.0f} {row['events'] / row['wall']:9.0f}"
            f" {row['rss_mb']:7.0f} {row['wall'] / base:7.2f}x {floor['wall']:8.2f} {row['wall'] / floor['wall']:8.2f}x"
            f" {timed['wall']:8.2f} {row['wall'] / timed['wall']:8.2f}x {row['violations']:>10}"
        )


def memory_table() -> None:
    """Peak RSS of 1-, 2- and 4-hour calls with the microphone (each in a
    process of its own) and what each simulated hour adds; then a PCT hour
    whose trace's deviations are read, beside the same hour not read."""

    def case(spec: str, *extra: str) -> dict[str, Any]:
        done = subprocess.run([sys.executable, __file__, "--case", spec, *extra], capture_output=True, text=True, check=True)
        return dict(json.loads(done.stdout.strip().splitlines()[-1]))

    print(f"{'call':34} {'wall s':>7} {'wire events':>12} {'peak RSS MB':>12} {'MB per added hour':>18}")
    previous: tuple[float, float] | None = None
    for hours in (1, 2, 4):
        row = case(f"{hours * 60},0,fifo,mic")
        slope = "" if previous is None else f"{(row['rss_mb'] - previous[1]) / (hours - previous[0]):18.1f}"
        print(f"{f'{hours} h fifo + microphone':34} {row['wall']:7.1f} {row['events']:12d} {row['rss_mb']:12.0f} {slope}")
        previous = (hours, row["rss_mb"])
    plain, read = case("60,3,pct,"), case("60,3,pct,", "--read-deviations")
    print(f"{'1 h pct, deviations not read':34} {plain['wall']:7.1f} {plain['events']:12d} {plain['rss_mb']:12.0f}")
    print(f"{'1 h pct, deviations read twice':34} {read['wall']:7.1f} {read['events']:12d} {read['rss_mb']:12.0f}   (read/not read {read['rss_mb'] / plain['rss_mb']:.2f}x)")


if __name__ == "__main__":
    main()
