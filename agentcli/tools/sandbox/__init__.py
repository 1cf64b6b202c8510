"""The Bash sandbox: the session's policy and mechanisms (`policy`), the Landlock rules (`rules`), naming a
refusal (`notes`), and the system's mechanisms: `landlock`, `seatbelt` (macOS) and `netns` (a command's own
network and `/dev/shm`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "landlock",
    "netns",
    "notes",
    "policy",
    "rules",
    "seatbelt",
]
