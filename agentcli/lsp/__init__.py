"""Language servers (`[lsp]`): the diagnostics an edit introduced and the LSP tool's answers, from the servers people
already run (basedpyright, pyright, pyrefly, ty, pylsp, typescript-language-server, gopls, rust-analyzer), spoken to
through pygls' `LanguageClient` on lsprotocol's types.

`specs` says which servers there are and where they are found; `client` runs one (its own process group, known to
the reaper, in the Bash sandbox when it is on); `manager` keeps the session's servers (one per server and root,
restarted with backoff, all shut down at the end); `intel` is the `tools.CodeIntel` of one root; `query` answers
the LSP tool; `convert` turns LSP's positions and diagnostics into agentcli's. pygls is imported only when a server
first starts.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.lsp.intel import RootIntel
    from agentcli.lsp.manager import LanguageServers
    from agentcli.lsp.specs import BUILTIN_SERVERS, ServerSpec, chosen, configured_servers, found_line, problems

__all__ = [
    "BUILTIN_SERVERS",
    "LanguageServers",
    "RootIntel",
    "ServerSpec",
    "chosen",
    "configured_servers",
    "found_line",
    "problems",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.lsp.intel": ["RootIntel"],
    "agentcli.lsp.manager": ["LanguageServers"],
    "agentcli.lsp.specs": ["BUILTIN_SERVERS", "ServerSpec", "chosen", "configured_servers", "found_line", "problems"],
})
