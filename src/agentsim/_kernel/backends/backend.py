"""The narrow seam between the simulation driver and an event-loop backend.

A backend runs the main function to completion on the simulation's clock and
policy, aborts it when the core asks (deadlock, limits), and cancels and
reports tasks that are left over. Nothing above the kernel imports a backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
import inspect
from typing import Any, TypeVar

from ..core import SimulationCore
from ..errors import SimulationConfigError, TaskSnapshot

T = TypeVar("T")


@dataclass
class Outcome:
    """How the main function ended, and what was left behind."""

    value: Any = None
    exception: BaseException | None = None
    leftover_tasks: tuple[TaskSnapshot, ...] = field(default_factory=tuple)


class Backend(ABC):
    """Runs one simulation's main function on one kind of event loop."""

    name: str

    @abstractmethod
    def run(self, core: SimulationCore, async_fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...]) -> Outcome:
        """Run ``async_fn(*args)`` as the main task and return how it ended."""


async def call_async_fn(async_fn: Callable[..., Awaitable[T]], args: tuple[Any, ...]) -> T:
    """Call the user's function inside the simulation and await what it returns."""
    awaitable = async_fn(*args)
    if not inspect.isawaitable(awaitable):
        raise SimulationConfigError(
            "async_fn", async_fn, f"an async function; calling it returned {type(awaitable).__name__}, not an awaitable"
        )
    return await awaitable
