"""WebFetch (`fetch`): the address policy (`netguard`) and a page as text (`page_text`) in a bounded child
process (`html_worker`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.tools.web.fetch import WebFetchTool
    from agentcli.tools.web.netguard import WebFetchLimits

__all__ = [
    "WebFetchLimits",
    "WebFetchTool",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.tools.web.fetch": ["WebFetchTool"],
    "agentcli.tools.web.netguard": ["WebFetchLimits"],
})
