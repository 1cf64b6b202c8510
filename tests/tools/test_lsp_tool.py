"""The LSP tool: each operation's arguments, the one line a model reads when no language server is configured, what
it asks of `ToolContext.code_intel`, and permission (a Read deny rule stops it, and hides the places it covers).

The language servers are a test double of the `CodeIntel` protocol (the unit level); the e2e tests ask real ones.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any, get_args

import pytest

from agentcli.tools import LSP_OPERATIONS, EditDiagnostics, ToolError
from agentcli.tools.base import ToolContext, ToolResult, tool_specs
from agentcli.tools.files.lsp import NO_SERVER, LSPTool, Operation
from agentcli.tools.on_demand import summary
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import ALL_TOOLS, FILE_SHOWING_TOOLS, PATH_TOOLS, READ_ONLY_TOOLS


class AnsweringCodeIntel:
    """A `CodeIntel` whose queries answer `answer` (or raise `ToolError(refuse)`), recording what was asked."""

    def __init__(self, answer: str = "", refuse: str = "") -> None:
        self.answer = answer
        self.refuse = refuse
        self.asked: list[tuple[str, Path | None, int, int, str]] = []

    def touch(self, path: Path) -> None:
        raise AssertionError("the LSP tool never touches")

    async def before_edit(self, paths: list[Path]) -> object:
        raise AssertionError("the LSP tool edits nothing")

    async def after_edit(self, paths: list[Path], before: object) -> EditDiagnostics | None:
        raise AssertionError("the LSP tool edits nothing")

    async def query(self, operation: str, path: Path | None, line: int, column: int, query: str) -> str:
        self.asked.append((operation, path, line, column, query))
        if self.refuse:
            raise ToolError(self.refuse)
        return self.answer


@pytest.fixture
def code(workspace: Path) -> Path:
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text("def count() -> int:\n    return 1\n")
    (workspace / "secrets").mkdir()
    (workspace / "secrets" / "keys.py").write_text("KEY = 'x'\n")
    return workspace


async def ask(ctx: ToolContext, **raw: Any) -> ToolResult:
    tool = LSPTool()
    return await tool.run(tool.parse(raw), ctx)


def test_the_operations_are_the_protocols() -> None:
    assert get_args(Operation) == LSP_OPERATIONS
    assert LSPTool().input_schema()["properties"]["operation"]["enum"] == list(LSP_OPERATIONS)


@pytest.mark.parametrize(("raw", "message"), [
    ({"operation": "definition", "path": "src/app.py"}, "definition needs line and column"),
    ({"operation": "references", "line": 1, "column": 5}, "references needs path"),
    ({"operation": "hover", "path": " ", "column": 5}, "hover needs path and line"),
    ({"operation": "document_symbols"}, "document_symbols needs path"),
    ({"operation": "diagnostics", "query": "count"}, "diagnostics needs path"),
    ({"operation": "workspace_symbols", "path": "src/app.py"}, "workspace_symbols needs query"),
    ({"operation": "workspace_symbols", "query": "  "}, "workspace_symbols needs query"),
])
def test_each_operation_names_what_it_lacks(raw: dict[str, Any], message: str) -> None:
    with pytest.raises(ToolError, match=f"^Invalid arguments for LSP: arguments: Value error, {message}$"):
        LSPTool().parse(raw)


def test_bad_values_are_refused() -> None:
    tool = LSPTool()
    with pytest.raises(ToolError, match=r"operation: Input should be 'definition', 'references'"):
        tool.parse({"operation": "rename", "path": "a.py", "line": 1, "column": 1})
    with pytest.raises(ToolError, match=r"line: Input should be greater than or equal to 1"):
        tool.parse({"operation": "hover", "path": "a.py", "line": 0, "column": 1})
    with pytest.raises(ToolError, match=r"character: Extra inputs are not permitted"):
        tool.parse({"operation": "hover", "path": "a.py", "line": 1, "character": 1})


async def test_without_a_server_it_says_what_to_do_instead(ctx: ToolContext, code: Path) -> None:
    assert ctx.code_intel is None
    with pytest.raises(ToolError) as raised:
        await ask(ctx, operation="definition", path="src/app.py", line=2, column=12)
    assert str(raised.value) == NO_SERVER
    assert NO_SERVER.startswith("No language server is configured for this workspace: ")
    assert "Grep" in NO_SERVER


async def test_it_asks_the_servers_with_resolved_paths_and_positions(ctx: ToolContext, code: Path) -> None:
    intel = AnsweringCodeIntel("src/app.py:1:5 def count() -> int")
    ctx = dataclasses.replace(ctx, code_intel=intel)
    result = await ask(ctx, operation="definition", path="./src/../src/app.py", line=2, column=12)
    assert result.content == "src/app.py:1:5 def count() -> int" and not result.is_error
    await ask(ctx, operation="document_symbols", path=str(code / "src" / "app.py"))
    await ask(ctx, operation="workspace_symbols", query=" count ", path="ignored.py")
    app = code / "src" / "app.py"
    assert intel.asked == [("definition", app, 2, 12, ""), ("document_symbols", app, 0, 0, ""),
                           ("workspace_symbols", None, 0, 0, "count")]


async def test_a_bad_file_is_refused_before_any_server_is_asked(ctx: ToolContext, code: Path, outside: Path) -> None:
    intel = AnsweringCodeIntel("x")
    ctx = dataclasses.replace(ctx, code_intel=intel)
    with pytest.raises(ToolError, match=r"^File does not exist: src/gone\.py$"):
        await ask(ctx, operation="diagnostics", path="src/gone.py")
    with pytest.raises(ToolError, match=r"^src is not a file; LSP hover asks about one file$"):
        await ask(ctx, operation="hover", path="src", line=1, column=1)
    with pytest.raises(ToolError, match="is outside the workspace"):
        await ask(ctx, operation="diagnostics", path=str(outside / "secret.txt"))
    assert intel.asked == []


async def test_a_servers_refusal_reaches_the_model(ctx: ToolContext, code: Path) -> None:
    ctx = dataclasses.replace(ctx, code_intel=AnsweringCodeIntel(refuse="No language server handles .txt files"))
    (code / "notes.txt").write_text("hi\n")
    with pytest.raises(ToolError, match=r"^No language server handles \.txt files$"):
        await ask(ctx, operation="document_symbols", path="notes.txt")


async def _allowed(policy: PermissionPolicy, ctx: ToolContext, **raw: Any) -> bool:
    tool = LSPTool()
    return (await policy.check(tool, tool.parse(raw), dataclasses.replace(ctx, permissions=policy))).allowed


async def test_read_deny_rules_stop_it_and_hide_what_they_cover(ctx: ToolContext, code: Path) -> None:
    deny_secrets = PermissionPolicy("auto", deny=["Read(secrets/**)"])
    assert not await _allowed(deny_secrets, ctx, operation="hover", path="secrets/keys.py", line=1, column=1)
    assert not await _allowed(PermissionPolicy("auto", deny=["LSP(src/**)"]), ctx, operation="diagnostics",
                              path="src/app.py")
    assert await _allowed(deny_secrets, ctx, operation="references", path="src/app.py", line=1, column=5)
    assert await _allowed(PermissionPolicy("readonly"), ctx, operation="diagnostics", path="src/app.py")
    answer = ("3 references to count:\nsrc/app.py:1:5 def count() -> int\n  secrets/keys.py:4:1 count()\n"
              "- secrets/old.py:9:2 count()\nsrc/main.py:7:3 count()")
    ctx = dataclasses.replace(ctx, permissions=deny_secrets, code_intel=AnsweringCodeIntel(answer))
    result = await ask(ctx, operation="references", path="src/app.py", line=1, column=5)
    assert result.content == ("3 references to count:\nsrc/app.py:1:5 def count() -> int\nsrc/main.py:7:3 count()\n"
                              "(2 result(s) in files a Read deny rule covers were left out.)")
    ctx = dataclasses.replace(ctx, permissions=PermissionPolicy("auto"))
    assert (await ask(ctx, operation="references", path="src/app.py", line=1, column=5)).content == answer


def test_traits_and_descriptions() -> None:
    tool = LSPTool()
    assert ALL_TOOLS["LSP"] is LSPTool
    assert tool.read_only and tool.concurrency_safe and tool.on_demand and not tool.mutating
    assert "LSP" in READ_ONLY_TOOLS and "LSP" in PATH_TOOLS and "LSP" in FILE_SHOWING_TOOLS
    assert "`references`" in tool.description() and "path:line:column" in tool.description()
    assert tool.lean_description().startswith("Ask the language servers about code")
    assert summary(tool).startswith("Ask the language servers about code: definition, references, hover")
    (spec,) = tool_specs([tool], lean=True)
    assert spec.name == "LSP" and set(spec.input_schema["properties"]) == {"operation", "path", "line", "column",
                                                                           "query"}
    assert tool.summary(tool.parse({"operation": "hover", "path": "./src/app.py", "line": 2, "column": 12})) \
        == "hover src/app.py:2:12"
    assert tool.summary(tool.parse({"operation": "workspace_symbols", "query": "load\nconfig"})) \
        == "workspace_symbols load config"
