"""Linux Landlock through its three system calls (ctypes), split for a sandbox applied before `exec`.

A `Ruleset` is built in agentcli (opening each path, one `landlock_add_rule` a rule: the costly part) and
kept as a file descriptor; a forked child only calls `restrict_self(fd)` (`PR_SET_NO_NEW_PRIVS`, then
`landlock_restrict_self`), which costs microseconds. PyPI's bindings (`landlock`, `py-landlock`) build and
apply in one step and have no rule on a file opened without following symlinks, hence this module.

What each ABI adds (the kernel reports its own with `abi_version`): 1 (Linux 5.13) the file rights, 2
`REFER` (links and renames across folders), 3 `TRUNCATE`, 4 TCP bind and connect, 5 `IOCTL_DEV`, 6 scopes
(abstract unix sockets, signals), 7 audit logging. Rights an older kernel does not know are left out.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass

_CREATE_RULESET, _ADD_RULE, _RESTRICT_SELF = 444, 445, 446  # the same number on every architecture
_CREATE_RULESET_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
PR_SET_NO_NEW_PRIVS = 38

# Filesystem rights. Those of a file (the first four, and IOCTL_DEV) may be granted on a file or a folder.
EXECUTE, WRITE_FILE, READ_FILE, READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
REMOVE_DIR, REMOVE_FILE, MAKE_CHAR, MAKE_DIR = 1 << 4, 1 << 5, 1 << 6, 1 << 7
MAKE_REG, MAKE_SOCK, MAKE_FIFO, MAKE_BLOCK, MAKE_SYM = 1 << 8, 1 << 9, 1 << 10, 1 << 11, 1 << 12
REFER, TRUNCATE, IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
NET_BIND_TCP, NET_CONNECT_TCP = 1 << 0, 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET, SCOPE_SIGNAL = 1 << 0, 1 << 1

FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
READ_RIGHTS = EXECUTE | READ_FILE | READ_DIR


def fs_rights(abi: int) -> int:
    """Every filesystem right the kernel of `abi` knows (all of them are handled: denied unless granted)."""
    rights = (1 << 13) - 1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


class _RulesetAttr(ctypes.Structure):
    _fields_ = (("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64))


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel's struct is packed: 12 bytes
    _fields_ = (("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32))


class _NetPortAttr(ctypes.Structure):
    _fields_ = (("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64))


class LandlockError(OSError):
    """A Landlock call failed (the kernel's errno and what was being done)."""


_SYSCALL: Callable[..., int] | None = None
_PRCTL: Callable[..., int] | None = None


def _syscall() -> Callable[..., int] | None:
    """libc's `syscall` (loaded once, with `prctl`), or None off Linux."""
    global _SYSCALL, _PRCTL
    if _SYSCALL is None and sys.platform.startswith("linux"):
        with contextlib.suppress(OSError, AttributeError):
            libc = ctypes.CDLL(None, use_errno=True)
            _SYSCALL, _PRCTL = libc.syscall, libc.prctl
    return _SYSCALL


def abi_version() -> int:
    """The Landlock ABI of this kernel; 0 where there is none (not Linux, too old, or disabled at boot)."""
    call = _syscall()
    if call is None:
        return 0
    version = call(_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION))
    return max(int(version), 0)


def _fail(what: str) -> LandlockError:
    err = ctypes.get_errno()
    return LandlockError(err, f"Landlock: {what}: {os.strerror(err)}")


@dataclass
class Ruleset:
    """One ruleset: created with the rights it handles, filled with rules, then applied by children."""

    abi: int
    fd: int

    @classmethod
    def create(cls, abi: int, *, net: bool, scoped: int = 0) -> Ruleset:
        """A ruleset handling every filesystem right of `abi`, TCP bind and connect when `net` (ABI 4+), and
        `scoped` (ABI 6+). Raises LandlockError."""
        call = _syscall()
        if call is None or abi < 1:
            raise LandlockError(0, "Landlock: not available on this system")
        attr = _RulesetAttr(fs_rights(abi), NET_BIND_TCP | NET_CONNECT_TCP if net and abi >= 4 else 0,
                            scoped if abi >= 6 else 0)
        size = 24 if abi >= 6 else 16 if abi >= 4 else 8
        fd = call(_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
        if fd < 0:
            raise _fail("cannot create a ruleset")
        return cls(abi, int(fd))

    def allow_path(self, fd: int, rights: int) -> None:
        """Grant `rights` (masked to what this ABI knows) beneath the open file or folder `fd`."""
        attr = _PathBeneathAttr(rights & fs_rights(self.abi), fd)
        if self._syscall()(_ADD_RULE, self.fd, _RULE_PATH_BENEATH, ctypes.byref(attr), ctypes.c_uint32(0)) < 0:
            raise _fail("cannot add a path rule")

    def allow_port(self, port: int, rights: int) -> None:
        """Grant TCP `rights` (NET_BIND_TCP, NET_CONNECT_TCP) on `port` (ABI 4+)."""
        attr = _NetPortAttr(rights, port)
        if self._syscall()(_ADD_RULE, self.fd, _RULE_NET_PORT, ctypes.byref(attr), ctypes.c_uint32(0)) < 0:
            raise _fail(f"cannot add a rule for port {port}")

    @staticmethod
    def _syscall() -> Callable[..., int]:
        call = _syscall()
        assert call is not None  # a Ruleset exists only where the call does
        return call

    def close(self) -> None:
        """Release the ruleset (domains already applied stay)."""
        with contextlib.suppress(OSError):
            os.close(self.fd)


def restrict_self(ruleset_fd: int) -> None:
    """Apply the ruleset to this process and every process it starts from now on; irreversible.

    Meant for a forked child before `exec`; libc was loaded by the parent (`abi_version`, `Ruleset.create`).
    Raises LandlockError.
    """
    call = _syscall()
    if call is None or _PRCTL is None or _PRCTL(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise _fail("cannot set no_new_privs")
    if call(_RESTRICT_SELF, ruleset_fd, ctypes.c_uint32(0)) != 0:
        raise _fail("cannot restrict the process")
