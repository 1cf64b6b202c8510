"""The editor's buffers as the file tools' text (`tools.base.FileAccess`): when the client offers
`fs/read_text_file` / `fs/write_text_file` at `initialize`, Read, Edit and MultiEdit read a file's text through
the one and Write, Edit and MultiEdit write through the other, so the agent sees and changes what the person sees,
unsaved changes included. agentcli's checks (the workspace, guarded files, write_paths, permission questions, file
locks, the diffs shown) are made as without it; binary files, Grep, Glob, LS and Bash stay on the disk.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from acp import RequestError
from acp.interfaces import Client
from acp.schema import ClientCapabilities

from agentcli.text import terminal_safe
from agentcli.tools import ToolError


class ClientFiles:
    """`fs/read_text_file` and `fs/write_text_file` of one session, as far as the client offers them."""

    def __init__(self, client: Client, session_id: Callable[[], str], *, reads: bool, writes: bool) -> None:
        self._client = client
        self._session_id = session_id  # the session's id, known once its conversation is attached
        self.reads = reads
        self.writes = writes

    @classmethod
    def offered(cls, client: Client | None, capabilities: ClientCapabilities | None,
                session_id: Callable[[], str]) -> ClientFiles | None:
        """The session's access to the editor's files, or None when the client offers neither method."""
        fs = capabilities.fs if capabilities is not None else None
        reads, writes = bool(fs and fs.read_text_file), bool(fs and fs.write_text_file)
        if client is None or not (reads or writes):
            return None
        return cls(client, session_id, reads=reads, writes=writes)

    async def read_text(self, path: Path) -> str:
        try:
            response = await self._client.read_text_file(session_id=self._session_id(), path=str(path))
        except Exception as exc:  # the client's error, or a reply that is not the protocol's: one line
            raise ToolError(f"The editor could not read {path}: {_why(exc)}") from None
        return response.content

    async def write_text(self, path: Path, content: str) -> None:
        try:
            await self._client.write_text_file(session_id=self._session_id(), path=str(path), content=content)
        except Exception as exc:
            raise ToolError(f"The editor could not write {path}: {_why(exc)}") from None


def _why(exc: Exception) -> str:
    """The client's message on one line."""
    if isinstance(exc, RequestError):
        data = exc.data if isinstance(exc.data, dict) else {}
        text = str(data.get("message") or data.get("details") or exc)
    else:
        text = str(exc) or type(exc).__name__
    return terminal_safe(" ".join(text.split()))[:300]
