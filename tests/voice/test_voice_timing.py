"""Voice on the clock: a live-cadence microphone, timed transcripts, paced TTS."""

from __future__ import annotations

from typing import Any

import anyio
import numpy as np
import pytest

from tests.conftest import requires_sdk

requires_sdk("0.21", "agents.voice.testing")
from agents.voice import VoicePipeline
from agents.voice.testing import ScriptedSTTModel, ScriptedTTSModel, ScriptedVoiceWorkflow, TTSResult

import agentsim
import agentsim.timing
from agentsim.voice import (
    SimulatedMicrophone,
    TimedTranscriptionSession,
    TimedTTSModel,
    TimedTurn,
    silence,
    speech,
)

SCHEDULES = [("fifo", 0), ("random", 1), ("random", 2), ("random", 3)]
CHUNK = np.zeros(480, dtype=np.int16).tobytes()  # 20 ms at 24 kHz


async def run_pipeline(mic: SimulatedMicrophone, session: TimedTranscriptionSession, tts: TimedTTSModel, replies: list[str]) -> dict[str, Any]:
    stt = ScriptedSTTModel(sessions=[session])
    workflow = ScriptedVoiceWorkflow(turns=replies)
    pipeline = VoicePipeline(
        workflow=workflow,
        stt_model=stt,
        tts_model=tts,
        config={"tracing_disabled": True, "tts_settings": {"buffer_size": 1}},  # one event per chunk
    )
    lifecycle: list[tuple[float, str]] = []
    audio: list[float] = []
    error: BaseException | None = None
    result = await pipeline.run(mic.input)
    async with anyio.create_task_group() as group:
        group.start_soon(mic.play)
        try:
            async for event in result.stream():
                if event.type == "voice_stream_event_lifecycle":
                    lifecycle.append((agentsim.now(), event.event))
                elif event.type == "voice_stream_event_audio":
                    audio.append(agentsim.now())
        except Exception as exc:  # noqa: BLE001 - the test inspects it
            error = exc
            group.cancel_scope.cancel()
    return {"lifecycle": lifecycle, "audio": audio, "error": error, "stt": stt, "workflow": workflow}


def test_microphone_feeds_frames_at_real_time_cadence() -> None:
    async def main() -> tuple[list[float], int, list[Any]]:
        mic = SimulatedMicrophone([silence(0.1), speech(0.2, "hi"), silence(0.04)], frame_ms=20)
        arrivals: list[float] = []

        async def listen() -> None:
            while (frame := await mic.input.queue.get()) is not None:
                assert frame.dtype == np.int16 and len(frame) == 480
                arrivals.append(agentsim.now())

        async with anyio.create_task_group() as group:
            group.start_soon(listen)
            group.start_soon(mic.play)
        return arrivals, mic.frames_sent, mic.spoken

    arrivals, frames, spoken = agentsim.run(main)
    assert frames == 17
    assert arrivals == pytest.approx([0.02 * i for i in range(17)])
    assert [(s.start, s.end, s.text) for s in spoken] == [(pytest.approx(0.1), pytest.approx(0.3), "hi")]


