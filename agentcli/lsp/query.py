"""The LSP tool's answers: a server's locations, hover text and symbols as text for the model, positions as
`path:line:column` (1-based, relative to the workspace), capped in count and characters."""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agentcli.lsp.convert import column_of, line_of, read_text, relative, utf16_of
from agentcli.tools import LSP_OPERATIONS, ToolError

if TYPE_CHECKING:

    from agentcli.lsp.client import ServerConnection
    from agentcli.lsp.manager import LanguageServers, Slot



class RootIntel(Protocol):
    """What an answer needs of `lsp.intel.RootIntel`: its servers, its workspace, the slot of a file."""

    servers: LanguageServers
    workspace: Path

    def slot(self, path: Path) -> Slot | None: ...


MAX_RESULTS = 50  # locations or symbols listed
MAX_CHARS = 8_000  # characters of one answer
QUERY_SECONDS = 30.0  # a request's answer, at most (a server may still be indexing)


async def answer(intel: RootIntel, operation: str, path: Path | None, line: int, column: int, query: str) -> str:
    """The answer to one LSP tool call; ToolError with a line the model can act on."""
    if operation not in LSP_OPERATIONS:
        raise ToolError(f"Unknown LSP operation {operation!r}: use one of {', '.join(LSP_OPERATIONS)}.")
    if operation == "workspace_symbols":
        if not query.strip():
            raise ToolError("workspace_symbols needs a query (a symbol's name or part of it).")
        conn = await _any_connection(intel, path)
        found = await _ask(conn, conn.client.workspace_symbol_async(_lsp().WorkspaceSymbolParams(query=query)))
        return _symbols_text(intel, list(found or ()), f"No symbol matches {query!r}.")
    if path is None:
        raise ToolError(f"{operation} needs a file path.")
    conn, text = await _opened(intel, path)
    if operation == "diagnostics":
        return await _diagnostics(intel, conn, path)
    if operation == "document_symbols":
        ident = _lsp().TextDocumentIdentifier(uri=path.as_uri())
        found = await _ask(conn, conn.client.text_document_document_symbol_async(
            _lsp().DocumentSymbolParams(text_document=ident)))
        return _symbols_text(intel, list(found or ()), f"No symbols in {relative(path, intel.workspace)}.", path, text)
    return await _at_position(intel, conn, operation, path, text, line, column)


async def _at_position(intel: RootIntel, conn: ServerConnection, operation: str, path: Path, text: str,
                       line: int, column: int) -> str:
    t = _lsp()
    lines = text.splitlines() or [""]
    where = relative(path, intel.workspace)
    if not 1 <= line <= len(lines):
        raise ToolError(f"Line {line} is out of range: {where} has {len(lines)} lines (lines count from 1).")
    if not 1 <= column <= len(lines[line - 1]) + 1:
        raise ToolError(f"Column {column} is out of range: line {line} of {where} has {len(lines[line - 1])} "
                        "characters (columns count from 1).")
    doc = t.TextDocumentIdentifier(uri=path.as_uri())
    pos = t.Position(line=line - 1, character=utf16_of(lines[line - 1], column))
    if operation == "hover":
        hover = await _ask(conn, conn.client.text_document_hover_async(t.HoverParams(text_document=doc, position=pos)))
        if hover is None:
            return f"Nothing to show at {where}:{line}:{column}."
        return _cap(_hover_text(hover.contents))
    if operation == "definition":
        found: Any = await _ask(conn, conn.client.text_document_definition_async(
            t.DefinitionParams(text_document=doc, position=pos)))
    else:
        found = await _ask(conn, conn.client.text_document_references_async(t.ReferenceParams(
            text_document=doc, position=pos, context=t.ReferenceContext(include_declaration=True))))
    locations = list(found) if isinstance(found, list | tuple) else [found] if found is not None else []
    if not locations:
        return f"No {operation} found at {where}:{line}:{column}."
    return await _locations_text(intel, locations)


async def _diagnostics(intel: RootIntel, conn: ServerConnection, path: Path) -> str:
    uri = path.as_uri()
    version = conn.documents[uri][0]
    deadline = time.monotonic() + max(intel.servers.first_wait_seconds, intel.servers.wait_seconds)
    while (published := conn.current(path, version, -1)) is None and time.monotonic() < deadline and not conn.dead:
        await conn.changed(deadline - time.monotonic())
    where = relative(path, intel.workspace)
    if published is None:
        raise ToolError(f"{conn.name} published no diagnostics for {where} in time; try again shortly.")
    from agentcli.lsp.convert import diagnostic

    lines = [diagnostic(d, path, intel.workspace, conn).line_text() for d in published.diagnostics]
    if not lines:
        return f"{conn.name}: no diagnostics in {where}."
    return _cap("\n".join(lines[:MAX_RESULTS]) + _more(len(lines)))


