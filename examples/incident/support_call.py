"""From an incident to a regression test (docs/recordings.md).

A support voice app on the real adapter. It arms barge-in handling for an
assistant answer only once the answer's first ``GRACE`` seconds have played
(echo suppression: the caller's microphone hears the assistant at first).
The bug: on the caller's speech it looks the answer up among the armed ones,
which fails when the caller speaks inside the grace period (``fixed=True``
looks it up safely).

``incident.jsonl`` beside this file is the recorded session from staging:
the caller barged in 20 ms after the grace period ended, so the call went
fine. Its replay passes; exploring the timings around it finds the crash.

    python examples/incident/support_call.py            # replay, explore, fix
    python examples/incident/support_call.py --record   # record incident.jsonl again
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner

from agentsim.realtime.server import CallTool, Reply, SimulatedRealtimeServer, raw_server_event

GRACE = 0.3


@function_tool
async def lookup_order(order_id: int) -> str:
    """Look an order up."""
    await asyncio.sleep(0.4)
    return f"order {order_id} ships tomorrow"


def support_agent() -> RealtimeAgent[Any]:
    return RealtimeAgent(name="Support", instructions="Help with orders.", tools=[lookup_order])


class Outcome:
    def __init__(self) -> None:
        self.events: list[tuple[str, Any]] = []
        self.transcript: list[str] = []
        self.stopped: list[str] = []


async def voice_app(model: Any, *, fixed: bool = True, seconds: float = 10.0, model_config: Any = None) -> Outcome:
    """The app: what it saw (session event types, raw server event types),
    what the assistant said, which items it stopped on a barge-in."""
    loop = asyncio.get_running_loop()
    outcome = Outcome()
    barge_in_armed: dict[str, bool] = {}  # an item is in it once its grace period has played
    heard: set[str] = set()
    current: str | None = None
    session = await RealtimeRunner(support_agent(), model=model).run(model_config=model_config)
    async with session:
        try:
            async with asyncio.timeout(seconds):
                async for event in session:
                    raw = raw_server_event(event)
                    if raw is not None:
                        outcome.events.append(("server", raw["type"]))
                        if raw["type"] == "response.output_audio_transcript.done":
                            outcome.transcript.append(raw["transcript"])
                        if raw["type"] == "input_audio_buffer.speech_started" and current is not None:
                            armed = barge_in_armed.get(current, False) if fixed else barge_in_armed[current]
                            if armed:
                                outcome.stopped.append(current)
                        continue
                    outcome.events.append(("session", event.type))
                    if event.type == "audio" and event.item_id not in heard:
                        current = event.item_id
                        heard.add(current)
                        loop.call_later(GRACE, barge_in_armed.__setitem__, current, True)
        except TimeoutError:
            pass
    return outcome


def support_server(barge_in_at: float | None = None) -> SimulatedRealtimeServer:
    """The call: the caller asks about an order (a tool call), hears the
    answer, and (``barge_in_at``) says "thanks" over it."""
    server = SimulatedRealtimeServer([CallTool("lookup_order", {"order_id": 7}), Reply("your order ships tomorrow, is there anything else " * 2, audio_seconds=4.0), Reply("bye")])
    server.user_speaks("where is my order", at=0.5, seconds=1.0)
    if barge_in_at is not None:
        server.user_speaks("thanks", at=barge_in_at, seconds=0.5)
    return server


def record_support_call(path: Any, *, barge_in_at: float | None, fixed: bool = True, api_key: str = "sk-test-never-in-a-file") -> Outcome:
    """Record the support call on the simulated server (inside a simulation,
    FIFO) to ``path``; returns what the app saw."""
    import agentsim
    from agentsim.recording import RecordingRealtimeModel

    async def call() -> Outcome:
        server = support_server(barge_in_at)
        return await voice_app(RecordingRealtimeModel(server.model(), path), fixed=fixed, model_config={"api_key": api_key})

    return agentsim.run(call, strategy="fifo")


def replay_support_call(recording: Any, *, fixed: bool = True, **server_options: Any) -> Any:
    """The app against ``SimulatedRealtimeServer.from_recording(recording)``
    (an ``async def`` for ``agentsim.run``/``explore``): returns the app's
    outcome and the server."""

    async def replay() -> tuple[Outcome, SimulatedRealtimeServer]:
        server = SimulatedRealtimeServer.from_recording(recording, **server_options)
        outcome = await voice_app(server.model(), fixed=fixed)
        server.assert_rules()
        return outcome, server

    return replay


#: The recorded session (see the module's docstring).
INCIDENT = Path(__file__).with_name("incident.jsonl")
#: The simulated server's latency each way (its default).
NETWORK = 0.02


async def replay_incident() -> None:
    """The buggy app against the recorded session (``agentsim explore`` target)."""
    await replay_support_call(INCIDENT, fixed=False)()


async def replay_incident_fixed() -> None:
    """The fixed app against the recorded session."""
    await replay_support_call(INCIDENT, fixed=True)()


def record_incident() -> None:
    """Record ``incident.jsonl``: the caller barges in 20 ms after the grace
    period (the speech reaches the app one network latency after it starts,
    as the first audio did)."""
    record_support_call(INCIDENT, barge_in_at=first_audio_at() - NETWORK + GRACE + 0.02, fixed=False)


def first_audio_at() -> float:
    """When the support call's first assistant audio reaches the app (FIFO)."""
    import agentsim

    async def call() -> float:
        server = support_server()
        await voice_app(server.model())
        return next(t for t, side, kind in server.log if side == "server" and kind == "response.output_audio.delta")

    return agentsim.run(call, strategy="fifo")


if __name__ == "__main__":
    import agentsim

    if "--record" in sys.argv:
        record_incident()
        print(f"recorded {INCIDENT}")
        sys.exit(0)
    outcome, _ = agentsim.run(replay_support_call(INCIDENT, fixed=False), strategy="fifo")
    print(f"replayed as recorded: the app stopped {outcome.stopped} on the barge-in, no crash")
    report = agentsim.explore(replay_incident, runs=200)
    print(report.format())
    fixed = agentsim.explore(replay_incident_fixed, runs=200)
    print(f"fixed app: {'no failure' if fixed.ok else 'FAILED'} in {fixed.runs_executed} runs around the incident")
    sys.exit(0 if fixed.ok and not report.ok else 1)
