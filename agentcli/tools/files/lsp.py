"""LSP: what the workspace's language servers know of the code (definitions, references, hover, symbols, a file's
diagnostics), asked through `ToolContext.code_intel`; the servers themselves are `agentcli.lsp`'s."""

from __future__ import annotations

import re
from typing import ClassVar, Literal

from pydantic import Field, model_validator

from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError, ToolResult
from agentcli.tools.code_intel import LSP_OPERATIONS
from agentcli.tools.paths import display_path, normalize_rel, resolve_in_workspace

Operation = Literal["definition", "references", "hover", "document_symbols", "workspace_symbols", "diagnostics"]
POSITIONED = ("definition", "references", "hover")  # the operations about one place in a file
NO_SERVER = (
    "No language server is configured for this workspace: the LSP tool has no server to ask here. Find "
    "definitions and references with Grep (a name's uses) and Read, and check types by running the project's "
    "checker with Bash if it has one."
)
# A line of an answer that starts with a place in a file: `src/app.py:12:5 …` (the path is group 1)
_PLACE = re.compile(r"^\s*(?:[-*]\s+)?(\S+?):(\d+)(?::\d+)?\b")


class LSPArgs(ToolArgs):
    """LSP's input."""

    operation: Operation = Field(description="What to ask: " + ", ".join(LSP_OPERATIONS))
    path: str | None = Field(None, description="The file, relative to the workspace (every operation but "
                                               "workspace_symbols)")
    line: int | None = Field(None, ge=1, description="1-based line of the symbol (definition, references, hover)")
    column: int | None = Field(None, ge=1, description="1-based column of the symbol on that line (definition, "
                                                       "references, hover)")
    query: str | None = Field(None, description="The symbol name to look for (workspace_symbols)")

    @model_validator(mode="after")
    def _needs(self) -> LSPArgs:
        """Each operation's required arguments, named in one message."""
        op = self.operation
        missing: list[str] = []
        if op != "workspace_symbols" and not (self.path and self.path.strip()):
            missing.append("path")
        if op in POSITIONED:
            missing += [name for name, value in (("line", self.line), ("column", self.column)) if value is None]
        if op == "workspace_symbols" and not (self.query and self.query.strip()):
            missing.append("query")
        if missing:
            raise ValueError(f"{op} needs {' and '.join(missing)}")
        return self


class LSPTool(Tool[LSPArgs]):
    """Ask the workspace's language servers about the code."""

    name: ClassVar[str] = "LSP"
    args_model: ClassVar[type[ToolArgs]] = LSPArgs
    read_only: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True
    on_demand: ClassVar[bool] = True  # rarely needed: deferred, loaded through ToolSearch ([tools] defer)
    path_target: ClassVar[bool] = True  # `LSP(src/**)` rules match its file
    shows_file: ClassVar[bool] = True  # hover and symbols show the file's code: a Read deny rule stops it too

    def summary(self, args: LSPArgs) -> str:
        if args.operation == "workspace_symbols":
            return f"workspace_symbols {' '.join((args.query or '').split())}"[:120]
        where = normalize_rel(args.path or "")
        if args.operation in POSITIONED:
            where += f":{args.line}:{args.column}"
        return f"{args.operation} {where}"[:120]

    def permission_target(self, args: LSPArgs) -> str:
        return (args.path or "").strip()  # as given: PermissionPolicy resolves it to the workspace-relative path

    async def run(self, args: LSPArgs, ctx: ToolContext) -> ToolResult:
        if ctx.code_intel is None:
            raise ToolError(NO_SERVER)
        path = None
        if args.operation != "workspace_symbols" and args.path:
            path = resolve_in_workspace(ctx, args.path)
            rel = display_path(ctx, path)
            if not path.exists():
                raise ToolError(f"File does not exist: {rel}")
            if not path.is_file():
                raise ToolError(f"{rel} is not a file; LSP {args.operation} asks about one file")
        text = await ctx.code_intel.query(args.operation, path, args.line or 0, args.column or 0,
                                          (args.query or "").strip())
        return ToolResult(_without_denied(text, ctx))


def _without_denied(text: str, ctx: ToolContext) -> str:
    """The answer without the places in files a Read deny rule covers (references and symbols may be anywhere)."""
    if not ctx.permissions.denies_reads:
        return text
    kept: list[str] = []
    left_out = 0
    for line in text.splitlines():
        place = _PLACE.match(line)
        if place is not None and ctx.permissions.read_denied(place.group(1)):
            left_out += 1
        else:
            kept.append(line)
    if left_out:
        kept.append(f"({left_out} result(s) in files a Read deny rule covers were left out.)")
    return "\n".join(kept)

