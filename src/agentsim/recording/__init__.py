"""Recorded sessions: from an incident to a regression test.

Record a realtime session (``RecordingRealtimeModel``) or a model's calls
(``RecordingModel``) to a JSON Lines file — in production, in real time, or
inside a simulation — then load it (``load``), show it (``agentsim session
show FILE``), replay it as a deterministic test
(``SimulatedRealtimeServer.from_recording``, ``TimedModel.from_recording``)
and explore the timings around it (each recorded gap a window of a
``Tolerance``). See docs/recordings.md.
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "doubles"

from typing import TYPE_CHECKING

from ._format import FORMAT as FORMAT
from ._format import VERSION as VERSION
from ._format import RecordedEvent as RecordedEvent
from ._format import Recording as Recording
from ._format import load as load
from ._gaps import Tolerance as Tolerance
from .errors import RecordingDivergenceError as RecordingDivergenceError
from .errors import RecordingFormatError as RecordingFormatError

if TYPE_CHECKING:  # (loaded on first use below: they import the SDK)
    from ._model import RecordedModelError as RecordedModelError
    from ._model import RecordingModel as RecordingModel
    from ._realtime import RecordingRealtimeModel as RecordingRealtimeModel


def __getattr__(name: str) -> object:
    # The wrappers import the SDK: only when asked for (loading or showing a
    # recording needs no SDK).
    if name == "RecordingRealtimeModel":
        from ._realtime import RecordingRealtimeModel

        return RecordingRealtimeModel
    if name in ("RecordingModel", "RecordedModelError"):
        from . import _model

        return getattr(_model, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FORMAT",
    "VERSION",
    "RecordedEvent",
    "Recording",
    "load",
    "Tolerance",
    "RecordingDivergenceError",
    "RecordingFormatError",
    "RecordingRealtimeModel",
    "RecordingModel",
    "RecordedModelError",
]