async def _opened(intel: RootIntel, path: Path) -> tuple[ServerConnection, str]:
    """The server of `path` with the file's current text open in it."""
    slot = intel.slot(path)
    where = relative(path, intel.workspace)
    if slot is None:
        raise ToolError(f"No language server handles {where} (agentcli lsp list shows the servers found).")
    text = await read_text(path)
    if text is None:
        raise ToolError(f"Cannot read {where}: not a file, or too large.")
    conn = await intel.servers.connection(slot, max(QUERY_SECONDS, intel.servers.first_wait_seconds))
    if conn is None:
        raise ToolError(f"{slot.spec.name} is not available for {where}: {slot.failure or 'still starting'}.")
    conn.sync(path, text)
    return conn, text


async def _any_connection(intel: RootIntel, path: Path | None) -> ServerConnection:
    if path is not None:
        return (await _opened(intel, path))[0]
    for slot in intel.servers.running():
        if slot.conn is not None and (slot.root == intel.workspace or intel.workspace in slot.root.parents):
            return slot.conn
    raise ToolError("No language server runs for this workspace yet: give a file's path (its server is started).")


async def _ask(conn: ServerConnection, call: Any) -> Any:
    try:
        return await conn.request(call, QUERY_SECONDS)
    except TimeoutError:
        raise ToolError(f"{conn.name} did not answer within {QUERY_SECONDS:g} s.") from None
    except Exception as exc:
        raise ToolError(f"{conn.name} failed: {' '.join(str(exc).split())[:300]}") from None


async def _locations_text(intel: RootIntel, locations: list[Any]) -> str:
    texts: dict[Path, str | None] = {}
    lines: list[str] = []
    for item in locations[:MAX_RESULTS]:
        uri, rng = (item.target_uri, item.target_selection_range) if hasattr(item, "target_uri") else (
            item.uri, item.range)
        from agentcli.lsp.client import uri_path

        path = uri_path(uri)
        if path is None:
            lines.append(uri)
            continue
        if path not in texts:
            texts[path] = await read_text(path)
        source = line_of(texts[path], rng.start.line)
        column = column_of(source, rng.start.character)
        lines.append(f"{relative(path, intel.workspace)}:{rng.start.line + 1}:{column}: {source.strip()[:200]}")
    return _cap("\n".join(lines) + _more(len(locations)))


def _symbols_text(intel: RootIntel, symbols: list[Any], none: str, path: Path | None = None,
                  text: str | None = None) -> str:
    lines: list[str] = []
    kinds = _lsp().SymbolKind

    def add(symbol: Any, depth: int) -> None:
        if len(lines) >= MAX_RESULTS:
            return
        try:
            kind = kinds(symbol.kind).name.lower()
        except ValueError:
            kind = str(symbol.kind)
        if hasattr(symbol, "selection_range"):  # DocumentSymbol: in `path`
            start, where = symbol.selection_range.start, relative(path, intel.workspace) if path else ""
        else:
            from agentcli.lsp.client import uri_path

            location = symbol.location
            start = getattr(location, "range", None)
            start = start.start if start is not None else None
            found = uri_path(location.uri)
            where = relative(found, intel.workspace) if found is not None else location.uri
        column = column_of(line_of(text, start.line), start.character) if start is not None and text else (
            start.character + 1 if start is not None else 0)
        at = f"{where}:{start.line + 1}:{column}" if start is not None else where
        lines.append(f"{'  ' * depth}{kind} {symbol.name}  {at}")
        for child in getattr(symbol, "children", None) or []:
            add(child, depth + 1)

    for symbol in symbols:
        add(symbol, 0)
    if not lines:
        return none
    return _cap("\n".join(lines) + _more(len(symbols) if len(lines) >= MAX_RESULTS else 0))


def _hover_text(contents: Any) -> str:
    if isinstance(contents, list):
        return "\n\n".join(_hover_text(part) for part in contents)
    if isinstance(contents, str):
        return contents
    return str(getattr(contents, "value", contents))


def _more(total: int) -> str:
    return f"\n… {total - MAX_RESULTS} more not shown." if total > MAX_RESULTS else ""


def _cap(text: str) -> str:
    return text if len(text) <= MAX_CHARS else text[:MAX_CHARS] + f"\n… cut at {MAX_CHARS} characters."


def _lsp() -> Any:
    """lsprotocol's types (imported with the server)."""
    from lsprotocol import types

    return types

