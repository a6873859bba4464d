"""The ``agentsim`` command: explore, replay, timeline.

    agentsim explore examples/races/interrupt_vs_tool.py::racy --runs 200 --strategy pct
    agentsim replay examples/races/interrupt_vs_tool.py::racy --schedule 17:random
    agentsim timeline .agentsim/traces/racy-17.json --last 40

``PATH::NAME`` names an ``async def`` in a Python file that takes no
arguments (or only ``sim``, the running simulation). ``explore`` shows a
progress bar, prints each failure with its minimal timeline and the replay
command, writes the failure's trace to ``.agentsim/traces/`` and exits 1.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import importlib.util
import inspect
import sys
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from . import timeline
from .._kernel.errors import UsageError
from ..explore import explore, replay
from .._kernel.errors import SimulationConfigError
from .._kernel.options import BACKENDS, DEFAULT_WALL_TIMEOUT
from .._kernel.scheduling import parse_strategy
from ..explore import ExploreOptions
from ..explore._options import parse_sweep_strategy
from ..explore._database import DEFAULT_DIRECTORY


class CommandError(UsageError):
    """A command-line mistake: the message says what to fix."""


def load_target(spec: str) -> tuple[Callable[[], Awaitable[Any]], str]:
    """The async function named by ``PATH::NAME`` (and a display name)."""
    path_text, separator, name = spec.partition("::")
    if not separator or not name:
        raise CommandError(f"{spec!r}: give PATH::NAME, e.g. examples/races/booking.py::racy")
    path = Path(path_text)
    if not path.is_file():
        raise CommandError(f"{path_text!r} is not a file")
    # Import as pytest would: the project's root (where pyproject.toml is, else
    # the working directory) and the file's folder on sys.path.
    from .config import find_pyproject

    pyproject = find_pyproject()
    for folder in (str(pyproject.parent if pyproject is not None else Path.cwd()), str(path.resolve().parent)):
        if folder not in sys.path:
            sys.path.insert(0, folder)
    module_name = f"agentsim_target_{path.stem}"
    module_spec = importlib.util.spec_from_file_location(module_name, path)
    assert module_spec is not None and module_spec.loader is not None
    module = importlib.util.module_from_spec(module_spec)
    # A cluster's workers cannot import it by this name: parallel sweeps send it by value.
    module.__agentsim_by_value__ = True  # type: ignore[attr-defined]
    sys.modules[module_name] = module
    try:
        module_spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[module_name]
        raise CommandError(f"{path_text}:{error.lineno}: syntax error: {error.msg}; fix the file and run again") from None
    except Exception as error:  # the target's own import failed: say where, not a traceback of ours
        del sys.modules[module_name]
        raise CommandError(f"importing {path_text} raised {type(error).__name__}: {error}") from None
    function = getattr(module, name, None)
    if function is None or not inspect.iscoroutinefunction(function):
        raise CommandError(f"{path_text} has no `async def {name}`")
    parameters = inspect.signature(function).parameters
    required = [name for name, parameter in parameters.items() if parameter.default is inspect.Parameter.empty and name != "sim"]
    if required:
        raise CommandError(f"`{name}` needs {required}; the command line can only call functions without required arguments (or with `sim`)")
    if "sim" in parameters:
        from .._kernel.view import SimulationView

        view = SimulationView()

        async def with_sim() -> Any:
            return await function(sim=view)

        with_sim.__qualname__ = function.__qualname__
        return with_sim, spec
    return function, spec


def _settings(arguments: argparse.Namespace) -> ExploreOptions:
    """``[tool.agentsim]`` (with ``--profile``) under what the command line gave."""
    from .config import load_options

    given = {
        name: getattr(arguments, name)
        for name in ("runs", "strategy", "seed", "backend", "max_virtual_time", "wall_timeout", "pct_depth", "max_deviations", "allow_escapes")
        if getattr(arguments, name, None) is not None
    }
    if "allow_escapes" in given:
        given["allow_escapes"] = tuple(given["allow_escapes"])
    if getattr(arguments, "check_determinism", False):
        given["check_determinism"] = True
    if getattr(arguments, "no_shrink", False):
        given["shrink_failures"] = False
    if getattr(arguments, "require", None):
        given["require"] = tuple(arguments.require)
    if getattr(arguments, "focus", None):
        focus = arguments.focus
        given["focus"] = focus[0] if len(focus) == 1 else list(focus)
    for name in ("max_virtual_time", "wall_timeout"):
        if given.get(name) == 0:
            given[name] = None  # 0 on the command line: no limit
    try:
        return ExploreOptions.from_mapping(given, where="the command line", base=load_options(arguments.profile))
    except SimulationConfigError as error:
        raise CommandError(str(error)) from None


def _status(what: str, seed: int, found: list[int]) -> str:
    """The progress bar's label: failures so far, and what is being shrunk."""
    if what == "failure":
        found.append(seed)
    failures = f"{len(found)} failure(s) so far" if found else "no failure yet"
    return f"exploring ({failures}, shrinking seed {seed})" if what == "shrinking" else f"exploring ({failures})"


