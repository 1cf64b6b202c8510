"""Fixtures for tool tests: a workspace under tmp_path, a directory outside it, a ToolContext."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """An empty workspace directory (resolved)."""
    path = (tmp_path / "ws").resolve()
    path.mkdir()
    return path


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A directory next to the workspace, holding `secret.txt`."""
    path = (tmp_path / "outside").resolve()
    path.mkdir()
    (path / "secret.txt").write_text("top secret\n")
    return path


@pytest.fixture
def ctx(workspace: Path) -> ToolContext:
    """A context for tools in `workspace`, permissions on auto."""
    return ToolContext(
        workspace=workspace,
        agent="main",
        session_id="s-test",
        permissions=PermissionPolicy("auto"),
        file_locks=FileLocks(),
    )
