"""One simulated hour of voice-agent traffic, beside the SDK's own cost floor.

Two sessions, each run in a fresh process (so peak RSS is its own):

* ``realtime``: a ``RealtimeSession`` on ``ScriptedRealtimeTransport``. The
  application streams 20 ms pcm16 microphone chunks for the whole hour; every
  minute the user finishes a 10 s utterance, the model calls a tool, and the
  assistant answers with 20 s of 20 ms audio chunks and a transcript; every
  fifth minute the user interrupts the answer 5 s in.
* ``voice``: a streamed ``VoicePipeline``: a simulated microphone speaking 3 s
  every 30 s (20 ms frames for the whole hour), timed transcription turns,
  and a 10 s paced TTS answer (20 ms chunks) per turn.

Each has two floors, neither using agentsim:

* ``floor``: the SDK alone (plain ``asyncio.run``, no time) processing the
  same numbers of sends and events back to back — the cost of the SDK's own
  work;
* ``timed``: the SDK and the same application with the same timing (the
  microphone sleeping per 20 ms frame, the answers paced with plain sleeps
  around do-nothing or the SDK's scripted doubles) on the tuned minimal
  virtual loop (``minimal_loop.py``) — what the same event stream costs on
  the cheapest loop that can run it in virtual time. What agentsim costs
  above it is its own: the kernel's guarantees, trace, scenario, recorded
  sends and ordering choices.

Beside random, the timed floor also runs waking the timers due together in a
random order (``minimal_loop.ShuffledTunedLoop``): another order costs any
loop more (other batches, other wake-ups), and the ``vs shuffled`` column
does not count that as agentsim's. (The ``vs timed`` column still does.)

The report prints wall seconds, simulated/real speed-up, events per second,
peak RSS and the simulation's ratio to each floor.

    python benchmarks/long_session.py [--minutes 60] [--strategy all|fifo|random|pct] [--repeat 3]

``--strategy all`` (the default) runs the simulated cases under fifo, random
and pct, each beside the same floor, so memory per simulated hour is shown
for every strategy in one run.

Targets (issue 4): an hour in <= 20 s wall, <= 1.3x the floor, <= 300 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import subprocess
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))

CHUNK = np.zeros(480, dtype=np.int16).tobytes()  # 20 ms of pcm16 at 24 kHz
FRAMES_PER_MINUTE = 3000  # 20 ms microphone frames
ANSWER_SECONDS = 20.0
INTERRUPT_AFTER = 5.0
TRANSCRIPT = "Sure, I found three flights to Oslo and the earliest leaves at seven in the morning"
VOICE_TURN_SECONDS = 30.0
VOICE_SPEECH_SECONDS = 3.0
VOICE_ANSWER_CHUNKS = 500  # 10 s of 20 ms chunks


def _peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- realtime ------------------------------------------------------------------------


def _realtime_agent() -> Any:
    from agents import function_tool
    from agents.realtime import RealtimeAgent

    @function_tool
    async def lookup_flights(destination: str) -> str:
        """Find flights."""
        return f"3 flights to {destination}"

    return RealtimeAgent(name="Travel agent", tools=[lookup_flights])


def _tool_call(minute: int) -> Any:
    from agents.realtime.model_events import RealtimeModelToolCallEvent

    return RealtimeModelToolCallEvent(name="lookup_flights", call_id=f"call_{minute}", arguments='{"destination": "Oslo"}')


async def realtime_application(session: Any, minutes: int) -> int:
    """The application, the same in the simulation and the timed floor: a
    microphone streaming 20 ms chunks, and a listener that counts the
    session's events and interrupts every fifth answer 5 s in. Returns the
    number of events it saw."""
    loop = asyncio.get_running_loop()
    session_events = 0

    async def microphone() -> None:
        for frame in range(minutes * FRAMES_PER_MINUTE):
            await asyncio.sleep(frame * 0.02 - loop.time())
            await session.send_audio(CHUNK)

    async def listen() -> None:
        nonlocal session_events
        answer_started: dict[str, float] = {}
        interrupted: set[str] = set()
        async for event in session:
            session_events += 1
            if event.type == "audio":
                response = event.audio.response_id
                started = answer_started.setdefault(response, loop.time())
                minute = int(response[1:])
                if minute % 5 == 4 and response not in interrupted and loop.time() - started >= INTERRUPT_AFTER:
                    interrupted.add(response)
                    await session.interrupt()

    listener = asyncio.create_task(listen())
    await microphone()
    listener.cancel()
    return session_events


async def realtime_simulated(minutes: int) -> dict[str, Any]:
    import anyio
    from agents.realtime import RealtimeRunner

    from agentsim.realtime import ScriptedRealtimeTransport

    transport = ScriptedRealtimeTransport(ignore_calls=["audio"])
    runner = RealtimeRunner(_realtime_agent(), model=transport, config={"tracing_disabled": True})
    session_events = 0

    async def scenario(ctx: Any) -> None:
        await ctx.expect_call("connect")
        for minute in range(minutes):
            await anyio.sleep_until(minute * 60 + 10)  # the user's utterance is over
            await ctx.emit(_tool_call(minute))
            await ctx.expect_call("tool_output")
            stream = ctx.stream_audio(response_id=f"r{minute}", item_id=f"a{minute}", duration=ANSWER_SECONDS, transcript=TRANSCRIPT)
            if minute % 5 == 4:
                await ctx.expect_call("interrupt")
            await stream
        await ctx.expect_call("close")

    async def exercise() -> None:
        nonlocal session_events
        async with await runner.run() as session:
            session_events = await realtime_application(session, minutes)

    await transport.run_scenario(scenario=scenario, exercise=exercise, timeout=minutes * 60 + 60)
    transport.assert_complete()
    return {"session_events": session_events, "sends": sum(transport.call_counts.values())}


def run_realtime_simulated(minutes: int, strategy: str) -> dict[str, Any]:
    import agentsim

    start = time.perf_counter()
    result = agentsim.simulate(realtime_simulated, minutes, strategy=strategy, wall_timeout=None)
    wall = time.perf_counter() - start
    if not result.ok:
        raise result.exception  # type: ignore[misc]
    assert result.value is not None
    return {"wall": wall, "simulated": result.end_time, "events": result.value["session_events"] + result.value["sends"], **result.value}


def _floor_model_class() -> type:
    """A do-nothing ``RealtimeModel`` the floors drive: it counts sends and
    hands emitted events to the session's listeners."""
    from agents.realtime.model import RealtimeModel

    class FloorModel(RealtimeModel):
        def __init__(self) -> None:
            self.listeners: list[Any] = []
            self.sends = 0
            #: The assistant audio item playing (the floor's server sets it),
            #: which an interrupt cuts, as the real adapter and the scripted
            #: transport answer one: with ``audio_interrupted`` for it.
            self.playing: str | None = None

        async def connect(self, options: Any) -> None:
            self.sends += 1  # (counted as the scripted transport counts its calls)

        def add_listener(self, listener: Any) -> None:
            self.listeners.append(listener)

        def remove_listener(self, listener: Any) -> None:
            if listener in self.listeners:
                self.listeners.remove(listener)

        async def send_event(self, event: Any) -> None:
            self.sends += 1
            kind = type(event).__name__
            if kind == "RealtimeModelSendInterrupt" and self.playing is not None:
                from agents.realtime.model_events import RealtimeModelAudioInterruptedEvent

                item_id, self.playing = self.playing, None
                await self.emit(RealtimeModelAudioInterruptedEvent(item_id=item_id, content_index=0))
            self.sent(kind)

        def sent(self, kind: str) -> None:
            """A send of ``kind`` (its class name) was made; for subclasses."""

        async def close(self) -> None:
            self.sends += 1

        async def emit(self, event: Any) -> None:
            for listener in list(self.listeners):
                await listener.on_event(event)

    return FloorModel


