"""pcm16 helpers: the tiled tone is the same signal as the computed one."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from agentsim.audio import pcm


@settings(max_examples=30, deadline=None)
@given(seconds=st.floats(0.01, 20.0), frequency=st.sampled_from([220.0, 440.0, 261.63]))
def test_tone_matches_the_sine_it_describes(seconds: float, frequency: float) -> None:
    samples = pcm.tone(seconds, frequency=frequency)
    count = round(seconds * pcm.DEFAULT_SAMPLE_RATE)
    expected = (np.sin(2 * np.pi * frequency * np.arange(count) / pcm.DEFAULT_SAMPLE_RATE) * 0.2 * np.iinfo(np.int16).max).astype(np.int16)
    assert len(samples) == count
    assert np.abs(samples.astype(np.int32) - expected.astype(np.int32)).max() <= 1  # float rounding only
    assert not samples.flags.writeable


def test_chunks_cover_the_tone_exactly() -> None:
    chunked = pcm.tone_chunks(1.01, 960)
    assert [len(chunk) for chunk in chunked] == [1920] * 25 + [480]  # 24,240 samples: 25 x 960 + 240
    assert b"".join(chunked) == pcm.tone(1.01).astype("<i2").tobytes()


@settings(max_examples=60, deadline=None)
@given(
    seconds=st.floats(0.01, 30.0),
    samples_per_chunk=st.sampled_from([480, 960, 240, 1000, 7]),
    sample_rate=st.sampled_from([24_000, 16_000]),
)
def test_chunks_are_the_tone_split(seconds: float, samples_per_chunk: int, sample_rate: int) -> None:
    # Shared one-second chunks or not, the same bytes as splitting the whole tone.
    expected = tuple(pcm.chunks(pcm.tone(seconds, sample_rate=sample_rate), samples_per_chunk))
    assert pcm.tone_chunks(seconds, samples_per_chunk, sample_rate) == expected


def test_long_tones_share_one_seconds_chunks() -> None:
    # Replies of many lengths (a long call's) must not each keep their audio:
    # past the first second, chunks are the same objects as the second's.
    per_second = pcm.DEFAULT_SAMPLE_RATE // 480
    objects: set[int] = set()
    for tenths in range(30, 150):
        chunked = pcm.tone_chunks(tenths / 10 + 0.0123, 480)
        full = chunked[:-1]  # (the last is short: its own bytes)
        assert all(chunk is full[index % per_second] for index, chunk in enumerate(full))
        objects.update(map(id, full))
    assert len(objects) == per_second


def test_long_tones_are_views_of_one_tiling() -> None:
    # Speech of many lengths (a voice script's) shares one array of samples.
    tones = [pcm.tone(seconds / 10, frequency=330.0) for seconds in range(15, 200, 7)]
    assert all(samples.base is not None for samples in tones)
    longest = max(tones, key=len)
    # (The tiling doubles as longer tones are asked for: what all of them hold
    # is bounded by the longest, not summed over every length.)
    bases = {id(samples.base): samples.base.size for samples in tones}
    assert sum(bases.values()) <= 4 * len(longest)
    assert all(np.array_equal(samples, longest[: len(samples)]) for samples in tones)
    assert not any(samples.flags.writeable for samples in tones)
