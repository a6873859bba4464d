"""Every row of docs/kernel.md's escape table: inside a simulation the real
effect raises SimulationEscapeError naming this file's line (nothing runs,
no wall time passes); what would not block runs as usual; clocks are virtual."""

from __future__ import annotations

import _socket
import _thread
import asyncio
import datetime
import os
import queue
import select
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from typing import Any

from datetime import datetime as imported_datetime
from time import monotonic as imported_monotonic

import pytest

import agentsim
from agentsim import SimulationEscapeError


def _fork() -> Any:
    assert hasattr(os.fork, "__wrapped__"), "os.fork is not guarded: not calling it"
    return os.fork()


def _execv() -> Any:
    assert hasattr(os.execv, "__wrapped__"), "os.execv is not guarded: not calling it"
    return os.execv("/bin/true", ["true"])


def _guarded(function: Any) -> None:
    assert hasattr(function, "__wrapped__"), f"{function} is not guarded: not calling it (it would run or block for real)"


def _process(method: str) -> Any:
    import multiprocessing
    import multiprocessing.process

    _guarded(multiprocessing.process.BaseProcess.start)
    return multiprocessing.get_context(method).Process(target=print).start()


def _spawnv_passfds() -> Any:
    import _posixsubprocess
    from multiprocessing import util

    _guarded(_posixsubprocess.fork_exec)
    return util.spawnv_passfds("/bin/true", ["true"], ())


def _selector(name: str) -> Any:
    import selectors

    cls = getattr(selectors, name)
    _guarded(cls.select)
    selector = cls()
    selector.register(_pipe_reader(), selectors.EVENT_READ)
    return selector.select(1.0)


def _pipe_reader() -> int:
    reader, _writer = os.pipe()
    return reader


def _poller(factory: str, timeout: float) -> Any:
    make = getattr(select, factory)
    _guarded(make)
    poller = make()
    poller.register(_pipe_reader(), select.POLLIN if factory == "poll" else select.EPOLLIN)
    return poller.poll(timeout)


def _signal_call(name: str, *args: Any) -> Any:
    function = getattr(signal, name)
    _guarded(function)
    return function(*args)


def _held_lock() -> Any:
    lock = threading.Lock()
    lock.acquire()
    return lock.acquire(timeout=1.0)


def _raw_socket_connect() -> Any:
    raw = _socket.socket()
    return raw.connect(("127.0.0.1", 9))


