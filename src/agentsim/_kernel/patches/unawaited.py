"""A forgotten ``await`` on agentsim's own coroutines fails the run.

``transport.emit(event)`` without ``await`` makes a coroutine that never
runs: the event is never delivered and, at most, Python prints a
``RuntimeWarning`` that a test suite hides. Inside a simulation the warning's
hook (``warnings._warn_unawaited_coroutine``, which CPython calls when such a
coroutine is collected: right after the statement that dropped it) ends the
run with :class:`~agentsim.UnawaitedCallError` naming the call and the
program's line. Coroutines of the program or of other libraries keep
Python's own warning.
"""

from __future__ import annotations

import sys
import warnings
from collections.abc import Callable
from typing import Any

from ..core import current_core
from ..errors import UnawaitedCallError
from ..frames import first_program_frame, frame_site, is_agentsim, is_loop_machinery
from .patching import PatchSet, SharedInstaller


def _dropped_by_the_program(coro: Any) -> str | None:
    """The program's line that dropped agentsim's coroutine ``coro``, if it did."""
    code = getattr(coro, "cr_code", None)
    if code is None or not is_agentsim(code.co_filename):
        return None
    frame = first_program_frame(sys._getframe(2))
    if frame is None or is_loop_machinery(frame.f_code.co_filename):
        return None
    return frame_site(frame)


def _hook(original: Callable[[Any], None]) -> Callable[[Any], None]:
    def warn_unawaited_coroutine(coro: Any) -> None:
        core = current_core()
        site = _dropped_by_the_program(coro) if core is not None and core.guards_armed else None
        if site is not None:
            core.abort(UnawaitedCallError(coro.__qualname__, site))  # type: ignore[union-attr]
        original(coro)

    return warn_unawaited_coroutine


def _build() -> PatchSet:
    patches = PatchSet()
    patches.add(warnings, "_warn_unawaited_coroutine", _hook(warnings._warn_unawaited_coroutine))  # type: ignore[attr-defined]
    return patches


unawaited_hook = SharedInstaller(_build)
