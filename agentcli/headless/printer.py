"""stream-json as Claude Code's headless mode writes it for the Claude Agent SDK: `run`'s lines (`output.
StreamJsonPrinter`) plus a `system`/`init` line at the start of every turn, a `result` line per turn with that
turn's usage and model turns (the cost is the session's so far, as Claude Code reports it), `task_progress`
for subagents, `session_state_changed` (running / requires_action / idle) when the program asks for it
(`CLAUDE_CODE_SDK_READS_SESSION_STATE`), and the control protocol's lines, all through one writer.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

from agentcli.events import (
    BackgroundFinishedEvent,
    Event,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentBlockUpdatedEvent,
    ToolCallFinishedEvent,
    ToolCallStartedEvent,
    UsageEvent,
    unwrap,
)
from agentcli.oneshot import StreamJsonPrinter
from agentcli.stream_json import (
    ERROR_SUBTYPE,
    TASK_NOTIFICATION_STATUS,
    background_status,
    new_uuid,
    result_subtype,
    system_line,
)

#: Claude Code's permission modes by agentcli's (`--permission-mode`, `set_permission_mode`, init's `permissionMode`).
MODE_NAMES: dict[str, str] = {
    "ask": "default", "accept_edits": "acceptEdits", "readonly": "plan", "auto": "bypassPermissions",
}
MODES_BY_NAME: dict[str, str] = {**{v: k for k, v in MODE_NAMES.items()}, "dontAsk": "ask"}
#: Claude Code's version whose protocol this mode follows (the SDK checks init's `claude_code_version`).
PROTOCOL_VERSION = "2.1.250"


@dataclass(slots=True)
class ModelSpend:
    """One model's part of a turn (`modelUsage`)."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost_usd: float = 0.0
    context_window: int = 0

    def as_dict(self) -> dict[str, Any]:
        return {"inputTokens": self.input_tokens, "outputTokens": self.output_tokens,
                "cacheReadInputTokens": self.cache_read, "cacheCreationInputTokens": self.cache_write,
                "webSearchRequests": 0, "costUSD": self.cost_usd, "contextWindow": self.context_window}


@dataclass(slots=True)
class Turn:
    """What one turn (one user message) spent and met, the whole tree's."""

    started: float = field(default_factory=time.monotonic)
    api_ms: float = 0.0
    model_turns: int = 0  # the main agent's model replies
    models: dict[str, ModelSpend] = field(default_factory=dict)
    calls: dict[str, dict[str, Any]] = field(default_factory=dict)  # tool_use id -> name and input
    running: set[str] = field(default_factory=set)  # tool calls started and not finished
    denials: list[dict[str, Any]] = field(default_factory=list)

    def usage(self) -> dict[str, Any]:
        """Anthropic-named token counts of the turn."""
        spends = self.models.values()
        return {
            "input_tokens": sum(s.input_tokens for s in spends),
            "cache_creation_input_tokens": sum(s.cache_write for s in spends),
            "cache_read_input_tokens": sum(s.cache_read for s in spends),
            "output_tokens": sum(s.output_tokens for s in spends),
            "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
            "service_tier": "standard",
        }