#: (kind, what the error names, the call). Each must raise at once.
ESCAPES: list[tuple[str, str, Callable[[], Any]]] = [
    ("socket", "socket.socket()", lambda: socket.socket()),
    ("socket", "_socket.socket()", _raw_socket_connect),
    ("socket", "socket.getaddrinfo", lambda: socket.getaddrinfo("example.com", 443)),
    ("socket", "socket.create_connection", lambda: socket.create_connection(("127.0.0.1", 9))),
    ("socket", "asyncio.new_event_loop()", lambda: asyncio.new_event_loop()),
    ("thread", "threading.Thread.start()", lambda: threading.Thread(target=print).start()),
    ("thread", "_thread.start_new_thread()", lambda: _thread.start_new_thread(print, ())),
    ("subprocess", "subprocess.Popen", lambda: subprocess.run(["true"])),
    ("subprocess", "os.system", lambda: os.system("true")),
    ("subprocess", "os.popen", lambda: os.popen("true")),
    ("subprocess", "os.fork", _fork),
    ("subprocess", "os.posix_spawn", lambda: os.posix_spawn("/bin/true", ["true"], {})),
    ("subprocess", "os.execv", _execv),
    ("sleep", "time.sleep(1.0)", lambda: time.sleep(1.0)),
    ("block", "threading.Condition.wait", lambda: threading.Event().wait(1.0)),
    ("block", "threading.Condition.wait", lambda: queue.Queue().get(timeout=1.0)),
    ("block", "threading.Condition.wait", lambda: threading.Semaphore(0).acquire(timeout=1.0)),
    ("block", "threading.Lock.acquire(timeout=1.0)", _held_lock),
    ("block", "select.select", lambda: select.select([], [], [], 1.0)),
    ("block", "selectors.EpollSelector.select(timeout=1.0)", lambda: _selector("EpollSelector")),
    ("block", "selectors.PollSelector.select(timeout=1.0)", lambda: _selector("PollSelector")),
    ("block", "selectors.SelectSelector.select(timeout=1.0)", lambda: _selector("SelectSelector")),
    ("block", "select.poll().poll(timeout=1000)", lambda: _poller("poll", 1000)),
    ("block", "select.poll().poll(timeout=-1)", lambda: _poller("poll", -1)),
    ("block", "select.epoll().poll(timeout=1.0)", lambda: _poller("epoll", 1.0)),
    ("subprocess", "multiprocessing.Process.start() of 'SpawnProcess", lambda: _process("spawn")),
    ("subprocess", "multiprocessing.Process.start() of 'ForkServerProcess", lambda: _process("forkserver")),
    ("subprocess", "multiprocessing.Process.start() of 'ForkProcess", lambda: _process("fork")),
    ("subprocess", "_posixsubprocess.fork_exec", _spawnv_passfds),
    ("block", "signal.pause", lambda: _signal_call("pause")),
    ("block", "signal.sigtimedwait", lambda: _signal_call("sigtimedwait", {signal.SIGUSR2}, 1.0)),
    ("signal", "signal.alarm(0)", lambda: _signal_call("alarm", 0)),
    ("signal", "signal.signal(<Signals.SIGALRM", lambda: _signal_call("signal", signal.SIGALRM, signal.SIG_IGN)),
    ("signal", "signal.setitimer(0, 0)", lambda: _signal_call("setitimer", 0, 0)),
    ("signal", "signal.pthread_sigmask", lambda: _signal_call("pthread_sigmask", signal.SIG_BLOCK, {signal.SIGALRM})),
]


@pytest.mark.parametrize(("kind", "api", "call"), ESCAPES, ids=[f"{kind}:{api}" for kind, api, _ in ESCAPES])
def test_a_real_effect_raises_naming_the_programs_line(kind: str, api: str, call: Callable[[], Any]) -> None:
    async def main() -> None:
        call()

    result = agentsim.simulate(main)  # raised before anything real ran or blocked
    error = result.exception
    assert isinstance(error, SimulationEscapeError), error
    assert error.kind == kind and api in error.api
    assert "test_escapes.py" in error.site


@pytest.mark.parametrize("program", ["exec", "shell"])
def test_asyncio_subprocesses_are_escapes_not_bare_not_implemented(program: str) -> None:
    async def main() -> None:
        if program == "exec":
            await asyncio.create_subprocess_exec("true")
        else:
            await asyncio.create_subprocess_shell("true")

    error = agentsim.simulate(main).exception
    assert isinstance(error, SimulationEscapeError) and error.kind == "subprocess"
    assert f"create_subprocess_{program}" in error.api and "test_escapes.py" in error.site


def test_waits_that_would_not_block_run_as_usual() -> None:
    async def main() -> tuple[bool, int, bool, bool]:
        event = threading.Event()
        event.set()
        items: queue.Queue[int] = queue.Queue()
        items.put(7)
        lock = threading.Lock()
        with lock:
            held = lock.locked()
        return event.wait(1.0), items.get(timeout=1.0), held, lock.acquire(timeout=1.0)

    assert agentsim.run(main) == (True, 7, True, True)


def test_a_blocking_wait_can_be_allowed() -> None:
    async def main() -> bool:
        return threading.Event().wait(0.01)

    result = agentsim.simulate(main, allow_escapes=("block",))
    assert result.ok and result.value is False
    assert [error.kind for error in result.allowed_escapes] == ["block"]


