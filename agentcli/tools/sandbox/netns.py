"""Namespaces of a Bash command's own (Linux, where unprivileged user namespaces are allowed): its network and its
`/dev/shm`.

`enter` runs in the forked child before `exec`: `unshare(CLONE_NEWUSER | …)`, the person's own uid and gid mapped
to themselves (files keep their owner), then what was asked for:

- the network (`CLONE_NEWNET`, the loopback interface brought up): the command sees only its own loopback, no
  route out (TCP, UDP, ICMP alike), no server of the host's `127.0.0.1`, no abstract unix socket of the host; a
  server it starts itself is reachable from within. Pathname unix sockets (`/run/docker.sock`, `$SSH_AUTH_SOCK`)
  live in the file system and are not covered;
- `/dev/shm` (`CLONE_NEWNS`, every mount made private, then a folder of the session bound over `/dev/shm`): POSIX
  shared memory and semaphores work, in a folder that goes with the session, and the host's `/dev/shm` (files
  planted there would outlive the session; the person's own there could be rewritten) is out of sight.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
from collections.abc import Callable

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
MS_BIND, MS_REC, MS_PRIVATE = 0x1000, 0x4000, 0x40000
SHM = "/dev/shm"
_SIOCSIFFLAGS = 0x8914
_IFF_UP, _IFF_RUNNING = 0x1, 0x40

_LIBC: ctypes.CDLL | None = None


def _load() -> ctypes.CDLL | None:
    global _LIBC
    if _LIBC is None and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            if libc.unshare and libc.mount:  # both exist (AttributeError: this libc lacks one)
                _LIBC = libc
    return _LIBC


def _write(path: str, text: str) -> None:
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, text.encode())
    finally:
        os.close(fd)


def _call(what: str, fn: Callable[..., int], *args: object) -> None:
    if fn(*args) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def enter(uid: int, gid: int, *, network: bool, shm: str | None) -> None:
    """Move this (single-threaded, forked) process into a new user namespace, with a network namespace of its own
    when `network`, and `shm` (a folder) bound over `/dev/shm` in a mount namespace of its own; raises OSError."""
    libc = _LIBC
    if libc is None:
        raise OSError(0, "unshare: not available")
    _call("unshare", libc.unshare, CLONE_NEWUSER | (CLONE_NEWNET if network else 0) | (CLONE_NEWNS if shm else 0))
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    if network:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", _IFF_UP | _IFF_RUNNING))
    if shm:
        _call("mount / private", libc.mount, None, b"/", None, MS_REC | MS_PRIVATE, None)
        _call(f"mount {SHM}", libc.mount, os.fsencode(shm), SHM.encode(), None, MS_BIND | MS_REC, None)


def probe(*, shm: bool = False) -> str | None:
    """None when a child can be given its own network namespace here (and with `shm`, its own `/dev/shm` too),
    else why not (one start of `true`)."""
    if _load() is None:
        return "no unshare() on this system"
    if shm and not os.path.isdir(SHM):
        return f"there is no {SHM} to replace"
    true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
    uid, gid = os.getuid(), os.getgid()
    folder = tempfile.mkdtemp(prefix="agentcli-probe-") if shm else None
    try:
        subprocess.run([true], preexec_fn=lambda: enter(uid, gid, network=True, shm=folder), check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "user namespaces are not allowed here" if not shm else "mount namespaces are not allowed here"
    finally:
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return None
