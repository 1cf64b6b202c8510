"""The Bash sandbox of one session: what it allows, which mechanisms this system offers, how a child enters it.

Policy (`[sandbox]`): a command writes only in the workspace, a temp folder of its session (`TMPDIR` points
there) and the usual devices; reads everywhere except a deny list (`tools/sandbox/rules`); reaches no network
unless `network = "allow"`. Mechanisms, found once per session:

- Landlock (Linux 5.13+, `tools/sandbox/landlock`): the file rules; from ABI 6 also no signal to a process outside the
  command and, with the network off, no abstract unix socket of the host;
- the network off: a network namespace of the session's own, shared by all its commands and its subagents'
  (`tools/sandbox/netns`), where user namespaces are allowed, which stops every protocol (a server one command
  starts is reachable from a later one, from nothing outside the session); otherwise Landlock's TCP rules (ABI 4+),
  which stop TCP bind and connect only;
- devices: no terminal (a command's output comes back through a pipe; the person's terminal is never opened), and
  never the host's `/dev/shm`: a folder of the session bound over it in a mount namespace of the command's own
  where user namespaces are allowed (POSIX shared memory works), else none;
- on macOS, Seatbelt (`tools/sandbox/seatbelt`): the command runs under `sandbox-exec` with a profile of the same policy
  (files, signals, and with the network off every network operation).

`mode = "auto"` uses what there is and says so; `"required"` refuses Bash when a part of the policy cannot be
enforced; `"off"` runs Bash as the person's own commands. On a system with neither Landlock nor Seatbelt there
is no sandbox and the session says so.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import shutil
import tempfile
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agentcli.tools.sandbox import landlock, netns, seatbelt
from agentcli.tools.sandbox.netns import SHM
from agentcli.tools.sandbox.notes import blocked_notes
from agentcli.tools.sandbox.rules import RuleSet, build_rules, deny_read_paths, open_grants, terminal_devices

if TYPE_CHECKING:
    from agentcli.config import Settings

log = logging.getLogger(__name__)

SandboxMode = Literal["auto", "required", "off"]
NetworkPolicy = Literal["deny", "allow"]
_TEMP_VARIABLES = ("TMPDIR", "TMP", "TEMP", "TEMPDIR")


@dataclass(frozen=True)
class SandboxSpec:
    """What the person asked for (`[sandbox]`) and where the session works."""

    workspace: Path
    mode: SandboxMode = "auto"
    network: NetworkPolicy = "deny"
    deny_read: tuple[str, ...] = ()
    home: str | None = None  # the home folder whose credentials are denied (None: the process's)
    extra_write: tuple[Path, ...] = ()  # additional directories (`additional_dirs`): written too, minus the deny list


@dataclass(frozen=True)
class Mechanisms:
    """What this system offers for the spec: the Landlock ABI (0: none) and how the network is cut."""

    abi: int
    network: Literal["namespace", "landlock-tcp", "seatbelt", "none", "allowed"]
    missing: tuple[str, ...] = ()  # parts of the policy nothing here enforces, in words
    seatbelt: bool = False  # macOS: the whole policy through sandbox-exec (abi is 0)
    private_shm: bool = False  # a /dev/shm of the command's own (a mount namespace); else the host's is closed

    @property
    def available(self) -> bool:
        """Whether there is a sandbox at all (Landlock's file rules, or Seatbelt)."""
        return self.abi > 0 or self.seatbelt


def detect(spec: SandboxSpec, abi: int | None = None) -> Mechanisms:
    """Which mechanisms serve `spec` on this system (a Landlock query; for the network, one probe start)."""
    abi = landlock.abi_version() if abi is None else abi
    if abi == 0 and seatbelt.available():
        return Mechanisms(0, "allowed" if spec.network == "allow" else "seatbelt", seatbelt=True)
    if abi == 0:
        return Mechanisms(0, "none", ("Landlock is not available on this system (Linux 5.13+ with Landlock on)",))
    private_shm = netns.probe(shm=True) is None
    if spec.network == "allow":
        return Mechanisms(abi, "allowed", private_shm=private_shm)
    why_not = None if private_shm else netns.probe()
    if why_not is None:
        return Mechanisms(abi, "namespace", private_shm=private_shm)
    if abi >= 4:
        return Mechanisms(abi, "landlock-tcp")
    return Mechanisms(abi, "none", (f"the network stays reachable: Landlock ABI {abi} has no network rules "
                                     f"and {why_not}",))


@dataclass
class _Built:
    rules: RuleSet
    ruleset: landlock.Ruleset
    denied: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)


