"""`/bg` (also Ctrl+G): the session's background commands on their own screen (`ui/widgets/background_screen`);
`/bg move` (Ctrl+B, Claude Code's key) moves the running foreground Bash commands to the background."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.screen import Screen

    from agentcli.conversation import Conversation

T = TypeVar("T")


class Host(Protocol):
    """What `/bg` needs of the app (a part of `ui.commands.CommandHost`)."""

    @property
    def conversation(self) -> Conversation: ...

    def say(self, text: str) -> None: ...

    async def ask(self, screen: Screen[T]) -> T: ...


async def background_command(host: Host, arg: str) -> None:
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
