"""Ending the process at once: after the last answer, once every record is flushed and closed.

The interpreter's own teardown (freeing every module of the SDKs, the TUI and pydantic) takes 0.2-0.3 s
after the work is done. The one-shot run and the TUI call `ready()` when their conversation is closed:
the store committed and closed, SDK clients closed, subagents and tool processes stopped. The process
entry (`agentcli.cli.app.entry`) then ends with `finish()`: standard output and error flushed, log handlers
flushed and closed, and `os._exit` with the exit code. Without `ready()` (every other command, or
anything that went wrong before it), the exit is Python's ordinary one.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import NoReturn

_ready = False


def ready() -> None:
    """Everything this process writes is flushed and closed: the fast exit may skip the interpreter's teardown."""
    global _ready
    _ready = True


def fast_exit_allowed() -> bool:
    """`ready()` was called, no other thread is still running (its work would be cut short), and no profiler,
    debugger or coverage tracer is watching (it writes its results at the ordinary exit)."""
    if not _ready or sys.getprofile() is not None or sys.gettrace() is not None:
        return False
    import threading

    others = [t for t in threading.enumerate() if t is not threading.current_thread() and not t.daemon]
    return not others


def finish(code: str | int | None) -> NoReturn:
    """End the process with `code` (a `SystemExit` code): at once when `fast_exit_allowed()`, else as usual."""
    if isinstance(code, str) or not fast_exit_allowed():
        sys.exit(code)
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError, AttributeError):  # a closed pipe, a detached stream
            stream.flush()
    import logging

    logging.shutdown()  # what the interpreter would do at exit: flush and close every handler
    os._exit(code or 0)