def _workers(text: str) -> int | str:
    if text == "auto":
        return text
    if not text.isdigit() or int(text) < 1:
        raise CommandError(f"--workers {text!r}: give a number of worker processes >= 1, or 'auto' (one per core)")
    return int(text)


@contextlib.contextmanager
def _executor(scheduler: str | None) -> Iterator[Any]:
    """A dask cluster's executor for ``--scheduler`` (None: no cluster)."""
    if scheduler is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise CommandError("--scheduler needs dask.distributed: pip install 'agentsim[cluster]'") from None
    try:
        client = Client(scheduler, timeout=30)  # type: ignore[no-untyped-call]
    except OSError as error:
        raise CommandError(f"--scheduler {scheduler!r}: no dask scheduler answered ({error})") from None
    with client:
        yield client.get_executor()  # type: ignore[no-untyped-call]


def _explore(options: argparse.Namespace) -> int:
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    function, spec = load_target(options.target)
    settings = _settings(options)
    database = settings.database if options.db is None else (None if options.db.lower() == "none" else options.db)
    console = Console()
    from rich.progress import TimeRemainingColumn

    found: list[int] = []
    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TimeRemainingColumn())
    with _executor(options.scheduler) as executor, Progress(*columns, console=console, transient=True) as bar:
        task = bar.add_task("exploring", total=settings.runs)
        report = explore(
            function,
            options=settings.replace(database=database),
            key=spec,
            repro=lambda schedule: f"agentsim replay {spec} --schedule {schedule.encode()}",
            progress=lambda done, total: bar.update(task, completed=done),
            observer=lambda what, seed: bar.update(task, description=_status(what, seed, found)),
            workers=_workers(options.workers),
            executor=executor,
        )
    console.print(report.format(), markup=False, highlight=False, soft_wrap=True)
    traces = Path(database if database is not None else DEFAULT_DIRECTORY) / "traces"
    for failure in report.failures:
        target = traces / f"{spec.split('::')[1]}-{failure.seed}.json"
        try:
            _write_trace(failure.trace, target, {"schedule": failure.schedule.encode(), "repro": failure.repro}, (traces.parent, traces))
        except (OSError, CommandError) as error:  # the failure stands; only its trace file is missing
            print(f"agentsim: the trace was not written: {error}", file=sys.stderr)
            continue
        console.print(f"trace: {target}  (open in ui.perfetto.dev, or: agentsim timeline {target})", markup=False, highlight=False, soft_wrap=True)
    return 0 if report.ok else 1


def _write_trace(trace: Any, target: Path, metadata: dict[str, Any] | None = None, folders: tuple[Path, ...] = ()) -> None:
    """Export ``trace`` to ``target``, never through a symbolic link: neither
    the file nor the ``folders`` the command made (a link planted in a shared
    checkout must not make the command write elsewhere)."""
    for folder in folders:
        if folder.is_symlink():
            raise CommandError(f"{folder} is a symbolic link: refusing to write {target} through it")
        folder.mkdir(parents=True, exist_ok=True)
    try:
        timeline.export(trace, target, metadata=metadata, follow_symlinks=False)
    except OSError as error:
        if target.is_symlink():
            raise CommandError(f"{target} is a symbolic link: refusing to write through it") from None
        raise


