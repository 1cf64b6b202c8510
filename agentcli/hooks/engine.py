"""HookEngine: fire one event's hooks, read what they said (Claude Code's conventions), report each run.

What a hook says, by exit code: 0 is fine (its stdout may be JSON, see below; plain stdout of
`UserPromptSubmit` and `SessionStart` is context for the model); 2 blocks, with stderr as the
reason; anything else is an error that does not stop the run. JSON on stdout (exit 0) may say
`{"decision": "block", "reason": ...}`, `{"continue": false, "stopReason": ...}`, and in
`hookSpecificOutput` a `permissionDecision` (allow / deny / ask) with `permissionDecisionReason`
(PreToolUse) or `additionalContext`. The hooks matching one event run at the same time.

What a decision may do is the callers' business; the engine only narrows: a hook's `allow` is
reported (`HookVerdict.permission`) and never lets a call past agentcli's own rules or approval.

A hook may also be a program's callback (`HookCommand.callback_id`, the Claude Agent SDK's hooks): the engine's
`callback` is given the id and the same input, and its JSON answer is read like a command's JSON stdout. A callback
that fails (an error answer, a time-out) lets the action go ahead, unless its matcher said `onFailure: "block"`.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol

from agentcli.events import EventSink, HookRunEvent
from agentcli.hooks.process import Finished, hook_environment, run_command
from agentcli.hooks.settings import HookCommand, HookConfig

Outcome = Literal["ok", "blocked", "error", "timeout"]
_CONTEXT_EVENTS = frozenset({"UserPromptSubmit", "SessionStart", "SubagentStart"})  # plain stdout is context
#: Events whose hooks' `onFailure: "block"` is ignored (Claude Code's list; agentcli fires the first two).
_NEVER_BLOCKED = frozenset({"Stop", "SubagentStop", "TaskCompleted", "TeammateIdle"})
_KEPT_OUTPUT_CHARS = 4000  # of stdout / stderr on the event (what --verbose and the store show)
# agentcli's permission modes under Claude Code's names (the `permission_mode` field of the input).
CLAUDE_MODE = {"ask": "default", "accept_edits": "acceptEdits", "auto": "bypassPermissions", "readonly": "plan"}
#: Asks a program's hook callback: (callback id, the hook input, the tool call id) -> its JSON answer.
Callback = Callable[[str, dict[str, Any], str | None], Awaitable[dict[str, Any]]]


@dataclass(slots=True)
class HookVerdict:
    """What the hooks of one event decided together."""

    blocked: bool = False  # exit 2, decision block, permissionDecision deny
    reasons: list[str] = field(default_factory=list)
    stop: bool = False  # `continue: false`: end the run
    stop_reason: str = ""
    permission: Literal["allow", "deny", "ask"] | None = None  # the strictest a PreToolUse hook gave
    context: list[str] = field(default_factory=list)  # additionalContext (and plain stdout where that counts)

    @property
    def reason(self) -> str:
        """The blocks' reasons as one text."""
        return "; ".join(r for r in self.reasons if r) or "no reason given"


@dataclass(slots=True)
class _Read:
    outcome: Outcome
    reason: str = ""
    blocked: bool = False
    stop: bool = False
    stop_reason: str = ""
    permission: Literal["allow", "deny", "ask"] | None = None
    context: str = ""


_STRICTNESS = {None: 0, "allow": 1, "ask": 2, "deny": 3}


class Hooks(Protocol):
    """What an agent loop fires its hooks through: the `HookEngine`, or a remote subagent's stand-in that has the
    parent's engine fire them (`subagents.remote`)."""

    def has(self, event: str) -> bool: ...

    async def fire(self, event: str, data: Mapping[str, Any], *, session_id: str, agent: str, emit: EventSink,
                   target: str | None = None, tool_call_id: str | None = None) -> HookVerdict: ...


