"""Run a simulation's main function on :class:`VirtualEventLoop`."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import sniffio

from .asyncio_loop import VirtualEventLoop, current_task, task_label
from .backend import Backend, Outcome, call_async_fn
from ..core import SimulationCore
from ..errors import DeadlockError, TaskSnapshot
from ..tracing.snapshots import snapshot_task


class AsyncioBackend(Backend):
    name = "asyncio"

    def run(self, core: SimulationCore, async_fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...]) -> Outcome:
        loop = VirtualEventLoop(core)
        outcome = Outcome()
        try:
            main = loop.create_task(_main(core, async_fn, args), name="main")

            def cancel_main() -> None:
                if not main.done():
                    loop.cleaning_up = True
                    main.cancel()

            core.cancel_main = cancel_main
            core.sleep_window = _sleep_window
            core.running_task = lambda: current_task(loop)
            core.task_snapshots = lambda: tuple(snapshot_task(task) for task in loop.sim_tasks())
            core.task_label = lambda: task_label(current_task(loop))
            loop.on_idle = lambda: _on_idle(core, loop, main)
            try:
                outcome.value = loop.run_until_complete(main)
            except BaseException as exc:  # noqa: BLE001 - reported, not swallowed
                outcome.exception = exc
            outcome.leftover_tasks = _cancel_leftovers(core, loop, main)
            loop.on_idle = loop.stop
            if loop._asyncgens:  # type: ignore[attr-defined]  # only then: keeps the timeline clean
                loop.run_until_complete(loop.create_task(loop.shutdown_asyncgens(), name="agentsim:shutdown_asyncgens"))
        finally:
            _abandon_stuck_tasks(loop)
            loop.close()
            # main -> loop -> core -> these closures -> main: a cycle that kept
            # every run's tasks alive until the cyclic collector ran.
            core.cancel_main = _nothing
            core.running_task = core.task_label = _nothing  # type: ignore[assignment]
            core.task_snapshots = tuple
            loop.on_idle = _nothing
        return outcome


def _nothing() -> None:
    return None


async def _main(core: SimulationCore, async_fn: Callable[..., Awaitable[Any]], args: tuple[Any, ...]) -> Any:

    # anyio asks sniffio which library runs on every call; with the context
    # variable set (inherited by every task) it need not detect it each time.
    sniffio.current_async_library_cvar.set("asyncio")
    core.guards_armed = True
    return await call_async_fn(async_fn, args)


async def _sleep_window(earliest: float, nominal: float, latest: float) -> None:
    """``asyncio.sleep`` with a window: a future settled by ``loop.call_window``."""
    loop = asyncio.get_running_loop()
    future = loop.create_future()
    handle = loop.call_window(earliest, nominal, latest, _set_result_unless_cancelled, future)  # type: ignore[attr-defined]
    try:
        await future
    finally:
        handle.cancel()


def _set_result_unless_cancelled(future: asyncio.Future[None]) -> None:
    if not future.cancelled():
        future.set_result(None)


def _on_idle(core: SimulationCore, loop: VirtualEventLoop, main: asyncio.Task[Any]) -> None:
    """Nothing is ready and no timer is pending: a deadlock, unless we are done."""
    if main.done() or core.abort_error is not None:
        # Either finished, or the abort's cancellation could not finish the
        # program (it blocked again while cleaning up): stop for good.
        loop.stop()
        return
    tasks = tuple(snapshot_task(task) for task in loop.sim_tasks())
    core.abort(DeadlockError(core.now, tasks))


def _cancel_leftovers(core: SimulationCore, loop: VirtualEventLoop, main: asyncio.Task[Any]) -> tuple[TaskSnapshot, ...]:
    """Cancel tasks that outlived the main one and let their clean-up run."""
    leftovers = [task for task in loop.sim_tasks() if task is not main]
    if not leftovers:
        return ()
    snapshots = tuple(snapshot_task(task) for task in leftovers)
    loop.cleaning_up = True
    for task in leftovers:
        task.cancel()
    # From here on, anything that ends the simulation early just stops the loop.
    core.cancel_main = loop.stop
    loop.on_idle = loop.stop
    try:
        loop.run_until_complete(asyncio.gather(*leftovers, return_exceptions=True))
    except RuntimeError:
        pass  # stopped: a task refused to finish; it is already in the report
    return snapshots


def _abandon_stuck_tasks(loop: VirtualEventLoop) -> None:
    """Unwind tasks that refused to finish even after cancellation.

    Only after an abort whose clean-up blocked forever (it is already
    reported): closing the coroutine runs its ``finally`` blocks now instead
    of at garbage collection, where asyncio would complain about a pending task.
    """
    for task in loop.sim_tasks():
        task._log_destroy_pending = False  # type: ignore[attr-defined]
        try:
            task.get_coro().close()
        except RuntimeError:
            pass  # a finally block tried to await again; nothing more to do