def test_clock_reads_in_the_programs_own_code_are_virtual() -> None:
    # The module's `from datetime import datetime` / `from time import
    # monotonic` (at the top, as programs write them) are rebound too.
    async def main() -> tuple[Any, ...]:
        await asyncio.sleep(90)
        return (
            time.localtime()[3:6],
            time.gmtime()[:6],
            time.ctime(),
            time.strftime("%H:%M:%S"),
            imported_datetime.now().isoformat(),
            imported_monotonic(),
            datetime.datetime.now().isoformat(),  # through the module
            datetime.date.today().isoformat(),
        )

    assert agentsim.run(main) == (
        (0, 1, 30), (2025, 1, 1, 0, 1, 30), "Wed Jan  1 00:01:30 2025", "00:01:30", "2025-01-01T00:01:30", 90.0, "2025-01-01T00:01:30", "2025-01-01",
    )
    assert time.localtime().tm_year >= 2026 and imported_datetime is datetime.datetime  # restored after


def test_datetimes_made_inside_a_simulation_are_real_ones() -> None:
    import copy
    import pickle

    async def main() -> tuple[Any, ...]:
        made = datetime.datetime(2020, 1, 1)
        return made, pickle.dumps(made), pickle.dumps(datetime.datetime.now()), copy.deepcopy(made), isinstance(made, datetime.datetime)

    made, pickled, now, copied, is_instance = agentsim.run(main)
    assert type(made) is datetime.datetime and type(copied) is datetime.datetime and is_instance
    assert pickle.loads(pickled) == datetime.datetime(2020, 1, 1)
    assert type(pickle.loads(now)) is datetime.datetime and pickle.loads(now).year == 2025


def test_an_allowed_asyncio_subprocess_still_cannot_run_on_the_virtual_loop() -> None:
    async def main() -> None:
        await asyncio.create_subprocess_exec("true")

    result = agentsim.simulate(main, allow_escapes=("subprocess",))
    error = result.exception
    assert isinstance(error, SimulationEscapeError) and "runs no processes" in error.api
    assert "test_escapes.py" in error.site and [e.kind for e in result.allowed_escapes] == ["subprocess"]


def test_a_process_a_module_starts_when_imported_is_let_through_and_reported(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    # trio's first import runs `ldconfig -p` (ctypes.util.find_library): a
    # program importing a library inside a simulation must not fail on it.
    (tmp_path / "probing_library.py").write_text(
        "import subprocess, sys\nPROBED = subprocess.run([sys.executable, '-c', 'print(7)'], capture_output=True, text=True).stdout.strip()\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))

    async def program() -> str:
        import probing_library  # type: ignore[import-not-found]

        return str(probing_library.PROBED)

    result = agentsim.simulate(program)
    assert result.ok and result.value == "7"
    assert [error.kind for error in result.allowed_escapes] == ["subprocess"]

    async def after_import() -> None:
        subprocess.run(["true"])  # the program's own process: still an escape

    with pytest.raises(SimulationEscapeError) as raised:
        agentsim.run(after_import)
    assert raised.value.kind == "subprocess"


def test_waits_and_signals_of_the_event_loops_and_other_signals_pass() -> None:
    import selectors

    async def main() -> int:
        selectors.DefaultSelector().select(0)  # would not block
        select.poll().poll(0)
        previous = signal.signal(signal.SIGUSR1, signal.SIG_IGN)  # not the alarm's signal
        signal.signal(signal.SIGUSR1, previous)
        await asyncio.sleep(1)
        return 1

    assert agentsim.run(main) == 1

    import trio

    async def on_trio() -> float:
        await trio.sleep(2)  # trio's own epoll waits are the loop's, not the program's
        return agentsim.now()

    assert agentsim.run(on_trio, backend="trio") == 2.0


def test_code_without_a_file_is_the_programs_for_escape_sites() -> None:
    namespace: dict[str, Any] = {}
    exec(compile("import time\nasync def main():\n    time.sleep(1)\n", "<string>", "exec"), namespace)
    error = agentsim.simulate(namespace["main"]).exception
    assert isinstance(error, SimulationEscapeError) and error.site.startswith("<string>:3 in main")