def test_user_speaks_while_the_previous_answer_is_still_playing() -> None:
    # Turn 1 ("book a flight") ends at 1.0 s and is transcribed at 1.3 s; its
    # 2-second answer plays from 1.55 s to 3.53 s. The user's second utterance
    # ends at 2.3 s, in the middle of that answer. What the SDK does:
    # VoicePipeline takes the next transcript only after the previous turn's
    # audio is complete, so turn 2 starts at 3.53 s, not 2.6 s - no barge-in.
    async def main() -> dict[str, Any]:
        mic = SimulatedMicrophone([speech(1.0, "book a flight"), silence(0.5), speech(0.8, "to Oslo please"), silence(6.0)])
        session = TimedTranscriptionSession.from_microphone(mic, delay=0.3)
        tts = TimedTTSModel(ScriptedTTSModel([TTSResult([CHUNK] * 100), TTSResult([CHUNK] * 50)]), first_chunk=0.25, chunk_interval=0.02)
        outcome = await run_pipeline(mic, session, tts, ["Where to?", "Booking Oslo."])
        outcome["released"] = session.released_at
        outcome["frames"] = (session.frames_heard, mic.frames_sent)
        outcome["spoken"] = [(s.start, s.end) for s in mic.spoken]
        outcome["tts"] = [(call.text, call.started_at, call.chunk_times[0], call.chunk_times[-1]) for call in tts.timed_calls]
        outcome["stt"].assert_complete()
        outcome["workflow"].assert_complete()
        tts.assert_complete()
        return outcome

    for strategy, seed in SCHEDULES:
        outcome = agentsim.run(main, strategy=strategy, seed=seed)
        assert outcome["error"] is None
        assert outcome["spoken"] == [(0.0, 1.0), (1.5, pytest.approx(2.3))]
        heard, sent = outcome["frames"]
        assert heard == sent == 415  # 8.3 s of 20 ms frames, all consumed by the transcriber
        first, second = outcome["tts"]
        assert first == ("Where to?", 1.3, 1.55, pytest.approx(3.53))
        assert outcome["spoken"][1][1] < first[3]  # the user spoke over the answer
        assert outcome["released"] == [1.3, pytest.approx(3.53)]  # ...and waited for it to end
        assert second[1] == pytest.approx(3.53)
        events = [event for _, event in outcome["lifecycle"]]
        assert events == ["turn_started", "turn_ended", "turn_started", "turn_ended", "session_ended"]
        assert outcome["lifecycle"][-1][0] == pytest.approx(8.3)  # the session ends with the audio
        assert len(outcome["audio"]) == 150
        assert outcome["audio"][:3] == pytest.approx([1.55, 1.57, 1.59])


def test_tts_failure_mid_stream() -> None:
    async def main() -> dict[str, Any]:
        mic = SimulatedMicrophone([speech(1.0, "read me the news"), silence(5.0)])
        session = TimedTranscriptionSession.from_microphone(mic, delay=0.3)
        tts = TimedTTSModel(ScriptedTTSModel([TTSResult([CHUNK] * 100)]), first_chunk=0.2, chunk_interval=0.02)
        tts.fail_next_call(ConnectionResetError("tts provider dropped the stream"), after_chunks=5)
        outcome = await run_pipeline(mic, session, tts, ["Here is the news."])
        outcome["tts_call"] = tts.timed_calls[0]
        return outcome

    for strategy, seed in SCHEDULES:
        outcome = agentsim.run(main, strategy=strategy, seed=seed)
        # What the SDK does: the five chunks that made it out are delivered (with
        # buffer_size=1; a larger buffer holds them back and they are lost), then
        # the session ends at the failure and the stream raises the provider's error.
        assert isinstance(outcome["error"], ConnectionResetError)
        assert outcome["audio"] == pytest.approx([1.5, 1.52, 1.54, 1.56, 1.58])
        assert outcome["lifecycle"] == [(1.3, "turn_started"), (pytest.approx(1.58), "session_ended")]
        call = outcome["tts_call"]
        assert (call.outcome, len(call.chunk_times)) == ("failed", 5)
        assert call.chunk_times == pytest.approx([1.5, 1.52, 1.54, 1.56, 1.58])


def test_a_session_with_zero_turns_ends_with_its_audio() -> None:
    async def main() -> dict[str, Any]:
        mic = SimulatedMicrophone([silence(2.0)])
        session = TimedTranscriptionSession.from_microphone(mic)
        tts = TimedTTSModel(ScriptedTTSModel([]))
        outcome = await run_pipeline(mic, session, tts, [])
        outcome["tts_calls"] = len(tts.timed_calls)
        outcome["stt"].assert_complete()
        return outcome

    for strategy, seed in SCHEDULES:
        outcome = agentsim.run(main, strategy=strategy, seed=seed)
        assert outcome["error"] is None
        assert outcome["lifecycle"] == [(2.0, "session_ended")]
        assert outcome["tts_calls"] == 0 and outcome["audio"] == []


