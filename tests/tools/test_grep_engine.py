"""Grep on both engines (ripgrep and the Python fallback child): same output, bounded, killable."""

from __future__ import annotations

import asyncio
import dataclasses
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.tools.base import ToolContext, ToolError, ToolResult
from agentcli.tools.registry import build_tools
from agentcli.tools.search import child as search_child
from agentcli.tools.search import grep_engine, grep_hits, rg_listing
from agentcli.tools.search import tools as search

TOOLS = {tool.name: tool for tool in build_tools(["Grep", "Glob"])}
ENGINES = ["ripgrep", "python"]


async def grep(ctx: ToolContext, **raw: Any) -> ToolResult:
    return await TOOLS["Grep"].run(TOOLS["Grep"].parse(raw), ctx)


@pytest.fixture(params=ENGINES)
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """Run the test on ripgrep, then on the fallback child (forced by AGENTCLI_GREP_ENGINE=python)."""
    search_child.find_rg.cache_clear()
    if request.param == "python":
        monkeypatch.setenv(search_child.ENGINE_ENV, "python")
    elif search_child.find_rg() is None:
        pytest.skip("no rg binary on this platform")
    assert search_child.engine_name() == request.param
    yield request.param
    search_child.find_rg.cache_clear()


def write(root: Path, rel: str, text: str) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


async def test_content_has_no_separators_without_context(engine: str, ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "a.txt", "hit 1\nmiss\nmiss\nhit 4\n")
    write(workspace, "b.txt", "hit b\n")
    result = await grep(ctx, pattern="hit", output_mode="content")
    assert result.content.splitlines() == ["a.txt:1:hit 1", "a.txt:4:hit 4", "b.txt:1:hit b"]
    around = await grep(ctx, pattern="hit", output_mode="content", context=1)
    assert around.content.splitlines() == [
        "a.txt:1:hit 1", "a.txt-2-miss", "a.txt-3-miss", "a.txt:4:hit 4", "--", "b.txt:1:hit b",
    ]  # fmt: skip


async def test_nested_gitignore_and_hidden_files(engine: str, ctx: ToolContext, workspace: Path) -> None:
    write(workspace, ".gitignore", "*.log\n")
    write(workspace, "pkg/.gitignore", "gen/\n!keep.log\n")
    write(workspace, "pkg/gen/out.py", "needle\n")
    write(workspace, "pkg/keep.log", "needle\n")
    write(workspace, "pkg/drop.log", "needle\n")
    write(workspace, "pkg/src/x.py", "needle\n")
    write(workspace, ".github/ci.yml", "needle\n")
    write(workspace, ".git/config", "needle\n")
    write(workspace, "node_modules/m.js", "needle\n")
    result = await grep(ctx, pattern="needle")
    assert result.content.splitlines() == [".github/ci.yml", "pkg/keep.log", "pkg/src/x.py"]
    named = await grep(ctx, pattern="needle", path="pkg/gen")
    assert named.content == "pkg/gen/out.py"  # a folder named explicitly is searched
    globbed = await TOOLS["Glob"].run(TOOLS["Glob"].parse({"pattern": "**/*.py"}), ctx)
    assert globbed.content == "pkg/src/x.py"


async def test_big_files_are_skipped_and_long_lines_cut(
    engine: str, ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_engine, "MAX_FILE_BYTES", 8192)
    write(workspace, "big.txt", "needle\n" + "x" * 9000 + "\n")
    write(workspace, "wide.txt", "needle" + "é" * 3000 + "\n")
    result = await grep(ctx, pattern="needle", output_mode="content")
    (line,) = result.content.splitlines()
    assert line == "wide.txt:1:needle" + "é" * (grep_hits.MAX_LINE_CHARS - 6) + "…"
    with pytest.raises(ToolError, match=r"^big.txt is 8.8 KB; Grep skips files over 8.0 KB"):
        await grep(ctx, pattern="needle", path="big.txt")


