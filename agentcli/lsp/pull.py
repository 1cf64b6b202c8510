"""Diagnostics asked for rather than waited for: LSP's pull (`textDocument/diagnostic`) where a server offers it,
and tsserver's own requests through typescript-language-server (which publishes without versions, so a publish
cannot be matched to the text it judged). A server with neither is waited on (`RootIntel._collect`)."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from agentcli.lsp.client import path_uri

if TYPE_CHECKING:
    from agentcli.lsp.client import ServerConnection

log = logging.getLogger(__name__)

_TSSERVER_REQUEST = "typescript.tsserverRequest"
_TSSERVER_CHECKS = ("syntacticDiagnosticsSync", "semanticDiagnosticsSync")
_TSSERVER_SEVERITY = {"error": types.DiagnosticSeverity.Error, "warning": types.DiagnosticSeverity.Warning,
                      "suggestion": types.DiagnosticSeverity.Hint, "message": types.DiagnosticSeverity.Information}


def pulls(conn: ServerConnection) -> bool:
    """Whether `conn`'s diagnostics are asked for (else waited for)."""
    if conn.pull_failed:
        return False
    if conn.spec.pull == "tsserver":
        return True
    return conn.capabilities is not None and conn.capabilities.diagnostic_provider is not None


async def pull(conn: ServerConnection, path: Path, timeout: float) -> list[types.Diagnostic]:
    """`path`'s diagnostics for the text last synced; TimeoutError past `timeout`, ConnectionError when the server
    exits. A server that refuses the request is waited on from then on (`pull_failed`) and this raises LookupError."""
    try:
        if conn.spec.pull == "tsserver":
            return await _tsserver(conn, path, timeout)
        params = types.DocumentDiagnosticParams(text_document=types.TextDocumentIdentifier(uri=path_uri(path)))
        report = await conn.request(conn.client.text_document_diagnostic_async(params), timeout)
    except (TimeoutError, ConnectionError):
        raise
    except Exception as exc:
        log.info("%s refused a diagnostics request (%s): waiting for what it publishes instead", conn.name, exc)
        conn.pull_failed = True
        raise LookupError(conn.name) from None
    items = getattr(report, "items", None)
    return list(items) if isinstance(items, list) else []


async def _tsserver(conn: ServerConnection, path: Path, timeout: float) -> list[types.Diagnostic]:
    found: list[types.Diagnostic] = []
    for check in _TSSERVER_CHECKS:
        params = types.ExecuteCommandParams(command=_TSSERVER_REQUEST, arguments=[check, {"file": str(path)}])
        answer = await conn.request(conn.client.workspace_execute_command_async(params), timeout)
        body = answer.get("body") if isinstance(answer, dict) else None
        if not isinstance(body, list):
            raise ValueError(f"{check} answered {type(answer).__name__}, not a response with a body")
        found.extend(d for item in body if (d := _from_tsserver(item)) is not None)
    return found


def _from_tsserver(item: Any) -> types.Diagnostic | None:
    """One tsserver diagnostic (1-based line/offset locations) as LSP's, or None when it is not one."""
    try:
        start, end = item["start"], item["end"]
        return types.Diagnostic(
            range=types.Range(start=types.Position(line=int(start["line"]) - 1, character=int(start["offset"]) - 1),
                              end=types.Position(line=int(end["line"]) - 1, character=int(end["offset"]) - 1)),
            message=str(item["text"]), severity=_TSSERVER_SEVERITY.get(str(item.get("category")),
                                                                       types.DiagnosticSeverity.Error),
            code=item.get("code"), source=str(item.get("source") or "typescript"))
    except (KeyError, TypeError, ValueError):
        return None