def test_turns_released_at_absolute_times() -> None:
    async def main() -> list[float]:
        session = TimedTranscriptionSession([(0.5, "one"), TimedTurn("two", at=1.75)])
        released = []
        async for text in session.transcribe_turns():
            released.append((agentsim.now(), text))
        session.assert_complete()
        return released

    assert agentsim.run(main) == [(0.5, "one"), (1.75, "two")]


def test_a_turn_needs_exactly_one_release_condition() -> None:
    with pytest.raises(agentsim.SimulationConfigError) as info:
        TimedTranscriptionSession([TimedTurn("never")])
    assert info.value.parameter == "turns[0]"


def test_transcription_latency_is_a_window_after_the_speech_ends() -> None:
    async def main() -> tuple[list[float], None]:
        mic = SimulatedMicrophone([speech(1.0, "book a table"), silence(2.0)])
        session = TimedTranscriptionSession.from_microphone(mic, delay=agentsim.timing.uniform(0.2, 0.4))
        async with anyio.create_task_group() as group:
            group.start_soon(mic.play)
            async for _ in session.transcribe_turns():
                pass
        return session.released_at, None

    assert agentsim.run(main)[0] == [pytest.approx(1.3)]  # nominal: speech end + 0.3 s
    for strategy, seeds in (("jitter", range(5)), ("random", range(5))):
        for seed in seeds:
            [released] = agentsim.run(main, seed=seed, strategy=strategy)[0]
            assert 1.2 - 1e-9 <= released <= 1.4 + 1e-9
    assert len({agentsim.run(main, seed=seed, strategy="jitter")[0][0] for seed in range(5)}) == 5
    with pytest.raises(agentsim.SimulationConfigError) as info:
        TimedTranscriptionSession([TimedTurn("x", after=None, at=None, delay=-1)], ends=None)
    assert info.value.parameter in ("turns[0]", "turns[0].delay")


def test_a_static_transcription_takes_its_latency_and_scales_with_the_clip() -> None:
    # Before: ScriptedSTTModel.transcribe answered at t=0 whatever the clip.
    from agents.voice import AudioInput

    from agentsim.voice import TimedSTTModel

    async def main() -> tuple[float | None, float, list[str], list[float]]:
        stt = TimedSTTModel(ScriptedSTTModel(["book a table"]), latency=0.4, per_audio_second=0.1)
        workflow = ScriptedVoiceWorkflow(turns=["Booked."])
        tts = TimedTTSModel(ScriptedTTSModel([TTSResult(chunks=[CHUNK])]), first_chunk=0.2)
        pipeline = VoicePipeline(workflow=workflow, stt_model=stt, tts_model=tts, config={"tracing_disabled": True})
        clip = AudioInput(buffer=np.zeros(24_000 * 3, dtype=np.int16))  # three seconds
        result = await pipeline.run(clip)
        first_audio: float | None = None
        async for event in result.stream():
            if event.type == "voice_stream_event_audio" and first_audio is None:
                first_audio = agentsim.now()
        stt.assert_complete()  # falls through to ScriptedSTTModel
        call = stt.timed_calls[0]
        return first_audio, call.audio_seconds, list(workflow.transcriptions), [call.started_at, call.finished_at or -1.0]

    first_audio, seconds, heard, span = agentsim.run(main)
    assert seconds == 3.0 and heard == ["book a table"]
    assert span == pytest.approx([0.0, 0.7])  # 0.4 s + 0.1 s per second of audio
    assert first_audio == pytest.approx(0.9)  # then the TTS's first chunk 0.2 s later


def test_cancelling_a_static_transcription_during_its_latency_consumes_nothing() -> None:
    from agents.voice import AudioInput, STTModelSettings

    from agentsim.voice import TimedSTTModel

    async def main() -> tuple[str, int]:
        scripted = ScriptedSTTModel(["hello"])
        stt = TimedSTTModel(scripted, latency=2.0)
        clip = AudioInput(buffer=np.zeros(2400, dtype=np.int16))
        with anyio.move_on_after(1.0):
            await stt.transcribe(clip, STTModelSettings(), False, False)
        return stt.timed_calls[0].outcome, len(scripted.calls)

    assert agentsim.run(main) == ("cancelled", 0)
