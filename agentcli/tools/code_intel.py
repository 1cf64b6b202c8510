"""What the tools ask of language servers (`CodeIntel`), and how their findings read in a tool result.

The servers themselves live in `agentcli.lsp`; the tools see only this protocol (`ToolContext.code_intel`), so the
file tools and the LSP tool depend on no server, and a context without one (`None`) simply goes without.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

Severity = Literal["error", "warning", "information", "hint"]
SEVERITY_RANK: dict[str, int] = {"error": 0, "warning": 1, "information": 2, "hint": 3}
MAX_DIAGNOSTICS = 20  # the most an edit's result lists (errors first)
MAX_DIAGNOSTICS_CHARS = 3_000  # and the most characters they take


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding of a language server, at a 1-based line and column of a workspace-relative `path`."""

    path: str
    line: int
    column: int
    severity: Severity
    message: str
    source: str = ""  # the server's name for itself (basedpyright, ts)
    code: str = ""  # the rule (reportAttributeAccessIssue, 2322)

    def key(self) -> tuple[str, str, str, str, str]:
        """What tells one finding from another across an edit (lines move; the finding stays the same)."""
        return (self.path, self.severity, self.source, self.code, self.message)

    def line_text(self) -> str:
        """`path:line:column: severity: message [source code]`, on one line."""
        rule = " ".join(part for part in (self.source, self.code) if part)
        message = " ".join(self.message.split())
        return f"{self.path}:{self.line}:{self.column}: {self.severity}: {message}" + (f" [{rule}]" if rule else "")


@dataclass(frozen=True, slots=True)
class EditDiagnostics:
    """What a language server said about an edit: the findings it introduced, or a note why there are none to tell
    (a server that is slow, or gone: said once per server)."""

    introduced: tuple[Diagnostic, ...] = ()
    note: str = ""
    server: str = ""  # the server that answered (basedpyright); empty when none did


class CodeIntel(Protocol):
    """The language servers of one agent's root, as the tools use them. Paths are absolute and resolved."""

    def touch(self, path: Path) -> None:
        """The agent read `path`: sync it to its server in the background (starting the server on first need), so
        an edit later knows what was there before it. Never blocks, never raises."""
        ...

    async def before_edit(self, paths: list[Path]) -> object:
        """About to write `paths`: what their server knows of them now (a token for `after_edit`)."""
        ...

    async def after_edit(self, paths: list[Path], before: object) -> EditDiagnostics | None:
        """`paths` were written: sync them and wait (bounded by `[lsp] wait_seconds`) for the findings the write
        introduced. None: no server handles these files."""
        ...

    async def query(self, operation: str, path: Path | None, line: int, column: int, query: str) -> str:
        """The LSP tool's answer, as text capped for the model: `operation` is one of `LSP_OPERATIONS`. Raises
        `ToolError` with a line the model can act on (no server for the file, a position out of range)."""
        ...


LSP_OPERATIONS = ("definition", "references", "hover", "document_symbols", "workspace_symbols", "diagnostics")


def diagnostics_text(found: EditDiagnostics) -> str:
    """The block an edit's result ends with: its new errors first, then warnings, capped in count and characters;
    the server's note when it had nothing to say in time. Empty when there is nothing to add."""
    ranked = sorted((d for d in found.introduced if d.severity in ("error", "warning")),
                    key=lambda d: (SEVERITY_RANK[d.severity], d.path, d.line, d.column))
    if not ranked:
        return f"[{found.server or 'language server'}] {found.note}" if found.note else ""
    errors = sum(1 for d in ranked if d.severity == "error")
    head = f"{found.server or 'The language server'} reports {_count(errors, 'new error')}"
    head += f" and {_count(len(ranked) - errors, 'new warning')} after this edit:"
    lines: list[str] = [head]
    used = len(head)
    for shown, diagnostic in enumerate(ranked):
        line = diagnostic.line_text()[:400]
        if shown >= MAX_DIAGNOSTICS or used + len(line) + 1 > MAX_DIAGNOSTICS_CHARS:
            lines.append(f"… and {len(ranked) - shown} more (LSP operation=diagnostics lists a file's all).")
            break
        lines.append(line)
        used += len(line) + 1
    return "\n".join(lines)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" + ("" if n == 1 else "s")
