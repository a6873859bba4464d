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
