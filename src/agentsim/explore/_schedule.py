"""A schedule that can be written down and replayed: seed, strategy, deviations, jitter."""

from __future__ import annotations

from dataclasses import dataclass, field

from .._kernel.errors import SimulationConfigError
from .._kernel.policy import ReplayPolicy, SchedulingPolicy, is_strategy, make_policy


@dataclass(frozen=True)
class Schedule:
    """One schedule: the ``seed`` (which also seeds ids, global randomness and
    delay draws) and either a ``strategy`` name, or — for a shrunk schedule —
    the ``deviations`` from FIFO order and the ``jitter`` scale.

    ``encode()`` gives a short string (``"17:random"``, ``"17:pct/3/40"`` or
    ``"17:fifo+3=1,9=2:j0.5"``) that :func:`agentsim.replay`,
    ``--agentsim-schedule`` and ``agentsim replay --schedule`` accept. A
    replay schedule of a run that drew its delays instead of windowing them
    (the ``jitter`` strategy) reads ``"17:jitter+...:j0.5"``.
    """

    seed: int
    strategy: str = "random"
    deviations: dict[int, int] | None = field(default=None, compare=False)
    jitter: float = 1.0
    _key: tuple[tuple[int, int], ...] = field(default=(), repr=False)
    #: False: delays are drawn points (``jitter``), not windowed timers.
    windows: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "_key", tuple(sorted((self.deviations or {}).items())))

    def __hash__(self) -> int:
        return hash((self.seed, self.strategy, self._key, self.jitter, self.windows))

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Schedule) and (self.seed, self.strategy, self._key, self.jitter, self.windows) == (
            other.seed,
            other.strategy,
            other._key,
            other.jitter,
            other.windows,
        )

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
            policy = ReplayPolicy(self.deviations, jitter_scale=self.jitter, windows=self.windows)
            if self.strategy == "fifo":
                policy.name = "fifo"  # type: ignore[misc]  # the nominal run: fifo, counting its choice points
            return policy
        # PCT's parameters are part of its schedule: "pct/DEPTH/STEPS".
        return make_policy(self.strategy, self.seed)

    def encode(self) -> str:
        if self.deviations is None:
            return f"{self.seed}:{self.strategy}"
        moves = ",".join(f"{index}={option}" for index, option in sorted(self.deviations.items()))
        jitter = "" if self.jitter == 1.0 else f":j{self.jitter:g}"
        base = "fifo" if self.windows else "jitter"
        return f"{self.seed}:{base}+{moves}{jitter}"

    @classmethod
    def decode(cls, text: str) -> Schedule:
        if not isinstance(text, str):
            raise SimulationConfigError("schedule", text, "a schedule string such as '17:random' or '17:fifo+3=1:j0'")
        try:
            seed_text, _, rest = text.strip().partition(":")
            seed = int(seed_text)
            strategy, _, jitter_text = rest.partition(":")
            base, plus, moves = strategy.partition("+")
            if not plus or base not in ("fifo", "jitter"):
                if strategy and not is_strategy(strategy):
                    raise ValueError(strategy)
                return cls(seed, strategy or "random")
            deviations = {int(a): int(b) for a, b in (move.split("=") for move in moves.split(",") if move)}
            jitter = float(jitter_text[1:]) if jitter_text.startswith("j") else 1.0
            return cls(seed, "replay", deviations, jitter, windows=base == "fifo")
        except ValueError as exc:
            raise SimulationConfigError(
                "schedule", text, "'SEED:STRATEGY' (e.g. '17:random') or 'SEED:fifo+CHOICE=OPTION,...[:jSCALE]' (or 'SEED:jitter+...')"
            ) from exc
