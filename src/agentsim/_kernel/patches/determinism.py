"""Make wall-clock reads, random ids and global randomness deterministic.

While a simulation runs in a thread, that thread sees:

* ``time.time()``/``time_ns()`` = :data:`~agentsim._kernel.core.VIRTUAL_EPOCH` +
  virtual seconds; ``time.monotonic()``/``perf_counter()`` (and ``_ns``) =
  virtual seconds. Code that measures durations therefore measures virtual
  durations (the SDK's realtime audio tracker computes truncation offsets
  this way).
* ``uuid.uuid4()`` drawn from a generator seeded by the simulation's seed.
* the global :mod:`random` generator seeded from the seed (the SDK's retry
  back-off jitter uses it), its previous state restored afterwards.
* in the modules of packages an adapter registered (``extensions.py``; the
  openai-agents SDK's), names bound to ``uuid4``, the clock functions or the
  ``datetime`` class (``from time import monotonic``, ``from datetime import
  datetime``) rebound to the seeded and virtual versions; ``datetime.now()``
  is C code and cannot be patched at the class.
"""

from __future__ import annotations

import copyreg
import datetime as _dt
import random
import sys
import time
import uuid
from collections.abc import Callable
from typing import Any

from ..core import VIRTUAL_EPOCH, SimulationCore, current_core
from ..extensions import rebound_packages
from ..frames import is_agentsim, is_stdlib
from .patching import PatchSet, SharedInstaller

_real_datetime = _dt.datetime
_real_uuid4 = uuid.uuid4


def _dispatch(real: Callable[[], Any], virtual: Callable[[SimulationCore], Any]) -> Callable[[], Any]:
    def clock() -> Any:
        core = current_core()
        return real() if core is None else virtual(core)

    clock.__name__ = getattr(real, "__name__", "clock")
    clock.__wrapped__ = real  # type: ignore[attr-defined]
    return clock


def _dispatch_now(real: Callable[..., Any]) -> Callable[..., Any]:
    """A :mod:`time` conversion whose argument defaults to "now"
    (``localtime()``, ``gmtime()``, ``ctime()``): virtual now inside a
    simulation, the given instant passed through."""

    def convert(secs: float | None = None) -> Any:
        core = current_core()
        if secs is None and core is not None:
            secs = VIRTUAL_EPOCH + core.now
        return real(secs)

    convert.__name__ = getattr(real, "__name__", "convert")
    convert.__wrapped__ = real  # type: ignore[attr-defined]
    return convert


def _virtual_strftime(format: str, t: Any = None) -> str:
    # strftime(format) formats localtime(): the virtual one inside a simulation.
    return _real_strftime(format, time.localtime() if t is None else t)


_real_strftime = time.strftime


def _virtual_uuid4() -> uuid.UUID:
    core = current_core()
    if core is None:
        return _real_uuid4()
    return uuid.UUID(int=core.uuid_rng.getrandbits(128), version=4)


class _DatetimeMeta(type):
    # Code that imported the class also uses it in isinstance checks against
    # real datetimes made elsewhere; keep those true.
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, _real_datetime)

    def __subclasscheck__(cls, sub: type) -> bool:
        return issubclass(sub, _real_datetime)


class VirtualDatetime(_real_datetime, metaclass=_DatetimeMeta):
    """``datetime.datetime`` whose ``now()``/``utcnow()``/``today()`` read virtual time.

    Every instance it makes is a real ``datetime`` (repr, pickling and type
    checks as usual), only the "now" constructors are virtual.
    """

    def __new__(cls, *args: Any, **kwargs: Any) -> _dt.datetime:  # type: ignore[misc]
        return _real_datetime(*args, **kwargs)


    @classmethod
    def now(cls, tz: _dt.tzinfo | None = None) -> _dt.datetime:  # type: ignore[override]
        core = current_core()
        if core is None:
            return _real_datetime.now(tz)
        return _real_datetime.fromtimestamp(VIRTUAL_EPOCH + core.now, tz)

    @classmethod
    def utcnow(cls) -> _dt.datetime:  # type: ignore[override]
        return cls.now(_dt.timezone.utc).replace(tzinfo=None)

    @classmethod
    def today(cls) -> _dt.datetime:  # type: ignore[override]
        return cls.now()


# Pickled by the name `datetime.datetime` (what the module holds during a
# simulation, the real class after it), so a datetime pickled inside one
# unpickles anywhere as a real datetime.
VirtualDatetime.__module__ = "datetime"
VirtualDatetime.__qualname__ = VirtualDatetime.__name__ = "datetime"


