"""A custom slash command made into the person's message: arguments in place, `!`commands`` run, `@paths` attached.

Shared by the TUI and `agentcli run "/name args"` (it imports no Textual). The expansion (`slash_commands.expand`)
is the message's first text block: what the model reads as the person's prompt, and what a resumed transcript
shows. Each `!`command`` runs only when the workspace is trusted AND the permission policy lets it: the Bash tool's
own check (`PermissionPolicy.check`: rules, the mode, the approval dialog; a one-shot without --yes cannot ask and
is refused), then the Bash tool's runner as the person's `!command` uses it (`ui.person_command`); its output
takes its place, framed as command output. A command not run leaves a `[not run: …]` mark and one line for the
person. `@path` references are attached as the prompt's mentions are (`ui.mentions`, through the Read tool).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agentcli.frontend.mentions import ATTACHMENT_MARK, MAX_MENTIONS, attach_mentions, attachment_blocks
from agentcli.frontend.person_command import run_person_command
from agentcli.frontend.slash_commands import CustomCommand, expand
from agentcli.llm import ImageBlock
from agentcli.tools import BashArgs, BashTool, ToolContext


@dataclass(slots=True)
class CommandMessage:
    """What a command sends: the expansion, the framed attachments after it, and lines for the person."""

    prompt: str
    extras: list[str | ImageBlock] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # 📎 lines and the shell commands not run, one line each
    refused: list[str] = field(default_factory=list)  # the shell commands not run


def untrusted_line(command: str) -> str:
    """Why a command file's shell command did not run in an untrusted workspace."""
    return (f"!`{command}` not run: the workspace is not trusted, so its command files run no shell command "
            "(`agentcli trust` trusts it)")


async def command_message(command: CustomCommand, arguments: str, ctx: ToolContext, *, trusted: bool) -> CommandMessage:
    """The message `/command arguments` sends. AgentFileError (one line) when its file cannot be read now."""
    expansion = expand(command, arguments)
    outputs: list[str] = []
    message = CommandMessage(prompt="")
    for shell in expansion.shell_commands:
        if not trusted:
            why = untrusted_line(shell)
        else:
            verdict = await ctx.permissions.check(BashTool(), BashArgs(command=shell), ctx)
            reason = verdict.reason.strip().splitlines()[0] if verdict.reason.strip() else "refused"
            why = "" if verdict.allowed else f"!`{shell}` not run: {reason}"
        if why:
            message.notes.append(why)
            message.refused.append(shell)
            outputs.append(f"[not run: {shell}]")
            continue
        run = await run_person_command(shell, ctx)
        if run.error is not None:
            message.notes.append(f"!`{shell}`: {run.error}")
            outputs.append(f"[failed: {shell}]")
        else:
            outputs.append(run.frame())
    attachments, left_out = await attach_mentions(expansion.text(), ctx)  # @paths of the file and the arguments
    message.notes += [attachment.line for attachment in attachments]
    if left_out:
        message.notes.append(f"{ATTACHMENT_MARK} {left_out} more not attached: at most {MAX_MENTIONS} per prompt")
    message.prompt = expansion.text(outputs)
    message.extras = attachment_blocks(attachments)
    return message
