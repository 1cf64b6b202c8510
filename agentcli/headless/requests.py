"""What each control request from the program does to the session: `initialize`, `interrupt`,
`set_permission_mode`, `set_model`, `mcp_status`, `stop_task` (the answers' shapes follow Claude Code's, which
the SDKs read). `rewind_files` is `rewind`'s (the driver registers it: it must know whether a turn runs). The
requests agentcli sends the other way are in `approver`.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agentcli import __version__
from agentcli.headless.control import ControlChannel, Line, RequestError
from agentcli.headless.init_fields import Applied, FlagsGiven, apply_fields
from agentcli.headless.printer import MODE_NAMES, MODES_BY_NAME, PROTOCOL_VERSION, HeadlessPrinter, api_key_source
from agentcli.headless.settings_map import model_spec
from agentcli.stream_json import new_uuid, system_line

if TYPE_CHECKING:
    from agentcli.conversation import Conversation


#: A hook matcher's fields agentcli reads (the SDKs' `SDKHookCallbackMatcher`).
MATCHER_FIELDS = frozenset({"matcher", "hookCallbackIds", "timeout", "onFailure"})


class Requests:
    """The handlers of one session's control requests."""

    def __init__(self, conversation: Conversation, channel: ControlChannel, printer: HeadlessPrinter,
                 warn: Callable[[str], object], flags: FlagsGiven | None = None) -> None:
        self.conversation = conversation
        self.printer = printer
        self.channel = channel
        self.warn = warn  # what the program asked for and agentcli does not do: one line each on stderr
        self.flags = flags or FlagsGiven()
        self.initialized = False
        self.schema: dict[str, Any] | None = None  # initialize's jsonSchema
        self.settled = asyncio.Event()  # no initialize is being carried out (the first turn waits for it)
        self.settled.set()
        channel.handlers.update({
            "initialize": self.initialize,
            "interrupt": self.interrupt,
            "set_permission_mode": self.set_permission_mode,
            "set_model": self.set_model,
            "mcp_status": self.mcp_status,
            "stop_task": self.stop_task,
        })

    async def initialize(self, request: Line) -> Line:
        """The handshake: the program's settings taken (`init_fields`), then what this session offers (commands,
        agents, models, output style, mode, pid) and which of the settings were applied."""
        if self.initialized:
            raise RequestError("Already initialized")
        if self.conversation.started:
            raise RequestError("initialize must come before the first message")
        self.initialized = True
        self.settled.clear()
        try:
            applied = self._take(request)
        finally:
            self.settled.set()
        self.schema = applied.schema
        return {**self._offers(), **applied.answer}

    def _take(self, request: Line) -> Applied:
        """initialize's hooks, agents and the rest of its fields, on the session before its first turn."""
        conversation = self.conversation
        self._hooks(request.get("hooks"))
        if request.get("agents"):
            from agentcli.headless.agents import define_agents

            for note in define_agents(conversation.registry, request["agents"], source="the program (initialize)",
                                      aliases=conversation.settings.models.aliases):
                self.warn(note)
        applied = apply_fields(conversation, request, self.warn, self.flags)
        if request.get("hooks"):
            applied.answer["hooks_applied"] = True
        return applied

    def _offers(self) -> Line:
        conversation = self.conversation
        settings, person = conversation.settings, conversation.person_settings
        return {
            "commands": [],
            "agents": [{"name": t.name, "description": t.description, **({"model": t.model} if t.model else {})}
                       for t in conversation.registry.types.values()],
            "output_style": person.style.name if person.style is not None else "default",
            "available_output_styles": person.output_styles().names(),
            "models": [
                {"value": "main", "displayName": f"main ({settings.models.main.model})",
                 "description": f"{settings.models.main.provider}:{settings.models.main.model}"},
                {"value": "light", "displayName": f"light ({settings.models.light.model})",
                 "description": f"{settings.models.light.provider}:{settings.models.light.model}"},
            ],
            "account": {"tokenSource": "none", "apiKeySource": api_key_source(), "apiProvider": "firstParty"},
            "pid": os.getpid(),
            "claude_code_version": PROTOCOL_VERSION,
            "current_permission_mode": MODE_NAMES.get(conversation.permissions.mode, "default"),
            "session_state": "idle",
            "capabilities": [],
            "hook_on_failure_supported": True,  # a callback's onFailure "block" is honoured
            "agentcli_version": __version__,
        }

    def _hooks(self, hooks: object) -> None:
        """`initialize`'s hooks: each matcher's callback ids become hooks of the session, asked over `hook_callback`."""
        from agentcli.hooks import HOOK_EVENTS, HookCommand

        if not isinstance(hooks, dict):
            return
        engine = self.conversation.hooks
        for event, matchers in hooks.items():
            if event not in HOOK_EVENTS:
                self.warn(f"hook callbacks for {event} are not run: agentcli fires {', '.join(HOOK_EVENTS)}")
                continue
            for matcher in matchers if isinstance(matchers, list) else ():
                if not isinstance(matcher, dict):
                    continue
                timeout = matcher.get("timeout")
                seconds = float(timeout) if isinstance(timeout, int | float) and timeout > 0 else 60.0
                block = matcher.get("onFailure") not in (None, "continue")  # Claude Code reads any other as block
                for key in sorted(set(matcher) - MATCHER_FIELDS):
                    if matcher[key] is not None:
                        self.warn(f"hook matcher field {key} is not honoured: agentcli reads matcher, timeout and "
                                  "onFailure")
                for callback_id in matcher.get("hookCallbackIds") or []:
                    engine.config.add(HookCommand(
                        event, f"SDK hook callback {callback_id}", str(matcher.get("matcher") or ""), seconds,
                        "the program (initialize)", callback_id=str(callback_id), block_on_failure=block))
        engine.callback = self._ask_hook

    async def _ask_hook(self, callback_id: str, payload: dict[str, Any], tool_use_id: str | None) -> dict[str, Any]:
        return await self.channel.request({"subtype": "hook_callback", "callback_id": callback_id, "input": payload,
                                           "tool_use_id": tool_use_id})

    async def interrupt(self, request: Line) -> Line:
        """Stop the running turn (its subagents too); its result says `error_during_execution`, the session takes
        the next message."""
        self.conversation.cancel_turn()
        return {"still_queued": []}

    async def set_permission_mode(self, request: Line) -> Line:
        mode = request.get("mode")
        if mode not in MODES_BY_NAME:
            raise RequestError(f"Invalid permission mode {mode!r}: one of {', '.join(MODES_BY_NAME)}")
        self.conversation.permissions.set_mode(MODES_BY_NAME[mode])  # type: ignore[arg-type]
        self.printer.write(system_line("status", self.conversation.session.id, status=None, permissionMode=mode))
        return {"mode": mode}

    async def set_model(self, request: Line) -> Line:
        """`model`: main, light, an alias, provider:model or a bare model id of the main provider; null or
        "default" goes back to the configured main model."""
        spec = request.get("model")
        if spec is not None and not isinstance(spec, str):
            raise RequestError("set_model: model must be a string or null")
        spec = "main" if not spec or spec == "default" else model_spec(spec, self.conversation.settings)
        try:
            model = self.conversation.set_model(spec)
        except Exception as exc:  # an unknown provider, a missing key: one line for the program
            raise RequestError(f"set_model {spec!r}: {str(exc).splitlines()[0] if str(exc) else exc}") from None
        self.printer.write({
            "type": "user", "message": {"role": "user", "content": f"<local-command-stdout>Set model to "
                                        f"`{model.model}`</local-command-stdout>"},
            "session_id": self.conversation.session.id, "parent_tool_use_id": None, "uuid": new_uuid(),
            "isReplay": True,
        })
        return {"model": model.model}

    async def mcp_status(self, request: Line) -> Line:
        """Each MCP server of the session: name, status (connected, failed, pending), its tools."""
        states = {"running": "connected", "failed": "failed", "stopped": "failed", "refused": "disabled"}
        servers: list[dict[str, Any]] = []
        for name, state in self.conversation.mcp.servers.items():
            entry: dict[str, Any] = {"name": name, "status": states.get(state.status, "pending"),
                                     "tools": [{"name": t.remote_name} for t in state.tools]}
            if state.spec.transport == "program":
                entry["source"] = "sdk"
            if state.error:
                entry["error"] = state.error
            servers.append(entry)
        return {"mcpServers": servers}

    async def stop_task(self, request: Line) -> Line:
        """Stop one subagent; its parent gets a tool error and goes on."""
        task_id = request.get("task_id")
        if not isinstance(task_id, str) or not task_id:
            raise RequestError("stop_task needs a task_id")
        if not await self.conversation.cancel_task(task_id):
            raise RequestError(f"No running task {task_id}")
        return {}
