"""Escape guards: real sockets, threads, processes, sleeps and blocking waits.

Inside an armed simulation each guarded call raises
:class:`~agentsim.SimulationEscapeError` naming the call site, and the
simulation remembers it even if the code swallows the exception ("nothing
silent"). Outside a simulation, or in another thread, the original runs.
The table of what is guarded is in docs/kernel.md ("Escapes"); each row has
a test in tests/kernel/test_escapes.py.

Blocking waits: a simulation runs in one thread, so a thread-blocking wait
inside it (``threading.Event().wait(1.0)``, ``queue.Queue().get(timeout=1)``,
a held ``threading.Lock`` acquired again, ``select.select``, a ``selectors``
selector or a ``select.poll``/``epoll`` object with a timeout)
can only end by its timeout, in wall time, while virtual time stands still.
They raise instead (kind ``"block"``); one that would not block (the event
is set, the queue has an item, the lock is free) runs as usual.
"""

from __future__ import annotations

import _posixsubprocess
import _socket
import _thread
import asyncio
import multiprocessing.process
import os
import select
import selectors
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, Final

from ..core import current_core
from ..errors import SimulationEscapeError
from .patching import PatchSet, SharedInstaller
from ..frames import first_program_frame, frame_site, is_agentsim, is_loop_machinery, is_program_code, is_stdlib

def _user_site(depth: int = 2) -> str:
    """Where the program made the call: the first frame up the stack that is
    neither the standard library nor agentsim (else the caller's caller)."""
    start = sys._getframe(depth)
    frame = first_program_frame(start)
    return frame_site(frame if frame is not None else start)


ESCAPE_KINDS: Final = ("socket", "thread", "subprocess", "sleep", "block", "signal")


def check_escape_allowlist(entries: object) -> tuple[str, ...]:
    """An ``allow_escapes`` list, checked: kinds, or ``"kind:text"``."""
    from ..errors import SimulationConfigError

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


def escape(kind: str, api: str) -> bool:
    """Report a real effect ``api`` of ``kind`` inside the running simulation:
    raises :class:`SimulationEscapeError` naming the program's line, or
    returns True when the user allowed it (``allow_escapes``: the caller then
    runs it for real), False outside an armed simulation."""
    core = current_core()
    if core is None or not core.guards_armed:
        return False
    error = SimulationEscapeError(kind, api, _user_site(3))
    if _allowed(core, kind, error.api) or (kind == "subprocess" and _importing(sys._getframe(2))):
        core.allowed_escapes.append(error)  # let through, and reported
        return True
    core.record_escape(error)
    raise error


def _importing(frame: Any) -> bool:
    """Whether ``frame`` runs under a module's import: a process started
    there is a library's import-time probe (trio's first import runs
    ``ldconfig -p`` through ``ctypes.util.find_library``), once per process
    and the same for every seed, not the program's work."""
    while frame is not None:
        if frame.f_code is _IMPORT_CODE:
            return True
        frame = frame.f_back
    return False


def _import_code() -> Any:
    import importlib._bootstrap as bootstrap  # every module body runs under this frame

    return getattr(bootstrap, "_call_with_frames_removed").__code__


_IMPORT_CODE: Final = _import_code()


def _guard(kind: str, describe: Callable[..., str], original: Callable[..., Any]) -> Callable[..., Any]:
    def guarded(*args: Any, **kwargs: Any) -> Any:
        core = current_core()
        if core is not None and core.guards_armed:
            escape(kind, describe(*args, **kwargs))
        return original(*args, **kwargs)

    guarded.__wrapped__ = original  # type: ignore[attr-defined]
    return guarded


def _sleep_guard(original: Callable[[float], None]) -> Callable[[float], None]:
    def sleep(seconds: float) -> None:
        # sleep(0) only yields the GIL; it cannot leak wall time into the schedule.
        if seconds > 0:
            escape("sleep", f"time.sleep({seconds!r})")
        original(seconds)

    return sleep


def _condition_wait_guard(original: Callable[..., bool]) -> Callable[..., bool]:
    # Event.wait, Queue.get/put, Semaphore.acquire and Barrier.wait all block
    # here, and only when they must (a set event returns before it).
    def wait(condition: threading.Condition, timeout: float | None = None) -> bool:
        if timeout is None or timeout > 0:
            escape("block", f"a blocking wait (threading.Condition.wait(timeout={timeout!r}), under Event.wait, Queue.get...)")
        return original(condition, timeout)

    return wait


