"""A voice-agent race found by seed, shown, and replayed exactly.

The program: a client interrupts the assistant (``response.cancel``) and,
after a 120 ms debounce, asks for a new response (``response.create``). The
server needs 120 ms to confirm the cancel. Both take "120 ms", so which one
happens first depends on network jitter that no test controls: under stock
asyncio order the client waits long enough and the test passes, yet in
production the follow-up sometimes arrives first and the server answers
"conversation already has an active response".

agentsim makes that ordering a seeded choice. This script sweeps seeds with
the ``random`` strategy, finds a failing one, prints its timeline, replays it
to show that one seed reproduces it exactly, and checks the fixed client (it
waits for the server's confirmation instead of a timer) under every seed.

    python examples/race_demo.py
"""

from __future__ import annotations

import asyncio

import agentsim

CANCEL_CONFIRM_LATENCY = 0.120  # server side
CLIENT_DEBOUNCE = 0.120  # client side: "surely the cancel is done by now"


class ActiveResponseError(Exception):
    """The server's rule: at most one active response per conversation."""


class FakeRealtimeServer:
    def __init__(self) -> None:
        self.inbox: asyncio.Queue[str] = asyncio.Queue()
        self.active_response = True  # the assistant is speaking
        self.cancel_confirmed = asyncio.Event()

    async def serve(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            event = await self.inbox.get()
            if event == "response.cancel":
                # Cancelling takes a while and does not hold up the inbox.
                loop.call_later(CANCEL_CONFIRM_LATENCY, self._finish_cancel)
            elif event == "response.create":
                if self.active_response:
                    raise ActiveResponseError("conversation already has an active response")
                self.active_response = True
                return

    def _finish_cancel(self) -> None:
        self.active_response = False
        self.cancel_confirmed.set()


async def racy_client(server: FakeRealtimeServer) -> None:
    server.inbox.put_nowait("response.cancel")
    await asyncio.sleep(0)  # let the transport flush
    await asyncio.sleep(CLIENT_DEBOUNCE)
    server.inbox.put_nowait("response.create")


async def fixed_client(server: FakeRealtimeServer) -> None:
    server.inbox.put_nowait("response.cancel")
    await server.cancel_confirmed.wait()  # the server says when it is done
    server.inbox.put_nowait("response.create")


async def interrupt_then_follow_up(client: str) -> None:
    server = FakeRealtimeServer()
    async with asyncio.TaskGroup() as group:
        group.create_task(server.serve(), name="server")
        group.create_task((racy_client if client == "racy" else fixed_client)(server), name="client")


def main() -> None:
    print("stock order (strategy='fifo'):", end=" ")
    agentsim.run(interrupt_then_follow_up, "racy")
    print("passes - the bug hides.\n")

    seeds = range(200)
    failing = None
    for seed in seeds:
        result = agentsim.simulate(interrupt_then_follow_up, "racy", seed=seed, strategy="random")
        if not result.ok:
            failing = result
            break
    assert failing is not None, "no failing seed found"
    print(f"seed {failing.seed} (strategy='random') fails after {failing.seed + 1} run(s):")
    error = failing.exception
    while isinstance(error, BaseExceptionGroup):  # the TaskGroup wraps the server's error
        error = error.exceptions[0]
    print(f"  {type(error).__name__}: {error}")
    print("  timeline (virtual ms):")
    for event in failing.trace.events:
        if event.kind in ("timer", "choice", "exit"):
            print("   ", event.format())

    replays = {agentsim.simulate(interrupt_then_follow_up, "racy", seed=failing.seed, strategy="random").trace.digest() for _ in range(3)}
    assert replays == {failing.trace.digest()}, "replay diverged"
    print(f"\nreplayed 3 times, identical trace digest {failing.trace.digest()}")
    print(f"replay with: agentsim.run(interrupt_then_follow_up, 'racy', seed={failing.seed}, strategy='random')\n")

    for seed in seeds:
        agentsim.run(interrupt_then_follow_up, "fixed", seed=seed, strategy="random")
    print(f"fixed client (waits for the confirmation): passes under all {len(seeds)} seeds.")


if __name__ == "__main__":
    main()
