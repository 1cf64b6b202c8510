"""Messages between agents: the mailboxes drained at turn boundaries (`mailbox`), who may message whom
(`switchboard`) and the SendMessage and ListAgents tools (`tools`).

Its modules are its face; other packages import their names from `agentcli.subagents`.
"""

__all__ = [
    "mailbox",
    "switchboard",
    "tools",
]
