"""A network namespace of its own for a Bash command (Linux, where unprivileged user namespaces are allowed).

`isolate_network` runs in the forked child before `exec`: `unshare(CLONE_NEWUSER | CLONE_NEWNET)`, the
person's own uid and gid mapped to themselves (files keep their owner), and the loopback interface brought
up. The command then sees only its own loopback: no route out (TCP, UDP, ICMP alike), no server of the host's
`127.0.0.1`, no abstract unix socket of the host; a server it starts itself is reachable from within.
Pathname unix sockets (`/run/docker.sock`, `$SSH_AUTH_SOCK`) live in the file system and are not covered.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import sys
from collections.abc import Callable

CLONE_NEWUSER, CLONE_NEWNET = 0x10000000, 0x40000000
_SIOCSIFFLAGS = 0x8914
_IFF_UP, _IFF_RUNNING = 0x1, 0x40

_UNSHARE: Callable[..., int] | None = None


def _load() -> Callable[..., int] | None:
    global _UNSHARE
    if _UNSHARE is None and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            _UNSHARE = ctypes.CDLL(None, use_errno=True).unshare
    return _UNSHARE


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def isolate_network(uid: int, gid: int) -> None:
    """Move this (single-threaded, forked) process into a new user and network namespace; raises OSError."""
    unshare = _UNSHARE
    if unshare is None or unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"unshare: {os.strerror(err)}")
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", _IFF_UP | _IFF_RUNNING))


def probe() -> str | None:
    """None when a child can be given its own network namespace here, else why not (one start of `true`)."""
    if _load() is None:
        return "no unshare() on this system"
    true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
    uid, gid = os.getuid(), os.getgid()
    try:
        subprocess.run([true], preexec_fn=lambda: isolate_network(uid, gid), check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "user namespaces are not allowed here"
    return None
