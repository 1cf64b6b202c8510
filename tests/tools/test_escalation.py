"""Delegation and permission escalation at the tool layer: write scopes, readonly vs --yes, deny rules."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from agentcli.config.schema import PermissionsSettings
from agentcli.tools.base import ToolContext, ToolError
from agentcli.tools.paths import resolve_in_workspace
from agentcli.tools.permissions.approvals import Approval, PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools

TOOLS = {tool.name: tool for tool in build_tools()}


def test_every_write_scope_must_match(ctx: ToolContext) -> None:
    sub = dataclasses.replace(ctx, write_paths=["**"], write_scopes=(("src/**",), ("src/api/**", "docs/*.md")))
    assert resolve_in_workspace(sub, "src/api/x.py", for_write=True).name == "x.py"
    with pytest.raises(ToolError) as info:
        resolve_in_workspace(sub, "src/core.py", for_write=True)
    assert str(info.value) == (
        "Subagent lacks permission for required tools: write to src/core.py is outside write_paths "
        "(src/api/**, docs/*.md)"
    )
    with pytest.raises(ToolError, match=r"write to docs/a.md is outside write_paths \(src/\*\*\)$"):
        resolve_in_workspace(sub, "docs/a.md", for_write=True)
    assert resolve_in_workspace(sub, "docs/a.md").name == "a.md"  # reads are not limited


def test_inherited_scope_applies_without_own_write_paths(ctx: ToolContext) -> None:
    sub = dataclasses.replace(ctx, write_scopes=(("src/**",),))
    with pytest.raises(ToolError, match=r"outside write_paths \(src/\*\*\)"):
        resolve_in_workspace(sub, "setup.py", for_write=True)


def test_empty_scope_refuses_every_write(ctx: ToolContext) -> None:
    sub = dataclasses.replace(ctx, write_scopes=((),))
    with pytest.raises(ToolError, match=r"write to a.txt is outside write_paths \(none\)"):
        resolve_in_workspace(sub, "a.txt", for_write=True)


def test_yes_never_overrides_readonly() -> None:
    readonly = PermissionsSettings(mode="readonly", allow_mutating_in_run=True)
    assert PermissionPolicy.from_settings(readonly, oneshot=True, yes=True).mode == "readonly"
    assert PermissionPolicy.from_settings(readonly, yes=True).mode == "readonly"
    assert PermissionPolicy.yes_ignored(readonly, True) == '--yes ignored: permissions.mode is "readonly"'
    assert PermissionPolicy.yes_ignored(readonly, False) is None
    assert PermissionPolicy.yes_ignored(PermissionsSettings(), True) is None
    assert PermissionPolicy.from_settings(PermissionsSettings(), yes=True).mode == "auto"


class AlwaysApprover:
    def __init__(self) -> None:
        self.asked: list[str] = []

    async def __call__(self, request: PermissionRequest) -> Approval:
        self.asked.append(request.target)
        return "allow_always"


async def _check(policy: PermissionPolicy, ctx: ToolContext, name: str, **raw: Any) -> bool:
    tool = TOOLS[name]
    decision = await policy.check(tool, tool.parse(raw), dataclasses.replace(ctx, permissions=policy))
    return decision.allowed


async def test_deny_wins_over_an_earlier_allow_always(ctx: ToolContext) -> None:
    approver = AlwaysApprover()
    policy = PermissionPolicy("ask", deny=["Bash(touch marker*)", "Edit(secret/**)"], approver=approver)
    assert await _check(policy, ctx, "Bash", command="touch ok")  # asked; "touch" remembered
    assert await _check(policy, ctx, "Write", file_path="a.txt", content="")  # asked; edits remembered
    assert approver.asked == ["touch ok", "a.txt"]
    assert not await _check(policy, ctx, "Bash", command="touch marker")
    assert not await _check(policy, ctx, "Write", file_path="secret/k.txt", content="")
    assert approver.asked == ["touch ok", "a.txt"]  # denied calls never reach the person


@pytest.mark.parametrize(
    "command",
    ["rm -rf x", "/bin/rm -rf x", "/usr/bin/rm x", "./rm x", "sudo /bin/rm x", "env rm x", "sh -c 'rm x'",
     "ls; rm x", "r\\m x", '"rm" x'],
)
async def test_deny_matches_rephrased_commands(ctx: ToolContext, command: str) -> None:
    policy = PermissionPolicy("auto", allow=["Bash"], deny=["Bash(rm *)"])
    assert not await _check(policy, ctx, "Bash", command=command)
