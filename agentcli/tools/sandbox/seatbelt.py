"""macOS's sandbox (Seatbelt, through `/usr/bin/sandbox-exec`): the profile of the Bash sandbox's policy.

The profile starts from `(allow default)` and takes away what the policy forbids, later rules winning as SBPL
reads them: every write but below the write roots and a few devices; reads and writes of the terminals; reads of
the deny list (and writes there, should one lie inside a root); signals to processes outside the sandbox; and,
with the network off, every network operation (unix sockets included: the command talks to nothing outside).
Paths reach the profile only as parameters (`sandbox-exec -D NAME=path`, read by `(param "NAME")`), never pasted
into its text, so a path can hold any character. Paths are given resolved (macOS's `/tmp` is `/private/tmp`):
Seatbelt matches real paths.

This is written from the policy and SBPL's documented forms; the test suite checks the profile and the command
line it builds, but runs on Linux: it has not been run under `sandbox-exec` by this project's CI.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

SANDBOX_EXEC = "/usr/bin/sandbox-exec"
#: Devices a command may write (the null sink, its own descriptors). No terminal: its output comes back through a pipe.
WRITABLE_DEVICES = ("/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/dtracehelper")
WRITABLE_DEVICE_PATTERNS = (r"^/dev/fd/[0-9]+$",)
#: The terminals (the person's `/dev/ttys00N` among them), neither read nor written: no keystroke taken from the
#: person, no escape sequence written past agentcli's output filtering.
TERMINAL_PATTERN = r"^/dev/(tty|pty|ptmx|console)"


def available() -> bool:
    """Whether this system offers Seatbelt: macOS with `sandbox-exec`."""
    return sys.platform == "darwin" and os.access(SANDBOX_EXEC, os.X_OK)


def profile(roots: int, denied: int, *, network_off: bool) -> str:
    """The SBPL profile for `roots` write roots (parameters `WRITE_0`…) and `denied` unreadable paths (`DENY_0`…)."""
    lines = ["(version 1)", "(allow default)", "(deny file-write*)"]
    allowed = [f'(subpath (param "WRITE_{i}"))' for i in range(roots)]
    allowed += [f'(literal "{device}")' for device in WRITABLE_DEVICES]
    allowed += [f'(regex #"{pattern}")' for pattern in WRITABLE_DEVICE_PATTERNS]
    lines.append("(allow file-write*\n    " + "\n    ".join(allowed) + ")")
    lines.append(f'(deny file-read* file-write* (regex #"{TERMINAL_PATTERN}"))')
    if denied:
        paths = "\n    ".join(f'(subpath (param "DENY_{i}"))' for i in range(denied))
        lines.append(f"(deny file-read*\n    {paths})")
        lines.append(f"(deny file-write*\n    {paths})")
    lines += ["(deny signal)", "(allow signal (target same-sandbox))"]
    if network_off:
        lines.append("(deny network*)")
    return "\n".join(lines) + "\n"


def command(argv: Sequence[str], write_roots: Sequence[str], denied: Sequence[str], *, network_off: bool) -> list[str]:
    """`argv` run under `sandbox-exec` with the profile and its parameters."""
    params: list[str] = []
    for prefix, paths in (("WRITE", write_roots), ("DENY", denied)):
        for i, path in enumerate(paths):
            params += ["-D", f"{prefix}_{i}={path}"]
    text = profile(len(write_roots), len(denied), network_off=network_off)
    return [SANDBOX_EXEC, "-p", text, *params, *argv]
