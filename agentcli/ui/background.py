"""`/bg` (also Ctrl+G): the session's background commands on their own screen (`ui/widgets/background_screen`);
`/bg move` (Ctrl+B, Claude Code's key) moves the running foreground Bash commands to the background."""

from __future__ import annotations

from agentcli.ui.host import AppHost


async def background_command(host: AppHost, arg: str) -> None:
    """List the background commands (any agent's, running or ended): follow one's output, stop one; `move`: move
    the foreground Bash commands running now to the background (their agents are told in the calls' results)."""
    from agentcli.ui.widgets.background_screen import BackgroundListScreen

    shells = host.conversation.runner.kit.shells
    if arg.strip() == "move":  # Ctrl+B
        host.say(shells.move_foreground())
        return
    if not shells.commands:
        host.say("No background commands in this session (an agent starts one with Bash run_in_background).")
        return
    await host.ask(BackgroundListScreen(shells))