async def realtime_floor(minutes: int, counts: dict[str, int]) -> dict[str, Any]:
    """The SDK alone: a do-nothing RealtimeModel fed the same traffic, no time."""
    from agents.realtime import RealtimeRunner
    from agents.realtime.model_events import RealtimeModelAudioDoneEvent, RealtimeModelAudioEvent, RealtimeModelTranscriptDeltaEvent

    from agentsim.realtime import turn_ended, turn_started

    model = _floor_model_class()()
    runner = RealtimeRunner(_realtime_agent(), model=model, config={"tracing_disabled": True})
    session_events = 0
    chunks_per_answer = int(ANSWER_SECONDS / 0.02)
    words = TRANSCRIPT.split(" ")
    async with await runner.run() as session:

        async def listen() -> None:
            nonlocal session_events
            async for _ in session:
                session_events += 1

        listener = asyncio.create_task(listen())
        for minute in range(minutes):
            for _ in range(500):  # the user's 10 s
                await session.send_audio(CHUNK)
                await asyncio.sleep(0)
            await model.emit(_tool_call(minute))
            await asyncio.sleep(0)
            await model.emit(turn_started(f"r{minute}"))
            model.playing = f"a{minute}"
            sent = chunks_per_answer if minute % 5 != 4 else int(INTERRUPT_AFTER / 0.02)
            for index in range(sent):
                await model.emit(RealtimeModelAudioEvent(data=CHUNK, response_id=f"r{minute}", item_id=f"a{minute}", content_index=0))
                word = index * len(words) // chunks_per_answer
                if word != (index - 1) * len(words) // chunks_per_answer:
                    await model.emit(RealtimeModelTranscriptDeltaEvent(item_id=f"a{minute}", delta=words[word] + " ", response_id=f"r{minute}"))
                await session.send_audio(CHUNK)  # the microphone keeps streaming during the answer
                await asyncio.sleep(0)
            if minute % 5 == 4:
                await session.interrupt()
            else:
                model.playing = None
                await model.emit(RealtimeModelAudioDoneEvent(item_id=f"a{minute}", content_index=0))
            await model.emit(turn_ended(f"r{minute}"))
            for _ in range(FRAMES_PER_MINUTE - 500 - sent):  # the rest of the minute
                await session.send_audio(CHUNK)
                await asyncio.sleep(0)
        await asyncio.sleep(0)
        listener.cancel()
    return {"session_events": session_events, "sends": model.sends}


