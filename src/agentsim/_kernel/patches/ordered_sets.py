"""Insertion-ordered sets for libraries whose set iteration decides an order.

A ``set`` of objects that hash by identity iterates in memory-address order,
which differs between processes and even between garbage-collector timings
in one process. anyio's asyncio backend delivers a cancel scope's
cancellation by iterating such sets (its child scopes and its tasks), so the
order in which cancelled tasks wake up would change from run to run. While a
simulation runs, new anyio cancel scopes and task groups get insertion-ordered
sets instead: same members, same operations, deterministic order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, MutableSet
from typing import Any, TypeVar

from ..core import current_core
from .patching import PatchSet, SharedInstaller

T = TypeVar("T")


class InsertionOrderedSet(MutableSet[T]):
    """A mutable set that iterates in insertion order (backed by a dict)."""

    __slots__ = ("_items",)

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._items: dict[T, None] = dict.fromkeys(items)

    def __contains__(self, item: object) -> bool:
        return item in self._items

    def __iter__(self) -> Iterator[T]:
        return iter(self._items)

    def __len__(self) -> int:
        return len(self._items)

    def add(self, item: T) -> None:
        self._items[item] = None

    def discard(self, item: T) -> None:
        self._items.pop(item, None)

    def remove(self, item: T) -> None:
        del self._items[item]

    def __repr__(self) -> str:
        return f"{{{', '.join(map(repr, self._items))}}}" if self._items else "set()"


def _ordering_init(original: Callable[..., None], attributes: tuple[str, ...]) -> Callable[..., None]:
    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        original(self, *args, **kwargs)
        if current_core() is not None:
            for name in attributes:
                setattr(self, name, InsertionOrderedSet(getattr(self, name)))

    __init__.__wrapped__ = original  # type: ignore[attr-defined]
    return __init__


def _build() -> PatchSet:
    patches = PatchSet()
    try:
        from anyio._backends import _asyncio as anyio_asyncio
    except ImportError:  # pragma: no cover - anyio is a dependency
        return patches
    for cls, attributes in (
        (anyio_asyncio.CancelScope, ("_child_scopes", "_tasks")),
        (anyio_asyncio.TaskGroup, ("_tasks",)),
    ):
        patches.add(cls, "__init__", _ordering_init(cls.__init__, attributes))
    return patches


ordered_library_sets = SharedInstaller(_build)
