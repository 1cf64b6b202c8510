"""`AppHost`: what every slash command needs of the app (the session, whether a turn runs, a note, a modal screen
awaited). Each command module widens it with its own needs; `commands.CommandHost` has them all."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TypeVar

if TYPE_CHECKING:
    from textual.screen import Screen

    from agentcli.conversation import Conversation

T = TypeVar("T")


class AppHost(Protocol):
    """The app as every command sees it."""

    @property
    def conversation(self) -> Conversation: ...

    @property
    def turn_running(self) -> bool: ...

    def say(self, text: str) -> None: ...

    def say_error(self, text: str) -> None: ...

    async def ask(self, screen: Screen[T]) -> T: ...
