"""WebFetch (`fetch`): the address policy (`netguard`) and a page as text (`page_text`) in a bounded child
process (`html_worker`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "fetch",
    "html_worker",
    "netguard",
    "page_text",
]
