"""Pictures of tasks for error messages: where each one is blocked.

A suspended coroutine's own frame says only its outermost ``await``; the
interesting line is at the end of the ``cr_await`` chain, so we follow it.
"""

from __future__ import annotations

import contextvars
import functools
import sys
from collections.abc import Iterable
from types import FrameType
from typing import Any

from ..errors import TaskSnapshot
from ..frames import format_site
from ..frames import is_kernel


def caller_site(depth: int = 2) -> str:
    """The ``file:line in function`` of the frame ``depth`` levels above the caller."""
    frame: FrameType | None = sys._getframe(depth)
    if frame is None:  # pragma: no cover - only at the bottom of a thread
        return "<unknown>"
    return format_site(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)


def coroutine_stack(coro: Any) -> tuple[str, ...]:
    """Frames of a suspended coroutine, outermost first, down its ``await`` chain."""
    sites: list[str] = []
    seen = 0
    while coro is not None and seen < 200:
        seen += 1
        frame = (
            getattr(coro, "cr_frame", None)
            or getattr(coro, "gi_frame", None)
            or getattr(coro, "ag_frame", None)
        )
        if frame is None:
            # `async for` awaits the generator's asend/athrow object, which
            # does not expose the generator; the garbage collector knows it.
            inner = _async_generator_of(coro)
            if inner is None:
                break
            coro = inner
            continue
        if not is_kernel(frame.f_code.co_filename):  # the kernel's own wrappers are noise
            sites.append(format_site(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name))
        coro = (
            getattr(coro, "cr_await", None)
            or getattr(coro, "gi_yieldfrom", None)
            or getattr(coro, "ag_await", None)
        )
    return tuple(sites)


def _async_generator_of(awaitable: Any) -> Any:
    if type(awaitable).__name__ not in ("async_generator_asend", "async_generator_athrow"):
        return None
    import gc

    return next((referent for referent in gc.get_referents(awaitable) if hasattr(referent, "ag_frame")), None)


def snapshot_task(task: Any) -> TaskSnapshot:
    """A :class:`TaskSnapshot` of an asyncio or trio task."""
    if hasattr(task, "iter_await_frames"):  # trio
        frames: Iterable[tuple[FrameType, int]] = task.iter_await_frames()
        stack = tuple(
            format_site(f.f_code.co_filename, lineno, f.f_code.co_name)
            for f, lineno in frames
            if not is_kernel(f.f_code.co_filename)
        )
        return TaskSnapshot(task.name, stack)
    coro = task.get_coro() if hasattr(task, "get_coro") else None
    return TaskSnapshot(task.get_name(), coroutine_stack(coro))


def describe_callable(func: Any) -> str:
    """A stable, address-free name for a callable (for traces and digests).

    Sees through ``functools.partial`` and ``Context.run`` wrappers, which is
    how ``asyncio.to_thread`` hands work to an executor.
    """
    for _ in range(10):
        if isinstance(func, functools.partial):
            inner = func.func
            if getattr(inner, "__name__", None) == "run" and isinstance(getattr(inner, "__self__", None), contextvars.Context):
                func = func.args[0] if func.args else inner
            else:
                func = inner
        else:
            break
    name = getattr(func, "__qualname__", None) or getattr(func, "__name__", None)
    return name if isinstance(name, str) else type(func).__qualname__
