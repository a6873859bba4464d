"""A one-way link with latency that never reorders, like a TCP stream.

Doubles that model a network (the simulated Realtime server's connection,
the player's path to the device) need jittered latency *and* in-order
delivery. Scheduling one timer per message gives the first but not the
second: messages due at the same virtual instant are exactly what the
explorer's scheduling policy is free to reorder. So a link keeps its messages
in one queue and a single timer delivers them, in send order.

When the latency is a distribution and the policy explores windows, that
timer is a windowed timer for the message at the head of the queue (its
window counted from when it was sent, never before the message ahead of it
arrived): its arrival against every other timer is a scheduling choice.
A message nominally due when the one ahead arrives comes with it (a burst
sent in one instant arrives together under nominal timing) or, as the
policy chooses, apart, on a window of its own. Otherwise each message's
latency is drawn when it is sent.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

from .._kernel.core import SimulationCore, choose, current_core
from .._kernel.errors import NotInSimulationError, SimulationConfigError
from .timing import DelaySource, Exponential, LogNormal, Uniform, _call_window_on, _windows_explored

__all__ = ["OrderedLink"]

#: A follower nominally due with the message ahead: option 0 arrives with it.
_TOGETHER_OR_APART = ("together", "apart")

#: A message in flight: (sent at, index, arrival instant if drawn, action).
_Message = tuple[float, int, "float | None", Callable[[], None]]

#: Delays whose window is the same for every message (asked once per link).
_SAME_WINDOW_EVERY_MESSAGE = (Uniform, Exponential, LogNormal)


class OrderedLink:
    """Deliver actions after a per-message delay, in the order they were sent.

    Each message arrives ``delay`` after it was sent, but never before the
    message sent ahead of it: latency varies, order never does::

        link = OrderedLink(DelaySource(uniform(0.01, 0.05), name="latency", stream="net"))
        link.send(lambda: inbox.append("first"))
        link.send(lambda: inbox.append("second"))   # arrives no earlier than "first"
    """

    def __init__(self, delay: DelaySource) -> None:
        if not isinstance(delay, DelaySource):
            raise SimulationConfigError("delay", delay, "a DelaySource (e.g. DelaySource(uniform(0.01, 0.05), name='latency', stream='net'))")
        self._delay = delay
        #: Whether the delay is a range (a window where the policy explores them).
        self._ranged = delay.window(0) is not None
        #: The window of every message, when it does not vary by message.
        self._same_window = delay.window(0) if type(delay.delay) in _SAME_WINDOW_EVERY_MESSAGE else None
        #: The loop the link last ran on, and what it asks of that loop's
        #: simulation for every message, found once per loop (_bind).
        self._loop: asyncio.AbstractEventLoop | None = None
        #: That loop's simulation (None outside one).
        self._core: SimulationCore | None = None
        #: Whether messages get windows there (a range, and a policy that explores them).
        self._windowed = False
        self._sent = 0
        self._queue: deque[_Message] = deque()
        self._timer: asyncio.TimerHandle | None = None
        self._delivering = False
        #: Virtual time at which the last drawn message arrives.
        self.free_at = 0.0

    def send(self, action: Callable[[], None]) -> None:
        """Schedule ``action`` to run on arrival."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            raise NotInSimulationError("OrderedLink.send") from None
        if loop is not self._loop:
            self._bind(loop)
        if not callable(action):
            raise SimulationConfigError("action", action, "a function to run when the message arrives")
        now = loop.time()
        index = self._sent
        self._sent = index + 1
        arrive: float | None = None
        if not self._windowed:
            arrive = self.free_at = max(now + self._delay.seconds(index), self.free_at)
        self._queue.append((now, index, arrive, action))
        if self._timer is None and not self._delivering:
            self._arm(loop)

    def clear(self) -> None:
        """Drop everything in flight (a cut connection, a flushed buffer)."""
        self._queue.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None

    @property
    def in_flight(self) -> int:
        return len(self._queue)

    def _bind(self, loop: asyncio.AbstractEventLoop) -> None:
        """Find what the link asks of ``loop``'s simulation for every message."""
        self._loop = loop
        self._core = current_core()
        self._windowed = self._ranged and _windows_explored()

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        if loop is not self._loop:
            self._bind(loop)
        sent_at, index, arrive, _ = self._queue[0]
        if arrive is not None:
            self._timer = loop.call_at(arrive, self._deliver_due)
            return
        window = self._same_window or self._delay.window(index)
        assert window is not None
        # The window as seen from now: the message ahead of it has arrived.
        elapsed = loop.time() - sent_at
        earliest, nominal, latest = window
        self._timer = _call_window_on(loop, self._core, max(0.0, earliest - elapsed), max(0.0, nominal - elapsed), max(0.0, latest - elapsed), self._deliver_due)

    def _nominal_arrival(self, message: _Message) -> float:
        window = self._same_window or self._delay.window(message[1])
        assert window is not None
        return message[0] + window[1]

    def _deliver_due(self) -> None:
        loop = self._loop  # (the timer's own loop: no running-loop lookup, a getpid() in CPython)
        assert loop is not None
        self._timer = None
        self._delivering = True  # an action may send on this link: no second timer
        try:
            queue = self._queue
            if queue and queue[0][2] is None:
                # A windowed head arrived, and with it whatever is nominally
                # due by now (a burst sent in one instant arrives together
                # under nominal timing); the rest get windows of their own,
                # so frames sent together may still arrive apart.
                queue.popleft()[3]()
                now = loop.time()
                while queue and queue[0][2] is None and self._nominal_arrival(queue[0]) <= now:
                    if choose("window", _TOGETHER_OR_APART):
                        break  # apart: it gets a window of its own
                    queue.popleft()[3]()
            else:
                while queue and queue[0][2] is not None and queue[0][2] <= loop.time():
                    queue.popleft()[3]()
        finally:
            self._delivering = False
            if self._queue and self._timer is None:
                self._arm(loop)


# What tracebacks, reprs and pickles show: the public module name (see public_names.py).
from .._kernel.public_names import present_as  # noqa: E402

present_as("agentsim.link", globals())
