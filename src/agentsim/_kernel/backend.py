"""The narrow seam between the simulation driver and an event-loop backend.

A backend runs the main function to completion on the simulation's clock and
policy, aborts it when the core asks (deadlock, limits), and cancels and
reports tasks that are left over. Nothing above the kernel imports a backend.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from .core import SimulationCore
from .errors import TaskSnapshot


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
