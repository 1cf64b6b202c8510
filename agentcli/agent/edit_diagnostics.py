"""What the language servers say about a tool call (`ToolContext.code_intel`): an edit's result ends with the
diagnostics it introduced, and a Read lets the file's server know the file as it is now.

Nothing here may fail a call: a language server that raises, hangs past the call's deadline or answers nonsense is
logged and the call's result is what the tool returned.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentcli.tools import (
    MAX_DIAGNOSTICS,
    SEVERITY_RANK,
    CodeIntel,
    Diagnostic,
    EditDiagnostics,
    Tool,
    ToolContext,
    ToolError,
    ToolResult,
    diagnostics_text,
    resolve_in_workspace,
)

log = logging.getLogger(__name__)

#: The key of `ToolResult.metadata` (and the field of `ToolCallFinishedEvent`) with an edit's new findings.
DIAGNOSTICS_KEY = "diagnostics"


def target_path(tool: Tool[Any], args: Any, ctx: ToolContext, *, for_write: bool = False) -> Path | None:
    """The resolved path a file tool's call is about, as the tool resolves it; None when it has none (the tool
    itself reports a bad path)."""
    if not tool.path_target:
        return None
    raw = tool.permission_target(args)
    if not raw:
        return None
    try:
        return resolve_in_workspace(ctx, raw, for_write=for_write)
    except ToolError:
        return None


@dataclass(slots=True)
class EditWatch:
    """An edit under way: what the server knew of its file before it (`token`), for `finish`."""

    code_intel: CodeIntel
    paths: list[Path]
    token: object

    async def finish(self, result: ToolResult, ctx: ToolContext) -> ToolResult:
        """`result` with the diagnostics the edit introduced appended (and listed in its metadata)."""
        if result.is_error:
            return result
        workspace = ctx.workspace.resolve()
        paths = [workspace / rel for rel in result.files_modified] or self.paths  # an absolute `rel` stays itself
        try:
            async with asyncio.timeout(ctx.tool_timeout_seconds):
                found = await self.code_intel.after_edit(paths, self.token)
            if found is None:
                return result
            text = diagnostics_text(found)
            shown = shown_diagnostics(found)
        except Exception:  # the edit is done: a server's failure is the log's, never the model's
            log.exception("language server diagnostics after %s failed", ", ".join(map(str, paths)))
            return result
        if not text and not shown:
            return result
        metadata = {**result.metadata, DIAGNOSTICS_KEY: shown} if shown else result.metadata
        content = f"{result.content}\n\n{text}" if text else result.content
        return dataclasses.replace(result, content=content, metadata=metadata)


async def watch_edit(tool: Tool[Any], args: Any, ctx: ToolContext) -> EditWatch | None:
    """Before an edit runs: ask its file's server what it knows now. None: no server, not an edit, or the server
    failed to answer (the edit then goes without diagnostics)."""
    code_intel = ctx.code_intel
    if code_intel is None or not tool.edits_files:
        return None
    path = target_path(tool, args, ctx, for_write=True)
    if path is None:
        return None
    try:
        async with asyncio.timeout(ctx.tool_timeout_seconds):
            token = await code_intel.before_edit([path])
    except Exception:
        log.exception("language server before the edit of %s failed", path)
        return None
    return EditWatch(code_intel, [path], token)


def touch_read(tool: Tool[Any], args: Any, ctx: ToolContext, result: ToolResult) -> None:
    """After a Read of a text file: its server learns the file as it is now (in the background), so a later
    edit's diagnostics are measured from it, and changes made by Bash are synced."""
    code_intel = ctx.code_intel
    if code_intel is None or result.is_error or result.images or not (tool.read_only and tool.shows_file):
        return
    if not isinstance(result.metadata.get("path"), str):  # Read names the file it showed; other tools do not
        return
    path = target_path(tool, args, ctx)
    if path is None:
        return
    try:
        code_intel.touch(path)
    except Exception:
        log.exception("language server touch of %s failed", path)


def shown_diagnostics(found: EditDiagnostics) -> list[dict[str, Any]]:
    """The errors and warnings an edit introduced, errors first, as many as its result lists at most: plain
    dicts for `ToolCallFinishedEvent.diagnostics`."""
    ranked = sorted((d for d in found.introduced if d.severity in ("error", "warning")),
                    key=lambda d: (SEVERITY_RANK[d.severity], d.path, d.line, d.column))
    return [diagnostic_dict(d) for d in ranked[:MAX_DIAGNOSTICS]]


def diagnostic_dict(diagnostic: Diagnostic) -> dict[str, Any]:
    """One finding as the event carries it: path, line, column, severity, message, source, code."""
    return dataclasses.asdict(diagnostic)