class HeadlessPrinter(StreamJsonPrinter):
    """The SDK's stream: see the module's docstring. `write` is the one writer of standard output."""

    def __init__(self, out: TextIO, err: TextIO, *, partial: bool, session_state: bool) -> None:
        super().__init__(out, err, partial=partial)
        self.session_state = session_state
        self.state = ""
        self.turn = Turn()
        self.cost_usd = 0.0  # the session's so far (Claude Code's total_cost_usd)
        self.models: dict[str, ModelSpend] = {}  # the session's so far, by model (Claude Code's modelUsage)
        self.results = 0
        self._tasks: dict[str, dict[str, Any]] = {}  # task id -> description, tool_use id, last tool

    def write(self, line: dict[str, Any]) -> None:
        """One line of the protocol (a control request or answer, a replayed message)."""
        self.emit(line)

    # --- the events -------------------------------------------------------------------------------

    def __call__(self, event: Event) -> None:
        wrappers, inner = unwrap(event)
        if isinstance(inner, SubagentBlockFinishedEvent):  # Claude Code's patch comes before the notification
            status = TASK_NOTIFICATION_STATUS[inner.status]
            self.emit(system_line("task_updated", self.session_id, task_id=inner.task_id,
                                  patch={"status": status, "end_time": round(time.time() * 1000)}))
        elif isinstance(inner, BackgroundFinishedEvent):  # a background command's patch (Claude Code: killed)
            status = background_status(inner)
            self.emit(system_line("task_updated", self.session_id, task_id=inner.task_id, patch={
                "status": "killed" if status == "stopped" else status, "end_time": round(time.time() * 1000)}))
        super().__call__(event)
        if isinstance(inner, UsageEvent):
            self._spent(inner)
            if not wrappers and not inner.estimated:
                self.turn.model_turns += 1
        elif isinstance(inner, ToolCallStartedEvent):
            self.turn.calls[inner.tool_call_id] = {"name": inner.name, "input": inner.args}
            self.turn.running.add(inner.tool_call_id)
            if wrappers:
                task = self._tasks.get(wrappers[-1].task_id)
                if task is not None:
                    task["last_tool"] = inner.name
        elif isinstance(inner, ToolCallFinishedEvent):
            self.turn.running.discard(inner.tool_call_id)
            if inner.code == "permission_denied":
                call = self.turn.calls.get(inner.tool_call_id, {})
                self.turn.denials.append({"tool_name": inner.name, "tool_use_id": inner.tool_call_id,
                                          "tool_input": call.get("input", {})})
        elif isinstance(inner, SubagentBlockAddedEvent):
            self._tasks[inner.task_id] = {"description": inner.description, "tool_use_id": inner.parent_tool_call_id,
                                          "last_tool": None, "reported": 0}
        elif isinstance(inner, SubagentBlockUpdatedEvent) and inner.status == "running":
            self._progress(inner)

    def _spent(self, event: UsageEvent) -> None:
        for models in (self.turn.models, self.models):
            spend = models.setdefault(event.model, ModelSpend())
            spend.input_tokens += event.input_tokens
            spend.output_tokens += event.output_tokens
            spend.cache_read += event.cache_read_tokens
            spend.cache_write += event.cache_write_tokens
            spend.cost_usd += event.cost_usd or 0.0
            spend.context_window = event.context_window or spend.context_window
        self.cost_usd += event.cost_usd or 0.0

    def _progress(self, event: SubagentBlockUpdatedEvent) -> None:
        """One `task_progress` per tool call the subagent made (as Claude Code reports them), not per update."""
        task = self._tasks.get(event.task_id)
        if task is None or event.tool_calls <= task["reported"]:
            return
        task["reported"] = event.tool_calls
        tokens = event.input_tokens + event.output_tokens + event.cache_read_tokens + event.cache_write_tokens
        self.emit(system_line(
            "task_progress", self.session_id, task_id=event.task_id, tool_use_id=task["tool_use_id"],
            description=task["description"], last_tool_name=task["last_tool"],
            usage={"total_tokens": tokens, "tool_uses": event.tool_calls, "duration_ms": round(event.elapsed_ms)},
        ))

    # --- turns ------------------------------------------------------------------------------------

    def start_turn(self, *, session_id: str, cwd: str, model: str, tools: list[str], mode: str,
                   agents: list[str], mcp: list[dict[str, str]], plugins: list[dict[str, str]] | None = None,
                   plugin_notes: Mapping[str, list[dict[str, str]]] | None = None) -> None:
        """A user message starts a turn: its `init` line (Claude Code writes one per turn) and a fresh count.
        `plugin_notes`: `plugin_errors` and `plugin_warnings`, each given only when it has one."""
        from agentcli import __version__

        self.begin()
        self.turn = Turn()
        self.session_id = session_id
        self.set_state("running")
        self.emit({
            "type": "system", "subtype": "init", "cwd": cwd, "session_id": session_id, "tools": tools,
            "mcp_servers": mcp, "model": model, "permissionMode": MODE_NAMES.get(mode, "default"),
            "slash_commands": [], "apiKeySource": api_key_source(), "claude_code_version": PROTOCOL_VERSION,
            "output_style": "default", "agents": agents, "skills": [], "plugins": plugins or [], "uuid": new_uuid(),
            "agentcli_version": __version__, **{key: rows for key, rows in (plugin_notes or {}).items() if rows},
        })

    def end_turn(self, *, status: str, result: str, error: str | None, stop_reason: str | None,
                 structured: Any = None, subtype: str | None = None, idle: bool = True) -> None:
        """The turn's `result` line (Claude Code's fields), then `idle` when no message waits."""
        turn = self.turn
        completed = status == "completed"
        if status == "cancelled":  # Claude Code's marker of an interrupted turn, as it writes it before the result
            marker = "[Request interrupted by user for tool use]" if turn.running else "[Request interrupted by user]"
            self.emit({"type": "user", "message": {"role": "user", "content": [{"type": "text", "text": marker}]},
                       "parent_tool_use_id": None, "session_id": self.session_id, "uuid": new_uuid()})
        line: dict[str, Any] = {
            "type": "result",
            "subtype": subtype or (result_subtype(status) if status != "cancelled" else ERROR_SUBTYPE),
            "is_error": not completed,
            "duration_ms": round((time.monotonic() - turn.started) * 1000),
            "duration_api_ms": round(self.api_ms),
            "num_turns": max(turn.model_turns, 1),
            "stop_reason": stop_reason,
            "session_id": self.session_id,
            "total_cost_usd": self.cost_usd,
            "usage": turn.usage(),
            "modelUsage": {model: spend.as_dict() for model, spend in self.models.items()},
            "model_usage_since_last_result": {model: spend.as_dict() for model, spend in turn.models.items()},
            "permission_denials": turn.denials,
            "terminal_reason": self._terminal_reason(status),
            "result_index": self.results,
            "uuid": new_uuid(),
        }
        self.results += 1
        if completed:
            line["result"] = result
        else:  # Claude Code's error results carry `errors`, not `result`
            line["errors"] = [error or status]
        if structured is not None:  # Claude Code's `result` is then the document as compact JSON
            line["structured_output"] = structured
            line["result"] = json.dumps(structured, ensure_ascii=False, separators=(",", ":"))
        self.emit(line)
        if idle:
            self.set_state("idle")

    def _terminal_reason(self, status: str) -> str:
        """Claude Code's `terminal_reason`: an interrupted turn was streaming or running tools."""
        if status == "cancelled":
            return "aborted_tools" if self.turn.running or self.turn.denials else "aborted_streaming"
        return {"completed": "completed", "max_turns": "max_turns", "budget_exceeded": "max_budget"}.get(
            status, "error")

    def set_state(self, state: str) -> None:
        """`session_state_changed` when it changes, for a program that asked for it."""
        if not self.session_state or state == self.state:
            return
        self.state = state
        self.emit(system_line("session_state_changed", self.session_id, state=state, sdk_host_only=True))




def api_key_source() -> str:
    """Where the Anthropic key came from, in Claude Code's words (`init`'s `apiKeySource`)."""
    import os

    return "ANTHROPIC_API_KEY" if os.environ.get("ANTHROPIC_API_KEY") else "none"
