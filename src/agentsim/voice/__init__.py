"""Timed voice doubles: a simulated microphone, timed transcription (streamed
turns and static clips), paced TTS.

They compose with ``agents.voice.testing`` (``ScriptedSTTModel``,
``ScriptedTTSModel``) and run the real ``VoicePipeline`` on virtual time.
"""

#: This folder's layer (tests/api/test_layers.py): imports point only down.
__layer__ = "doubles"

from .microphone import Milestone as Milestone
from .microphone import Segment as Segment
from .microphone import SimulatedMicrophone as SimulatedMicrophone
from .microphone import SpokenSegment as SpokenSegment
from .microphone import silence as silence
from .microphone import speech as speech
from .stt import TimedSTTCall as TimedSTTCall
from .stt import TimedSTTModel as TimedSTTModel
from .transcription import TimedTranscriptionSession as TimedTranscriptionSession
from .transcription import TimedTurn as TimedTurn
from .tts import TimedTTSCall as TimedTTSCall
from .tts import TimedTTSModel as TimedTTSModel

__all__ = [
    "Milestone",
    "Segment",
    "SimulatedMicrophone",
    "SpokenSegment",
    "silence",
    "speech",
    "TimedSTTCall",
    "TimedSTTModel",
    "TimedTranscriptionSession",
    "TimedTurn",
    "TimedTTSCall",
    "TimedTTSModel",
]

