"""Whose code a frame is: the one place agentsim tells the program's code from
the standard library, the event loops and itself.

Three questions are asked of frames: where did the program call something it
must not (an escape's site: the first frame that is neither the standard
library nor agentsim), may an exception be raised here without corrupting a
loop (a wall-timeout alarm: the program's code, not the loops' machinery),
and which frames of a stack are worth showing (not the kernel's wrappers).
"""

from __future__ import annotations

import asyncio
import importlib.util
import functools
import os
import sysconfig
from types import CodeType, FrameType

#: The standard library; a virtual environment's site-packages may live under it.
_STDLIB = sysconfig.get_paths()["stdlib"] + os.sep
_SITE_PACKAGES = f"site-packages{os.sep}"
#: agentsim itself, and its kernel.
AGENTSIM_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
KERNEL_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep


def _loop_machinery() -> tuple[str, ...]:
    # Found, not imported: importing agentsim must not import trio (~0.6 s).
    prefixes = [os.path.dirname(asyncio.__file__) + os.sep]
    for name in ("anyio", "attr", "outcome", "sniffio", "trio"):
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin is not None:
            prefixes.append(os.path.dirname(spec.origin) + os.sep)
    prefixes.append(KERNEL_DIR)
    return tuple(prefixes)


_LOOP_MACHINERY = _loop_machinery()


def is_generated(filename: str) -> bool:
    """``<frozen ...>``, ``<string>``: code without a file of its own."""
    return filename.startswith("<")


#: Code without a file that belongs to a library: frozen standard modules,
#: attrs' generated methods (trio's classes). Other code without a file
#: (``python -c``, ``<stdin>``, ``exec`` of a string, notebook cells) is the
#: program's own.
_LIBRARY_GENERATED = ("<frozen", "<attrs generated")


def is_generated_helper(code: CodeType) -> bool:
    """A generated method (a dataclass's or namedtuple's ``__init__``...): not
    where the program made a call, but its caller is."""
    return is_generated(code.co_filename) and (code.co_filename.startswith(_LIBRARY_GENERATED) or (code.co_name.startswith("__") and code.co_name.endswith("__")))


def is_stdlib(filename: str) -> bool:
    """The standard library (not a package installed under it)."""
    return filename.startswith(_STDLIB) and _SITE_PACKAGES not in filename


def is_agentsim(filename: str) -> bool:
    return filename.startswith(AGENTSIM_DIR)


def is_kernel(filename: str) -> bool:
    return filename.startswith(KERNEL_DIR)


def is_loop_machinery(filename: str) -> bool:
    """The event loops and their helper packages (asyncio, trio, anyio...)
    and agentsim's kernel: where an exception would corrupt bookkeeping."""
    return filename.startswith(_LOOP_MACHINERY)


def is_program_code(filename: str) -> bool:
    """The program's own code or a library it calls: not the event loops'
    machinery (the loops, their helper packages, agentsim's kernel), the
    standard library or a library's generated code. Code without a file
    (``python -c``, ``<stdin>``, a notebook cell) is the program's."""
    return not (filename.startswith(_LIBRARY_GENERATED) or filename.startswith(_LOOP_MACHINERY) or is_stdlib(filename))


def first_program_frame(frame: FrameType | None) -> FrameType | None:
    """The first frame up from ``frame`` that is neither the standard library,
    agentsim nor a generated helper: where the program made the call (code
    without a file, such as ``python -c`` or a notebook cell, included)."""
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (is_stdlib(filename) or is_agentsim(filename) or is_generated_helper(frame.f_code)):
            return frame
        frame = frame.f_back
    return None


def short_path(filename: str) -> str:
    """A path shortened to something readable: from site-packages, the
    standard library, or the working directory."""
    return _short_path(filename, os.getcwd())


@functools.lru_cache(maxsize=1024)
def _short_path(filename: str, cwd: str) -> str:
    # Cached: task snapshots (taken at every cancellation) format the same
    # few files over and over, and relpath is slow.
    index = filename.rfind(_SITE_PACKAGES)
    if index >= 0:
        return filename[index + len(_SITE_PACKAGES) :]
    if filename.startswith(_STDLIB):
        return filename[len(_STDLIB) :]
    try:
        relative = os.path.relpath(filename, cwd)
    except ValueError:  # another drive on Windows
        return filename
    return filename if relative.startswith("..") else relative


def format_site(filename: str, lineno: int, function: str) -> str:
    """``file:line in function`` with the path shortened."""
    return f"{short_path(filename)}:{lineno} in {function}"


def frame_site(frame: FrameType) -> str:
    """``format_site`` of a frame."""
    return format_site(frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
