"""A schedule that can be written down and replayed: seed, strategy, deviations, jitter."""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field

from .._kernel.errors import SimulationConfigError
from .._kernel.scheduling import STRATEGY_EXPECTED, SchedulingPolicy, check_deviations, is_strategy, make_policy, replay_policy
from .._kernel.validation import number, whole


@dataclass(frozen=True)
class Schedule:
    """One schedule: the ``seed`` (which also seeds ids, global randomness and
    delay draws) and either a ``strategy`` name, or — for a shrunk schedule —
    the ``deviations`` from FIFO order and the ``jitter`` scale.

    ``encode()`` gives a short string (``"17:random"``, ``"17:pct/3/40"`` or
    ``"17:fifo+3=1,9=2:j0.5"``) that :func:`agentsim.replay`,
    ``--agentsim-schedule`` and ``agentsim replay --schedule`` accept. A
    replay schedule of a run that drew its delays instead of windowing them
    (the ``jitter`` strategy) reads ``"17:jitter+...:j0.5"``; of a run that
    timed its delays too (``timed``), ``"17:timed+..."``: its choice numbers
    count the delay choices, so the base word says how to number them.
    """

    seed: int
    strategy: str = "random"
    deviations: dict[int, int] | None = field(default=None, compare=False)
    jitter: float = 1.0
    _key: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    #: False: delays are drawn points (``jitter``), not windowed timers.
    windows: bool = True
    #: True: each windowed timer is also a ``"delay"`` choice (a replay of a
    #: ``timed`` run: ``"17:timed+..."``).
    delays: bool = False

    def __post_init__(self) -> None:
        whole("seed", self.seed, minimum=-(2**63), expected="a whole number (the run's seed)")
        if not isinstance(self.strategy, str) or not (self.strategy == "replay" or is_strategy(self.strategy)):
            raise SimulationConfigError("strategy", self.strategy, STRATEGY_EXPECTED.replace(" or a SchedulingPolicy instance", ""))
        if self.deviations is not None:
            object.__setattr__(self, "deviations", check_deviations(self.deviations))
        number("jitter", self.jitter, expected="a delay jitter scale >= 0 (1: as drawn, 0: nominal)")
        if not isinstance(self.windows, bool):
            raise SimulationConfigError("windows", self.windows, "True (delays as windowed timers) or False (drawn points)")
        if not isinstance(self.delays, bool) or (self.delays and not self.windows):
            raise SimulationConfigError("delays", self.delays, "True (windowed timers also land where a choice says) or False; never with drawn delays")
        object.__setattr__(self, "_key", tuple(sorted((self.deviations or {}).items())))

    def __hash__(self) -> int:
        return hash(self._identity())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and self._identity() == other._identity()

    def _identity(self) -> tuple[object, ...]:
        return (self.seed, self.strategy, self._key, self.jitter, self.windows, self.delays)

    @classmethod
    def nominal(cls, seed: int) -> Schedule:
        """Stock order with nominal timing, taken through the policy path so
        that its choice points are counted (what ``fifo`` runs)."""
        return cls(seed, "fifo", {}, 0.0)

    @property
    def is_replay(self) -> bool:
        return self.deviations is not None

    def policy(self) -> SchedulingPolicy:
        if self.deviations is not None:
            # (The nominal run is named fifo: fifo, counting its choice points.)
            return replay_policy(
                self.deviations, jitter_scale=self.jitter, windows=self.windows, times_delays=self.delays, name="fifo" if self.strategy == "fifo" else None
            )
        # PCT's parameters are part of its schedule: "pct/DEPTH/STEPS".
        return make_policy(self.strategy, self.seed)

    def encode(self) -> str:
        if self.deviations is None:
            return f"{self.seed}:{self.strategy}"
        moves = ",".join(f"{index}={option}" for index, option in sorted(self.deviations.items()))
        jitter = "" if self.jitter == 1.0 else f":j{self.jitter:g}"
        base = "timed" if self.delays else "fifo" if self.windows else "jitter"
        return f"{self.seed}:{base}+{moves}{jitter}"

    @classmethod
    def decode(cls, text: str) -> Schedule:
        """The schedule a report printed: ``"SEED:random"``, ``"SEED:fifo"``,
        ``"SEED:jitter"``, ``"SEED:pct/DEPTH/STEPS"`` or a replay schedule
        ``"SEED:fifo+CHOICE=OPTION,...[:jSCALE]"`` (``jitter+`` for drawn
        delays). Anything else, a bare ``pct`` (its parameters are part of
        the schedule), a choice given twice, a negative choice or option or a
        jitter that is not a finite number >= 0 included, is a
        :class:`~agentsim.SimulationConfigError`."""
        if not isinstance(text, str):
            raise SimulationConfigError("schedule", text, "a schedule string such as '17:random' or '17:fifo+3=1:j0'")
        match = _SCHEDULE.fullmatch(text.strip())
        if match is None:
            raise SimulationConfigError("schedule", text, _SCHEDULE_EXPECTED)
        seed, strategy, base, moves, jitter = int(match["seed"]), match["strategy"], match["base"], match["moves"], match["jitter"]
        if strategy is not None:
            if strategy == "pct" or not is_strategy(strategy):
                raise SimulationConfigError("schedule", text, _SCHEDULE_EXPECTED)
            return cls(seed, strategy)
        pairs = [move.split("=") for move in moves.split(",")] if moves else []
        deviations = {int(choice): int(option) for choice, option in pairs}
        if len(deviations) != len(pairs):
            raise SimulationConfigError("schedule", text, "each choice at most once (a report prints each deviation once)")
        scale = float(jitter) if jitter is not None else 1.0
        if not math.isfinite(scale):
            raise SimulationConfigError("schedule", text, "a jitter scale ':jSCALE' that is a finite number >= 0")
        return cls(seed, "replay", deviations, scale, windows=base != "jitter", delays=base == "timed")


_SCHEDULE_EXPECTED = (
    "'SEED:STRATEGY' as a report prints it ('17:portfolio', '17:random', '17:timed', '17:fifo', '17:jitter', "
    "'17:pct/3/40': PCT's parameters with it) or 'SEED:fifo+CHOICE=OPTION,...[:jSCALE]' (or 'SEED:jitter+...', "
    "'SEED:timed+...') with whole numbers >= 0"
)
_SCHEDULE = re.compile(
    r"(?P<seed>-?\d+):(?:(?P<base>fifo|jitter|timed)\+(?P<moves>(?:\d+=\d+(?:,\d+=\d+)*)?)(?::j(?P<jitter>\d+(?:\.\d*)?(?:e[-+]?\d+)?))?"
    r"|(?P<strategy>[a-z]+(?:/\d+/\d+)?))"
)
