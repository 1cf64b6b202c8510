"""The session tree's servers: every agent's tool context has a `RootIntel` over the runner's one manager (a worktree
agent's rooted in its worktree), and the runner's `aclose` (the session's end) leaves no server process."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.session import Session
from agentcli.config.load import load_config
from agentcli.llm.base import RetryPolicy
from agentcli.llm.models import ProviderPool, ResolvedModel
from agentcli.lsp import RootIntel
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.subagents.runner import SubagentRunner
from agentcli.tools.permissions.policy import PermissionPolicy
from tests.lsp.conftest import alive, basedpyright_spec, group_members, write

pytestmark = pytest.mark.lsp


async def test_every_agent_shares_the_runners_servers_and_its_close_stops_them(tmp_path: Path) -> None:
    basedpyright_spec()
    ws = (tmp_path / "ws").resolve()
    path = write(ws / "a.py", "x: int = 1\n")
    worktree = (tmp_path / "wt").resolve()
    write(worktree / "a.py", "x: int = 1\n")
    settings = load_config(ws, env={"HOME": str(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "xdg")},
                           overrides={"sandbox.mode": "off"}).settings
    runner = SubagentRunner(settings=settings, registry=AgentRegistry.load(ws), pool=ProviderPool(RetryPolicy()),
                            workspace=ws, permissions=PermissionPolicy("auto"), store=None)

    model = ResolvedModel("main", "anthropic", "m", None, "k", 1024)
    main = runner.kit.tool_context(Session(system_prompt="", model=model, workspace=ws))
    child = runner.kit.tool_context(Session(system_prompt="", model=model, workspace=ws))
    isolated = runner.kit.tool_context(Session(system_prompt="", model=model, workspace=worktree), workspace=worktree)
    assert isinstance(main.code_intel, RootIntel) and isinstance(isolated.code_intel, RootIntel)
    assert isinstance(child.code_intel, RootIntel) and child.code_intel.servers is main.code_intel.servers
    assert isolated.code_intel.workspace == worktree and isolated.code_intel.servers is runner.kit.lsp

    before = await main.code_intel.before_edit([path])
    path.write_text('x: int = "one"\n', encoding="utf-8")
    found = await child.code_intel.after_edit([path], before)  # another agent of the tree: the same server
    assert found is not None and [d.path for d in found.introduced if d.severity == "error"] == ["a.py"]
    await isolated.code_intel.before_edit([worktree / "a.py"])
    roots = sorted(str(slot.root) for slot in runner.kit.lsp.slots.values())
    assert roots == sorted([str(ws), str(worktree)])
    pids = [pid for slot in runner.kit.lsp.running() if slot.conn and slot.conn.pid
            for pid in group_members(slot.conn.pid)]
    assert len(runner.kit.lsp.running()) == 2 and pids

    await runner.aclose()
    assert [pid for pid in pids if alive(pid)] == []
