"""Tools: no regex, glob or file can freeze agentcli; no write goes through a link out of the workspace.

Black box through `agentcli run` against the fake model where the attack can be staged that way
(a hostile repository plus a model that calls the tools); in-process where it needs a race or a
tool that hangs on purpose.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext, ToolError
from agentcli.tools.files import write as files_write
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools
from tests.e2e.helpers import cli_env, last_json

EVIL_LINES = ("a" * 5000 + "!\n") * 50  # `(a+)+$` backtracks exponentially on each line in Python `re`


def _run(tmp_path: Path, repo: Path, steps: list[Step], **env: str) -> tuple[dict[str, Any], FakeLLMServer]:
    """`agentcli run --yes` in `repo` against a scripted model; the final JSON result."""
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--yes", "--output-format", "json", "--cwd", str(repo), "go"],
            capture_output=True,
            text=True,
            timeout=120,
            env=cli_env("anthropic", server, tmp_path, **env),
        )
        assert proc.returncode == 0, proc.stderr
        assert "Traceback" not in proc.stderr
        server.assert_done()
    return last_json(proc.stdout), server


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    return repo


def _calls(*calls: ToolCall) -> Step:
    return Step(match=Match(turn=0), reply=Reply(tool_calls=list(calls)))


def _then(expect: str, text: str = "survived") -> Step:
    """The model's next turn, reached only if the tool results hold `expect`."""
    return Step(match=Match(turn=1, last_user_contains=expect), reply=Reply(text=text))


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
def test_redos_pattern_in_grep(engine: str, tmp_path: Path) -> None:
    """`(a+)+$` over a hostile file: ripgrep is linear; the Python fallback child is killed at the deadline."""
    repo = _repo(tmp_path)
    (repo / "evil.txt").write_text(EVIL_LINES)
    expect = "No matches for '(a+)+$'" if engine == "ripgrep" else "Grep timed out after 3s"
    env = {"AGENTCLI_AGENT__TOOL_TIMEOUT_SECONDS": "3"}
    if engine == "python":
        env["AGENTCLI_GREP_ENGINE"] = "python"
    grep = ToolCall(name="Grep", input={"pattern": "(a+)+$", "output_mode": "content"})
    result, _ = _run(tmp_path, repo, [_calls(grep), _then(expect)], **env)
    assert result["status"] == "completed" and result["result"] == "survived"


def test_glob_bomb_patterns(tmp_path: Path) -> None:
    """Globs that backtrack for hours as regexes (in Glob, Grep's include and LS's ignore) answer at once."""
    repo = _repo(tmp_path)
    deep = repo.joinpath(*(["a" * 40] * 40))
    deep.mkdir(parents=True)
    (deep / ("a" * 200)).write_text("needle\n")
    calls = [
        ToolCall(name="Glob", input={"pattern": "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"}),
        ToolCall(name="Glob", input={"pattern": "**/**/**/**/**/**/**/**/**/**/**/**/x"}),
        ToolCall(name="Grep", input={"pattern": "needle", "include": "a**a**a**a**a**a**a**a**a**a**b"}),
        ToolCall(name="LS", input={"path": ".", "ignore": ["*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b"]}),
    ]
    result, server = _run(tmp_path, repo, [_calls(*calls), _then("No files match")])
    assert result["status"] == "completed"
    last = str(server.requests[-1].body)
    assert last.count("No files match") == 2 and "No matches for 'needle'" in last


def test_huge_file_read(tmp_path: Path) -> None:
    """Reading a 12 MB file returns one capped page (100,000 characters) with the offset to read on."""
    repo = _repo(tmp_path)
    (repo / "huge.log").write_text(("x" * 999 + "\n") * 12_000)
    read = ToolCall(name="Read", input={"file_path": "huge.log"})
    result, server = _run(tmp_path, repo, [_calls(read), _then("at most 100,000 characters per call")])
    assert result["status"] == "completed"
    body = str(server.requests[-1].body)
    assert "Use offset=" in body and len(body) < 150_000


