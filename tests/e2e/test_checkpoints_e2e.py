"""Checkpoints through the real CLI and the scripted fake, with real git: one prompt whose agents Write, Edit, and
run a Bash command that deletes, creates and changes files (one change by a subagent, one merged back from a
worktree) is rewound with `agentcli sessions rewind` and every file is back byte for byte; the person's untracked
and ignored files are untouched; a file the person changed since is kept until `--force`; `--redo` undoes a rewind;
the conversation half; a workspace that is no git repository."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

NO_IDENTITY = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
APP = b"def main():\r\n    return 1\r\n"  # CRLF, kept byte for byte whatever .gitattributes says
BLOB = bytes(range(256)) * 4
LIB = "def helper():\n    return 'old'\n"


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **NO_IDENTITY}).stdout.strip()


def _files(ws: Path) -> dict[str, bytes]:
    """Every file under the workspace but git's own, with its bytes."""
    return {p.relative_to(ws).as_posix(): p.read_bytes() for p in sorted(ws.rglob("*"))
            if p.is_file() and ".git" not in p.relative_to(ws).parts}


def _workspace(tmp_path: Path, *, repo: bool) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_bytes(APP)
    (ws / "lib.py").write_text(LIB)
    (ws / "old.txt").write_text("to be deleted\n")
    (ws / "blob.bin").write_bytes(BLOB)
    (ws / ".gitattributes").write_text("* text=auto eol=lf\n*.py filter=lfs\n")
    (ws / ".gitignore").write_text("build/\n")
    if repo:
        git(ws, "init", "-q", "-b", "main")
        git(ws, "add", "-A")
        git(ws, "commit", "-qm", "start")
    (ws / "mine.txt").write_text("the person's untracked note\n")  # never committed
    (ws / "build").mkdir()
    (ws / "build" / "out.o").write_bytes(b"\x7fELF ignored")  # ignored
    return ws


def _bash(command: str) -> ToolCall:
    return ToolCall(name="Bash", input={"command": command})


def _task(description: str, **extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": f"Please: {description}",
                                        "subagent_type": "general", **extra})


def _subagent(description: str, call: ToolCall) -> list[Step]:
    return [Step(match=Match(system_contains=f"# Task\n{description}", turn=0), reply=Reply(tool_calls=[call])),
            Step(match=Match(system_contains=f"# Task\n{description}", turn=1), reply=Reply(text="done"))]


def _prompt_steps(*, worktree: bool) -> list[Step]:
    """The main agent Writes, Edits and runs Bash, and delegates one Write (and one isolated Edit)."""
    calls = [
        ToolCall(name="Write", input={"file_path": "new.py", "content": "print('new')\n"}),
        ToolCall(name="Edit", input={"file_path": "app.py", "old_string": "return 1", "new_string": "return 2"}),
        _bash("rm old.txt && mkdir -p gen && echo made > gen/made.txt && printf 'tail' >> blob.bin"
              " && echo cache > build/cache.o"),
    ]
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=calls)),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(tool_calls=[_task("Write the notes")]))]
    steps += _subagent("Write the notes", ToolCall(name="Write", input={"file_path": "sub.txt", "content": "x\n"}))
    last = 2
    if worktree:
        steps.append(Step(match=Match(system_contains=MAIN, turn=2),
                          reply=Reply(tool_calls=[_task("Change the helper", isolation="worktree")])))
        steps += _subagent("Change the helper", ToolCall(name="Edit", input={
            "file_path": "lib.py", "old_string": "'old'", "new_string": "'new'"}))
        last = 3
    steps.append(Step(match=Match(system_contains=MAIN, turn=last), reply=Reply(text="All changed.")))
    return steps


def _run(tmp_path: Path, ws: Path, steps: list[Step], prompt: str = "change things") -> dict[str, Any]:
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), prompt],
                       cli_env("anthropic", server, tmp_path, **NO_IDENTITY))
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    return last_json(proc.stdout)