async def realtime_timed_floor(minutes: int) -> dict[str, Any]:
    """The SDK and the application alone, with their timing: the same
    microphone task (a sleep per 20 ms frame), the same listener (which
    interrupts), and a server task pacing the same events with plain sleeps,
    on the tuned minimal virtual loop (``minimal_loop.py``). No agentsim: no
    trace, no scenario, no recorded sends, no ordering choices."""
    from agents.realtime import RealtimeRunner
    from agents.realtime.model_events import RealtimeModelAudioDoneEvent, RealtimeModelAudioEvent, RealtimeModelTranscriptDeltaEvent

    from agentsim.realtime import turn_ended, turn_started

    class TimedFloorModel(_floor_model_class()):  # type: ignore[misc]
        """The floor model, also telling the paced server what the app sent."""

        def __init__(self) -> None:
            super().__init__()
            self.tool_output = asyncio.Event()
            self.interrupted = False

        def sent(self, kind: str) -> None:
            if kind == "RealtimeModelSendToolOutput":
                self.tool_output.set()
            elif kind == "RealtimeModelSendInterrupt":
                self.interrupted = True

    model = TimedFloorModel()
    runner = RealtimeRunner(_realtime_agent(), model=model, config={"tracing_disabled": True})
    session_events = 0
    chunks_per_answer = int(ANSWER_SECONDS / 0.02)
    words = TRANSCRIPT.split(" ")
    loop = asyncio.get_running_loop()

    async def server() -> None:
        for minute in range(minutes):
            await asyncio.sleep(minute * 60 + 10 - loop.time())
            model.tool_output.clear()
            await model.emit(_tool_call(minute))
            await model.tool_output.wait()
            model.interrupted = False
            await model.emit(turn_started(f"r{minute}"))
            model.playing = f"a{minute}"
            started = loop.time()
            for index in range(chunks_per_answer):
                await asyncio.sleep(started + index * 0.02 - loop.time())
                if model.interrupted:
                    break
                await model.emit(RealtimeModelAudioEvent(data=CHUNK, response_id=f"r{minute}", item_id=f"a{minute}", content_index=0))
                word = index * len(words) // chunks_per_answer
                if word != (index - 1) * len(words) // chunks_per_answer:
                    await model.emit(RealtimeModelTranscriptDeltaEvent(item_id=f"a{minute}", delta=words[word] + " ", response_id=f"r{minute}"))
            if not model.interrupted:
                # The answer ends when its last chunk has played out.
                await asyncio.sleep(started + chunks_per_answer * 0.02 - loop.time())
                model.playing = None
                await model.emit(RealtimeModelAudioDoneEvent(item_id=f"a{minute}", content_index=0))
            await model.emit(turn_ended(f"r{minute}"))

    async with await runner.run() as session:
        serving = asyncio.create_task(server())
        session_events = await realtime_application(session, minutes)
        await serving
    return {"session_events": session_events, "sends": model.sends}