class _CheckedLock:
    """``threading.Lock()`` made inside a simulation: acquiring it while it is
    held would block the only thread until the timeout; that raises instead."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = _real_allocate_lock()

    def acquire(self, blocking: bool = True, timeout: float = -1) -> bool:
        if self._lock.acquire(False):
            return True
        if not blocking or timeout == 0:
            return False
        if escape("block", f"threading.Lock.acquire(timeout={timeout!r}) of a held lock"):
            return self._lock.acquire(blocking, timeout)
        return False  # pragma: no cover - escape() raised

    __enter__ = acquire

    def __exit__(self, *exc_info: object) -> None:
        self._lock.release()

    def release(self) -> None:
        self._lock.release()

    def locked(self) -> bool:
        return self._lock.locked()

    def _at_fork_reinit(self) -> None:
        self._lock._at_fork_reinit()  # type: ignore[attr-defined]


_real_allocate_lock = _thread.allocate_lock


def _lock() -> Any:
    """``threading.Lock()``: a checked lock in a simulation's thread, the real
    one in any other (a pool's queue made between a sweep's runs, a
    library's thread while a run goes on: the checked lock lacks what a
    ``Condition`` built on it asks of a real one)."""
    return _CheckedLock() if current_core() is not None else _real_allocate_lock()


def _programs_own(frame: Any) -> bool:
    """Whether the call made from ``frame`` is the program's (its code, or the
    standard library it called, such as ``selectors``) rather than an event
    loop's own wait or agentsim's: the first frame up that is program code or
    loop machinery decides."""
    while frame is not None:
        filename = frame.f_code.co_filename
        # subprocess waits for a process already guarded (and here allowed) at Popen.
        if is_loop_machinery(filename) or is_agentsim(filename) or filename == subprocess.__file__:
            return False
        if is_program_code(filename):
            return True
        frame = frame.f_back
    return False


def _blocks(timeout: float | None) -> bool:
    return timeout is None or timeout > 0


def _select_guard(original: Callable[..., Any]) -> Callable[..., Any]:
    def select_(rlist: Any, wlist: Any, xlist: Any, timeout: float | None = None) -> Any:
        # The program's own select with a timeout, not an event loop's selector.
        if _blocks(timeout) and _programs_own(sys._getframe(1)):
            escape("block", f"select.select(..., timeout={timeout!r})")
        return original(rlist, wlist, xlist, timeout)

    select_.__wrapped__ = original  # type: ignore[attr-defined]
    return select_


def _selector_select_guard(cls: type, original: Callable[..., Any]) -> Callable[..., Any]:
    def select_(self: Any, timeout: float | None = None) -> Any:
        if _blocks(timeout) and _programs_own(sys._getframe(1)):
            escape("block", f"selectors.{cls.__name__}.select(timeout={timeout!r})")
        return original(self, timeout)

    select_.__wrapped__ = original  # type: ignore[attr-defined]
    return select_


class _GuardedPoll:
    """A ``select.poll()`` / ``select.epoll()`` object the program made inside
    a simulation: waiting on it with a timeout blocks the only thread in wall
    time while virtual time stands still, so it raises (kind ``"block"``)."""

    def __init__(self, real: Any, api: str) -> None:
        self._real = real
        self._api = api

    def poll(self, timeout: float | None = None, *args: Any) -> Any:
        # poll.poll takes milliseconds, epoll.poll seconds; -1 or None: forever.
        if timeout is None or timeout < 0 or timeout > 0:
            escape("block", f"{self._api}.poll(timeout={timeout!r})")
        return self._real.poll(timeout, *args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc_info: object) -> None:
        close = getattr(self._real, "close", None)  # (epoll has one; poll has none)
        if close is not None:
            close()


def _poll_factory_guard(api: str, original: Callable[..., Any]) -> Callable[..., Any]:
    def make(*args: Any, **kwargs: Any) -> Any:
        real = original(*args, **kwargs)
        # An event loop's own poller (trio makes an epoll per run) stays real.
        core = current_core()
        if core is not None and core.guards_armed and _programs_own(sys._getframe(1)):
            return _GuardedPoll(real, api)
        return real

    make.__wrapped__ = original  # type: ignore[attr-defined]
    return make


def _process_start_guard(original: Callable[..., Any]) -> Callable[..., Any]:
    def start(process: Any) -> Any:
        core = current_core()
        if core is not None and core.guards_armed:
            method = process._start_method or multiprocessing.get_start_method(allow_none=True) or "default"
            escape("subprocess", f"multiprocessing.Process.start() of {process.name!r} (start method {method!r})")
        return original(process)

    start.__wrapped__ = original  # type: ignore[attr-defined]
    return start


def _fork_exec_guard(original: Callable[..., Any]) -> Callable[..., Any]:
    # Under every process start: multiprocessing's spawn and forkserver start
    # methods call it directly. subprocess.Popen, guarded itself, calls it too.
    def fork_exec(*args: Any, **kwargs: Any) -> Any:
        core = current_core()
        if core is not None and core.guards_armed and sys._getframe(1).f_code.co_filename != subprocess.__file__:
            escape("subprocess", f"_posixsubprocess.fork_exec({args[0]!r})")
        return original(*args, **kwargs)

    fork_exec.__wrapped__ = original  # type: ignore[attr-defined]
    return fork_exec


def _alarm_guard(api: str, original: Callable[..., Any], touches_alarm: Callable[..., bool]) -> Callable[..., Any]:
    """``signal.alarm``, ``setitimer(ITIMER_REAL)``, a ``SIGALRM`` handler or
    mask set by the program: the wall-clock alarm that interrupts a program
    spinning without ``await`` is the simulation's, so the program may not
    switch it off (a real-time alarm of its own would fire in wall time)."""

    def guarded(*args: Any, **kwargs: Any) -> Any:
        core = current_core()
        if core is not None and core.guards_armed and touches_alarm(*args, **kwargs) and _programs_own(sys._getframe(1)):
            escape("signal", f"{api}({', '.join(map(repr, args))})")
        return original(*args, **kwargs)

    guarded.__wrapped__ = original  # type: ignore[attr-defined]
    return guarded


def _masks_alarm(how: int, mask: Any) -> bool:
    return how in (signal.SIG_BLOCK, signal.SIG_SETMASK) and signal.SIGALRM in set(mask)


def _alarm_patches(patches: PatchSet) -> None:
    if not hasattr(signal, "SIGALRM"):
        return  # Windows: no alarm to protect
    patches.add(signal, "alarm", _alarm_guard("signal.alarm", signal.alarm, lambda *a, **k: True))
    patches.add(signal, "signal", _alarm_guard("signal.signal", signal.signal, lambda signum, *a, **k: signum == signal.SIGALRM))
    patches.add(signal, "setitimer", _alarm_guard("signal.setitimer", signal.setitimer, lambda which, *a, **k: which == signal.ITIMER_REAL))
    patches.add(signal, "pthread_sigmask", _alarm_guard("signal.pthread_sigmask", signal.pthread_sigmask, _masks_alarm))
    # Waiting for a signal blocks the only thread until one arrives, in wall time.
    for name in ("pause", "sigwait", "sigwaitinfo", "sigtimedwait"):
        if hasattr(signal, name):
            patches.add(signal, name, _guard("block", lambda *a, _n=name, **k: f"signal.{_n}{a!r}", getattr(signal, name)))


class _GuardedRawSocket(_socket.socket):
    """``_socket.socket`` (the C socket under :class:`socket.socket`) made
    directly. ``socket.socket.__init__`` calls ``_socket.socket.__init__``
    through the module too: those pass (guarded as ``socket.socket()``)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if type(self) is _GuardedRawSocket:
            escape("socket", "_socket.socket()")
        _real_raw_socket.__init__(self, *args, **kwargs)


