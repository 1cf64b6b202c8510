"""Language-server tests: a real basedpyright (the dev extra), shared by a module's tests; fake servers are small
Python scripts (one that never answers, one that exits at once)."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio

from agentcli.config.schema import Settings
from agentcli.lsp import LanguageServers, RootIntel, ServerSpec

HANG = "import sys\nsys.stdin.buffer.read()\n"  # reads every request, answers none
EXIT = "import sys\nsys.exit(3)\n"
pytestmark = pytest.mark.lsp

def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path

def lsp_settings(**lsp: Any) -> Settings:
    """Settings with `[lsp]` set to `lsp` (short waits unless given)."""
    return Settings(lsp={"wait_seconds": 20.0, "first_wait_seconds": 60.0, **lsp})

def basedpyright_spec() -> ServerSpec:
    """The built-in basedpyright entry; the test is skipped where the dev extra did not install it."""
    spec = next(s for s in LanguageServers(Settings(), {}).specs if s.name == "basedpyright")
    if spec.executable() is None:
        pytest.skip("basedpyright-langserver is not installed (pip install -e '.[dev]')")
    return spec

def fake_settings(tmp: Path, script: str, **lsp: Any) -> Settings:
    """A `[lsp.servers.fake]` serving `.fake` files that runs `script` with this Python."""
    program = write(tmp / "fake_server.py", script)
    servers = {"fake": {"command": [sys.executable, str(program)], "extensions": [".fake"]}}
    return lsp_settings(servers=servers, **lsp)

def alive(pid: int) -> bool:
    """Whether `pid` runs (a zombie counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as fh:
            return fh.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False

def group_members(pgid: int) -> list[int]:
    """The live processes of process group `pgid` (Linux /proc)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                with open(f"/proc/{name}/stat", encoding="ascii") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(name))
    return found

@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A two-file Python project: `a.greet`, called from `b`."""
    root = tmp_path_factory.mktemp("py").resolve()
    write(root / "a.py", 'def greet(name: str) -> str:\n    return "hi " + name\n')
    write(root / "b.py", 'from a import greet\n\nprint(greet("x"))\nprint(greet("y"))\n')
    write(root / "pyrightconfig.json", '{"typeCheckingMode": "standard"}\n')
    return root

@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def python_intel(project: Path) -> AsyncIterator[RootIntel]:
    """One basedpyright for the module's tests, in `project`."""
    basedpyright_spec()
    servers = LanguageServers(lsp_settings(), dict(os.environ))
    yield RootIntel(servers, project, None)
    await servers.aclose()

