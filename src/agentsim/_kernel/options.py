"""``RunOptions``: how a simulation runs, in one place.

``run``, ``simulate`` and ``replay`` take one as ``options=``, and its
fields as keywords: sugar mapped onto the object by :meth:`RunOptions.resolve`,
the one place where keywords become options (``explore`` does the same
with :class:`ExploreOptions`). The pytest marker, the command line and
``[tool.agentsim]`` profiles fill the same object and pass it whole, so a
default or a check lives here once.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, TypedDict, TypeVar

from .errors import SimulationConfigError
from .scheduling import STRATEGY_EXPECTED, SchedulingPolicy, is_strategy
from .patches.escapes import check_escape_allowlist
from .validation import limit, whole

BackendName = Literal["asyncio", "trio"]
BACKENDS: Final = ("asyncio", "trio")
#: Real seconds a simulation may take before ``WallTimeoutError``.
DEFAULT_WALL_TIMEOUT: Final = 60.0
#: The longest wall_timeout: about 115 days (the real alarm that enforces it has a platform limit).
MAX_WALL_TIMEOUT: Final = 1e7

O = TypeVar("O", bound="RunOptions")


class RunSettings(TypedDict, total=False):
    """The fields of :class:`RunOptions` as keyword arguments (for typing ``**settings``)."""

    seed: int
    backend: BackendName
    strategy: str | SchedulingPolicy
    max_virtual_time: float | None
    wall_timeout: float | None
    allow_escapes: tuple[str, ...]


@dataclass(frozen=True)
class RunOptions:
    """One simulation's settings, checked when made (``SimulationConfigError``
    names the bad one).

    ``seed`` selects the schedule (and seeds ids and randomness); ``backend``
    is ``"asyncio"`` or ``"trio"``; ``strategy`` a strategy name or a
    :class:`SchedulingPolicy`; ``max_virtual_time`` and ``wall_timeout`` are
    limits in seconds (None or ``inf``: no limit)::

        options = RunOptions(seed=7, strategy="random", max_virtual_time=600)
        agentsim.run(main, options=options)
    """

    seed: int = 0
    backend: BackendName = "asyncio"
    strategy: str | SchedulingPolicy = "fifo"
    max_virtual_time: float | None = None
    wall_timeout: float | None = DEFAULT_WALL_TIMEOUT
    #: Escapes to let through for real instead of raising, each reported in
    #: ``result.allowed_escapes``: a kind (``"subprocess"``, ``"socket"``,
    #: ``"thread"``, ``"sleep"``) or ``"kind:text"`` for calls whose
    #: description contains ``text`` (``"subprocess:git"``).
    allow_escapes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        whole("seed", self.seed, minimum=-(2**63), expected="an int")
        object.__setattr__(self, "allow_escapes", check_escape_allowlist(self.allow_escapes))
        if self.backend not in BACKENDS:
            raise SimulationConfigError("backend", self.backend, "'asyncio' or 'trio'")
        self._check_strategy()
        object.__setattr__(self, "max_virtual_time", limit("max_virtual_time", self.max_virtual_time))
        wall_timeout = limit("wall_timeout", self.wall_timeout)
        if wall_timeout is not None and wall_timeout > MAX_WALL_TIMEOUT:
            # The alarm is a real timer: past this the platform cannot arm it.
            raise SimulationConfigError("wall_timeout", self.wall_timeout, f"at most {MAX_WALL_TIMEOUT:g} real seconds, or None for no limit")
        object.__setattr__(self, "wall_timeout", wall_timeout)

    def _check_strategy(self) -> None:
        if not is_strategy(self.strategy):
            raise SimulationConfigError("strategy", self.strategy, STRATEGY_EXPECTED)

    def replace(self: O, **changes: Any) -> O:
        """A copy with ``changes`` (checked like the original)."""
        return dataclasses.replace(self, **changes)

    def as_kwargs(self) -> dict[str, Any]:
        """The settings as keyword arguments of ``run``/``simulate``."""
        return {field.name: getattr(self, field.name) for field in dataclasses.fields(RunOptions)}

    @classmethod
    def names(cls) -> tuple[str, ...]:
        names: tuple[str, ...] | None = cls.__dict__.get("_names")
        if names is None:  # cached per class: every call's keywords are checked against it
            names = tuple(field.name for field in dataclasses.fields(cls))
            setattr(cls, "_names", names)
        return names

    @classmethod
    def resolve(cls: type[O], options: object, settings: Mapping[str, Any], *, where: str) -> O:
        """The options a call runs with: ``options`` (an instance of this
        class, or None for the defaults) with the keyword ``settings`` over
        it, every one checked. A keyword that is no field is a
        :class:`SimulationConfigError` naming it and ``where``."""
        if options is not None and not isinstance(options, cls):
            raise SimulationConfigError("options", options, f"a {cls.__name__} (or None, with the settings as keywords)")
        if not settings and options is not None:
            return options
        return cls.from_mapping(settings, where=where, base=options)

    @classmethod
    def from_mapping(cls: type[O], settings: Mapping[str, Any], *, where: str, base: O | None = None) -> O:
        """Options from a mapping (a marker's keywords, a profile's table) over
        ``base``; an unknown name is a :class:`SimulationConfigError` naming it
        and ``where`` it was given."""
        known = cls.names()
        for name in settings:
            if name not in known:
                raise SimulationConfigError(
                    f"{where}: {name}", settings[name], f"one of the settings {', '.join(known)}"
                )
        if base is None:
            return cls(**dict(settings))  # one construction, one check
        return dataclasses.replace(base, **dict(settings))
