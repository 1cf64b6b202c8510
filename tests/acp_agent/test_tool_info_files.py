"""What an editor is shown of NotebookEdit, Read and LSP: their kinds and the locations they are about."""

from __future__ import annotations

from pathlib import Path

from agentcli.acp_agent.tool_info import kind_of, locations_of


def test_notebookedit_is_an_edit_of_its_notebook(tmp_path: Path) -> None:
    assert kind_of("NotebookEdit") == "edit"
    (location,) = locations_of("NotebookEdit", {"notebook_path": "nb/a.ipynb", "cell_id": "x"}, tmp_path)
    assert location.path == str(tmp_path / "nb/a.ipynb") and location.line is None
    (read,) = locations_of("Read", {"file_path": "report.pdf", "pages": "2-3"}, tmp_path)
    assert read.path == str(tmp_path / "report.pdf")


def test_lsp_is_a_search_at_the_place_it_asks_about(tmp_path: Path) -> None:
    assert kind_of("LSP") == "search"
    (hover,) = locations_of("LSP", {"operation": "hover", "path": "src/a.py", "line": 12, "column": 5}, tmp_path)
    assert hover.path == str(tmp_path / "src/a.py") and hover.line == 12
    (symbols,) = locations_of("LSP", {"operation": "workspace_symbols", "query": "load"}, tmp_path)
    assert symbols.path == str(tmp_path) and symbols.line is None
