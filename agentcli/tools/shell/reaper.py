"""Bash children never outlive agentcli, even when agentcli is killed with SIGKILL.

Three mechanisms, all set up by the Bash tool:

- `parent_death_hook` runs in the forked child before `exec bash` (Linux): the kernel sends
  bash SIGKILL when the thread that forked it ends. Only bash itself gets it; its children do not.
- The reaper: a tiny process (`python -I .../agentcli/tools/reaper.py`) started lazily on the first Bash
  call, in its own session so terminal signals and process-group kills do not reach it. It holds the
  read end of a pipe; agentcli writes `+PGID` when a Bash process group starts and `-PGID` once it
  is gone. When the pipe reaches end of file (agentcli exited or died, kill -9 included) it sends
  SIGKILL to every group still recorded and exits. It works where prctl does not exist.
- The mark: every Bash call runs with `AGENTCLI_BASH_RUN=<this agentcli's mark>.<call>` in its
  environment, which its descendants inherit, also those that leave the process group and the
  session (a daemon: double fork, `setsid`). After the call, once its group is gone, `kill_marked`
  finds what still carries the call's mark in `/proc/*/environ` and kills it; the reaper does the
  same for every call of its agentcli when the pipe closes (normal exit, SIGTERM, kill -9). Linux
  (where `/proc` exists); elsewhere only the process groups are covered. A process that clears its
  environment before it execs, or that makes itself non-dumpable, is not found.

This module imports only the standard library: the reaper process starts in a few milliseconds.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable

PR_SET_PDEATHSIG = 1
MARK_VARIABLE = "AGENTCLI_BASH_RUN"  # in Bash's environment: whose call a process descends from
_KILL_ROUNDS = 5  # scans of /proc for marked processes, while each finds some (a daemon that forks again)
_MAX_STARTS = 3  # a reaper that keeps dying is not started again
#: All the reaper's interpreter needs to start and find this module.
_REAPER_ENV = frozenset({"PATH", "PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "LD_LIBRARY_PATH", "SYSTEMROOT"})


def load_prctl() -> Callable[..., int] | None:
    """libc's `prctl` (Linux), or None where it does not exist."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        prctl: Callable[..., int] = libc.prctl
    except (OSError, AttributeError):
        return None
    return prctl


_PRCTL: Callable[..., int] | None = None
_PRCTL_LOADED = False


def parent_death_hook() -> Callable[[], None] | None:
    """A `preexec_fn` that gives the child SIGKILL when this process's forking thread dies; None without prctl.

    Call it in the parent (it loads libc there, never in the forked child). The caller must fork
    from a thread that lives as long as agentcli (the event loop's thread).
    """
    global _PRCTL, _PRCTL_LOADED
    if not _PRCTL_LOADED:
        _PRCTL, _PRCTL_LOADED = load_prctl(), True
    prctl = _PRCTL
    if prctl is None:
        return None
    parent = os.getpid()

    def hook() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died between fork and prctl
            os._exit(1)

    return hook


def mark_needle(mark: str, *, whole: bool = True) -> bytes:
    """What an environment entry starts with when it carries `mark`: the whole value (`whole`), or a prefix of it."""
    return f"{MARK_VARIABLE}={mark}".encode() + (b"\0" if whole else b"")


def _carries(pid: int, needle: bytes) -> bool:
    try:
        with open(f"/proc/{pid}/environ", "rb") as fh:
            environ = fh.read()
    except OSError:  # gone, a zombie (empty), or not ours to read
        return False
    return environ.startswith(needle) or b"\0" + needle in environ


def _last_pid() -> int | None:
    """The id the kernel handed out last in this pid namespace (Linux), or None."""
    try:
        with open("/proc/sys/kernel/ns_last_pid", "rb") as fh:
            return int(fh.read())
    except (OSError, ValueError):
        return None


def marked_processes(needle: bytes, after: int | None = None) -> list[int]:
    """The processes whose environment has an entry starting with `needle`, read from /proc (none without it).

    `after`: a pid the marked processes were all started after (bash's): while the kernel's ids have not
    wrapped around since, only higher ids are read, so a call's sweep reads a few environments, not all.
    """
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    if after is not None and (last := _last_pid()) is not None and last >= after:
        pids = [pid for pid in pids if pid > after]
    me = os.getpid()
    return [pid for pid in pids if pid != me and _carries(pid, needle)]


def _kill_carrier(pid: int, needle: bytes) -> None:
    """SIGKILL `pid` if it still carries `needle`: through a pidfd where there is one, so an id reused since the
    scan (the process exited, another took its number) is never hit."""
    pidfd = None
    with contextlib.suppress(AttributeError, OSError):
        pidfd = os.pidfd_open(pid)
    try:
        if pidfd is not None:
            if _carries(pid, needle):  # the pidfd pins the process it names: checked, then signalled
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        else:
            os.kill(pid, signal.SIGKILL)
    except OSError:
        pass
    finally:
        if pidfd is not None:
            os.close(pidfd)


