"""Thread offload runs inline inside a simulation.

``asyncio.to_thread`` goes through ``loop.run_in_executor``, which the virtual
loop already runs inline. ``anyio.to_thread.run_sync`` and
``trio.to_thread.run_sync`` start their own worker threads, so they are
patched here: inside a simulation the function runs in the calling thread, in
a copy of the caller's context (as a worker thread would see it), after one
checkpoint, while virtual time stands still.
"""

from __future__ import annotations

import contextvars
import sys
from collections.abc import Callable
from typing import Any

from ..core import current_core
from .patching import PatchSet, SharedInstaller
from ..tracing.snapshots import describe_callable


def _inline(real: Callable[..., Any], checkpoint: Callable[[], Any]) -> Callable[..., Any]:
    async def run_sync(func: Callable[..., Any], *args: Any, **options: Any) -> Any:
        core = current_core()
        if core is None:
            return await real(func, *args, **options)
        await checkpoint()
        core.trace.record(core.clock.ticks, "inline", "", describe_callable(func))
        return contextvars.copy_context().run(func, *args)

    run_sync.__wrapped__ = real  # type: ignore[attr-defined]
    return run_sync


def _build() -> PatchSet:
    import anyio.lowlevel
    import anyio.to_thread

    patches = PatchSet()
    patches.add(anyio.to_thread, "run_sync", _inline(anyio.to_thread.run_sync, anyio.lowlevel.checkpoint))
    if "trio" in sys.modules:  # the trio backend imports it first; asyncio runs need not pay for it
        import trio
        import trio.to_thread

        patches.add(trio.to_thread, "run_sync", _inline(trio.to_thread.run_sync, trio.lowlevel.checkpoint))
    return patches


inline_threads = SharedInstaller(_build, key=lambda: "trio" in sys.modules)
