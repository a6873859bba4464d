"""Audio for doubles: pcm16 generation and chunking (``pcm``) and the
simulated player that measures audio actually heard (``SimulatedPlayer``)."""

from .player import SimulatedPlayer as SimulatedPlayer

__all__ = [
    "SimulatedPlayer",
]

