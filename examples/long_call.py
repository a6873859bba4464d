"""A 30-minute voice call through the simulated Realtime server, on the real adapter.

The caller is a ``SimulatedCaller``: it asks questions after pauses of 3-25
s, sometimes about an order (the model calls a tool that takes 0.5-2 s), and
one answer in four is interrupted while it plays. The app is an ordinary RealtimeSession
loop feeding a simulated player whose progress goes to the SDK's playback
tracker. Every server rule is checked on every client event; the call must
end with none broken.

    python examples/long_call.py [--minutes 30] [--seed 0] [--strategy random] [--microphone]

prints what happened and how long it took in wall time.
"""

from __future__ import annotations

import argparse
import asyncio
import time
from dataclasses import dataclass
from typing import Any

from agents import function_tool
from agents.realtime import RealtimeAgent, RealtimeRunner

import agentsim
from agentsim.audio import SimulatedPlayer
from agentsim.realtime.server import Reply, SimulatedCaller, SimulatedRealtimeServer, raw_server_event
from agentsim.timing import uniform


@function_tool
async def lookup_order(order_id: str) -> str:
    """Look up an order's status."""
    await asyncio.sleep(agentsim.seeded_random("lookup_order").uniform(0.5, 2.0))
    return f"order {order_id} ships tomorrow"


AGENT = RealtimeAgent(name="Support", instructions="Help with orders.", tools=[lookup_order])


@dataclass
class CallSummary:
    minutes: float
    turns: int
    barge_ins: int
    tool_calls: int
    responses: int
    cancelled: int
    truncations: int
    playback_interrupted: int
    heard_seconds: float
    sent_seconds: float
    wire_events: int
    violations: list[str]
    latency_p95: float | None = None


MICROPHONE_CHUNK = bytes(960)  # 20 ms of pcm16 at 24 kHz


async def _stream_microphone(session: Any) -> None:
    # What a voice app does all call long: 20 ms of microphone audio every 20 ms.
    while True:
        await session.send_audio(MICROPHONE_CHUNK)
        await asyncio.sleep(0.02)


async def long_call(minutes: float = 30.0, microphone: bool = False) -> CallSummary:
    """The call itself (run it with ``agentsim.run``); ``microphone`` also
    streams the caller's microphone the whole time."""
    server = SimulatedRealtimeServer(
        latency=uniform(0.01, 0.08),
        client_latency=uniform(0.01, 0.08),
        first_audio_latency=uniform(0.15, 0.6),
        cancel_latency=uniform(0.03, 0.3),
        generation_speed=1.5,
    )
    player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=100)
    # The caller: turns of 1-4 s, answers of 3-15 s, pauses of 3-25 s; one
    # question in four makes the model call the tool, and one answer in four
    # is interrupted while it plays.
    caller = SimulatedCaller(
        server, player, minutes=minutes, speaking=(1.0, 4.0), answer_seconds=(3.0, 15.0), pause=(3.0, 25.0),
        barge_in=0.25, barge_in_after=(0.5, 2.5), tool_questions=0.25, follow_up=Reply("your order ships tomorrow", audio_seconds=3.0), hang_up=False,
    )
    truncations = 0
    session = await RealtimeRunner(AGENT, model=server.model()).run(model_config={"playback_tracker": player.tracker})
    async with session:
        streaming = asyncio.get_running_loop().create_task(_stream_microphone(session)) if microphone else None
        calling = caller.start()
        try:
            async with asyncio.timeout(minutes * 60):
                async for event in session:
                    player.on_event(event)
                    raw = raw_server_event(event)
                    truncations += raw is not None and raw["type"] == "conversation.item.truncated"
        except TimeoutError:
            pass
        if streaming is not None:
            streaming.cancel()
        calling.cancel()
    player.close()
    report = caller.report()
    return CallSummary(
        minutes=agentsim.now() / 60,
        turns=report.turns,
        barge_ins=report.barge_ins,
        tool_calls=report.tool_calls,
        responses=report.responses,
        cancelled=report.cancelled,
        truncations=truncations,
        playback_interrupted=len(player.interrupted),
        heard_seconds=report.heard_seconds,
        sent_seconds=report.sent_seconds,
        wire_events=server.wire_events,
        violations=list(report.violations),
        latency_p95=report.latency_p95,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--strategy", default="fifo")
    parser.add_argument("--microphone", action="store_true", help="stream 20 ms microphone chunks all call long")
    args = parser.parse_args()
    started = time.perf_counter()
    summary = agentsim.run(long_call, args.minutes, args.microphone, seed=args.seed, strategy=args.strategy, wall_timeout=None)
    wall = time.perf_counter() - started
    print(summary)
    print(f"{summary.minutes:.1f} simulated minutes in {wall:.1f} s wall ({summary.minutes * 60 / wall:.0f}x real time)")
    if summary.violations:
        raise SystemExit("server rules broken:\n" + "\n".join(summary.violations))


if __name__ == "__main__":
    main()