def _replay(options: argparse.Namespace) -> int:
    function, spec = load_target(options.target)
    settings = _settings(options)
    strategy = settings.strategy if isinstance(settings.strategy, str) else "random"
    result = replay(function, seed=settings.seed, strategy=strategy, schedule=options.schedule, options=settings)
    print(timeline.render(result.trace, last=options.last))
    if options.export:
        try:
            _write_trace(result.trace, Path(options.export))
        except OSError as error:
            raise CommandError(f"--export {options.export!r}: cannot write it ({error.strerror or error})") from None
        print(f"trace: {options.export}")
    if result.exception is not None:
        print(f"\n{spec} failed at virtual time {result.end_time:.3f}s: {type(result.exception).__name__}: {result.exception}")
        return 1
    print(f"\n{spec} passed (virtual time {result.end_time:.3f}s, digest {result.trace.digest()})")
    return 0


def _timeline(options: argparse.Namespace) -> int:
    if not Path(options.trace).is_file():
        raise CommandError(f"{options.trace!r} is not a file")
    try:
        events = timeline.load(options.trace)
    except OSError as error:
        raise CommandError(f"{options.trace!r} cannot be read ({error.strerror or error})") from None
    print(timeline.render(events, last=options.last, kinds=options.kinds.split(",") if options.kinds else None))
    return 0


def _session_show(options: argparse.Namespace) -> int:
    from ..recording import load
    from ..recording._timeline import timeline_events

    if not Path(options.file).is_file():
        raise CommandError(f"{options.file!r} is not a file")
    try:
        recording = load(options.file)
    except OSError as error:
        raise CommandError(f"{options.file!r} cannot be read ({error.strerror or error})") from None
    events = timeline_events(recording)
    header = recording.header
    print(
        f"# {recording.kind} session recorded on the {recording.layer} ({header.get('model')}, openai-agents {header.get('sdk_version')}, "
        f"{header.get('clock')} clock): {len(recording)} events, {recording.duration:.3f} s"
    )
    print(timeline.render(events, last=options.last, kinds=options.kinds.split(",") if options.kinds else None))
    if options.export:
        target = Path(options.export)
        _write_trace(events, target, {"recording": str(options.file), **{key: header.get(key) for key in ("kind", "layer", "sdk_version")}})
        print(f"timeline: {target}  (open in ui.perfetto.dev, or: agentsim timeline {target})")
    return 0


