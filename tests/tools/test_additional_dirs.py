"""Additional directories (`ToolContext.extra_roots`): the file tools read and write there, with the workspace's
checks (symlinks followed, write_paths confinement, guarded files, deny rules written as absolute paths)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agentcli.tools.paths import display_path, match_glob, resolve_for_read, resolve_in_workspace
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools

TOOLS: dict[str, Tool[Any]] = {tool.name: tool for tool in build_tools()}


@pytest.fixture
def extra(tmp_path: Path) -> Path:
    """An additional directory beside the workspace, holding `lib/util.py`."""
    path = (tmp_path / "shared").resolve()
    (path / "lib").mkdir(parents=True)
    (path / "lib" / "util.py").write_text("VALUE = 1\n")
    return path


@pytest.fixture
def ectx(ctx: ToolContext, extra: Path) -> ToolContext:
    return dataclasses.replace(ctx, extra_roots=[extra])


async def call(ctx: ToolContext, name: str, **raw: Any) -> ToolResult:
    tool = TOOLS[name]
    return await tool.run(tool.parse(raw), ctx)


def test_paths_inside_an_additional_directory_resolve(ectx: ToolContext, extra: Path) -> None:
    target = extra / "lib" / "util.py"
    assert resolve_in_workspace(ectx, str(target)) == target
    assert resolve_in_workspace(ectx, str(extra / "new" / "x.py"), for_write=True) == extra / "new" / "x.py"
    assert resolve_for_read(ectx, str(target)) == target
    assert display_path(ectx, target) == str(target)  # absolute: it is not the workspace's


def test_tilde_reaches_an_additional_directory_in_home(ctx: ToolContext, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    extra = (tmp_path / "notes").resolve()
    extra.mkdir()
    scoped = dataclasses.replace(ctx, extra_roots=[extra])
    assert resolve_in_workspace(scoped, "~/notes/a.md", for_write=True) == extra / "a.md"
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(scoped, "~/elsewhere.md")


def test_without_the_directory_it_stays_outside(ctx: ToolContext, extra: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(ctx, str(extra / "lib" / "util.py"))


def test_symlink_escaping_an_additional_directory_is_refused(ectx: ToolContext, extra: Path, outside: Path) -> None:
    (extra / "escape").symlink_to(outside, target_is_directory=True)
    with pytest.raises(ToolError, match=r"additional directories .*symlink that points outside"):
        resolve_in_workspace(ectx, str(extra / "escape" / "secret.txt"))
    with pytest.raises(ToolError, match="outside the workspace"):
        resolve_in_workspace(ectx, str(extra / "escape" / "new.txt"), for_write=True)


def test_write_paths_keep_a_subagent_out_of_additional_directories(ectx: ToolContext, extra: Path,
                                                                   workspace: Path) -> None:
    confined = dataclasses.replace(ectx, write_paths=["**"])
    assert resolve_in_workspace(confined, "src/a.py", for_write=True) == workspace / "src" / "a.py"
    with pytest.raises(ToolError, match="outside write_paths"):
        resolve_in_workspace(confined, str(extra / "lib" / "util.py"), for_write=True)
    below = dataclasses.replace(ectx, write_scopes=(("**",),))
    with pytest.raises(ToolError, match="outside write_paths"):
        resolve_in_workspace(below, str(extra / "x.py"), for_write=True)
    assert resolve_in_workspace(confined, str(extra / "lib" / "util.py")) == extra / "lib" / "util.py"  # reads


async def test_file_tools_work_in_an_additional_directory(ectx: ToolContext, extra: Path) -> None:
    util = str(extra / "lib" / "util.py")
    assert "VALUE = 1" in (await call(ectx, "Read", file_path=util)).content
    edited = await call(ectx, "Edit", file_path=util, old_string="VALUE = 1", new_string="VALUE = 2")
    assert not edited.is_error, edited.content
    assert (extra / "lib" / "util.py").read_text() == "VALUE = 2\n"
    written = await call(ectx, "Write", file_path=str(extra / "docs" / "a.md"), content="hi\n")
    assert not written.is_error and (extra / "docs" / "a.md").read_text() == "hi\n"
    multi = await call(ectx, "MultiEdit", file_path=util, edits=[{"old_string": "2", "new_string": "3"}])
    assert not multi.is_error and "VALUE = 3" in (extra / "lib" / "util.py").read_text()
    assert "util.py" in (await call(ectx, "LS", path=str(extra / "lib"))).content
    globbed = await call(ectx, "Glob", pattern="**/*.py", path=str(extra))
    assert str(extra / "lib" / "util.py") in globbed.content
    grepped = await call(ectx, "Grep", pattern="VALUE", path=str(extra), output_mode="content")
    assert str(extra / "lib" / "util.py") in grepped.content and "VALUE = 3" in grepped.content


async def test_permissions_in_an_additional_directory(ectx: ToolContext, extra: Path) -> None:
    tool = TOOLS["Edit"]
    args = tool.parse({"file_path": str(extra / "lib" / "util.py"), "old_string": "1", "new_string": "2"})
    accept = PermissionPolicy("accept_edits", non_interactive=True)
    assert (await accept.check(tool, args, ectx)).allowed  # accept_edits covers them, as Claude Code's acceptEdits
    deny = PermissionPolicy("auto", deny=[f"Edit(/{extra}/lib/**)"])  # Claude Code's //abs form
    refused = await deny.check(tool, args, ectx)
    assert not refused.allowed and str(extra / "lib" / "util.py") in refused.reason
    relative = PermissionPolicy("auto", deny=["Edit(lib/**)"])  # workspace-relative: not about this folder
    assert (await relative.check(tool, args, ectx)).allowed
    (extra / ".git" / "hooks").mkdir(parents=True)
    hook = tool.parse({"file_path": str(extra / ".git" / "hooks" / "pre-commit"), "old_string": "a",
                       "new_string": "b"})
    guarded = await accept.check(tool, hook, ectx)
    assert not guarded.allowed and "git" in guarded.reason  # guarded as in the workspace


def test_absolute_globs_match_only_absolute_paths() -> None:
    assert match_glob("//srv/lib/**", "/srv/lib/a.py")
    assert not match_glob("//srv/lib/**", "srv/lib/a.py")
    assert not match_glob("//srv/lib/**", "/srv/other/a.py")


async def test_every_agent_gets_them_but_one_in_a_worktree(workspace: Path, extra: Path,
                                                           monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from agentcli.testing.scripted import ScriptedLLM
    from tests.subagents.harness import build_harness

    harness = build_harness(ScriptedLLM(), workspace, monkeypatch, {})
    try:
        harness.runner.kit.extra_roots[:] = [extra]  # as the conversation sets its list in place
        assert harness.runner.tool_context(harness.session).extra_roots == [extra]
        tree = (tmp_path / "tree").resolve()
        tree.mkdir()
        isolated = harness.runner.kit.tool_context(harness.session, workspace=tree)
        assert isolated.worktree and isolated.extra_roots == []
        with pytest.raises(ToolError, match="outside the workspace"):
            resolve_in_workspace(isolated, str(extra / "lib" / "util.py"))
    finally:
        await harness.aclose()