def _sessions(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    with FakeLLMServer(Script(steps=[])) as server:  # no request is made: the env only isolates the folders
        return run_cli(["sessions", *args], cli_env("anthropic", server, tmp_path, **NO_IDENTITY))


def test_a_prompt_of_many_writers_is_rewound_byte_for_byte_and_the_rewind_undone(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, repo=True)
    status = git(ws, "status", "--porcelain")
    before = _files(ws)
    result = _run(tmp_path, ws, _prompt_steps(worktree=True))
    session = result["session_id"]
    assert [t["merge"] for t in result["tasks"]] == [None, "merged"]
    after = _files(ws)
    assert after["app.py"] == APP.replace(b"return 1", b"return 2") and "old.txt" not in after
    assert after["lib.py"] == LIB.replace("'old'", "'new'").encode() and after["sub.txt"] == b"x\n"
    assert after["blob.bin"] == BLOB + b"tail" and after["gen/made.txt"] == b"made\n"

    (ws / "new.py").write_text("print('the person improved it')\n")  # the person edits an agent's file
    dry = _sessions(tmp_path, "rewind", session, "--dry-run")
    assert dry.returncode == 0, dry.stderr
    for line in ("D new.py  (changed by you since)", "M app.py", "A old.txt", "D gen/made.txt", "D sub.txt",
                 "M lib.py", "M blob.bin"):
        assert line in dry.stdout
    assert "mine.txt" not in dry.stdout and "build/" not in dry.stdout
    assert _files(ws)["new.py"] == b"print('the person improved it')\n"  # a dry run changes nothing

    proc = _sessions(tmp_path, "rewind", session)
    assert proc.returncode == 0, proc.stderr
    assert "new.py: kept (changed outside an agent's turn" in proc.stdout and "--force" in proc.stdout
    now = _files(ws)
    assert now.pop("new.py") == b"print('the person improved it')\n"
    assert now.pop("build/cache.o") == b"cache\n"  # ignored: never checkpointed, never touched
    assert now == before  # the rest byte for byte, the person's untracked and ignored files as they were
    assert git(ws, "status", "--porcelain") == status + "\n?? new.py"  # the person's index and HEAD untouched

    redo = _sessions(tmp_path, "rewind", session, "--redo")
    assert redo.returncode == 0, redo.stderr
    assert _files(ws) == {**after, "new.py": b"print('the person improved it')\n"}

    forced = _sessions(tmp_path, "rewind", session, "--force", "--mode", "code")
    assert forced.returncode == 0, forced.stderr
    assert "new.py" not in _files(ws) and _files(ws).keys() == before.keys() | {"build/cache.o"}
    show = _sessions(tmp_path, "show", session)
    assert "checkpoints: 1 prompt, 3 rewinds" in show.stdout and "#1" in show.stdout


def test_the_conversation_half_takes_the_prompt_back_and_a_redo_gives_it_back(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, repo=False)
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="first answer"))]
    session = _run(tmp_path, ws, steps, prompt="first prompt")["session_id"]
    steps = [Step(match=Match(system_contains=MAIN, turn=1),  # turns count the resumed history's
                  reply=Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "two.txt", "content": "2"})])),
             Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="second answer"))]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "--resume", session,
                        "second prompt"], cli_env("anthropic", server, tmp_path, **NO_IDENTITY))
        assert proc.returncode == 0, proc.stderr
        server.assert_done()
    proc = _sessions(tmp_path, "rewind", session, "--to", "2", "--json")
    assert proc.returncode == 0, proc.stderr
    done = json.loads(proc.stdout)
    assert done["messages"] == 4 and done["files"] == [{"path": "two.txt", "action": "delete"}]
    assert not (ws / "two.txt").exists()
    with db(tmp_path) as conn:
        rows = conn.execute("SELECT role, rewound_at IS NOT NULL FROM messages WHERE session_id = ? ORDER BY seq",
                            (session,)).fetchall()
    assert [hidden for _, hidden in rows] == [0, 0, 1, 1, 1, 1]  # kept, marked
    shown = json.loads(_sessions(tmp_path, "show", session, "--json").stdout)
    assert [m["content"][0].get("text") for m in shown["messages"]] == ["first prompt", "first answer"]
    assert _sessions(tmp_path, "rewind", session, "--redo").returncode == 0
    assert (ws / "two.txt").read_text() == "2"
    assert len(json.loads(_sessions(tmp_path, "show", session, "--json").stdout)["messages"]) == 6
    assert "to before “second prompt”" in _sessions(tmp_path, "rewind", session).stdout  # the latest one left
    assert "to before “first prompt”" in _sessions(tmp_path, "rewind", session, "--dry-run").stdout


def test_a_workspace_without_git_is_checkpointed_and_rewound(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, repo=False)
    before = _files(ws)
    session = _run(tmp_path, ws, _prompt_steps(worktree=False))["session_id"]
    assert (ws / "new.py").exists() and not (ws / "old.txt").exists()
    proc = _sessions(tmp_path, "rewind", session)
    assert proc.returncode == 0, proc.stderr
    now = _files(ws)
    assert now.pop("build/cache.o") == b"cache\n"
    assert now == before
    assert not (ws / ".git").exists()  # nothing made in the workspace


def test_bad_references_are_one_line(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, repo=False)
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="hi"))]
    session = _run(tmp_path, ws, steps)["session_id"]
    for args, text in ((["rewind", session, "--to", "7"], "no prompt 7"),
                       (["rewind", session, "--mode", "all"], "--mode 'all'"),
                       (["rewind", session, "--redo"], "nothing to redo"),
                       (["rewind", "ses_nope"], "no session matches")):
        proc = _sessions(tmp_path, *args)
        assert proc.returncode != 0 and text in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_deleting_a_session_prunes_its_checkpoints_and_leaves_the_files(tmp_path: Path) -> None:
    ws = _workspace(tmp_path, repo=False)
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(
                 name="Write", input={"file_path": "big.txt", "content": "y" * 200_000})])),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="written"))]
    session = _run(tmp_path, ws, steps)["session_id"]
    shown = json.loads(_sessions(tmp_path, "show", session, "--json").stdout)["checkpoints"]
    assert shown["bytes"] > 0 and [r["kind"] for r in shown["rows"]] == ["prompt"]
    assert shown["rows"][0]["files"] == ["big.txt"]
    refuse = _sessions(tmp_path, "delete", session)
    assert refuse.returncode == 1 and "--yes" in refuse.stderr
    proc = _sessions(tmp_path, "delete", session, "--yes")
    assert proc.returncode == 0, proc.stderr
    assert f"deleted {session} (1 session, 2 checkpoint trees" in proc.stdout
    assert (ws / "big.txt").read_text() == "y" * 200_000
    with db(tmp_path) as conn:
        assert conn.execute("SELECT count(*) FROM checkpoints").fetchone()[0] == 0
    shadow = next((tmp_path / "data" / "agentcli" / "checkpoints").glob("*/git"))
    assert git(tmp_path, f"--git-dir={shadow}", "for-each-ref", "refs/checkpoints/") == ""
    assert "no session matches" in _sessions(tmp_path, "show", session).stderr
