"""``RecordingModel``: an agents ``Model``'s calls recorded to a file, and
the steps that replay them (``TimedModel.from_recording``)."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from typing import Any

from ..contrib.openai_agents._wrapping import Wrapping
from ..contrib.openai_agents.sdk import Model, Usage
from .._kernel.errors import SimulationConfigError
from ._format import Recording, RecordingWriter, jsonable, names_of
from ._gaps import Tolerance, sleep_gap
from ._header import header
from .errors import RecordingFormatError


def _now() -> float:
    return asyncio.get_running_loop().time()


class RecordingModel(Wrapping, Model):
    """Wrap an agents ``Model`` so each call is written to ``path`` (JSON Lines):
    a ``request`` (client: instructions, input, tool names, settings,
    ``streamed``), then a ``response`` (server: output items, usage, response
    id) or, for a stream, every stream event as it arrived and a
    ``stream.end``; a failure is an ``error``. Each line has its time offset,
    so latencies are in the file. Replay it with
    ``TimedModel.from_recording(path)``::

        model = RecordingModel(OpenAIResponsesModel(...), "run.jsonl")
        result = await Runner.run(agent, "hi", run_config=RunConfig(model=model))
    """

    def __init__(self, model: Any, path: str | os.PathLike[str]) -> None:
        if not (callable(getattr(model, "get_response", None)) and callable(getattr(model, "stream_response", None))):
            raise SimulationConfigError("model", model, "a model (agents.models.interface.Model: get_response and stream_response)")
        if not isinstance(path, (str, os.PathLike)):
            raise SimulationConfigError("path", path, "the file to write the recording to (a str or os.PathLike)")
        self.model = model
        self.path = os.fspath(path)
        self._writer = RecordingWriter(path)
        self._calls = 0

    def _request(self, streamed: bool, args: tuple[Any, ...], kwargs: dict[str, Any]) -> int:
        if not self._writer.started:
            self._writer.start(header("model", "calls", self.model, keep_audio=False, config={}), _now())
        index, self._calls = self._calls, self._calls + 1
        names = ("system_instructions", "input", "model_settings", "tools", "output_schema", "handoffs", "tracing")
        given = dict(zip(names, args)) | kwargs
        payload = {
            "call": index,
            "streamed": streamed,
            "system_instructions": given.get("system_instructions"),
            "input": jsonable(given.get("input"), keep_audio=False),
            "model_settings": jsonable(given.get("model_settings"), keep_audio=False),
            "tools": names_of(given.get("tools")),
            "handoffs": names_of(given.get("handoffs")),
            "previous_response_id": given.get("previous_response_id"),
            "conversation_id": given.get("conversation_id"),
        }
        self._writer.event(_now(), "client", "request", payload)
        return index

    def _error(self, index: int, error: BaseException) -> None:
        self._writer.event(_now(), "server", "error", {"call": index, "error": type(error).__name__, "message": str(error)})

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        index = self._request(False, args, kwargs)
        try:
            response = await self.model.get_response(*args, **kwargs)
        except Exception as error:
            self._error(index, error)
            raise
        payload = {
            "call": index,
            "output": jsonable(list(getattr(response, "output", [])), keep_audio=False),
            "usage": jsonable(getattr(response, "usage", None), keep_audio=False),
            "response_id": getattr(response, "response_id", None),
        }
        self._writer.event(_now(), "server", "response", payload)
        return response

    async def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        index = self._request(True, args, kwargs)
        try:
            async for event in self.model.stream_response(*args, **kwargs):
                self._writer.event(_now(), "server", str(getattr(event, "type", "event")), {"call": index, "event": jsonable(event, keep_audio=False)})
                yield event
        except Exception as error:
            self._error(index, error)
            raise
        self._writer.event(_now(), "server", "stream.end", {"call": index})

    def close_recording(self) -> None:
        """Close the file (it is flushed line by line; this releases it)."""
        self._writer.close()

    async def close(self) -> None:
        close = getattr(self.model, "close", None)
        try:
            if close is not None:
                await close()
        finally:
            self._writer.close()


class RecordedModelError(Exception):
    """A model call's failure, as recorded: ``error`` (the type's name) and the message."""

    def __init__(self, error: str, message: str) -> None:
        self.error = error
        super().__init__(f"{error}: {message}")


def replay_steps(recording: Recording, tolerance: Tolerance) -> list[Any]:
    """The SDK ``ModelStep`` of each recorded call, in order: each waits its
    recorded latency (a window of ``tolerance``) and answers as recorded; a
    stream waits each recorded gap between its events."""
    from pydantic import TypeAdapter

    from ..contrib.openai_agents.sdk import testing

    if recording.layer != "calls":
        raise RecordingFormatError(recording.path, 1, f"a recording of layer {recording.layer!r}, where TimedModel.from_recording replays a model's calls (RecordingModel)")
    from openai.types.responses import ResponseOutputItem, ResponseStreamEvent

    items: TypeAdapter[Any] = TypeAdapter(ResponseOutputItem)
    stream_events: TypeAdapter[Any] = TypeAdapter(ResponseStreamEvent)
    sdk = testing("TimedModel.from_recording")
    calls: dict[int, dict[str, Any]] = {}
    for event in recording.events:
        call = event.payload.get("call")
        if not isinstance(call, int):
            raise RecordingFormatError(recording.path, event.line, "a model call's event without its call number")
        entry = calls.setdefault(call, {"events": []})
        if event.type == "request":
            entry["at"] = event.t
            entry["streamed"] = bool(event.payload.get("streamed"))
        else:
            entry["events"].append(event)
    steps = []
    for call in sorted(calls):
        entry = calls[call]
        if "at" not in entry:
            raise RecordingFormatError(recording.path, entry["events"][0].line, f"model call {call} has no request line")
        steps.append(_step(sdk, entry, items, stream_events, tolerance, recording))
    return steps


def _step(sdk: Any, entry: dict[str, Any], items: Any, stream_events: Any, tolerance: Tolerance, recording: Recording) -> Any:
    start: float = entry["at"]
    events = entry["events"]
    failure = next((event for event in events if event.type == "error"), None)
    try:
        if not entry["streamed"]:
            answer = next((event for event in events if event.type == "response"), None)
            if answer is None and failure is None:
                raise RecordingFormatError(recording.path, 0, "a model call without its response")
            return sdk.ModelStep.respond(_responder(sdk, answer, failure, start, items, tolerance))
        received = [event for event in events if event.type not in ("stream.end", "error")]
        parsed = [(event.t - start, stream_events.validate_python(event.payload["event"])) for event in received]
    except (ValueError, KeyError, TypeError) as error:
        raise RecordingFormatError(recording.path, events[0].line if events else 0, f"a model call that cannot be replayed ({error})") from None
    end = failure.t - start if failure is not None else None

    async def stream(call: Any) -> AsyncIterator[Any]:
        anchor = asyncio.get_running_loop().time()
        previous = 0.0
        for gap, event in parsed:
            await sleep_gap(anchor, gap, tolerance) if gap > previous else None
            previous = gap
            yield event
        if failure is not None and end is not None:
            await sleep_gap(anchor, end, tolerance)
            raise RecordedModelError(failure.payload.get("error", "Error"), failure.payload.get("message", ""))

    return sdk.ModelStep.stream(stream)


def _responder(sdk: Any, answer: Any, failure: Any, start: float, items: Any, tolerance: Tolerance) -> Any:
    if answer is not None:
        output = [items.validate_python(item) for item in answer.payload.get("output", [])]
        usage_fields = answer.payload.get("usage") or {}
        usage = Usage(**{key: usage_fields[key] for key in ("requests", "input_tokens", "output_tokens", "total_tokens") if key in usage_fields})
        step = sdk.ModelStep(output=output, usage=usage, response_id=answer.payload.get("response_id"))
    ended = (answer or failure).t - start

    async def respond(call: Any) -> Any:
        await sleep_gap(asyncio.get_running_loop().time(), ended, tolerance)
        if answer is None:
            raise RecordedModelError(failure.payload.get("error", "Error"), failure.payload.get("message", ""))
        return step

    return respond
