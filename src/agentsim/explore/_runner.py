"""Running one schedule of an explored function, and reading what a run did.

Shared by the sweep in this process, the workers of a parallel sweep and the
shrinker: the one place a schedule becomes a simulation.
"""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Any

from .._kernel.errors import LeftoverTasksWarning, UsageError
from .._kernel.scheduling import SchedulingPolicy
from .._kernel.simulation import SimulationResult, simulate
from ._report import Nondeterminism, leaf_exception
from ._schedule import Schedule


@contextmanager
def quiet_leftovers() -> Iterator[None]:
    # A sweep would repeat the same leftover-task warning hundreds of times
    # (it warns once itself, with the first passing run's leftovers).
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", LeftoverTasksWarning)
        yield


class Runner:
    """Runs one schedule of the explored function with the sweep's settings."""

    def __init__(self, async_fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...], backend: str, options: dict[str, Any]) -> None:
        self.async_fn, self.args, self.backend, self.options = async_fn, args, backend, options

    def run(self, schedule: Schedule) -> SimulationResult[Any]:
        return self.run_policy(schedule.seed, schedule.policy())

    def run_policy(self, seed: int, policy: SchedulingPolicy) -> SimulationResult[Any]:
        with quiet_leftovers():
            return simulate(
                self.async_fn,
                *self.args,
                seed=seed,
                strategy=policy,
                backend=self.backend,  # type: ignore[arg-type]
                **self.options,
            )


def propagate(result: SimulationResult[Any] | None, passthrough: tuple[type[BaseException], ...]) -> None:
    """Re-raise what is not a failing schedule: an interrupt, an exit, a skip,
    or a usage error (a sync function given to ``explore``, agentsim's API
    called with bad arguments): no schedule fixes those, so they are the
    caller's to see at once, not failures to shrink."""
    if result is None or result.exception is None:
        return
    error = leaf_exception(result.exception)
    if isinstance(error, (KeyboardInterrupt, SystemExit, UsageError, *passthrough)):
        raise error


def first_difference(first: SimulationResult[Any], second: SimulationResult[Any]) -> Nondeterminism:
    """Two runs of one schedule that should have been identical: where they part."""
    a, b = first.trace.events, second.trace.events
    for index in range(max(len(a), len(b))):
        left = a[index] if index < len(a) else None
        right = b[index] if index < len(b) else None
        if left is None or right is None or (left.ticks, left.kind, left.task, left.detail) != (right.ticks, right.kind, right.task, right.detail):
            offset = first.trace.dropped
            return Nondeterminism(first.seed, first.strategy, offset + index, left, right)
    return Nondeterminism(first.seed, first.strategy, len(first.trace), None, None)
