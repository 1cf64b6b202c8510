"""The slash commands an editor offers over ACP (`available_commands_update`) and what they do. A prompt that
starts with one of them runs it here, answers with one message and ends the turn; any other text goes to the
model (a path such as `/usr/lib` too). The person's and the project's own commands and skills (`slash_commands`)
are offered after them, and a prompt naming one is sent as its expansion (`session.AcpSession.prompt`)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from agentcli.conversation import Conversation
from agentcli.figures import context_text, format_cost, spend_text, tokens_text
from agentcli.frontend import CommandSet

Handler = Callable[[Conversation, str], Awaitable[str]]


async def _model(conversation: Conversation, arg: str) -> str:
    if not arg:
        model = conversation.model
        return f"Model: {model.display} ({model.provider}:{model.model}). Change it with /model main | light | " \
               "provider:model."
    try:
        model = await asyncio.to_thread(conversation.set_model, arg)
    except Exception as exc:
        return f"/model: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return f"Model set to {model.display} ({model.provider}:{model.model})."


async def _cost(conversation: Conversation, arg: str) -> str:
    ledger = conversation.session.ledger
    total, own, delegated = ledger.total, ledger.own, ledger.delegated
    lines = [f"Tokens: {tokens_text(total.usage)}, in {total.requests} request{'' if total.requests == 1 else 's'}. "
             f"Cost: {format_cost(total.cost_usd)} (session total, subagents included)",
             f"- main agent: {spend_text(own.usage, own.cost_usd, own.requests)}",
             f"- subagents: {spend_text(delegated.usage, delegated.cost_usd, delegated.requests)}"]
    if (use := conversation.context_use()) is not None:
        lines.append(f"- context: {context_text(*use)}")
    return "\n".join(lines)


async def _compact(conversation: Conversation, arg: str) -> str:
    try:
        done = await conversation.compact(arg)
    except Exception as exc:
        return f"/compact: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}"
    return "Context compacted." if done else "Nothing to compact yet: the context holds only the latest exchange."


async def _agents(conversation: Conversation, arg: str) -> str:
    registry = conversation.registry
    lines = ["Subagent types (the Task tool's subagent_type):"]
    for name in registry.names():
        agent_type = registry.get(name)
        description = agent_type.description.splitlines()[0] if agent_type and agent_type.description else ""
        lines.append(f"- {name}: {description}")
    return "\n".join(lines)


async def _mcp(conversation: Conversation, arg: str) -> str:
    lines = conversation.mcp.report_lines()
    return "\n".join(["MCP servers:", *lines]) if lines else "No MCP servers configured."


COMMANDS: dict[str, tuple[Handler, str, str | None]] = {
    "model": (_model, "show or set the model", "main | light | provider:model"),
    "cost": (_cost, "tokens and cost of this session: total, main agent, subagents", None),
    "compact": (_compact, "summarise the older turns now (light model)", "what to focus on"),
    "agents": (_agents, "list the subagent types", None),
    "mcp": (_mcp, "the MCP servers of this session and their status", None),
}


def available(custom: CommandSet | None = None) -> list[AvailableCommand]:
    """The commands as ACP describes them: the built-in ones, then `custom` (command files, skills)."""
    offered = [(name, text, hint) for name, (_, text, hint) in COMMANDS.items()]
    if custom is not None:
        for name, label in custom.completions().items():
            found = custom.find(name)
            hint = found.argument_hint if found is not None and not isinstance(found, list) else ""
            offered.append((name, label, hint or None))
    return [AvailableCommand(name=name, description=text,
                             input=AvailableCommandInput(root=UnstructuredCommandInput(hint=hint)) if hint else None)
            for name, text, hint in offered]


def parse(prompt: str) -> tuple[Handler, str] | None:
    """The command a prompt runs, and its argument; None when the prompt is for the model."""
    word, _, arg = prompt.strip().partition(" ")
    if len(word) < 2 or not word.startswith("/"):
        return None
    entry = COMMANDS.get(word[1:].lower())
    return (entry[0], arg.strip()) if entry is not None else None
