"""The JS guide's ``call.request.signal`` for Python: a model call's abort
signal, and the call a responder is running in (``current_call()``)."""

from __future__ import annotations

from contextvars import ContextVar
from typing import TYPE_CHECKING

import anyio

from .errors import NotInModelCallError, ScriptedModelRequestAbortedError

if TYPE_CHECKING:
    from ._timed import TimedModelCall


class AbortSignal:
    """Whether a model call was aborted (``TimedModel.abort``), for custom
    code that runs inside it (a responder, a stream factory) and may wait
    for a long time: ``aborted``, ``await wait()`` (returns at the abort
    instant) and ``throw_if_aborted()``::

        async def respond(call):
            signal = agentsim.models.current_call().signal
            with anyio.move_on_after(7.0):
                await signal.wait()          # ends at the abort, not after 7 s
            signal.throw_if_aborted()
            return [assistant_message("took its time")]
    """

    def __init__(self, call_index: int) -> None:
        self._call_index = call_index
        self._event: anyio.Event | None = None  # made in the call's own event loop
        self._aborted = False

    @property
    def aborted(self) -> bool:
        return self._aborted

    async def wait(self) -> None:
        """Return when the call is aborted (at once if it already was)."""
        if self._aborted:
            return
        if self._event is None:
            self._event = anyio.Event()
        await self._event.wait()

    def throw_if_aborted(self) -> None:
        """Raise ``ScriptedModelRequestAbortedError`` if the call was aborted."""
        if self._aborted:
            raise ScriptedModelRequestAbortedError(self._call_index, "responding")

    def _abort(self) -> None:
        self._aborted = True
        if self._event is not None:
            self._event.set()


_CURRENT: ContextVar[TimedModelCall | None] = ContextVar("agentsim_current_model_call", default=None)


def current_call() -> TimedModelCall:
    """The :class:`~agentsim.models.TimedModelCall` the calling code runs in:
    inside a responder or stream of a model wrapped in ``TimedModel``. Its
    ``signal`` is the call's :class:`AbortSignal`; ``index`` and ``streamed``
    say which call it is. Elsewhere: ``NotInModelCallError``."""
    call = _CURRENT.get()
    if call is None:
        raise NotInModelCallError()
    return call
