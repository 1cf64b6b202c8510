"""What an editor is shown of NotebookEdit and Read: the `edit` kind and the notebook's location."""

from __future__ import annotations

from pathlib import Path

from agentcli.acp_agent.tool_info import kind_of, locations_of


def test_notebookedit_is_an_edit_of_its_notebook(tmp_path: Path) -> None:
    assert kind_of("NotebookEdit") == "edit"
    (location,) = locations_of("NotebookEdit", {"notebook_path": "nb/a.ipynb", "cell_id": "x"}, tmp_path)
    assert location.path == str(tmp_path / "nb/a.ipynb") and location.line is None
    (read,) = locations_of("Read", {"file_path": "report.pdf", "pages": "2-3"}, tmp_path)
    assert read.path == str(tmp_path / "report.pdf")