def build_parser() -> argparse.ArgumentParser:
    from .. import __version__

    parser = argparse.ArgumentParser(prog="agentsim", description="Find, shrink and replay timing bugs in async agent code.")
    parser.add_argument("--version", action="version", version=f"agentsim {__version__}")
    commands = parser.add_subparsers(dest="command", required=True)

    def add_run_options(command: argparse.ArgumentParser, *, sweep: bool = False) -> None:
        # Unset options come from [tool.agentsim] (and --profile), else the defaults.
        command.add_argument("--backend", default=None, choices=list(BACKENDS))
        command.add_argument("--seed", type=int, default=None, help="the (first) seed")
        command.add_argument(
            "--strategy", default=None, type=parse_sweep_strategy if sweep else parse_strategy,
            help="portfolio (the default), random, timed, pct, fifo, jitter, or pct/DEPTH/STEPS, portfolio/DEPTH/STEPS as a report prints it"
            + ("; exhaustive (every schedule within --max-deviations)" if sweep else ""),
        )
        command.add_argument("--max-virtual-time", type=float, default=None, help="virtual seconds a run may last (0: no limit)")
        command.add_argument("--wall-timeout", type=float, default=None, help=f"real seconds a run may take (default {DEFAULT_WALL_TIMEOUT:g}; 0: no limit)")
        command.add_argument(
            "--allow-escape", dest="allow_escapes", action="append", default=None, help="let this escape through (a kind, or kind:text); repeatable"
        )
        command.add_argument("--profile", default=None, help="a profile of [tool.agentsim.profiles] in pyproject.toml (default: $AGENTSIM_PROFILE)")

    explore_command = commands.add_parser("explore", help="sweep seeds for a failing schedule")
    explore_command.add_argument("target", help="PATH::NAME of an async function")
    explore_command.add_argument("--runs", type=int, default=None, help="runs of the sweep (default 200)")
    explore_command.add_argument("--pct-depth", type=int, default=None, help="PCT's depth d (default 3)")
    explore_command.add_argument("--max-deviations", type=int, default=None, help="--strategy exhaustive: every schedule with at most this many deviations (default 2)")
    explore_command.add_argument("--check-determinism", action="store_true")
    explore_command.add_argument("--no-shrink", action="store_true")
    explore_command.add_argument(
        "--require", action="append", default=None, metavar="LABEL",
        help="a moment (agentsim.sometimes/reached label) the sweep must reach at least once, else it fails (repeatable)",
    )
    explore_command.add_argument(
        "--focus", action="append", default=None, metavar="START:END|LABEL",
        help="keep every deviation inside START:END (virtual seconds), or around each instant a moment LABEL was evaluated "
        "(repeatable for several labels); each run branches from a checkpoint",
    )
    explore_command.add_argument("--db", default=None, help=f"failure database directory ('none' to disable; default {DEFAULT_DIRECTORY})")
    explore_command.add_argument("--workers", default="1", help="local worker processes for the sweep, or 'auto' (one per core; default 1)")
    explore_command.add_argument("--scheduler", default=None, help="a dask scheduler's address (tcp://HOST:PORT): run the sweep on its cluster (pip install 'agentsim[cluster]')")
    add_run_options(explore_command, sweep=True)
    explore_command.set_defaults(handler=_explore)

    replay_command = commands.add_parser("replay", help="replay one schedule exactly and show its timeline")
    replay_command.add_argument("target", help="PATH::NAME of an async function")
    replay_command.add_argument("--schedule", default=None, help="a schedule from a failure report (or give --seed and --strategy)")
    replay_command.add_argument("--last", type=int, default=40, help="timeline lines to show")
    replay_command.add_argument("--export", default=None, help="also write the trace as Perfetto JSON here")
    add_run_options(replay_command)
    replay_command.set_defaults(handler=_replay)

    timeline_command = commands.add_parser("timeline", help="render an exported trace as text")
    timeline_command.add_argument("trace", help="a trace JSON file")
    timeline_command.add_argument("--last", type=int, default=None)
    timeline_command.add_argument("--kinds", default=None, help="comma-separated event kinds to show")
    timeline_command.set_defaults(handler=_timeline)

    session_command = commands.add_parser("session", help="recorded sessions (agentsim.recording)")
    session_actions = session_command.add_subparsers(dest="action", required=True)
    show_command = session_actions.add_parser("show", help="print a recording's timeline")
    show_command.add_argument("file", help="a recording (JSON Lines, from RecordingRealtimeModel or RecordingModel)")
    show_command.add_argument("--last", type=int, default=None, help="only the last N events")
    show_command.add_argument("--kinds", default=None, help="client, server, or client,server")
    show_command.add_argument("--export", default=None, help="also write the timeline as Perfetto JSON here")
    show_command.set_defaults(handler=_session_show)
    return parser


#: Exit codes: the run passed; a failure was found; the command was wrong.
EXIT_OK, EXIT_FAILURE_FOUND, EXIT_USAGE = 0, 1, 2


def main(argv: Sequence[str] | None = None) -> int:
    """The ``agentsim`` command; returns its exit code (0 ok, 1 a failure found,
    2 a usage error: never a traceback for bad input)."""
    try:
        options = build_parser().parse_args(argv)
    except SystemExit as exit:  # argparse: --help, --version, or a bad option (it printed why)
        return int(exit.code) if isinstance(exit.code, int) else EXIT_USAGE
    try:
        return int(options.handler(options))
    except (CommandError, UsageError) as error:
        print(f"agentsim: {error}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:
        # `agentsim timeline ... | head`: the reader left; nothing more to say.
        # Point stdout at /dev/null so the interpreter's final flush is quiet.
        try:
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        except (OSError, ValueError, io.UnsupportedOperation):
            pass  # not a real file (captured): nothing to flush into a closed pipe
        return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())


# What tracebacks, reprs and pickles show: the public module name (see public_names.py).
from .._kernel.public_names import present_as  # noqa: E402

present_as("agentsim.cli", globals())