class Sandbox:
    """One session tree's Bash sandbox (shared by the main agent and its subagents)."""

    def __init__(self, spec: SandboxSpec, mechanisms: Mechanisms | None = None,
                 network: netns.SessionNetwork | None = None) -> None:
        self.spec = spec
        self._mechanisms = mechanisms
        # The ABI now (one system call); the network's mechanism on first need (`mechanisms`: a probe start).
        self.abi = mechanisms.abi if mechanisms is not None else (
            landlock.abi_version() if spec.mode != "off" else 0)
        self.seatbelt = spec.mode != "off" and self.abi == 0 and (
            mechanisms.seatbelt if mechanisms is not None else seatbelt.available())
        self._lock = threading.Lock()
        self._tmpdir: Path | None = None
        self._built: _Built | None = None
        self._uid, self._gid = os.getuid(), os.getgid()
        # The session's network namespace (made on the first command that needs it); a rooted copy shares its
        # root's and leaves closing it to the root.
        self._owns_network = network is None
        self.network = network if network is not None else netns.SessionNetwork(self._uid, self._gid)

    def rooted(self, workspace: Path) -> Sandbox:
        """The same policy and mechanisms writing in another folder instead (a subagent's worktree; no additional
        directory) and reaching the same network namespace; its own temp folder, removed by its `close`."""
        return Sandbox(dataclasses.replace(self.spec, workspace=workspace.resolve(), extra_write=()), self._mechanisms,
                       self.network)

    def add_write_roots(self, folders: list[Path]) -> None:
        """Let commands write in these folders too (the session's additional directories, in place of any set
        before); the ruleset is built again for the next command."""
        with self._lock:
            self.spec = dataclasses.replace(self.spec, extra_write=tuple(folders))
            built, self._built = self._built, None
        if built is not None:
            built.ruleset.close()

    # ---- what it is ---------------------------------------------------------------------------

    @property
    def mechanisms(self) -> Mechanisms:
        """What this system offers for the spec (found on first use, then kept)."""
        if self._mechanisms is None:
            self._mechanisms = detect(self.spec, self.abi) if self.spec.mode != "off" else Mechanisms(0, "none")
        return self._mechanisms

    @property
    def active(self) -> bool:
        """Whether Bash commands run inside it."""
        return self.spec.mode != "off" and (self.abi > 0 or self.seatbelt)

    def refusal(self) -> str | None:
        """Why Bash is refused (`mode = "required"` and a part of the policy is not enforced here), else None."""
        if self.spec.mode != "required" or (self.mechanisms.available and not self.mechanisms.missing):
            return None
        gaps = "; ".join(self.mechanisms.missing)
        return (f'Bash is refused: [sandbox] mode = "required" and the sandbox cannot be enforced here ({gaps}). '
                "Do not retry; continue without Bash or explain what you would have run.")

    def unsandboxed_reason(self) -> str:
        """Why Bash runs outside any sandbox though the person did not turn it off ("" when it does not)."""
        if self.spec.mode != "auto" or self.abi > 0 or self.seatbelt:
            return ""
        return "; ".join(self.mechanisms.missing) or "no sandbox on this system"

    def summary(self) -> str:
        """A few words for the status bar: `sandbox: landlock 7 + netns`, `sandbox off`, `no sandbox`."""
        if self.spec.mode == "off":
            return "sandbox off"
        if not self.mechanisms.available:
            return "no sandbox"
        net = {"namespace": " + netns", "landlock-tcp": " + tcp", "seatbelt": "", "none": ", net open",
               "allowed": ", net on"}[self.mechanisms.network]
        if self.mechanisms.seatbelt:
            return f"sandbox: seatbelt{net}"
        return f"sandbox: landlock {self.mechanisms.abi}{net}"

    def describe(self) -> str:
        """One line: on or off, with what, and what it does not cover (`config show`, the warning line)."""
        if self.spec.mode == "off":
            return 'Bash sandbox: off ([sandbox] mode = "off"): commands run with all of the person\'s access'
        if not self.mechanisms.available:
            tail = ("Bash is refused" if self.spec.mode == "required" else
                    "auto mode and --yes ask before each Bash command instead")
            return f"Bash sandbox: none ({'; '.join(self.mechanisms.missing)}); {tail}"
        abi = self.mechanisms.abi
        extra = " and additional directories" if self.spec.extra_write else ""
        shm = "its own /dev/shm" if self.mechanisms.private_shm else "no /dev/shm"
        files = (f"writes only in the workspace{extra}, the session's temp folder and a few devices ({shm}, no "
                 "terminal); reads everywhere but the deny list")
        parts = [f"Seatbelt (sandbox-exec): {files}" if self.mechanisms.seatbelt else f"Landlock ABI {abi}: {files}"]
        if abi >= 6 or self.mechanisms.seatbelt:
            parts.append("no signals to processes outside")
        network = {
            "namespace": "network off: a network namespace of the session's own (every protocol)",
            "landlock-tcp": "network off: Landlock TCP rules (TCP only; UDP and unix sockets not covered)",
            "seatbelt": "network off: Seatbelt denies every network operation",
            "allowed": 'network on ([sandbox] network = "allow")',
            "none": "network NOT restricted",
        }[self.mechanisms.network]
        parts.append(network)
        return "Bash sandbox: on (" + "; ".join(parts) + ")"

    # ---- what a command runs with ---------------------------------------------------------------

    def tmpdir(self) -> Path:
        """The session's temp folder (created on first use, removed by `close`)."""
        with self._lock:
            if self._tmpdir is None:
                self._tmpdir = Path(os.path.realpath(tempfile.mkdtemp(prefix="agentcli-bash-")))
            return self._tmpdir

    def write_roots(self) -> list[str]:
        """Where a sandboxed command may write: the workspace, the additional directories and the session's temp
        folder (a denied path inside any of them stays closed: `sandbox_rules.build_rules`)."""
        extra = [os.path.realpath(folder) for folder in self.spec.extra_write]
        return [os.path.realpath(self.spec.workspace), *extra, str(self.tmpdir())]

    def environment(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` with the temp-folder variables pointing at the session's temp folder."""
        tmp = str(self.tmpdir())
        return {**env, **{name: tmp for name in _TEMP_VARIABLES}}

    def denied(self) -> list[str]:
        """The resolved paths no command may read."""
        return deny_read_paths(self.spec.home, self.spec.deny_read)

    def closed_devices(self) -> list[str]:
        """The devices no command may open: the terminals, and the host's `/dev/shm` (a command with a private one
        sees its own there)."""
        return [*terminal_devices(), SHM]

    def shm_dir(self) -> str | None:
        """The folder bound over `/dev/shm` for every command of the session (in its temp folder, so it goes with
        the session), or None when this system cannot give commands a private one."""
        if not (self.mechanisms.private_shm and self.mechanisms.abi > 0):
            return None
        folder = self.tmpdir() / "shm"
        folder.mkdir(mode=0o700, exist_ok=True)
        return str(folder)

    def _ruleset(self) -> _Built:
        """The built ruleset, built again when a folder it split has changed."""
        built = self._built
        if built is not None and not built.rules.stale():
            return built
        roots = self.write_roots()
        if (shm := self.shm_dir()) is not None:
            roots.append(shm)  # its own rule: a file below the bind mount is reached from it, not from the temp folder
        denied, devices = self.denied(), self.closed_devices()
        rules = build_rules(roots, [*denied, *devices])
        net_by_landlock = self.mechanisms.network == "landlock-tcp"
        scoped = landlock.SCOPE_SIGNAL
        if net_by_landlock:
            scoped |= landlock.SCOPE_ABSTRACT_UNIX_SOCKET  # a namespace has its own abstract sockets already
        ruleset = landlock.Ruleset.create(self.mechanisms.abi, net=net_by_landlock, scoped=scoped)
        try:
            open_grants(ruleset, rules.grants)
        except BaseException:
            ruleset.close()
            raise
        if built is not None:
            built.ruleset.close()  # every child forked with it has exec'd: Popen returns only after exec
        self._built = _Built(rules, ruleset, denied, devices)
        return self._built

    def child_hook(self, before: Callable[[], None] | None) -> Callable[[], None] | None:
        """A `preexec_fn` that runs `before`, then enters the sandbox; `before` itself when it is not active.

        Builds (or reuses) the ruleset, and makes the session's network namespace, here in the parent (OSError when
        it cannot); the child only joins or unshares, and restricts itself. A child that cannot enter the sandbox
        fails to start: a command never runs outside it by accident.
        """
        if not self.active or self.seatbelt:
            return before  # Seatbelt: `argv` runs the command under sandbox-exec
        fd = self._ruleset().ruleset.fd
        shared = self.network.fds() if self.mechanisms.network == "namespace" else None
        shm = self.shm_dir()
        uid, gid = self._uid, self._gid

        def hook() -> None:
            if before is not None:
                before()
            if shared is not None:
                netns.join(*shared, shm=shm)
            elif shm is not None:
                netns.enter(uid, gid, network=False, shm=shm)
            landlock.restrict_self(fd)

        return hook

    def argv(self, argv: list[str]) -> list[str]:
        """The command line that runs `argv` in the sandbox: under `sandbox-exec` on macOS; as it is with Landlock
        (the child hook restricts the child before `exec`) or when the sandbox is not active."""
        if not (self.active and self.seatbelt):
            return argv
        return seatbelt.command(argv, self.write_roots(), self.denied(),
                                network_off=self.mechanisms.network == "seatbelt")

    def notes(self, output: str) -> list[str]:
        """Lines naming the sandbox for each refusal the output shows (a path or the network)."""
        if not self.active:
            return []
        built = self._built
        denied = built.denied if built is not None else self.denied()
        devices = built.devices if built is not None else self.closed_devices()
        return blocked_notes(
            output, workspace=str(self.spec.workspace), write_roots=self.write_roots(), denied=denied,
            devices=devices, network_off=self.mechanisms.network in ("namespace", "landlock-tcp", "seatbelt"),
        )

    def close(self) -> None:
        """Release the ruleset and the network namespace (when this is the session's own, not a rooted copy), and
        remove the session's temp folder."""
        if self._owns_network:
            self.network.close()  # every child forked with its descriptors has exec'd
        with self._lock:
            built, self._built = self._built, None
            tmp, self._tmpdir = self._tmpdir, None
        if built is not None:
            built.ruleset.close()
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def session_sandbox(settings: Settings, workspace: Path) -> Sandbox:
    """The session's sandbox for `[sandbox]` (the ABI read now; the network's mechanism on first need)."""
    cfg = settings.sandbox
    return Sandbox(SandboxSpec(workspace.resolve(), cfg.mode, cfg.network, tuple(cfg.deny_read)))