async def test_include_globs_and_counts(engine: str, ctx: ToolContext, workspace: Path) -> None:
    write(workspace, "web/app.tsx", "x\nx\n")
    write(workspace, "web/app.ts", "x\n")
    write(workspace, "web/deep/b.ts", "x\n")
    write(workspace, "web/c.js", "x\n")
    counted = await grep(ctx, pattern="x", include="*.{ts,tsx}", output_mode="count")
    assert counted.content.splitlines() == [
        "web/app.ts:1", "web/app.tsx:2", "web/deep/b.ts:1", "", "4 matching lines in 3 files",
    ]  # fmt: skip
    spanning = await grep(ctx, pattern="x", include="web**b.ts")  # `**` inside a name spans folders here
    assert spanning.content == "web/deep/b.ts"
    under = await grep(ctx, pattern="x", include="deep/*.ts", path="web")
    assert under.content == "web/deep/b.ts"


async def test_links_out_of_the_workspace_are_not_followed(
    engine: str, ctx: ToolContext, workspace: Path, outside: Path
) -> None:
    (workspace / "out_dir").symlink_to(outside, target_is_directory=True)
    (workspace / "out_file").symlink_to(outside / "secret.txt")
    assert (await grep(ctx, pattern="top secret")).content.startswith("No matches")


async def test_redos_pattern_is_bounded_and_the_loop_keeps_running(
    engine: str, ctx: ToolContext, workspace: Path
) -> None:
    write(workspace, "evil.txt", ("a" * 5000 + "!\n") * 20)
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0)  # one tick per turn of the event loop

    ticking = asyncio.create_task(ticker())
    short = dataclasses.replace(ctx, tool_timeout_seconds=3)
    try:
        result: ToolResult | ToolError = await grep(short, pattern="(a+)+$")
    except ToolError as exc:
        result = exc
    finally:
        done.set()
        await ticking
    if engine == "ripgrep":  # linear time: it simply finishes
        assert isinstance(result, ToolResult) and result.content.startswith("No matches")
    else:  # Python `re` backtracks: the child is killed at the deadline
        assert str(result) == "Grep timed out after 3s; narrow the path, include or pattern"
    assert ticks >= 3


