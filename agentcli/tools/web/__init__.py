"""WebFetch (`fetch`): the address policy (`netguard`) and a page as text (`page_text`) in a bounded child
process (`html_worker`); WebSearch (`search`) and where its queries go (`search_backends`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "fetch",
    "html_worker",
    "netguard",
    "page_text",
    "search",
    "search_backends",
]
