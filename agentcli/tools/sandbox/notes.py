"""Name the sandbox when a command's output shows it refused something, with the path or the address.

Landlock answers a refused file access with the ordinary `EACCES` ("Permission denied") or, for a link or
rename across folders, `EXDEV` ("Invalid cross-device link"); a command in the session's network namespace sees
"Network is unreachable" or a refused connection. None of that says "sandbox", so the model would retry or
guess. These notes are read off the output: each path an error line names is resolved (relative ones against
the workspace, symlinks followed) and reported when the policy explains the refusal: it is on the read deny
list, or outside every folder writes may go to. A path inside the write roots is left alone: its refusal has
another cause.
"""

from __future__ import annotations

import os
import re

from agentcli.tools.sandbox.rules import is_within

MAX_NOTES = 5
_FS_REFUSAL = re.compile(r"Permission denied|Operation not permitted|Invalid cross-device link|Read-only file system")
_QUOTED = re.compile(r"'([^'\n]+)'|‘([^’\n]+)’|\"([^\"\n]+)\"|`([^'`\n]+)'")
_NET_REFUSAL = re.compile(
    r"Network is unreachable|Connection refused|Failed to connect|Couldn't connect|"
    r"Temporary failure in name resolution|Name or service not known|Could not resolve host|"
    r"No address associated with hostname|getaddrinfo|nodename nor servname",
    re.IGNORECASE,
)
_SOCKET_WORDS = re.compile(r"connect|socket|bind", re.IGNORECASE)  # a bare EACCES is a network one only near these
_ADDRESS = re.compile(
    r"(?P<host>\d{1,3}(?:\.\d{1,3}){3}|\[[0-9A-Fa-f:.]+\]|localhost|[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+)"
    r"(?::| port )(?P<port>\d{1,5})\b"
)


def _candidates(line: str) -> list[str]:
    """The paths an error line names: quoted ones, else the field before the error (`cat: PATH: Permission
    denied`)."""
    found = [next(g for g in match.groups() if g) for match in _QUOTED.finditer(line)]
    if found:
        return [p for p in found if p.strip() and "\n" not in p]
    head = _FS_REFUSAL.split(line, maxsplit=1)[0].rstrip()
    if not head.endswith(":"):
        return []
    last = head[:-1].rsplit(": ", 1)[-1].strip()
    return [last] if last and " " not in last and not last.startswith("[Errno") else []


def _resolve(path: str, workspace: str) -> str:
    path = os.path.expanduser(path)
    return os.path.realpath(path if os.path.isabs(path) else os.path.join(workspace, path))


_PROC_PID = re.compile(r"^/proc/\d+/")


def _device_note(path: str) -> str:
    if is_within(path, "/dev/shm"):
        return (f"[sandbox] {path}: the host's /dev/shm is closed to Bash commands (no mount namespace for a private "
                "one on this system); use $TMPDIR.")
    return (f"[sandbox] {path}: the Bash sandbox keeps commands off the person's terminals; a command's output "
            "comes back through agentcli and its input is closed.")


def _path_note(path: str, line: str, write_roots: list[str], denied: list[str], devices: list[str]) -> str | None:
    if any(is_within(path, device) for device in devices):
        return _device_note(path)
    if _PROC_PID.match(path):
        return (f"[sandbox] {path}: the Bash sandbox keeps commands from inspecting processes outside it "
                "(their environment, memory and file descriptors).")
    if any(is_within(path, d) for d in denied):
        return (f"[sandbox] {path} is on the Bash sandbox's read deny list (credentials and agentcli's own files): "
                "commands cannot read or change it.")
    if any(is_within(path, root) for root in write_roots):
        return None  # allowed by the sandbox: refused for another reason
    places = " and ".join(write_roots)
    if "cross-device" in line:
        return (f"[sandbox] {path}: the Bash sandbox refuses links and moves between the folders it may write "
                f"({places}) and the rest of the system.")
    return (f"[sandbox] {path} is outside the folders the Bash sandbox lets commands write to ({places}; "
            "$TMPDIR is the second); reading it is allowed.")


def blocked_notes(output: str, *, workspace: str, write_roots: list[str], denied: list[str],
                  network_off: bool, devices: list[str] | None = None) -> list[str]:
    """One `[sandbox] …` line per distinct refusal the output shows (at most `MAX_NOTES`)."""
    notes: list[str] = []
    net_targets: list[str] = []
    net_seen = False
    for line in output.splitlines():
        if _FS_REFUSAL.search(line):
            for raw in _candidates(line):
                note = _path_note(_resolve(raw, workspace), line, write_roots, denied, devices or [])
                if note is not None and note not in notes:
                    notes.append(note)
        if network_off and (_NET_REFUSAL.search(line) or (
                "Permission denied" in line and not _candidates(line) and _SOCKET_WORDS.search(output))):
            net_seen = True
            net_targets += [f"{m['host']}:{m['port']}" for m in _ADDRESS.finditer(line)]
    if net_seen:
        where = f" ({', '.join(dict.fromkeys(net_targets))})" if net_targets else ""
        notes.append(f"[sandbox] The network is off for Bash commands{where}: [sandbox] network = \"deny\". "
                     "Only the person can allow it.")
    return notes[:MAX_NOTES]
