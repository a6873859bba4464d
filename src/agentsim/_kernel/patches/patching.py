"""Scoped monkeypatching, shared by every simulation running in the process.

Patches are installed when the first simulation starts and removed when the
last one ends (simulations may run in several threads at once). Each patched
function dispatches on the *calling thread*: inside a simulation it does the
simulated thing, anywhere else it calls the original. So a patch can never
change what code outside a simulation sees, even while one runs.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

_MISSING = object()


class PatchSet:
    """Attribute replacements applied and undone together, in reverse order."""

    def __init__(self) -> None:
        self._patches: list[tuple[Any, str, Any]] = []
        self._saved: list[tuple[Any, str, Any]] = []

    def add(self, target: Any, name: str, value: Any) -> None:
        self._patches.append((target, name, value))

    def apply(self) -> None:
        for target, name, value in self._patches:
            self._saved.append((target, name, target.__dict__.get(name, _MISSING) if isinstance(target, type) else getattr(target, name, _MISSING)))
            setattr(target, name, value)

    def restore(self) -> None:
        while self._saved:
            target, name, original = self._saved.pop()
            if original is _MISSING:
                delattr(target, name)
            else:
                setattr(target, name, original)


class SharedInstaller:
    """Install a patch set for as long as at least one simulation runs.

    The set is built once and reused while ``key()`` returns the same value
    (building costs more than a trivial simulation); ``key`` says what the
    build depends on (which modules are imported, say). ``rebuild_always``:
    build anew each time (the build caches what it scans itself).
    """

    def __init__(self, build: Callable[[], PatchSet], *, key: Callable[[], object] = lambda: None, rebuild_always: bool = False) -> None:
        self._build = build
        self._key = key
        self._rebuild_always = rebuild_always
        self._built: tuple[object, PatchSet] | None = None
        self._lock = threading.Lock()
        self._users = 0
        self._active: PatchSet | None = None

    def acquire(self) -> None:
        with self._lock:
            if self._users == 0:
                key = self._key()
                if self._rebuild_always or self._built is None or self._built[0] != key:
                    self._built = (key, self._build())
                patches = self._built[1]
                patches.apply()
                self._active = patches
            self._users += 1

    def release(self) -> None:
        with self._lock:
            self._users -= 1
            if self._users == 0 and self._active is not None:
                self._active.restore()
                self._active = None
