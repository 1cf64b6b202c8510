"""Messages between agents: the mailboxes drained at turn boundaries (`mailbox`), who may message whom
(`switchboard`) and the SendMessage and ListAgents tools (`tools`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.subagents.messaging.mailbox import PERSON, PostOffice
    from agentcli.subagents.messaging.switchboard import Switchboard
    from agentcli.subagents.messaging.tools import message_tools

__all__ = [
    "PERSON",
    "PostOffice",
    "Switchboard",
    "message_tools",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.subagents.messaging.mailbox": ["PERSON", "PostOffice"],
    "agentcli.subagents.messaging.switchboard": ["Switchboard"],
    "agentcli.subagents.messaging.tools": ["message_tools"],
})
