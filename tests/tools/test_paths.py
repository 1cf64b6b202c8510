"""Workspace confinement: every file tool refuses paths that leave the workspace."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.base import Tool, ToolContext, ToolError
from agentcli.tools.paths import display_path, match_glob, resolve_in_workspace
from agentcli.tools.registry import build_tools


@pytest.fixture
def links(workspace: Path, outside: Path) -> None:
    """`link_file` → outside/secret.txt, `link_dir` → outside/, `inner` → a dir inside."""
    (workspace / "link_file").symlink_to(outside / "secret.txt")
    (workspace / "link_dir").symlink_to(outside, target_is_directory=True)
    (workspace / "real").mkdir()
    (workspace / "real" / "a.txt").write_text("hello\n")
    (workspace / "inner").symlink_to(workspace / "real", target_is_directory=True)
    (workspace / "dangling").symlink_to(outside / "new.txt")


def test_relative_and_absolute_inside_are_accepted(ctx: ToolContext, workspace: Path, links: None) -> None:
    assert resolve_in_workspace(ctx, "real/a.txt") == workspace / "real" / "a.txt"
    assert resolve_in_workspace(ctx, str(workspace / "real" / "a.txt")) == workspace / "real" / "a.txt"
    assert resolve_in_workspace(ctx, "real/../real/a.txt") == workspace / "real" / "a.txt"
    assert resolve_in_workspace(ctx, ".") == workspace
    assert resolve_in_workspace(ctx, "inner/a.txt") == workspace / "real" / "a.txt"  # link that stays inside


@pytest.mark.parametrize("raw", ["../x", "real/../../x", "/etc/passwd", "~/x", "link_file", "link_dir/secret.txt"])
def test_escapes_are_refused(ctx: ToolContext, links: None, raw: str) -> None:
    with pytest.raises(ToolError, match=r"outside the workspace") as info:
        resolve_in_workspace(ctx, raw)
    assert raw in str(info.value)
    assert "\n" not in str(info.value)


def test_symlink_escape_says_so(ctx: ToolContext, links: None) -> None:
    with pytest.raises(ToolError, match=r"symlink that points outside"):
        resolve_in_workspace(ctx, "link_dir/secret.txt")


@pytest.mark.parametrize("raw", ["link_file", "link_dir/new.txt", "dangling", "link_dir/deep/new.txt"])
def test_writes_through_escaping_symlinks_are_refused(ctx: ToolContext, links: None, raw: str) -> None:
    with pytest.raises(ToolError, match=r"outside the workspace"):
        resolve_in_workspace(ctx, raw, for_write=True)


def test_new_file_resolves_through_nearest_existing_parent(ctx: ToolContext, workspace: Path, links: None) -> None:
    assert resolve_in_workspace(ctx, "inner/new/deeper/x.py", for_write=True) == workspace / "real/new/deeper/x.py"


def test_empty_path_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match=r"empty"):
        resolve_in_workspace(ctx, "  ")


def test_write_paths_globs(ctx: ToolContext) -> None:
    sub = dataclasses.replace(ctx, write_paths=["src/**", "docs/*.md"])
    assert resolve_in_workspace(sub, "src/a/b.py", for_write=True).name == "b.py"
    assert resolve_in_workspace(sub, "docs/guide.md", for_write=True).name == "guide.md"
    assert resolve_in_workspace(sub, "README.md").name == "README.md"  # reads are not limited
    with pytest.raises(ToolError) as info:
        resolve_in_workspace(sub, "docs/deep/guide.md", for_write=True)
    assert str(info.value) == (
        "Subagent lacks permission for required tools: write to docs/deep/guide.md is outside write_paths "
        "(src/**, docs/*.md)"
    )
    with pytest.raises(ToolError, match=r"outside write_paths"):
        resolve_in_workspace(sub, "setup.py", for_write=True)


def test_display_path(ctx: ToolContext, workspace: Path) -> None:
    assert display_path(ctx, workspace / "a" / "b.py") == "a/b.py"
    assert display_path(ctx, workspace) == "."


@pytest.mark.parametrize(
    ("pattern", "rel", "anchored", "expected"),
    [
        ("src/**", "src/a/b.py", True, True),
        ("src/**", "srcx/a.py", True, False),
        ("docs/*.md", "docs/a.md", True, True),
        ("docs/*.md", "docs/x/a.md", True, False),
        ("**/*.py", "a.py", True, True),
        ("**/*.py", "x/y/a.py", True, True),
        ("a/**/b", "a/b", True, True),
        ("a/**/b", "a/x/y/b", True, True),
        ("*.md", "docs/a.md", True, False),
        ("*.md", "docs/a.md", False, True),
        ("*.{ts,tsx}", "web/app.tsx", False, True),
        ("test_?.py", "test_1.py", True, True),
        ("[!a]b", "cb", True, True),
        ("[!a]b", "ab", True, False),
        ("./src/*", "src/x", True, True),
        ("build/", "build/out/x.o", False, True),
    ],
)
def test_match_glob(pattern: str, rel: str, anchored: bool, expected: bool) -> None:
    assert match_glob(pattern, rel, anchored=anchored) is expected


def _escape_calls(target: str) -> list[tuple[str, dict[str, Any]]]:
    return [
        ("Read", {"file_path": target}),
        ("Write", {"file_path": target, "content": "pwned\n"}),
        ("Edit", {"file_path": target, "old_string": "top secret", "new_string": "pwned"}),
        ("MultiEdit", {"file_path": target, "edits": [{"old_string": "top secret", "new_string": "pwned"}]}),
        ("LS", {"path": target}),
        ("Glob", {"pattern": "**/*", "path": target}),
        ("Grep", {"pattern": "secret", "path": target}),
    ]


@pytest.mark.parametrize("target", ["../outside/secret.txt", "OUTSIDE/secret.txt", "link_file", "link_dir/secret.txt"])
async def test_every_file_tool_refuses_escapes(ctx: ToolContext, outside: Path, links: None, target: str) -> None:
    target = target.replace("OUTSIDE", str(outside))
    tools: dict[str, Tool[Any]] = {tool.name: tool for tool in build_tools()}
    for name, raw in _escape_calls(target):
        tool = tools[name]
        with pytest.raises(ToolError, match=r"outside the workspace"):
            await tool.run(tool.parse(raw), ctx)
    assert (outside / "secret.txt").read_text() == "top secret\n"
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_directory_tools_refuse_escaping_dirs(ctx: ToolContext, links: None) -> None:
    tools = {tool.name: tool for tool in build_tools(["LS", "Glob", "Grep"])}
    for name, raw in [
        ("LS", {"path": "link_dir"}),
        ("Glob", {"pattern": "*", "path": "link_dir"}),
        ("Grep", {"pattern": "x", "path": "/etc"}),
    ]:
        with pytest.raises(ToolError, match=r"outside the workspace"):
            await tools[name].run(tools[name].parse(raw), ctx)


async def test_search_does_not_follow_links_out(ctx: ToolContext, links: None) -> None:
    tools = {tool.name: tool for tool in build_tools(["Glob", "Grep"])}
    globbed = await tools["Glob"].run(tools["Glob"].parse({"pattern": "**/*"}), ctx)
    assert "secret" not in globbed.content and "link_file" not in globbed.content
    grepped = await tools["Grep"].run(tools["Grep"].parse({"pattern": "top secret"}), ctx)
    assert grepped.content.startswith("No matches")