def run_realtime_timed_floor(minutes: int, strategy: str) -> dict[str, Any]:
    from minimal_loop import run_minimal

    start = time.perf_counter()
    value = run_minimal(lambda: realtime_timed_floor(minutes), tuned=True, shuffled=strategy == "random")
    wall = time.perf_counter() - start
    return {"wall": wall, "simulated": None, "events": value["session_events"] + value["sends"], **value}


def run_realtime_floor(minutes: int, strategy: str) -> dict[str, Any]:
    start = time.perf_counter()
    value = asyncio.run(realtime_floor(minutes, {}))
    wall = time.perf_counter() - start
    return {"wall": wall, "simulated": None, "events": value["session_events"] + value["sends"], **value}


# -- voice -----------------------------------------------------------------------------


def _voice_parts(turns: int, timed: bool) -> tuple[Any, Any, Any, Any]:
    from agents.voice.testing import ScriptedSTTModel, ScriptedTranscriptionSession, ScriptedTTSModel, ScriptedVoiceWorkflow, TTSResult

    workflow = ScriptedVoiceWorkflow(turns=[f"Answer number {i}." for i in range(turns)])
    tts_inner = ScriptedTTSModel([TTSResult([CHUNK] * VOICE_ANSWER_CHUNKS) for _ in range(turns)])
    if not timed:
        session = ScriptedTranscriptionSession([f"question {i}" for i in range(turns)])
        return workflow, ScriptedSTTModel(sessions=[session]), tts_inner, None

    from agentsim.voice import SimulatedMicrophone, TimedTranscriptionSession, TimedTTSModel, silence, speech

    script = []
    for i in range(turns):
        script += [speech(VOICE_SPEECH_SECONDS, f"question {i}"), silence(VOICE_TURN_SECONDS - VOICE_SPEECH_SECONDS)]
    mic = SimulatedMicrophone(script)
    session = TimedTranscriptionSession.from_microphone(mic, delay=0.3)
    tts = TimedTTSModel(tts_inner, first_chunk=0.3, chunk_interval=0.02)
    return workflow, ScriptedSTTModel(sessions=[session]), tts, mic


async def _voice_events(workflow: Any, stt: Any, tts: Any, audio_input: Any) -> int:
    """Run the pipeline on ``audio_input`` and count the events it streams."""
    from agents.voice import VoicePipeline

    pipeline = VoicePipeline(workflow=workflow, stt_model=stt, tts_model=tts, config={"tracing_disabled": True, "tts_settings": {"buffer_size": 1}})
    result = await pipeline.run(audio_input)
    events = 0
    async for _ in result.stream():
        events += 1
    return events


