"""Namespaces of Bash commands (Linux, where unprivileged user namespaces are allowed): the session's network and
each command's `/dev/shm`.

The network (`SessionNetwork`): one user namespace with one network namespace in it per session, made on the
session's first command: a short-lived holder (`cat`, reading a pipe) enters them (`enter`: `unshare(CLONE_NEWUSER
| CLONE_NEWNET)`, the person's own uid and gid mapped to themselves so files keep their owner, the loopback
interface brought up), agentcli opens `/proc/<holder>/ns/user` and `/ns/net` (its own child, not yet reaped: the
pid cannot name another process) and lets the holder go. The two descriptors keep the namespaces alive; they are
close-on-exec, so no command or other program inherits them. Each command joins them with `setns` in its forked
child (`join`). Every command of the session sees the same loopback, and only it: no route out (TCP, UDP, ICMP
alike), no server of the host's `127.0.0.1`, no abstract unix socket of the host, nothing of another session's;
a server one command starts is reachable from a later one. Pathname unix sockets (`/run/docker.sock`,
`$SSH_AUTH_SOCK`) live in the file system and are not covered. The namespaces end when the session closes its
descriptors (`SessionNetwork.close`) or agentcli exits, however it ends (a kill -9 too: the kernel closes them),
and the last process inside has exited; no process of agentcli's keeps them.

`/dev/shm` (`CLONE_NEWNS`, every mount made private, then a folder of the session bound over `/dev/shm`): each
command has a mount namespace of its own, in the session's user namespace (or, with the network allowed, a user
namespace of its own): POSIX shared memory and semaphores work, in a folder that goes with the session, and the
host's `/dev/shm` (files planted there would outlive the session; the person's own there could be rewritten) is
out of sight.
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
import threading
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
            if libc.unshare and libc.mount and libc.setns:  # all exist (AttributeError: this libc lacks one)
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


def _libc() -> ctypes.CDLL:
    if _LIBC is None:
        raise OSError(0, "unshare: not available")
    return _LIBC


def _private_shm(libc: ctypes.CDLL, shm: str) -> None:
    _call("mount / private", libc.mount, None, b"/", None, MS_REC | MS_PRIVATE, None)
    _call(f"mount {SHM}", libc.mount, os.fsencode(shm), SHM.encode(), None, MS_BIND | MS_REC, None)


def enter(uid: int, gid: int, *, network: bool, shm: str | None) -> None:
    """Move this (single-threaded, forked) process into a new user namespace, with a network namespace of its own
    (loopback up) when `network`, and `shm` (a folder) bound over `/dev/shm` in a mount namespace of its own;
    raises OSError."""
    libc = _libc()
    _call("unshare", libc.unshare, CLONE_NEWUSER | (CLONE_NEWNET if network else 0) | (CLONE_NEWNS if shm else 0))
    _write("/proc/self/setgroups", "deny")
    _write("/proc/self/uid_map", f"{uid} {uid} 1")
    _write("/proc/self/gid_map", f"{gid} {gid} 1")
    if network:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
            fcntl.ioctl(sock.fileno(), _SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", _IFF_UP | _IFF_RUNNING))
    if shm:
        _private_shm(libc, shm)


def join(user_fd: int, net_fd: int, *, shm: str | None) -> None:
    """Move this (single-threaded, forked) process into the session's user and network namespaces (descriptors
    from `SessionNetwork.fds`), and with `shm`, into a mount namespace of its own there with `shm` bound over
    `/dev/shm`; raises OSError."""
    libc = _libc()
    _call("setns user", libc.setns, user_fd, CLONE_NEWUSER)  # all capabilities there: it is the person's own
    _call("setns net", libc.setns, net_fd, CLONE_NEWNET)
    if shm:
        _call("unshare", libc.unshare, CLONE_NEWNS)
        _private_shm(libc, shm)


def _holder_command() -> list[str]:
    return [shutil.which("cat") or "/bin/cat"]


class SessionNetwork:
    """The network of one session's commands: a user namespace with a network namespace in it, made on first use
    (`fds`) and let go by `close`."""

    def __init__(self, uid: int, gid: int) -> None:
        self._uid, self._gid = uid, gid
        self._lock = threading.Lock()
        self._fds: tuple[int, int] | None = None

    def fds(self) -> tuple[int, int]:
        """The descriptors of the user and the network namespace (made now if they are not yet); raises OSError
        when this system does not allow them."""
        with self._lock:
            if self._fds is None:
                self._fds = self._make()
            return self._fds

    def _make(self) -> tuple[int, int]:
        if _load() is None:
            raise OSError(0, "unshare: not available")
        uid, gid = self._uid, self._gid
        try:
            holder = subprocess.Popen(
                _holder_command(), stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                cwd="/", env={}, close_fds=True, preexec_fn=lambda: enter(uid, gid, network=True, shm=None))
        except subprocess.SubprocessError as exc:  # the hook failed: no namespaces here
            raise OSError(0, f"cannot make the session's network namespace ({exc})") from None
        opened: list[int] = []
        try:  # our child, running (it reads the pipe until we close it): its pid is its own
            for kind in ("user", "net"):
                opened.append(os.open(f"/proc/{holder.pid}/ns/{kind}", os.O_RDONLY | os.O_CLOEXEC))
        except OSError:
            for fd in opened:
                os.close(fd)
            raise
        finally:
            if holder.stdin is not None:
                holder.stdin.close()  # end of file: the holder exits (as it would if agentcli died now)
            holder.wait()
        return opened[0], opened[1]

    def inode(self) -> int | None:
        """The network namespace's number (as in `/proc/PID/ns/net`), or None before it is made or after `close`."""
        fds = self._fds
        return os.fstat(fds[1]).st_ino if fds is not None else None

    def close(self) -> None:
        """Let the namespaces go: they end with the last process inside (commands already run); the next `fds`
        makes new ones."""
        with self._lock:
            fds, self._fds = self._fds, None
        for fd in fds or ():
            with contextlib.suppress(OSError):
                os.close(fd)


def probe(*, shm: bool = False) -> str | None:
    """None when commands can share a network namespace of the session's own here (and with `shm`, each have
    its own `/dev/shm` too), else why not (the namespaces made and one start of `true` joining them)."""
    if _load() is None:
        return "no unshare() on this system"
    if shm and not os.path.isdir(SHM):
        return f"there is no {SHM} to replace"
    true = "/bin/true" if os.path.exists("/bin/true") else "/usr/bin/true"
    network = SessionNetwork(os.getuid(), os.getgid())
    folder = tempfile.mkdtemp(prefix="agentcli-probe-") if shm else None
    try:
        user_fd, net_fd = network.fds()
        subprocess.run([true], preexec_fn=lambda: join(user_fd, net_fd, shm=folder), check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return "user namespaces are not allowed here" if not shm else "mount namespaces are not allowed here"
    finally:
        network.close()
        if folder is not None:
            shutil.rmtree(folder, ignore_errors=True)
    return None
