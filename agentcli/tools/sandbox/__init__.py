"""The Bash sandbox: the session's policy and mechanisms (`policy`), the Landlock rules (`rules`), naming a
refusal (`notes`), and the system's mechanisms: `landlock`, `seatbelt` (macOS) and `netns` (a command's own
network and `/dev/shm`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.tools.sandbox.policy import Sandbox, session_sandbox

__all__ = [
    "Sandbox",
    "session_sandbox",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.tools.sandbox.policy": ["Sandbox", "session_sandbox"],
})