async def voice_session(minutes: int, timed: bool) -> dict[str, Any]:
    from agents.voice import StreamedAudioInput

    turns = int(minutes * 60 / VOICE_TURN_SECONDS)
    workflow, stt, tts, mic = _voice_parts(turns, timed)
    audio_input = mic.input if mic is not None else StreamedAudioInput()
    events = 0

    async def consume() -> None:
        nonlocal events
        events = await _voice_events(workflow, stt, tts, audio_input)

    if mic is not None:
        import anyio

        async with anyio.create_task_group() as group:
            group.start_soon(mic.play)
            await consume()
        frames = mic.frames_sent
    else:
        # The floor: the same number of microphone frames, queued and read, no time.
        async def microphone() -> None:
            for _ in range(minutes * FRAMES_PER_MINUTE):
                await audio_input.add_audio(np.zeros(480, dtype=np.int16))
                audio_input.queue.get_nowait()
                await asyncio.sleep(0)

        frames = minutes * FRAMES_PER_MINUTE
        await asyncio.gather(microphone(), consume())
    return {"session_events": events, "sends": frames}


async def voice_timed_floor(minutes: int) -> dict[str, Any]:
    """The SDK and the application alone, with their timing, on the tuned
    minimal virtual loop: a microphone sleeping per 20 ms frame, each
    transcription turn 0.3 s after its speech ends, each answer's first
    chunk 0.3 s after the text and the next ones 20 ms apart, all with plain
    sleeps around the SDK's own scripted doubles. No agentsim."""
    from agents.voice import StreamedAudioInput
    from agents.voice.testing import ScriptedSTTModel, ScriptedTranscriptionSession, ScriptedTTSModel, ScriptedVoiceWorkflow, TTSResult

    turns = int(minutes * 60 / VOICE_TURN_SECONDS)
    loop = asyncio.get_running_loop()

    class PacedTranscription(ScriptedTranscriptionSession):
        async def transcribe_turns(self) -> Any:
            turn = 0
            async for text in super().transcribe_turns():
                await asyncio.sleep(turn * VOICE_TURN_SECONDS + VOICE_SPEECH_SECONDS + 0.3 - loop.time())
                turn += 1
                yield text

    class PacedTTS(ScriptedTTSModel):
        async def run(self, text: str, settings: Any) -> Any:
            await asyncio.sleep(0.3)
            async for chunk in super().run(text, settings):
                yield chunk
                await asyncio.sleep(0.02)

    workflow = ScriptedVoiceWorkflow(turns=[f"Answer number {i}." for i in range(turns)])
    tts = PacedTTS([TTSResult([CHUNK] * VOICE_ANSWER_CHUNKS) for _ in range(turns)])
    stt = ScriptedSTTModel(sessions=[PacedTranscription([f"question {i}" for i in range(turns)])])
    audio_input = StreamedAudioInput()

    async def microphone() -> None:
        frame_audio = np.zeros(480, dtype=np.int16)
        for frame in range(minutes * FRAMES_PER_MINUTE):
            await asyncio.sleep(frame * 0.02 - loop.time())
            await audio_input.add_audio(frame_audio)
            audio_input.queue.get_nowait()  # (as the floor: nobody reads raw frames)

    _, events = await asyncio.gather(microphone(), _voice_events(workflow, stt, tts, audio_input))
    return {"session_events": events, "sends": minutes * FRAMES_PER_MINUTE}


def run_voice_timed_floor(minutes: int, strategy: str) -> dict[str, Any]:
    from minimal_loop import run_minimal

    start = time.perf_counter()
    value = run_minimal(lambda: voice_timed_floor(minutes), tuned=True, shuffled=strategy == "random")
    wall = time.perf_counter() - start
    return {"wall": wall, "simulated": None, "events": value["session_events"] + value["sends"], **value}


def run_voice_simulated(minutes: int, strategy: str) -> dict[str, Any]:
    import agentsim

    start = time.perf_counter()
    result = agentsim.simulate(voice_session, minutes, True, strategy=strategy, wall_timeout=None)
    wall = time.perf_counter() - start
    if not result.ok:
        raise result.exception  # type: ignore[misc]
    assert result.value is not None
    return {"wall": wall, "simulated": result.end_time, "events": result.value["session_events"] + result.value["sends"], **result.value}