_real_raw_socket = _socket.socket


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
    patches.add(_socket, "socket", _GuardedRawSocket)
    patches.add(_thread, "start_new_thread", _guard("thread", lambda *a, **k: "_thread.start_new_thread()", _thread.start_new_thread))
    patches.add(subprocess.Popen, "__init__", _guard("subprocess", lambda p, args, *a, **k: f"subprocess.Popen({args!r})", subprocess.Popen.__init__))
    for name in _PROCESS_CALLS:
        if hasattr(os, name):
            patches.add(os, name, _guard("subprocess", lambda *a, _n=name, **k: f"os.{_n}{a[:1]!r}", getattr(os, name)))
    # A real event loop made inside a simulation (asyncio.new_event_loop(), or
    # get_event_loop() with none running, as asyncio code on the trio backend
    # does): its self-pipe is a socket pair. Refused before it is half made.
    policy = asyncio.events.BaseDefaultEventLoopPolicy
    patches.add(policy, "new_event_loop", _guard("socket", lambda *a, **k: "asyncio.new_event_loop() (a real event loop: its self-pipe is a socket pair)", policy.new_event_loop))
    patches.add(time, "sleep", _sleep_guard(time.sleep))
    patches.add(threading.Condition, "wait", _condition_wait_guard(threading.Condition.wait))
    patches.add(threading, "Lock", _lock)
    patches.add(select, "select", _select_guard(select.select))
    for factory in ("poll", "epoll", "devpoll", "kqueue"):
        if hasattr(select, factory):
            patches.add(select, factory, _poll_factory_guard(f"select.{factory}()", getattr(select, factory)))
    for name in ("SelectSelector", "PollSelector", "EpollSelector", "DevpollSelector", "KqueueSelector"):
        cls = getattr(selectors, name, None)
        if cls is not None:
            patches.add(cls, "select", _selector_select_guard(cls, cls.select))
    patches.add(multiprocessing.process.BaseProcess, "start", _process_start_guard(multiprocessing.process.BaseProcess.start))
    patches.add(_posixsubprocess, "fork_exec", _fork_exec_guard(_posixsubprocess.fork_exec))
    _alarm_patches(patches)
    return patches


#: os functions that start or become another process.
_PROCESS_CALLS: Final = (
    "system", "popen", "fork", "forkpty", "posix_spawn", "posix_spawnp",
    "spawnv", "spawnve", "spawnvp", "spawnvpe", "spawnl", "spawnle", "spawnlp", "spawnlpe",
    "execv", "execve", "execvp", "execvpe", "execl", "execle", "execlp", "execlpe",
)


escape_guards = SharedInstaller(_build)
