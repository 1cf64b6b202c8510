"""What a remote task sends to its worker and what comes back: the job, the finished run with its file changes, and
those changes written into the task's local worktree (from where the usual merge takes them)."""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from agentcli.agent import Session
    from agentcli.config import Settings
    from agentcli.llm import ResolvedModel
    from agentcli.subagents.budget import Budgets
    from agentcli.tools import PermissionPolicy, PermissionRequest

MAX_CHANGE_BYTES = 256 << 20  # what a remote task may bring back in all


class RemoteError(Exception):
    """A remote task could not start, run or come back; the message is one line."""


@dataclass(slots=True)
class RemoteJob:
    """Everything the worker needs but the provider key (`model.api_key` is empty): that comes apart, as an argument
    of the call that prepares the task (in memory only: Ray logs a runtime environment, and a process's environment
    can be read by what it starts)."""

    task_id: str
    settings: Settings  # api keys removed
    session: Session  # the subagent's, its workspace the worker's checkout once there
    model: ResolvedModel
    tool_names: tuple[str, ...]
    write_paths: list[str] | None
    max_turns: int
    budgets: Budgets  # also held on the worker, so a stop does not wait for the round trip to the parent
    rules: PolicyRules  # the parent's, decided on the worker; what needs the person is asked through the parent
    asks: bool  # (`Question`) when the parent has someone to ask
    mcp: tuple[McpSpec, ...]  # the parent's MCP tools it may use: their calls run at the parent (`McpCall`)
    hook_events: tuple[str, ...]  # the events the person has hooks for: they run at the parent (`HookCall`)
    here: dict[str, str]  # its tools that run at the parent, with their descriptions (SendMessage, ListAgents,
    # Skill, AskUserQuestion: `ToolHere`)
    non_interactive: bool
    bundle: bytes  # the worktree's snapshot (`snapshot.bundle_of`)
    snapshot: str  # its commit
    message: str = ""


@dataclass(frozen=True, slots=True)
class PolicyRules:
    """The parent's permission mode and rules, as the worker's copy of its policy follows them."""

    mode: str
    allow: tuple[str, ...]
    deny: tuple[str, ...]
    ask: tuple[str, ...]

    @classmethod
    def of(cls, policy: PermissionPolicy) -> PolicyRules:
        return cls(policy.mode, *(tuple(r.text for r in rules) for rules in (policy.allow, policy.deny, policy.ask)))

    def apply(self, policy: PermissionPolicy) -> None:
        """Make `policy` decide by these (the worker's copy)."""
        from agentcli.tools import PermissionRule

        policy.set_mode(self.mode)  # type: ignore[arg-type]
        for kept, texts in ((policy.allow, self.allow), (policy.deny, self.deny), (policy.ask, self.ask)):
            kept[:] = [PermissionRule.parse(text) for text in texts]


@dataclass(frozen=True, slots=True)
class Question:
    """A call the worker's permission policy needs the person for: the parent asks its approver and sends the
    answer back (`RemoteWorker.answer`)."""

    number: int
    request: PermissionRequest


@dataclass(frozen=True, slots=True)
class McpSpec:
    """One MCP tool of the parent's, as the worker rebuilds it (`mcp.tool_class`): its servers stay the parent's."""

    server: str
    name: str
    description: str
    schema: dict[str, Any]
    read_only: bool


@dataclass(frozen=True, slots=True)
class McpCall:
    """A call of one of those tools: the parent runs it on its server and sends back (text, is_error)."""

    number: int
    server: str
    tool: str
    arguments: dict[str, Any]
    agent: str


@dataclass(frozen=True, slots=True)
class HookCall:
    """The subagent's PreToolUse or PostToolUse hooks to fire: the parent's engine runs them and sends back its
    `HookVerdict` (the person's hooks are commands of the parent's machine)."""

    number: int
    event: str
    data: dict[str, Any]
    session_id: str
    agent: str
    target: str | None
    tool_call_id: str | None


@dataclass(frozen=True, slots=True)
class ToolHere:
    """A call of one of the task's tools that run at the parent; the parent sends back its `ToolResult`."""

    number: int
    name: str
    arguments: dict[str, Any]
    tool_call_id: str


@dataclass(frozen=True, slots=True)
class Unread:
    """Letters the parent forwarded that the subagent's turn ended without reading (the parent keeps them)."""

    letters: list[str]


Asked = Question | McpCall | HookCall | ToolHere  # what the worker sends the parent with its events, and waits on


@dataclass(frozen=True, slots=True)
class Change:
    """One path the task changed: its new content (`file`, `link`) or its removal (`gone`)."""

    path: str  # relative, '/'-separated, as git names it
    kind: Literal["file", "link", "gone"]
    data: bytes = b""  # a file's bytes, a link's target
    executable: bool = False


@dataclass(slots=True)
class Finished:
    """What the worker hands back at the end: what the task changed."""

    changes: list[Change] = field(default_factory=list)
    problem: str = ""  # why its changes could not be collected (then there are none)


def _checked(root: Path, path: str) -> Path:
    """`path` under `root`, refused when it is absolute, climbs out, names git's folder or crosses a symlink."""
    parts = PurePosixPath(path).parts
    if not parts or path.startswith("/") or any(p in ("", ".", "..") for p in parts) or parts[0] == ".git" \
            or "\\" in path or "\0" in path:
        raise RemoteError(f"the remote task returned an unusable path {path[:200]!r}")
    folder = root
    for part in parts[:-1]:
        folder = folder / part
        try:
            mode = os.lstat(folder).st_mode
        except FileNotFoundError:
            folder.mkdir()
            continue
        if not stat.S_ISDIR(mode):
            raise RemoteError(f"the remote task's path {path[:200]!r} crosses a file or a symlink")
    return folder / parts[-1]


def apply_changes(root: Path, changes: list[Change]) -> list[str]:
    """Write `changes` into the worktree at `root` (never outside it, never through a symlink); the paths."""
    if sum(len(c.data) for c in changes) > MAX_CHANGE_BYTES:
        raise RemoteError(f"the remote task's changes exceed {MAX_CHANGE_BYTES >> 20} MiB")
    done: list[str] = []
    for change in changes:
        target = _checked(root, change.path)
        if (os.path.lexists(target) and not os.path.isdir(target)) or os.path.islink(target):
            target.unlink()
        elif os.path.isdir(target) and change.kind != "gone":
            raise RemoteError(f"the remote task's file {change.path[:200]!r} is a folder here")
        if change.kind == "link":
            os.symlink(change.data.decode("utf-8", "surrogateescape"), target)
        elif change.kind == "file":
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if change.executable
                         else 0o644)
            with os.fdopen(fd, "wb") as fh:
                fh.write(change.data)
        done.append(change.path)
    return done