def test_huge_line_file(tmp_path: Path) -> None:
    """A file that is one 8 MB line: Read cuts the line, Grep cuts the matching line (never whole in memory)."""
    repo = _repo(tmp_path)
    (repo / "one.min.js").write_text("needle" + "y" * 8_000_000)
    calls = [
        ToolCall(name="Read", input={"file_path": "one.min.js"}),
        ToolCall(name="Grep", input={"pattern": "needle", "output_mode": "content"}),
    ]
    result, server = _run(tmp_path, repo, [_calls(*calls), _then("more characters]")])
    assert result["status"] == "completed"
    body = str(server.requests[-1].body)
    assert "one.min.js:1:needle" + "y" * 494 + "…" in body and len(body) < 100_000


def test_hard_link_write(tmp_path: Path) -> None:
    """A workspace file hard-linked to one outside: Write, Edit and MultiEdit refuse it; the outside file is intact."""
    repo = _repo(tmp_path)
    outside = tmp_path / "victim.txt"
    outside.write_text("precious\n")
    os.link(outside, repo / "notes.txt")
    calls = [
        ToolCall(name="Write", input={"file_path": "notes.txt", "content": "pwned\n"}),
        ToolCall(name="Edit", input={"file_path": "notes.txt", "old_string": "precious", "new_string": "pwned"}),
        ToolCall(
            name="MultiEdit",
            input={"file_path": "notes.txt", "edits": [{"old_string": "precious", "new_string": "pwned"}]},
        ),
    ]
    result, server = _run(tmp_path, repo, [_calls(*calls), _then("notes.txt has 2 hard links")])
    assert result["status"] == "completed"
    assert [c["status"] for c in result["tool_calls"]] == ["error", "error", "error"]
    assert str(server.requests[-1].body).count("notes.txt has 2 hard links") == 3
    assert outside.read_text() == "precious\n"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no named pipes")
def test_named_pipe_in_the_repository(tmp_path: Path) -> None:
    """A FIFO (which blocks whoever opens it) never stalls Read, Grep, Glob or Edit."""
    repo = _repo(tmp_path)
    os.mkfifo(repo / "pipe")
    (repo / "a.txt").write_text("needle\n")
    calls = [
        ToolCall(name="Read", input={"file_path": "pipe"}),
        ToolCall(name="Grep", input={"pattern": "needle"}),
        ToolCall(name="Grep", input={"pattern": "needle", "path": "pipe"}),
        ToolCall(name="Glob", input={"pattern": "*"}),
        ToolCall(name="Edit", input={"file_path": "pipe", "old_string": "a", "new_string": "b"}),
    ]
    result, _ = _run(tmp_path, repo, [_calls(*calls), _then("pipe is not a regular file")])
    assert [c["status"] for c in result["tool_calls"]] == ["error", "ok", "error", "ok", "error"]


