"""pcm16 audio for scripted responses: deterministic samples, split into chunks."""

from __future__ import annotations

import functools
from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

#: The Realtime API's pcm16 rate.
DEFAULT_SAMPLE_RATE = 24_000


@functools.lru_cache(maxsize=64)
def tone(seconds: float, *, sample_rate: int = DEFAULT_SAMPLE_RATE, frequency: float = 220.0, amplitude: float = 0.2) -> npt.NDArray[np.int16]:
    """A sine tone as int16 samples: recognisable, deterministic "speech".

    Cached (explorers replay the same utterance hundreds of times) and
    therefore read-only.
    """
    count = round(seconds * sample_rate)
    if float(frequency).is_integer() and count > sample_rate:
        # A whole number of periods per second: tile one second (same samples,
        # ~10x cheaper), once for every length: a view of the longest tiling
        # so far, so tones of many lengths share their samples.
        return _tiled_seconds(count, sample_rate, frequency, amplitude)[:count]
    phase = 2 * np.pi * frequency * np.arange(count) / sample_rate
    samples = (np.sin(phase) * amplitude * np.iinfo(np.int16).max).astype(np.int16)
    samples.flags.writeable = False
    return samples


#: (sample_rate, frequency, amplitude) -> whole seconds of that tone, tiled;
#: replaced by a longer tiling when a longer tone is asked for.
_TILINGS: dict[tuple[int, float, float], npt.NDArray[np.int16]] = {}


def _tiled_seconds(count: int, sample_rate: int, frequency: float, amplitude: float) -> npt.NDArray[np.int16]:
    """At least ``count`` samples of the tone, tiled from its first second (read-only)."""
    key = (sample_rate, frequency, amplitude)
    tiling = _TILINGS.get(key)
    if tiling is None or len(tiling) < count:
        second = tone(1.0, sample_rate=sample_rate, frequency=frequency, amplitude=amplitude)
        needed = -(-count // sample_rate)
        # Twice as long (a few tilings cover tones of every length), but never
        # a minute more than asked: views of the old tiling keep it alive.
        seconds = max(needed, min(2 * len(tiling) // sample_rate, needed + 60)) if tiling is not None else needed
        tiling = _TILINGS[key] = np.tile(second, seconds)
        tiling.flags.writeable = False
    return tiling


@functools.lru_cache(maxsize=64)
def tone_chunks(seconds: float, samples_per_chunk: int, sample_rate: int = DEFAULT_SAMPLE_RATE) -> tuple[bytes, ...]:
    """:func:`tone` split into pcm16 chunks (cached likewise).

    A tone longer than a second repeats every second (:func:`tone` tiles
    one); when a second holds whole chunks, so do its chunks, and those of
    one second are shared by every duration: a cached reply costs a
    reference per chunk, not its audio (a long call's replies, each of its
    own length, otherwise kept ~50 MB of pcm alive in this cache)."""
    count = round(seconds * sample_rate)
    if count > sample_rate and sample_rate % samples_per_chunk == 0:
        cycle = _one_second_chunks(samples_per_chunk, sample_rate)
        whole, rest = divmod(count, samples_per_chunk)
        shared = (cycle * -(-whole // len(cycle)))[:whole]
        # (The last, short chunk: the start of the chunk at its place in the second.)
        return shared + (cycle[whole % len(cycle)][: 2 * rest],) if rest else shared
    return tuple(chunks(tone(seconds, sample_rate=sample_rate), samples_per_chunk))


@functools.lru_cache(maxsize=8)
def _one_second_chunks(samples_per_chunk: int, sample_rate: int) -> tuple[bytes, ...]:
    return tuple(chunks(tone(1.0, sample_rate=sample_rate), samples_per_chunk))


def as_pcm16(samples: npt.ArrayLike, *, name: str = "samples") -> npt.NDArray[np.int16]:
    """int16 samples from int16 data or floats in [-1, 1] (``name``: the
    argument, in the typed error for anything else)."""
    from .._kernel.errors import SimulationConfigError

    try:
        array = np.asarray(samples)
    except (TypeError, ValueError):
        array = np.asarray(None)
    if array.ndim != 1 or not (np.issubdtype(array.dtype, np.integer) or np.issubdtype(array.dtype, np.floating)):
        raise SimulationConfigError(name, samples, "mono audio: a 1-D array of int16 samples, or floats in [-1, 1]")
    if np.issubdtype(array.dtype, np.floating) and not np.isfinite(array).all():
        raise SimulationConfigError(name, samples, "finite float samples in [-1, 1] (no NaN or infinity)")
    if array.dtype == np.int16:
        return array
    if np.issubdtype(array.dtype, np.floating):
        scaled: npt.NDArray[np.int16] = (np.clip(array, -1.0, 1.0) * np.iinfo(np.int16).max).astype(np.int16)
        return scaled
    converted: npt.NDArray[np.int16] = array.astype(np.int16)
    return converted


def chunks(samples: npt.NDArray[np.int16], samples_per_chunk: int) -> Iterator[bytes]:
    """Little-endian pcm16 bytes, ``samples_per_chunk`` samples each (the last may be short)."""
    little = samples.astype("<i2", copy=False)
    for start in range(0, len(little), samples_per_chunk):
        yield little[start : start + samples_per_chunk].tobytes()


def duration_ms(byte_count: int, sample_rate: int = DEFAULT_SAMPLE_RATE) -> float:
    """Milliseconds of pcm16 mono audio in ``byte_count`` bytes."""
    return byte_count / 2 / sample_rate * 1000
