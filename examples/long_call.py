"""A 30-minute voice call through the simulated Realtime server, on the real adapter.

The caller asks questions after silences of 8-40 s, sometimes about an order
(the model calls a tool that takes 0.5-2 s), and one turn in four barges in
while the assistant is still talking. The app is an ordinary RealtimeSession
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
from agentsim.realtime.server import CallTool, Reply, SimulatedRealtimeServer, raw_server_event
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


def _script(server: SimulatedRealtimeServer, minutes: float) -> tuple[int, int, int]:
    """Schedule the caller's turns; returns (turns, barge-ins, tool calls)."""
    rng = agentsim.seeded_random("long_call:script")
    at, turns, barge_ins, tools = 1.0, 0, 0, 0
    while True:
        speaking = rng.uniform(1.0, 4.0)
        if at + speaking > minutes * 60 - 30:
            return turns, barge_ins, tools
        phrase = f"question q{turns:05d}x"
        answer = Reply(" ".join(["word"] * rng.randint(5, 40)), audio_seconds=rng.uniform(3.0, 15.0))
        if rng.random() < 0.25:
            server.when_user_says(phrase, CallTool("lookup_order", {"order_id": str(1000 + turns)}))
            tools += 1
        else:
            server.when_user_says(phrase, answer)
        server.user_speaks(f"{phrase} please", at=at, seconds=speaking)
        turns += 1
        barge_in = rng.random() < 0.25
        barge_ins += barge_in
        # A barge-in starts while the answer is still playing; otherwise silence.
        at += speaking + (rng.uniform(1.5, 3.0) if barge_in else rng.uniform(8.0, 40.0))


MICROPHONE_CHUNK = bytes(960)  # 20 ms of pcm16 at 24 kHz


async def _stream_microphone(session: Any) -> None:
    # What a voice app does all call long: 20 ms of microphone audio every 20 ms.
    while True:
        await session.send_audio(MICROPHONE_CHUNK)
        await asyncio.sleep(0.02)


async def long_call(minutes: float = 30.0, microphone: bool = False) -> CallSummary:
    """The call itself (run it with ``agentsim.run``); ``microphone`` also
    streams the caller's microphone the whole time."""
    # After a tool call the SDK asks for a response with no new user words:
    # the server answers those from ``replies``, in order.
    follow_ups = [Reply("your order ships tomorrow", audio_seconds=3.0)] * 10_000
    server = SimulatedRealtimeServer(
        follow_ups,
        latency=uniform(0.01, 0.08),
        client_latency=uniform(0.01, 0.08),
        first_audio_latency=uniform(0.15, 0.6),
        cancel_latency=uniform(0.03, 0.3),
        generation_speed=1.5,
    )
    player = SimulatedPlayer(network_delay=uniform(0.02, 0.1), jitter_buffer_ms=100)
    turns, barge_ins, tool_calls = _script(server, minutes)
    truncations = 0
    session = await RealtimeRunner(AGENT, model=server.model()).run(model_config={"playback_tracker": player.tracker})
    async with session:
        streaming = asyncio.get_running_loop().create_task(_stream_microphone(session)) if microphone else None
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
    player.close()
    responses = server.responses
    return CallSummary(
        minutes=agentsim.now() / 60,
        turns=turns,
        barge_ins=barge_ins,
        tool_calls=tool_calls,
        responses=len(responses),
        cancelled=sum(r["cancelled"] for r in responses),
        truncations=truncations,
        playback_interrupted=len(player.interrupted),
        heard_seconds=player.heard_ms / 1000,
        sent_seconds=sum(server.audio_sent_ms(r["item_id"]) for r in responses if r["item_id"]) / 1000,
        wire_events=len(server.log),
        violations=[violation.describe() for violation in server.violations],
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