class HookEngine:
    """The hooks of one session tree (shared by the main agent and its subagents)."""

    def __init__(
        self,
        config: HookConfig,
        workspace: Path,
        *,
        env: Mapping[str, str] | None = None,
        mode: Callable[[], str] = lambda: "ask",
    ) -> None:
        self.config = config
        self.workspace = workspace
        self.env = hook_environment(env, workspace)
        self.mode = mode  # the permission mode now (Shift+Tab changes it)
        self.callback: Callback | None = None  # answers the hooks that are a program's callbacks
        self.transcript_path: Callable[[str], str] = lambda session_id: ""  # a session's JSONL transcript, if kept

    def has(self, event: str) -> bool:
        """Whether any hook is configured for `event` (callers skip building input otherwise)."""
        return self.config.has(event)

    async def fire(
        self,
        event: str,
        data: Mapping[str, Any],
        *,
        session_id: str,
        agent: str,
        emit: EventSink,
        target: str | None = None,
        tool_call_id: str | None = None,
    ) -> HookVerdict:
        """Run the hooks of `event` that match `target`, with `data` added to the common input fields."""
        hooks = self.config.matching(event, target)
        verdict = HookVerdict()
        if not hooks:
            return verdict
        payload = {
            "session_id": session_id,
            "transcript_path": self.transcript_path(session_id),
            "cwd": str(self.workspace),
            "hook_event_name": event,
            "permission_mode": CLAUDE_MODE.get(self.mode(), self.mode()),
            **data,
        }
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode("utf-8", errors="replace")
        done = await asyncio.gather(*(self._run(hook, stdin, payload, tool_call_id) for hook in hooks))
        for hook, finished in zip(hooks, done, strict=True):
            read = _interpret(event, finished)
            if hook.block_on_failure and read.outcome in ("error", "timeout") and event not in _NEVER_BLOCKED:
                read = _Read("blocked", f"the hook failed ({read.reason}) and blocks on failure", blocked=True)
            _merge(verdict, read)
            emit(HookRunEvent(
                session_id=session_id,
                agent=agent,
                hook_event=event,
                command=hook.command,
                source=hook.source,
                matcher=hook.matcher,
                tool_name=target if event in ("PreToolUse", "PostToolUse") else None,
                tool_call_id=tool_call_id,
                outcome=read.outcome,
                exit_code=finished.exit_code,
                reason=read.reason,
                stdout=finished.stdout[:_KEPT_OUTPUT_CHARS],
                stderr=finished.stderr[:_KEPT_OUTPUT_CHARS],
                duration_ms=round(finished.duration_ms, 1),
            ))
        return verdict

    async def _run(self, hook: HookCommand, stdin: bytes, payload: dict[str, Any], tool_call_id: str | None
                   ) -> Finished:
        if not hook.callback_id:
            return await run_command(hook.command, stdin, cwd=self.workspace, env=self.env, timeout=hook.timeout)
        started = time.perf_counter()
        if self.callback is None:
            return Finished(None, "", "", False, 0.0, error="no program is connected to answer this hook callback")
        try:
            async with asyncio.timeout(hook.timeout):
                answer = await self.callback(hook.callback_id, payload, tool_call_id)
        except TimeoutError:
            return Finished(None, "", "", True, (time.perf_counter() - started) * 1000)
        except Exception as exc:  # the program answered with an error, or went away
            return Finished(None, "", "", False, (time.perf_counter() - started) * 1000, error=str(exc) or repr(exc))
        stdout = json.dumps(answer, ensure_ascii=False)
        return Finished(0, stdout, "", False, (time.perf_counter() - started) * 1000)


def _merge(verdict: HookVerdict, read: _Read) -> None:
    if read.blocked:
        verdict.blocked = True
        verdict.reasons.append(read.reason)
    if read.stop:
        verdict.stop = True
        verdict.stop_reason = verdict.stop_reason or read.stop_reason
    if _STRICTNESS[read.permission] > _STRICTNESS[verdict.permission]:
        verdict.permission = read.permission
    if read.context:
        verdict.context.append(read.context)


def _interpret(event: str, finished: Finished) -> _Read:
    """One hook's run, read by Claude Code's conventions."""
    if finished.error:
        return _Read("error", finished.error)
    if finished.timed_out:
        return _Read("timeout", "timed out (the hook was stopped; the run goes on)")
    stderr = finished.stderr.strip()
    if finished.exit_code == 2:
        return _Read("blocked", stderr or "blocked by a hook (it gave no reason on stderr)", blocked=True)
    if finished.exit_code != 0:
        first = stderr.splitlines()[0] if stderr else ""
        return _Read("error", f"exit code {finished.exit_code}" + (f": {first}" if first else ""))
    stdout = finished.stdout.strip()
    if stdout.startswith("{"):
        try:
            doc = json.loads(stdout)
        except json.JSONDecodeError:
            doc = None
        if isinstance(doc, dict):
            return _from_json(doc)
    if stdout and event in _CONTEXT_EVENTS:
        return _Read("ok", context=stdout)
    return _Read("ok")


def _text(value: object) -> str:
    return value.strip() if isinstance(value, str) else ""


def _from_json(doc: dict[str, Any]) -> _Read:
    read = _Read("ok")
    specific = doc.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    if doc.get("continue") is False:
        read.stop, read.stop_reason = True, _text(doc.get("stopReason"))
        read.outcome, read.reason = "blocked", read.stop_reason or "the hook stopped the run"
    decision = doc.get("decision")
    permission = specific.get("permissionDecision")
    if decision == "approve":  # the older PreToolUse spelling
        permission = permission or "allow"
    if permission in ("allow", "deny", "ask"):
        read.permission = permission
    reason = _text(specific.get("permissionDecisionReason")) or _text(doc.get("reason"))
    if decision == "block" or permission == "deny":
        read.blocked, read.outcome = True, "blocked"
        read.reason = reason or "blocked by a hook (it gave no reason)"
    read.context = _text(specific.get("additionalContext"))
    return read