def kill_marked(needle: bytes, after: int | None = None) -> int:
    """SIGKILL every process carrying `needle` (see `mark_needle`; `after` as for `marked_processes`), scanning
    again while a scan finds new ones; how many were killed. A full scan reads every environment on the machine
    (~1 ms per hundred processes); with `after`, ~0.15 ms."""
    seen: set[int] = set()
    for _ in range(_KILL_ROUNDS):
        found = [pid for pid in marked_processes(needle, after) if pid not in seen]
        if not found:
            break
        for pid in found:
            _kill_carrier(pid, needle)
        seen.update(found)
    return len(seen)


class Reaper:
    """agentcli's side: starts the reaper process on first use, tells it each process group, hands out marks."""

    def __init__(self) -> None:
        self._proc: subprocess.Popen[bytes] | None = None
        self._lock = threading.Lock()
        self._failed = False
        self._starts = 0
        self.mark = f"{os.getpid()}-{os.urandom(4).hex()}"  # this agentcli's; each call's adds `.N`
        self._calls = 0

    def new_mark(self) -> str:
        """The mark of one Bash call: its descendants carry it in `MARK_VARIABLE`."""
        with self._lock:
            self._calls += 1
            return f"{self.mark}.{self._calls}"

    def _ensure(self) -> subprocess.Popen[bytes] | None:
        if self._proc is not None and self._proc.poll() is None:
            return self._proc
        if self._failed:
            return None
        self._starts += 1
        if self._starts > _MAX_STARTS:
            self._failed = True  # it keeps dying: the process-group kill on cancel and PDEATHSIG still hold
            return None
        # By file, isolated (-I): only the standard library is imported, whatever sys.path holds.
        here = os.path.abspath(__file__)
        command = [sys.executable, "-I", here] if os.path.isfile(here) else [sys.executable, "-m", __name__]
        command.append(self.mark)
        try:
            self._proc = subprocess.Popen(
                command,
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
                cwd="/",  # pins no workspace or mount
                env={k: v for k, v in os.environ.items() if k in _REAPER_ENV},  # no keys, no secrets
            )
        except OSError:
            self._failed = True  # the process-group kill on cancel and PDEATHSIG still hold
            return None
        return self._proc

    def spawn_hook(self) -> Callable[[], None] | None:
        """A `preexec_fn` for Bash: the parent-death signal, and the child's own group sent to the reaper.

        The child writes `+PGID` (its pid: `start_new_session` made it a group leader before this
        runs) into the reaper's pipe before it execs bash, so no window is left between the fork and
        `track()` in which a kill -9 of agentcli would orphan the group. Call it in the parent.
        """
        death = parent_death_hook()
        with self._lock:
            proc = self._ensure()
        fd = proc.stdin.fileno() if proc is not None and proc.stdin is not None else None
        if fd is None:
            return death

        def hook() -> None:
            if death is not None:
                death()
            try:  # a reaper that died makes this write fail: bash still runs (track() starts a new one)
                previous = signal.signal(signal.SIGPIPE, signal.SIG_IGN)
            except (ValueError, OSError):
                previous = None
            try:
                os.write(fd, f"+{os.getpid()}\n".encode())
            except OSError:
                pass
            finally:
                if previous is not None:
                    signal.signal(signal.SIGPIPE, previous)

        return hook

    def _send(self, line: str) -> None:
        with self._lock:
            proc = self._ensure()
            if proc is None or proc.stdin is None:
                return
            try:
                proc.stdin.write(line.encode())
                proc.stdin.flush()
            except (OSError, ValueError):
                self._proc = None  # it died: the next group starts a new one

    def track(self, pgid: int) -> None:
        """A Bash process group started: kill it if agentcli dies."""
        self._send(f"+{pgid}\n")

    def untrack(self, pgid: int) -> None:
        """The group is gone: forget it (its id may be reused by someone else)."""
        if self._proc is not None:
            self._send(f"-{pgid}\n")

    def close(self) -> None:
        """Close the pipe: the reaper kills what is still recorded and exits."""
        with self._lock:
            proc, self._proc = self._proc, None
        if proc is not None and proc.stdin is not None:
            with contextlib.suppress(OSError):
                proc.stdin.close()
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=1)


_REAPER: Reaper | None = None


def reaper() -> Reaper:
    """The process-wide reaper client."""
    global _REAPER
    if _REAPER is None:
        _REAPER = Reaper()
    return _REAPER


def serve(stream: int = 0, mark: str | None = None) -> None:
    """The reaper process: read `+PGID` / `-PGID` lines until EOF, then SIGKILL every group left and every
    process carrying `mark` (any call's)."""
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    groups: set[int] = set()
    pending = b""
    while True:
        try:
            chunk = os.read(stream, 4096)
        except InterruptedError:
            continue
        except OSError:
            break
        if not chunk:
            break
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            try:
                value = int(line[1:])
            except ValueError:
                continue
            if value <= 1:
                continue  # never a broadcast or init's group
            if line.startswith(b"+"):
                groups.add(value)
            elif line.startswith(b"-"):
                groups.discard(value)
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)
    if mark:
        kill_marked(mark_needle(mark + ".", whole=False))


if __name__ == "__main__":
    serve(mark=sys.argv[1] if len(sys.argv) > 1 else None)