def _workers(marker: str) -> list[str]:
    found = []
    for pid in os.listdir("/proc"):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
        except OSError:
            continue
        if marker.encode() in cmdline and b"grep_worker" in cmdline:
            found.append(pid)
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
async def test_cancel_kills_the_fallback_child(
    ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(search_child.ENGINE_ENV, "python")
    search_child.find_rg.cache_clear()
    write(workspace, "evil.txt", ("a" * 5000 + "!\n") * 20)
    marker = "(a+)+$(?#cancel-marker-7f3)"
    started = asyncio.Event()
    task = asyncio.create_task(grep(dataclasses.replace(ctx, progress=started.set), pattern=marker))
    await started.wait()
    async with asyncio.timeout(30):
        while not _workers(marker):
            await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert _workers(marker) == []
    async with asyncio.timeout(10):  # the thread reading the child's output ends with the child
        while any(thread.name == "agentcli-search-output" for thread in threading.enumerate()):
            await asyncio.sleep(0.01)
    search_child.find_rg.cache_clear()


async def test_rust_regex_errors_are_one_clear_line(ctx: ToolContext, workspace: Path) -> None:
    if search_child.find_rg() is None:
        pytest.skip("no rg binary on this platform")
    write(workspace, "a.txt", "ab\n")
    for pattern, reason in [(r"(?<=a)b", "look-around"), (r"(a)\1", "backreferences")]:
        with pytest.raises(ToolError) as info:
            await grep(ctx, pattern=pattern)
        message = str(info.value)
        assert message.startswith(f"Invalid regular expression {pattern!r}: ") and reason in message
        assert "Rust regex syntax" in message and "\n" not in message


def test_search_module_keeps_its_names() -> None:
    assert sorted(search.SKIP_DIRS) == [".git", ".venv", "__pycache__", "node_modules"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
async def test_a_named_pipe_never_blocks_the_search(engine: str, ctx: ToolContext, workspace: Path) -> None:
    os.mkfifo(workspace / "pipe")
    write(workspace, "a.txt", "needle\n")
    assert (await grep(ctx, pattern="needle")).content == "a.txt"
    with pytest.raises(ToolError, match=r"^pipe is not a regular file or a folder"):
        await grep(ctx, pattern="needle", path="pipe")


def test_search_child_environment_has_no_provider_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    from agentcli import redact

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-grep-child-0001")
    monkeypatch.setenv("AGENTCLI_MODELS__MAIN__API_KEY", "sk-agentcli-grep-0002")
    monkeypatch.setenv("COPY_OF_A_KEY", "sk-registered-grep-0003")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", "/tmp/rgrc")
    monkeypatch.setenv("HARMLESS_SETTING", "kept")
    redact.register_secret("sk-registered-grep-0003")
    for python in (False, True):
        env = search_child.child_env(python=python)
        hidden = {"ANTHROPIC_API_KEY", "AGENTCLI_MODELS__MAIN__API_KEY", "COPY_OF_A_KEY", "RIPGREP_CONFIG_PATH"}
        assert not hidden & set(env)
        assert env["HARMLESS_SETTING"] == "kept"
    assert "PYTHONPATH" in search_child.child_env(python=True)


async def test_binary_files_are_left_out_on_both_engines(engine: str, ctx: ToolContext, workspace: Path) -> None:
    (workspace / "blob.bin").write_bytes(b"\x00\x01needle\n")
    write(workspace, "a.txt", "needle\n")
    assert (await grep(ctx, pattern="needle")).content == "a.txt"
    assert (await grep(ctx, pattern="needle", output_mode="count")).content.splitlines()[0] == "a.txt:1"


async def glob(ctx: ToolContext, **raw: Any) -> ToolResult:
    return await TOOLS["Glob"].run(TOOLS["Glob"].parse(raw), ctx)


async def test_nested_gitignore_with_negation_for_glob_and_grep(engine: str, ctx: ToolContext, workspace: Path) -> None:
    write(workspace, ".gitignore", "*.gen\nbuild/\n")
    write(workspace, "app/.gitignore", "*.txt\n!keep.txt\n")
    write(workspace, "app/deep/.gitignore", "!*.gen\n")
    for rel in ["a.gen", "app/b.gen", "app/deep/c.gen", "app/x.txt", "app/keep.txt", "app/deep/y.txt", "top.txt",
                "build/build", "build/sub/build", "app/build/z.txt"]:
        write(workspace, rel, "needle\n")
    expected = ["app/deep/c.gen", "app/keep.txt", "top.txt"]
    ignore_files = [".gitignore", "app/.gitignore", "app/deep/.gitignore"]
    assert sorted((await glob(ctx, pattern="**/*")).content.splitlines()) == sorted(expected + ignore_files)
    assert (await grep(ctx, pattern="needle")).content.splitlines() == expected
    assert (await glob(ctx, pattern="**/build")).content.startswith("No files match")  # no way in through a name
    assert (await glob(ctx, pattern="app/**/*.gen")).content == "app/deep/c.gen"
    assert (await glob(ctx, pattern="*.txt")).content == "top.txt"  # this folder's own files only


async def test_glob_orders_newest_first_then_by_path(engine: str, ctx: ToolContext, workspace: Path) -> None:
    for rel, mtime in [("b/x.py", 100), ("a/y.py", 100), ("c.py", 300), ("a/z.txt", 400)]:
        os.utime(write(workspace, rel, ""), (mtime, mtime))
    assert (await glob(ctx, pattern="**/*.py")).content.splitlines() == ["c.py", "a/y.py", "b/x.py"]
    assert (await glob(ctx, pattern="{a,b}/*")).content.splitlines() == ["a/z.txt", "a/y.py", "b/x.py"]
    assert (await glob(ctx, pattern="*.py", path="a")).content == "a/y.py"


async def test_results_come_in_path_order_folder_by_folder(engine: str, ctx: ToolContext, workspace: Path) -> None:
    for rel in ["a-b.txt", "a/x.txt", "a/b/c.txt", "B.txt", "a.txt"]:
        write(workspace, rel, "needle\nneedle\n")
    order = ["B.txt", "a/b/c.txt", "a/x.txt", "a-b.txt", "a.txt"]  # rg --sort path: names compared per folder
    assert (await grep(ctx, pattern="needle")).content.splitlines() == order
    lines = (await grep(ctx, pattern="needle", output_mode="content", head_limit=3)).content.splitlines()
    assert lines[:3] == ["B.txt:1:needle", "B.txt:2:needle", "a/b/c.txt:1:needle"]
    assert "(Showing the first 3 of 10 lines;" in lines[-1]


async def test_many_hits_keep_only_what_is_shown(
    engine: str, ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(grep_hits, "_KEEP_BYTES", 2048)  # prune early: the first files still show whole
    for n in range(40):
        write(workspace, f"f{n:02d}.txt", "".join(f"needle {k}\n" for k in range(30)))
    result = await grep(ctx, pattern="needle", output_mode="content", head_limit=45)
    lines = result.content.splitlines()
    assert lines[0] == "f00.txt:1:needle 0" and lines[44] == "f01.txt:15:needle 14"
    assert "(Showing the first 45 of 1200 lines;" in result.content
    counted = await grep(ctx, pattern="needle", output_mode="count", head_limit=2)
    assert counted.content.splitlines()[:2] == ["f00.txt:30", "f01.txt:30"]
    assert "1200 matching lines in 40 files" in counted.content


async def test_an_include_glob_never_brings_skipped_folders_back(
    engine: str, ctx: ToolContext, workspace: Path
) -> None:
    write(workspace, ".git/config", "needle\n")
    write(workspace, "node_modules/m/x.js", "needle\n")
    write(workspace, "src/a.js", "needle\n")
    assert (await grep(ctx, pattern="needle", include="*")).content == "src/a.js"
    assert (await grep(ctx, pattern="needle", include="**/*.js")).content == "src/a.js"
    assert (await glob(ctx, pattern="**/*")).content == "src/a.js"


async def _every_mode(ctx: ToolContext) -> list[str]:
    calls: list[tuple[Any, dict[str, Any]]] = [
        (grep, {"pattern": "needle", "output_mode": "content", "head_limit": 1000}),
        (grep, {"pattern": "needle", "output_mode": "content", "context": 1, "head_limit": 7}),
        (grep, {"pattern": "needle"}),
        (grep, {"pattern": "needle", "output_mode": "count", "head_limit": 3}),
        (glob, {"pattern": "**/*"}),
        (glob, {"pattern": "**/*.txt", "path": "d"}),
    ]
    return [(await call(ctx, **raw)).content for call, raw in calls]


@pytest.mark.skipif(sys.platform == "win32", reason="names with newlines")
async def test_output_read_in_tiny_batches_gives_the_same_text(
    engine: str, ctx: ToolContext, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Records cut anywhere between two reads (even inside a name holding an empty line) read the same."""
    for n, name in enumerate(["a.txt", "b\nc.txt", "d/e\n\nf.txt", "d/g.txt", "d/h\n.txt", "ü.txt"]):
        os.utime(write(workspace, name, f"x\nneedle {n}\n" * (n + 1) + "needle\n"), (1000 + n, 1000 + n))
    whole = await _every_mode(ctx)
    assert "d/e\n\nf.txt:4" in whole[3] and whole[4].splitlines()[0] == "ü.txt"
    for size in (1, 2, 5, 13):
        monkeypatch.setattr(search_child, "_READ_BYTES", size)
        monkeypatch.setattr(grep_engine, "_BATCH_BYTES", size)
        monkeypatch.setattr(rg_listing, "_LIST_BATCH_BYTES", size)
        monkeypatch.setattr(search_child, "_READ_PAUSE", 0)
        assert await _every_mode(ctx) == whole, size


def test_path_key_orders_folder_by_folder() -> None:
    names = ["a", "a-b", "a.b", "a/b", "a/b/c", "a/b-c", "a b/c", "ab", "B", "ü", "a/ü", "a!/x", "a\t/x"]
    paths = [f"{x}/{y}" for x in names for y in names] + names
    assert sorted(paths, key=grep_hits.path_key) == sorted(paths, key=lambda p: p.split("/"))


def test_the_search_engine_loads_with_the_first_search_not_with_the_tools() -> None:
    engine = ["grep_engine", "grep_hits", "grep_parse", "rg_listing", "search_child"]
    probe = (
        "import sys\nfrom agentcli.tools.registry import build_tools\nbuild_tools(['Grep', 'Glob'])\n"
        f"print([m for m in {engine!r} if 'agentcli.tools.' + m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