def _reduce_datetime(value: _dt.datetime) -> Any:
    reduced = _real_datetime.__reduce__(value)
    return (_dt.datetime, *reduced[1:])


def _virtual_clocks() -> dict[str, Callable[..., Any]]:
    """One dispatcher per clock function of :mod:`time`, keyed by name."""
    virtual_s: Callable[[SimulationCore], float] = lambda core: core.now
    virtual_ns: Callable[[SimulationCore], int] = lambda core: core.clock.ticks
    clocks: dict[str, Callable[..., Any]] = {
        "time": _dispatch(time.time, lambda core: VIRTUAL_EPOCH + core.now),
        "time_ns": _dispatch(time.time_ns, lambda core: VIRTUAL_EPOCH * 1_000_000_000 + core.clock.ticks),
    }
    for name in ("monotonic", "perf_counter"):
        clocks[name] = _dispatch(getattr(time, name), virtual_s)
        clocks[f"{name}_ns"] = _dispatch(getattr(time, f"{name}_ns"), virtual_ns)
    for name in ("localtime", "gmtime", "ctime"):
        clocks[name] = _dispatch_now(getattr(time, name))
    clocks["strftime"] = _virtual_strftime
    return clocks


_real_clocks = {name: getattr(time, name) for name in ("time", "time_ns", "monotonic", "monotonic_ns", "perf_counter", "perf_counter_ns", "localtime", "gmtime", "ctime", "strftime")}
_clocks = _virtual_clocks()


def _build_clock_patches() -> PatchSet:
    patches = PatchSet()
    for name, clock in _clocks.items():
        patches.add(time, name, clock)
    patches.add(uuid, "uuid4", _virtual_uuid4)
    # `datetime.datetime.now()` through the module: the class the module
    # holds is the virtual one while a simulation runs (its instances are
    # real datetimes; pickling names the module's class).
    patches.add(_dt, "datetime", VirtualDatetime)
    copyreg.pickle(_real_datetime, _reduce_datetime)  # same result as datetime's own, resolved by name
    return patches


clock_patches = SharedInstaller(_build_clock_patches)


class _ModuleNames:
    """Where the registered packages' modules and the project's own modules
    bound ``uuid4``, a clock or ``datetime`` by name; rescanned when new modules have been imported (or
    packages registered) since the last scan."""

    def __init__(self) -> None:
        self._scanned: tuple[int, tuple[str, ...]] = (-1, ())
        self._sites: list[tuple[Any, str, Any]] = []

    def sites(self) -> list[tuple[Any, str, Any]]:
        packages = rebound_packages()
        if (len(sys.modules), packages) != self._scanned:
            self._scanned = (len(sys.modules), packages)
            replacements: dict[int, Any] = {id(_real_uuid4): _virtual_uuid4, id(_real_datetime): VirtualDatetime}
            replacements.update({id(_real_clocks[name]): clock for name, clock in _clocks.items()})
            sites = []
            for module_name, module in list(sys.modules.items()):
                if module is None:
                    continue
                registered = any(module_name == package or module_name.startswith(package + ".") for package in packages)
                if not registered and not _is_project_module(module):
                    continue
                for name, value in list(vars(module).items()):
                    replacement = replacements.get(id(value))
                    if replacement is not None:
                        sites.append((module, name, replacement))
            self._sites = sites
        return self._sites


def _is_project_module(module: Any) -> bool:
    """A module of the program under test itself (the project's own files,
    ``__main__``): not the standard library, an installed package or agentsim."""
    filename = getattr(module, "__file__", None)
    return (
        isinstance(filename, str)
        and not is_stdlib(filename)
        and not is_agentsim(filename)
        and "site-packages" not in filename
        and "dist-packages" not in filename
    )


_module_names = _ModuleNames()


def _build_module_name_patches() -> PatchSet:
    patches = PatchSet()
    for module, name, replacement in _module_names.sites():
        patches.add(module, name, replacement)
    return patches


module_name_patches = SharedInstaller(_build_module_name_patches, rebuild_always=True)


class SeededGlobalRandom:
    """Seed :mod:`random`'s global generator for one simulation, then restore it."""

    def __init__(self, core: SimulationCore) -> None:
        self._core = core
        self._saved: Any = None

    def __enter__(self) -> None:
        self._saved = random.getstate()
        random.seed(self._core.derived_seed("global-random"))

    def __exit__(self, *exc: object) -> None:
        random.setstate(self._saved)
