"""Edit, MultiEdit and Write show what they will change (`preview`) and report what they changed (`metadata["diff"]`).

The preview is worked out by the code that writes, without writing; it equals the diff of the run that follows.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcli.diffs import MAX_LINES, FileDiff
from agentcli.tools.base import Tool, ToolContext, ToolError
from agentcli.tools.permissions.approvals import Approval, PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import ALL_TOOLS

CONFIG = "".join(f"line {n}\n" for n in range(1, 31))


def tool(name: str) -> Tool[Any]:
    return ALL_TOOLS[name]()


async def preview(ctx: ToolContext, name: str, **raw: Any) -> FileDiff:
    t = tool(name)
    diff = await t.preview(t.parse(raw), ctx)
    assert diff is not None
    return diff


async def preview_then_run(ctx: ToolContext, name: str, **raw: Any) -> FileDiff:
    """The preview, after checking it changed nothing and equals what the run then reports."""
    t = tool(name)
    args = t.parse(raw)
    path = ctx.workspace / raw["file_path"]
    before = path.read_bytes() if path.exists() else None
    diff = await t.preview(args, ctx)
    assert (path.read_bytes() if path.exists() else None) == before  # nothing written
    result = await t.run(args, ctx)
    assert not result.is_error, result.content
    assert diff is not None
    assert result.metadata["diff"] == diff.head(MAX_LINES)  # the transcript's diff: the approved one, capped
    return diff


async def test_edit_preview_is_the_diff_the_edit_writes(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "config.py").write_text(CONFIG)
    diff = await preview_then_run(ctx, "Edit", file_path="config.py", old_string="line 12\n", new_string="line XII\n")
    assert (diff.path, diff.added, diff.removed, diff.created) == ("config.py", 1, 1, False)
    kinds = {(line.kind, line.text): (line.old, line.new) for line in diff.lines()}
    assert kinds[("removed", "line 12")] == (12, None)
    assert kinds[("added", "line XII")] == (None, 12)
    assert diff.hunks[0].header() == "@@ -9,7 +9,7 @@"
    assert "line XII" in (workspace / "config.py").read_text()


async def test_replace_all_shows_every_occurrence(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "a.txt").write_text("x = 1\n" + "pad\n" * 20 + "x = 1\n")
    diff = await preview_then_run(ctx, "Edit", file_path="a.txt", old_string="x = 1", new_string="x = 2",
                                  replace_all=True)
    assert (diff.added, diff.removed, len(diff.hunks)) == (2, 2, 2)
    assert [line.new for line in diff.lines() if line.kind == "added"] == [1, 22]


async def test_multiedit_preview_applies_every_edit_in_order(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "m.py").write_text(CONFIG)
    edits = [{"old_string": "line 2\n", "new_string": "line two\n"},
             {"old_string": "line two\n", "new_string": "line 2b\nline 2c\n"},
             {"old_string": "line 29\n", "new_string": ""}]
    diff = await preview_then_run(ctx, "MultiEdit", file_path="m.py", edits=edits)
    assert (diff.added, diff.removed) == (2, 2)
    assert [line.text for line in diff.lines() if line.kind == "added"] == ["line 2b", "line 2c"]
    assert [(line.text, line.old) for line in diff.lines() if line.kind == "removed"] == [("line 2", 2),
                                                                                          ("line 29", 29)]


async def test_write_of_a_new_file_and_an_overwrite(ctx: ToolContext, workspace: Path) -> None:
    created = await preview_then_run(ctx, "Write", file_path="pkg/new.py", content="a = 1\nb = 2\n")
    assert (created.created, created.added, created.removed) == (True, 2, 0)
    assert created.hunks[0].header() == "@@ -0,0 +1,2 @@"
    overwrite = await preview_then_run(ctx, "Write", file_path="pkg/new.py", content="a = 1\nb = 3\nc = 4\n")
    assert (overwrite.created, overwrite.added, overwrite.removed) == (False, 2, 1)
    assert [(line.kind, line.old, line.new) for line in overwrite.lines()][1:] == [
        ("context", 1, 1), ("removed", 2, None), ("added", None, 2), ("added", None, 3)]


async def test_edit_creating_a_file(ctx: ToolContext, workspace: Path) -> None:
    diff = await preview_then_run(ctx, "Edit", file_path="fresh.md", old_string="", new_string="# Title\n")
    assert (diff.created, diff.added, diff.removed) == (True, 1, 0)


async def test_crlf_file_lines_show_without_their_cr(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    diff = await preview_then_run(ctx, "Edit", file_path="w.txt", old_string="two\n", new_string="2\n")
    assert [line.text.rstrip("\r") for line in diff.lines() if line.kind in ("removed", "added")] == ["two", "2"]


@pytest.mark.parametrize(
    ("name", "raw", "reason"),
    [
        ("Edit", {"file_path": "missing.py", "old_string": "a", "new_string": "b"}, "File does not exist: missing.py"),
        ("Edit", {"file_path": "config.py", "old_string": "nope", "new_string": "b"}, "old_string not found in config"),
        ("Edit", {"file_path": "config.py", "old_string": "line", "new_string": "b"}, "found 30 times"),
        ("MultiEdit", {"file_path": "config.py", "edits": [{"old_string": "line 1\n", "new_string": "x\n"},
                                                           {"old_string": "nope", "new_string": "y"}]},
         "Edit 2 of 2 failed: old_string not found"),
        ("Write", {"file_path": "blob.bin", "content": "text\n"}, "blob.bin is a binary file; no diff is shown"),
        ("Write", {"file_path": "../out.txt", "content": "x"}, "outside the workspace"),
        ("Write", {"file_path": "sub", "content": "x"}, "sub is a directory"),
    ],
)
async def test_a_preview_that_cannot_be_made_says_why(
    ctx: ToolContext, workspace: Path, name: str, raw: dict[str, Any], reason: str
) -> None:
    (workspace / "config.py").write_text(CONFIG)
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    (workspace / "sub").mkdir()
    with pytest.raises(ToolError, match=reason):
        await preview(ctx, name, **raw)
    assert (workspace / "config.py").read_text() == CONFIG


async def test_write_over_a_binary_file_writes_without_a_diff(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x00\x01\x02binary")
    result = await tool("Write").run(tool("Write").parse({"file_path": "blob.bin", "content": "text\n"}), ctx)
    assert not result.is_error and "diff" not in result.metadata
    assert (workspace / "blob.bin").read_text() == "text\n"


async def test_a_huge_write_is_previewed_whole_and_reported_capped_but_counted(ctx: ToolContext,
                                                                              workspace: Path) -> None:
    content = "".join(f"row {n}\n" for n in range(20_000))
    diff = await preview_then_run(ctx, "Write", file_path="big.csv", content=content)
    assert (diff.added, diff.removed) == (20_000, 0)
    assert sum(len(h.lines) for h in diff.hunks) == 20_000 and diff.omitted == 0  # the approval sees every line
    reported = diff.head(MAX_LINES)
    assert sum(len(h.lines) for h in reported.hunks) + reported.omitted == 20_000
    assert reported.omitted > 0


async def test_other_tools_have_no_preview(ctx: ToolContext) -> None:
    bash = tool("Bash")
    assert await bash.preview(bash.parse({"command": "echo hi"}), ctx) is None


# --- the approval request carries the preview -------------------------------------------------------------


class Recorder:
    """An approver that allows once and keeps every request."""

    def __init__(self) -> None:
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Approval:
        self.requests.append(request)
        return "allow_once"


async def ask(ctx: ToolContext, approver: Recorder, name: str, **raw: Any) -> None:
    policy = PermissionPolicy("ask", approver=approver)
    t = tool(name)
    args = t.parse(raw)
    call_ctx = dataclasses.replace(ctx, permissions=policy)
    assert (await policy.check(t, args, call_ctx)).allowed
    await t.run(args, call_ctx)


async def test_the_person_is_asked_with_the_diff_of_the_call(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "config.py").write_text(CONFIG)
    approver = Recorder()
    await ask(ctx, approver, "Edit", file_path="config.py", old_string="line 3\n", new_string="line three\n")
    await ask(ctx, approver, "Edit", file_path="config.py", old_string="line three\n", new_string="line 3c\n")
    first, second = approver.requests
    assert first.diff is not None and first.preview_note == ""
    assert [(line.text, line.old) for line in first.diff.lines() if line.kind == "removed"] == [("line 3", 3)]
    assert second.diff is not None  # worked out when asked: it sees the first edit, approved and written
    assert [line.text for line in second.diff.lines() if line.kind == "removed"] == ["line three"]


async def test_a_failing_call_is_asked_with_the_reason_instead(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "config.py").write_text(CONFIG)
    approver = Recorder()
    policy = PermissionPolicy("ask", approver=approver)
    t = tool("Edit")
    args = t.parse({"file_path": "config.py", "old_string": "absent", "new_string": "x"})
    assert (await policy.check(t, args, dataclasses.replace(ctx, permissions=policy))).allowed
    (request,) = approver.requests
    assert request.diff is None
    assert request.preview_note.startswith("old_string not found in config.py")


async def test_a_broken_preview_still_asks(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    t = tool("Write")

    async def broken(args: Any, ctx: ToolContext) -> FileDiff:
        raise RuntimeError("boom")

    monkeypatch.setattr(t, "preview", broken)
    approver = Recorder()
    policy = PermissionPolicy("ask", approver=approver)
    args = t.parse({"file_path": "a.txt", "content": "x"})
    assert (await policy.check(t, args, dataclasses.replace(ctx, permissions=policy))).allowed
    assert approver.requests[0].preview_note == "no preview (RuntimeError: boom)"


async def test_auto_mode_computes_no_preview(ctx: ToolContext, monkeypatch: pytest.MonkeyPatch) -> None:
    t = tool("Write")
    calls: list[Any] = []

    async def counted(args: Any, ctx: ToolContext) -> None:
        calls.append(args)

    monkeypatch.setattr(t, "preview", counted)
    policy = PermissionPolicy("auto")
    assert (await policy.check(t, t.parse({"file_path": "a.txt", "content": "x"}), ctx)).allowed
    assert calls == []
