"""Escape guards: real sockets, threads, processes and blocking sleeps.

Inside an armed simulation each guarded call raises
:class:`~agentsim.SimulationEscapeError` naming the call site, and the
simulation remembers it even if the code swallows the exception ("nothing
silent"). Outside a simulation, or in another thread, the original runs.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from .core import current_core
from .errors import SimulationEscapeError
from .patching import PatchSet, SharedInstaller
from .frames import first_program_frame, frame_site

def _user_site() -> str:
    """Where the program made the call: the first frame up the stack that is
    neither the standard library nor agentsim (else the caller's caller)."""
    start = sys._getframe(2)
    frame = first_program_frame(start)
    return frame_site(frame if frame is not None else start)


ESCAPE_KINDS: Final = ("socket", "thread", "subprocess", "sleep")


def check_escape_allowlist(entries: object) -> tuple[str, ...]:
    """An ``allow_escapes`` list, checked: kinds, or ``"kind:text"``."""
    from .errors import SimulationConfigError

    if isinstance(entries, str) or not isinstance(entries, (list, tuple)):
        raise SimulationConfigError("allow_escapes", entries, f"a list of escape kinds ({', '.join(ESCAPE_KINDS)}) or 'kind:text' entries")
    for entry in entries:
        if not isinstance(entry, str) or entry.partition(":")[0] not in ESCAPE_KINDS:
            raise SimulationConfigError("allow_escapes", entry, f"an escape kind ({', '.join(ESCAPE_KINDS)}), or 'kind:text' to allow calls whose description contains text")
    return tuple(entries)


def _allowed(core: Any, kind: str, api: str) -> bool:
    for entry in core.allow_escapes:
        entry_kind, _, text = entry.partition(":")
        if entry_kind == kind and text in api:
            return True
    return False


def _guard(kind: str, describe: Callable[..., str], original: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        core = current_core()
        if core is not None and core.guards_armed:
            error = SimulationEscapeError(kind, describe(*args, **kwargs), _user_site())
            if _allowed(core, kind, error.api):
                core.allowed_escapes.append(error)  # let through, and reported
                return original(*args, **kwargs)
            core.record_escape(error)
            raise error
        return original(*args, **kwargs)

    guarded.__wrapped__ = original  # type: ignore[attr-defined]
    return guarded


def _sleep_guard(original: Callable[[float], None]) -> Callable[[float], None]:
    def sleep(seconds: float) -> None:
        core = current_core()
        # sleep(0) only yields the GIL; it cannot leak wall time into the schedule.
        if core is not None and core.guards_armed and seconds > 0:
            error = SimulationEscapeError("sleep", f"time.sleep({seconds!r})", _user_site())
            if _allowed(core, "sleep", error.api):
                core.allowed_escapes.append(error)
                original(seconds)
                return
            core.record_escape(error)
            raise error
        original(seconds)

    return sleep


def _warm_benign_probes() -> None:
    """Answer, before any guard is armed, the probes libraries make once per
    process: ``platform.uname()`` runs ``uname -p`` on Linux (the openai client
    asks for ``platform.platform()`` to fill its headers). Cached by
    ``platform`` itself, they never start a process inside a simulation."""
    import platform

    platform.uname()
    platform.platform()


def _build() -> PatchSet:
    _warm_benign_probes()
    patches = PatchSet()
    patches.add(socket.socket, "__init__", _guard("socket", lambda *a, **k: "socket.socket()", socket.socket.__init__))
    for name in ("getaddrinfo", "gethostbyname", "gethostbyname_ex", "create_connection"):
        patches.add(socket, name, _guard("socket", lambda *a, _n=name, **k: f"socket.{_n}{a[:2]!r}", getattr(socket, name)))
    patches.add(
        threading.Thread,
        "start",
        _guard("thread", lambda thread, *a, **k: f"threading.Thread.start() of {thread.name!r}", threading.Thread.start),
    )
    patches.add(subprocess.Popen, "__init__", _guard("subprocess", lambda p, args, *a, **k: f"subprocess.Popen({args!r})", subprocess.Popen.__init__))
    patches.add(time, "sleep", _sleep_guard(time.sleep))
    return patches


escape_guards = SharedInstaller(_build)
