"""Write/Edit/MultiEdit never write through a hard link, nor through a symlink swapped in late."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.base import ToolContext, ToolError
from agentcli.tools.files import write as files_write
from agentcli.tools.registry import build_tools

TOOLS = {tool.name: tool for tool in build_tools(["Write", "Edit", "MultiEdit"])}
CALLS: list[tuple[str, dict[str, Any]]] = [
    ("Write", {"content": "pwned\n"}),
    ("Edit", {"old_string": "top secret", "new_string": "pwned"}),
    ("MultiEdit", {"edits": [{"old_string": "top secret", "new_string": "pwned"}]}),
]


@pytest.mark.parametrize(("name", "raw"), CALLS)
async def test_hard_linked_target_is_refused(
    name: str, raw: dict[str, Any], ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    os.link(outside / "secret.txt", workspace / "notes.txt")
    with pytest.raises(ToolError) as info:
        await TOOLS[name].run(TOOLS[name].parse({"file_path": "notes.txt", **raw}), ctx)
    assert str(info.value).startswith("notes.txt has 2 hard links: writing it would also change another path")
    assert "\n" not in str(info.value)
    assert (outside / "secret.txt").read_text() == "top secret\n"


@pytest.mark.parametrize(("name", "raw"), CALLS)
async def test_symlink_swapped_in_after_the_check_is_not_followed(
    name: str, raw: dict[str, Any], ctx: ToolContext, workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    target = workspace / "notes.txt"
    target.write_text("top secret\n")
    real_check = files_write._check_writable_target

    def racing_check(path: Path, rel: str) -> None:
        real_check(path, rel)
        path.unlink()  # the attacker's swap, between the check and the open
        path.symlink_to(outside / "secret.txt")

    monkeypatch.setattr(files_write, "_check_writable_target", racing_check)
    with pytest.raises(ToolError, match=r"^notes.txt became a symlink after it was checked; refusing to"):
        await TOOLS[name].run(TOOLS[name].parse({"file_path": "notes.txt", **raw}), ctx)
    assert (outside / "secret.txt").read_text() == "top secret\n"


async def test_a_hard_link_made_after_the_check_is_caught_on_the_open_file(
    ctx: ToolContext, workspace: Path, outside: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    victim = outside / "victim.txt"
    victim.write_text("keep\n")
    target = workspace / "notes.txt"
    real_check = files_write._check_writable_target

    def racing_check(path: Path, rel: str) -> None:
        real_check(path, rel)
        os.link(victim, path)

    monkeypatch.setattr(files_write, "_check_writable_target", racing_check)
    with pytest.raises(ToolError, match=r"^notes.txt has 2 hard links"):
        await TOOLS["Write"].run(TOOLS["Write"].parse({"file_path": "notes.txt", "content": "x"}), ctx)
    assert victim.read_text() == "keep\n" and target.read_text() == "keep\n"


async def test_ordinary_writes_still_work(ctx: ToolContext, workspace: Path) -> None:
    await TOOLS["Write"].run(TOOLS["Write"].parse({"file_path": "a.txt", "content": "one\n"}), ctx)
    await TOOLS["Write"].run(TOOLS["Write"].parse({"file_path": "a.txt", "content": "two\n"}), ctx)
    edit = {"file_path": "a.txt", "old_string": "two", "new_string": "three"}
    await TOOLS["Edit"].run(TOOLS["Edit"].parse(edit), ctx)
    assert (workspace / "a.txt").read_text() == "three\n"


async def test_edit_refuses_files_it_would_have_to_hold_whole(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files_write, "EDIT_MAX_BYTES", 1024)
    (workspace / "big.txt").write_text("x = 1\n" * 400)
    with pytest.raises(ToolError, match=r"^big.txt is 2.3 KB; Edit changes files up to 1.0 KB$"):
        await TOOLS["Edit"].run(
            TOOLS["Edit"].parse({"file_path": "big.txt", "old_string": "x", "new_string": "y"}), ctx
        )
