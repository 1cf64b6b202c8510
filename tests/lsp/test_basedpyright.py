"""A real basedpyright: an edit's new error comes back from `after_edit`, a fix brings none; definition and references
across two files through `query`; positions and files it cannot serve are one-line tool errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.lsp import RootIntel
from agentcli.tools import EditDiagnostics, ToolError, diagnostics_text

pytestmark = [pytest.mark.lsp, pytest.mark.asyncio(loop_scope="module")]


async def _edit(intel: RootIntel, path: Path, text: str) -> EditDiagnostics | None:
    before = await intel.before_edit([path])
    path.write_text(text, encoding="utf-8")
    return await intel.after_edit([path], before)


async def test_an_edit_that_breaks_the_types_gets_its_error_and_the_fix_gets_none(
        python_intel: RootIntel, project: Path) -> None:
    c = project / "c.py"
    c.write_text("def double(n: int) -> int:\n    return n * 2\n", encoding="utf-8")
    python_intel.touch(c)  # a Read: synced in the background

    broken = await _edit(python_intel, c, 'def double(n: int) -> int:\n    return "two" * n + 1\n')
    assert broken is not None and broken.server == "basedpyright" and not broken.note
    errors = [d for d in broken.introduced if d.severity == "error"]
    assert errors and all(d.path == "c.py" and d.line == 2 for d in errors)
    assert any("+" in d.message or "str" in d.message for d in errors)
    assert "c.py:2:" in diagnostics_text(broken) and "new error" in diagnostics_text(broken)

    fixed = await _edit(python_intel, c, "def double(n: int) -> int:\n    return n * 2\n")
    assert fixed is not None and fixed.introduced == () and not fixed.note

    unchanged = await _edit(python_intel, c, "def double(n: int) -> int:\n    return n * 2  # twice\n")
    assert unchanged is not None and unchanged.introduced == ()


async def test_only_what_the_edit_added_is_reported(python_intel: RootIntel, project: Path) -> None:
    d = project / "d.py"
    d.write_text('x: int = "one"\n', encoding="utf-8")  # an error already there
    found = await _edit(python_intel, d, 'x: int = "one"\ny: str = 2\n')
    assert found is not None
    assert [(e.line, e.severity) for e in found.introduced if e.severity == "error"] == [(2, "error")]


async def test_definition_and_references_of_a_function_across_two_files(
        python_intel: RootIntel, project: Path) -> None:
    definition = await python_intel.query("definition", project / "b.py", 3, 7, "")
    assert definition.splitlines()[0].startswith("a.py:1:5: def greet")

    references = (await python_intel.query("references", project / "a.py", 1, 5, "")).splitlines()
    assert {line.split(": ", 1)[0] for line in references} == {"a.py:1:5", "b.py:1:15", "b.py:3:7", "b.py:4:7"}

    hover = await python_intel.query("hover", project / "b.py", 3, 7, "")
    assert "def greet(name: str) -> str" in hover
    symbols = await python_intel.query("document_symbols", project / "a.py", 0, 0, "")
    assert "function greet  a.py:1:5" in symbols
    assert "a.py:1:5" in await python_intel.query("workspace_symbols", None, 0, 0, "greet")
    assert "no diagnostics in b.py" in await python_intel.query("diagnostics", project / "b.py", 0, 0, "")


async def test_a_bad_position_or_a_file_no_server_serves_is_a_tool_error(
        python_intel: RootIntel, project: Path) -> None:
    with pytest.raises(ToolError, match=r"Line 40 is out of range: a.py has 2 lines"):
        await python_intel.query("definition", project / "a.py", 40, 1, "")
    with pytest.raises(ToolError, match=r"Column 99 is out of range"):
        await python_intel.query("hover", project / "a.py", 1, 99, "")
    notes = project / "notes.txt"
    notes.write_text("hello\n", encoding="utf-8")
    with pytest.raises(ToolError, match=r"No language server handles notes.txt"):
        await python_intel.query("hover", notes, 1, 1, "")
    with pytest.raises(ToolError, match="Unknown LSP operation"):
        await python_intel.query("rename", project / "a.py", 1, 1, "")
    assert await python_intel.after_edit([notes], await python_intel.before_edit([notes])) is None