def run_voice_floor(minutes: int, strategy: str) -> dict[str, Any]:
    start = time.perf_counter()
    value = asyncio.run(voice_session(minutes, False))
    wall = time.perf_counter() - start
    return {"wall": wall, "simulated": None, "events": value["session_events"] + value["sends"], **value}


CASES = {
    "realtime-sim": run_realtime_simulated,
    "realtime-floor": run_realtime_floor,
    "realtime-timed": run_realtime_timed_floor,
    "voice-sim": run_voice_simulated,
    "voice-floor": run_voice_floor,
    "voice-timed": run_voice_timed_floor,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minutes", type=int, default=60)
    parser.add_argument("--strategy", default="all", choices=["all", "fifo", "random", "pct"])
    parser.add_argument("--repeat", type=int, default=3, help="runs per case; the best wall time counts")
    parser.add_argument("--case", choices=sorted(CASES), help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.case:
        # Import everything first: the wall time measures the session, not imports.
        import agents.realtime  # noqa: F401
        import agents.voice  # noqa: F401

        import agentsim.realtime  # noqa: F401
        import agentsim.voice  # noqa: F401

        outcome = CASES[options.case](options.minutes, options.strategy)
        outcome["peak_rss_mb"] = _peak_rss_mb()
        print(json.dumps(outcome))
        return
    strategies = ["fifo", "random", "pct"] if options.strategy == "all" else [options.strategy]
    runs = [(case, "-") for case in CASES if case.endswith(("-floor", "-timed"))]
    # The timed floors again, waking timers due together in a random order
    # (minimal_loop.ShuffledTunedLoop): what another order costs any loop.
    runs += [(case, "random") for case in CASES if case.endswith("-timed") and "random" in strategies]
    runs += [(case, strategy) for strategy in strategies for case in CASES if case.endswith("-sim")]
    results: dict[tuple[str, str], dict[str, Any]] = {}
    # Rounds interleave the cases, so a burst of load on this shared machine
    # hits all of them; each case keeps its best wall time and largest RSS.
    for _ in range(options.repeat):
        for case, strategy in runs:
            completed = subprocess.run(
                [sys.executable, __file__, "--case", case, "--minutes", str(options.minutes), "--strategy", "fifo" if strategy == "-" else strategy],
                capture_output=True, text=True, check=False,
            )
            if completed.returncode != 0:
                print(f"{case} failed:\n{completed.stderr}")
                sys.exit(1)
            outcome = json.loads(completed.stdout.strip().splitlines()[-1])
            best = results.setdefault((case, strategy), outcome)
            best["peak_rss_mb"] = max(best["peak_rss_mb"], outcome["peak_rss_mb"])
            best["wall"] = min(best["wall"], outcome["wall"])
    print(f"\n{options.minutes} simulated minute(s)")
    print(f"{'case':<26}{'strategy':<9}{'wall s':>9}{'speed-up':>10}{'events':>10}{'events/s':>11}{'peak RSS MB':>13}{'vs floor':>10}{'vs timed':>10}{'vs shuffled':>13}")
    for (case, strategy), outcome in results.items():
        session = case.split("-")[0]
        floor, timed = results[session + "-floor", "-"], results[session + "-timed", "-"]
        speed = f"{outcome['simulated'] / outcome['wall']:.0f}x" if outcome["simulated"] else "-"
        # (random beside the timed floor run in a random order too)
        shuffled = results.get((session + "-timed", "random"))
        beside_shuffled = f"{outcome['wall'] / shuffled['wall']:>12.2f}x" if shuffled and strategy == "random" and case.endswith("-sim") else f"{'':>13}"
        name = case + (" (shuffled)" if strategy == "random" and case.endswith("-timed") else "")
        print(
            f"{name:<26}{'-' if case.endswith('-timed') else strategy:<9}{outcome['wall']:>9.2f}{speed:>10}{outcome['events']:>10,}{outcome['events'] / outcome['wall']:>11,.0f}"
            f"{outcome['peak_rss_mb']:>13.0f}{outcome['wall'] / floor['wall']:>9.2f}x{outcome['wall'] / timed['wall']:>9.2f}x{beside_shuffled}"
        )


if __name__ == "__main__":
    main()