async def test_symlink_swap(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A symlink swapped in between the path check and the open is not followed (O_NOFOLLOW)."""
    repo = _repo(tmp_path)
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (repo / "notes.txt").write_text("precious\n")
    real_check = files_write._check_writable_target

    def racing_check(path: Path, rel: str) -> None:
        real_check(path, rel)
        path.unlink()
        path.symlink_to(victim)

    monkeypatch.setattr(files_write, "_check_writable_target", racing_check)
    ctx = ToolContext(repo.resolve(), "main", "s", PermissionPolicy("auto"), FileLocks())
    tools = {t.name: t for t in build_tools(["Write", "Edit"])}
    for name, raw in [("Write", {"content": "pwned\n"}), ("Edit", {"old_string": "precious", "new_string": "pwned"})]:
        (repo / "notes.txt").unlink()  # a plain file again (the previous round left the attacker's link)
        (repo / "notes.txt").write_text("precious\n")
        with pytest.raises(ToolError, match=r"^notes.txt became a symlink after it was checked"):
            await tools[name].run(tools[name].parse({"file_path": "notes.txt", **raw}), ctx)
    assert victim.read_text() == "precious\n"


async def test_tool_deadline_with_a_tool_that_hangs(tmp_path: Path) -> None:
    """A tool that never returns becomes `<Tool> timed out after Ns` and the agent goes on; the loop kept ticking."""
    from agentcli.agent.loop import AgentLoop
    from agentcli.agent.session import Session
    from agentcli.llm.base import RetryPolicy, ToolResultBlock
    from agentcli.llm.models import ProviderPool, ResolvedModel
    from agentcli.tools.files.read import ReadTool

    class Stuck(ReadTool):
        async def run(self, args: Any, ctx: ToolContext) -> Any:
            await asyncio.Event().wait()

    steps = [
        _calls(ToolCall(name="Read", input={"file_path": "x"})),
        _then("Read timed out after 0.5s", "went on"),
    ]
    ticks = 0
    done = asyncio.Event()

    async def ticker() -> None:
        nonlocal ticks
        while not done.is_set():
            ticks += 1
            await asyncio.sleep(0.01)

    with FakeLLMServer(Script(steps=steps)) as server:
        pool = ProviderPool(RetryPolicy(max_retries=0))
        model = ResolvedModel("main", "anthropic", "fake", server.base_url, "sk-ant-test", 1024)
        session = Session(system_prompt="hang test", model=model, workspace=tmp_path)
        ctx = ToolContext(tmp_path, "main", session.id, PermissionPolicy("auto"), FileLocks(), tool_timeout_seconds=0.5)
        loop = AgentLoop(session, pool.get(model), [Stuck()], ctx, lambda e: None)
        ticking = asyncio.create_task(ticker())
        try:
            outcome = await loop.run("go")
        finally:
            done.set()
            await ticking
            await pool.aclose()
        server.assert_done()
    assert outcome.status == "completed" and outcome.result == "went on"
    (block,) = session.messages[2].content
    assert isinstance(block, ToolResultBlock) and block.is_error and block.content == "Read timed out after 0.5s"
    assert ticks >= 5


def test_permission_rule_bomb(tmp_path: Path) -> None:
    """Deny rules with many wildcards, against a long model-written command and a deep path, answer at once."""
    repo = _repo(tmp_path)
    config = tmp_path / "config" / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(
        "[permissions]\n"
        'deny = ["Bash(*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b)", "Write(**/**/**/**/**/**/**/**/**/**/**/x)"]\n'
    )
    deep = "/".join(["a" * 30] * 60) + "/y.txt"
    calls = [
        ToolCall(name="Bash", input={"command": "echo " + "a" * 20_000}),
        ToolCall(name="Write", input={"file_path": deep, "content": "ok\n"}),
    ]
    result, _ = _run(tmp_path, repo, [_calls(*calls), _then("Created")])
    assert [c["status"] for c in result["tool_calls"]] == ["ok", "ok"]
    assert (repo / deep).read_text() == "ok\n"


def test_fallback_grep_never_imports_code_from_the_repository(tmp_path: Path) -> None:
    """The Python fallback child runs outside the workspace: a repo's `json.py` or `agentcli/` never runs."""
    repo = _repo(tmp_path)
    marker = tmp_path / "pwned"
    payload = f"open({str(marker)!r}, 'w').write('ran')\n"
    for name in ("json.py", "re.py", "pathspec.py", "agentcli/__init__.py", "agentcli/tools/__init__.py"):
        (repo / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / name).write_text(payload)
    (repo / "a.txt").write_text("needle\n")
    grep = ToolCall(name="Grep", input={"pattern": "needle", "include": "*.txt"})
    result, _ = _run(tmp_path, repo, [_calls(grep), _then("a.txt")], AGENTCLI_GREP_ENGINE="python", PYTHONPATH="")
    assert result["status"] == "completed"
    assert not marker.exists()
