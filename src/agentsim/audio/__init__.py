"""Audio for doubles: pcm16 generation and chunking (``pcm``) and the
simulated player that measures audio actually heard (``SimulatedPlayer``)."""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "doubles"

from .player import SimulatedPlayer as SimulatedPlayer

__all__ = [
    "SimulatedPlayer",
]

