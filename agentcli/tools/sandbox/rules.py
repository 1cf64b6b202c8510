"""What the Bash sandbox lets a command touch, as Landlock rules: read everywhere but a deny list, write in a few roots.

Landlock only grants; nothing can be subtracted from a grant. "Read everything except `~/.ssh`" is
therefore built by splitting: `/` is granted whole unless a denied path lies below it, in which case each
of its entries is treated the same way, down to the denied path, which is left out. Symlinks met while
splitting are skipped (their targets are covered where they live: following `~/keys -> ~/.ssh` would grant
the denied folder). Folder listing (`READ_DIR`) is granted on `/` as a whole, so `ls ~/.ssh` shows names
while no file in it can be opened. The write roots (the workspace, the session's temp folder) are split the
same way when a denied path lies inside them.

An entry created later in a folder that was split (a new file directly in `~`) is not covered by the rules
built before it existed: `RuleSet.stale` notices a change of any split folder and the rules are built again.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agentcli import paths
from agentcli.tools.sandbox import landlock

#: Credentials and keys no sandboxed command may read, relative to the home folder.
HOME_DENY_READ: tuple[str, ...] = (
    ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".config/gcloud", ".netrc", ".git-credentials",
    ".docker/config.json", ".pypirc", ".config/gh", ".config/github-copilot",
    ".claude/.credentials.json", ".codex/auth.json", ".gemini/oauth_creds.json",  # other agents' logins
)
#: Device files a command may write to (where they exist). No terminal: a command's output comes back to agentcli
#: through a pipe (its stdin is closed), and the person's terminal is theirs (`terminal_devices`).
DEVICE_FILES: tuple[str, ...] = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
#: The names under `/dev` of terminals and their screens: the pseudo-terminals (`pts/`, `ptmx`), the controlling
#: terminal (`tty`), consoles and virtual terminals (`console`, `tty1`, `ttyS0`, …) and their screen memory (`vcs*`).
_TERMINAL_NAMES = re.compile(r"pts|ptmx|console|tty.*|vcs.*|pty.*")

_DEVICE_RIGHTS = landlock.READ_FILE | landlock.WRITE_FILE | landlock.TRUNCATE | landlock.IOCTL_DEV


def _real(path: str | Path) -> str:
    return os.path.realpath(os.path.expanduser(str(path)))


def deny_read_paths(home: str | None = None, extra: Iterable[str] = ()) -> list[str]:
    """The resolved paths a sandboxed command may not read: the credentials under `home`, agentcli's own
    config, data and state folders, and `extra` (`[sandbox] deny_read`, `~` expanded)."""
    base = home if home is not None else os.path.expanduser("~")
    found = [os.path.join(base, rel) for rel in HOME_DENY_READ]
    found += [str(paths.config_dir()), str(paths.data_dir()), str(paths.state_dir())]
    found += [os.path.expanduser(item) for item in extra]
    resolved: list[str] = []
    for item in found:
        real = _real(item)
        if real != "/" and real not in resolved:
            resolved.append(real)
    return resolved


def terminal_devices(dev: str = "/dev") -> list[str]:
    """The terminal devices under `dev` (the person's terminal among them): a sandboxed command may neither read nor
    write them, so it can neither steal the person's keystrokes nor write escape sequences past agentcli's output
    filtering (a title, the clipboard) to the screen it finds through `/proc/$PPID/stat`."""
    try:
        names = sorted(os.listdir(dev))
    except OSError:
        return []
    return [os.path.join(dev, name) for name in names if _TERMINAL_NAMES.fullmatch(name)]


def is_within(path: str, root: str) -> bool:
    """Whether `path` is `root` or below it (both resolved)."""
    return path == root or path.startswith(root.rstrip("/") + "/")


@dataclass
class Grant:
    """One rule: a file or folder and the rights given beneath it."""

    path: str
    rights: int
    is_dir: bool


@dataclass
class RuleSet:
    """The rules of one policy, and the folders whose entries they were built from."""

    grants: list[Grant] = field(default_factory=list)
    split: dict[str, tuple[int, int]] = field(default_factory=dict)  # folder -> (inode, mtime_ns) when read

    def stale(self) -> bool:
        """Whether a split folder gained, lost or renamed an entry since the rules were built."""
        for folder, seen in self.split.items():
            try:
                st = os.stat(folder)
            except OSError:
                return True
            if (st.st_ino, st.st_mtime_ns) != seen:
                return True
        return False


def _split(root: str, rights: int, denied: list[str], out: RuleSet, is_dir: bool = True) -> None:
    """Grant `rights` on `root` minus every denied path below it."""
    if any(is_within(root, d) for d in denied):
        return
    if not is_dir or not any(is_within(d, root) for d in denied):
        out.grants.append(Grant(root, rights if is_dir else rights & landlock.FILE_RIGHTS, is_dir))
        return
    try:
        st = os.stat(root)
        entries = list(os.scandir(root))
    except OSError:
        return  # unreadable: nothing below it is granted
    out.split[root] = (st.st_ino, st.st_mtime_ns)
    for entry in entries:
        try:
            if entry.is_symlink():
                continue
            child_is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        _split(entry.path, rights, denied, out, child_is_dir)


def build_rules(write_roots: Iterable[str], denied: list[str]) -> RuleSet:
    """Read (and run) everywhere but `denied`; list every folder; write, create and remove in `write_roots`
    (minus `denied`) and on the usual devices (never a terminal, never the host's `/dev/shm`)."""
    rules = RuleSet()
    rules.grants.append(Grant("/", landlock.READ_DIR, True))
    _split("/", landlock.READ_RIGHTS, denied, rules)
    everything = landlock.fs_rights(99)
    for root in write_roots:
        _split(_real(root), everything, denied, rules)
    for device in DEVICE_FILES:
        if os.path.exists(device):
            rules.grants.append(Grant(device, _DEVICE_RIGHTS, False))
    return rules


def open_grants(ruleset: landlock.Ruleset, grants: Iterable[Grant]) -> int:
    """Add each grant to `ruleset` (an entry that vanished meanwhile is skipped); how many were added."""
    added = 0
    for grant in grants:
        try:
            fd = os.open(grant.path, os.O_PATH | os.O_CLOEXEC | os.O_NOFOLLOW)
        except OSError:
            continue
        try:
            ruleset.allow_path(fd, grant.rights)
            added += 1
        except landlock.LandlockError:
            pass  # a file system Landlock cannot tag (some pseudo file systems): its entry stays closed
        finally:
            os.close(fd)
    return added

