"""Tasks isolated in git worktrees, through the real CLI and the scripted fake: parallel writers merged back for
the person, a conflict kept on its branch, the person's uncommitted edits seen, the workspace out of reach."""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.tools.sandbox import landlock
from tests.e2e.helpers import MAIN, NO_IDENTITY, cli_env, git, git_workspace, last_json, run_cli

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

APP = "def first():\n    return 1\n\n\ndef middle():\n    return 0\n\n\ndef second():\n    return 2\n"


def _repo(tmp_path: Path) -> Path:
    return git_workspace(tmp_path, APP)


def _task(description: str, **extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": f"Please: {description}",
                                        "subagent_type": "general", "isolation": "worktree", **extra})


def _edit(old: str, new: str) -> ToolCall:
    return ToolCall(name="Edit", input={"file_path": "app.py", "old_string": old, "new_string": new})


def _writer(description: str, call: ToolCall, answer: str) -> list[Step]:
    """A subagent that makes one call, then answers (its first request waits a little, so writers overlap)."""
    return [Step(match=Match(system_contains=f"# Task\n{description}", turn=0), reply=Reply(tool_calls=[call]),
                 latency_ms=300),
            Step(match=Match(system_contains=f"# Task\n{description}", turn=1), reply=Reply(text=answer))]


def _run(steps: list[Step], tmp_path: Path, ws: Path) -> tuple[dict[str, Any], FakeLLMServer]:
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                       cli_env("anthropic", server, tmp_path, **NO_IDENTITY))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    server.assert_done()
    return last_json(proc.stdout), server


def _left_behind(tmp_path: Path, ws: Path) -> tuple[list[Path], str]:
    """Worktree folders left in agentcli's data folder, and agentcli's branches in the repository."""
    root = tmp_path / "data" / "agentcli-worktrees"
    folders = [p for p in root.glob("*/*")] if root.exists() else []
    return folders, git(ws, "branch", "--list", "agentcli/*")


def test_two_isolated_writers_of_one_file_both_land_in_the_workspace(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    head = git(ws, "rev-parse", "HEAD")
    steps = [Step(match=Match(system_contains=MAIN, turn=0),
                  reply=Reply(tool_calls=[_task("Change the first function"), _task("Change the second function")]))]
    steps += _writer("Change the first function", _edit("return 1", "return 'one'"), "first changed")
    steps += _writer("Change the second function", _edit("return 2", "return 'two'"), "second changed")
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Both changed.")))
    result, server = _run(steps, tmp_path, ws)
    assert server.in_flight_max >= 2  # the two writers ran at once
    assert (ws / "app.py").read_text() == APP.replace("return 1", "return 'one'").replace("return 2", "return 'two'")
    tasks = result["tasks"]
    assert [(t["status"], t["merge"], t["files_merged"], t["branch"]) for t in tasks] == [
        ("completed", "merged", ["app.py"], None)] * 2
    # Uncommitted, as if the person had made them; HEAD never moved; nothing left behind.
    assert git(ws, "rev-parse", "HEAD") == head and git(ws, "status", "--porcelain") == "M app.py"
    assert _left_behind(tmp_path, ws) == ([], "")
    told = str(server.requests[-1].body)
    assert "Its changes were merged into the workspace (uncommitted): app.py." in told


def test_two_writers_of_the_same_lines_one_merges_the_other_is_kept_on_its_branch(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    steps = [Step(match=Match(system_contains=MAIN, turn=0),
                  reply=Reply(tool_calls=[_task("Make it return uno"), _task("Make it return eins")]))]
    steps += _writer("Make it return uno", _edit("return 1", "return 'uno'"), "uno done")
    steps += _writer("Make it return eins", _edit("return 1", "return 'eins'"), "eins done")
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="One conflicted.")))
    result, server = _run(steps, tmp_path, ws)
    by_merge = {t["merge"]: t for t in result["tasks"]}
    assert sorted(by_merge) == ["conflict", "merged"]
    merged, conflict = by_merge["merged"], by_merge["conflict"]
    word = "uno" if "uno" in merged["description"] else "eins"
    other = "eins" if word == "uno" else "uno"
    text = (ws / "app.py").read_text()
    assert text == APP.replace("return 1", f"return '{word}'")  # the other's change: not half-applied
    assert "<<<<<<<" not in text and ">>>>>>>" not in text
    branch = f"agentcli/{conflict['task_id']}"
    assert conflict["status"] == "completed" and conflict["files_conflicted"] == ["app.py"]
    assert conflict["branch"] == branch and conflict["files_merged"] == []
    assert f"return '{other}'" in git(ws, "show", f"{branch}:app.py")  # its change, committed on its branch
    assert git(ws, "log", "-1", "--format=%an <%ae>", branch) == "agentcli <agentcli@localhost>"
    folders, branches = _left_behind(tmp_path, ws)
    assert folders == [] and branches.split() == [branch]
    told = str(server.requests[-1].body)
    assert "Its changes were NOT merged, nothing was applied" in told and f"{branch}" in told
    assert "git diff " in told


def test_an_isolated_subagent_sees_the_persons_uncommitted_edit(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    (ws / "app.py").write_text(APP.replace("return 0", "return 'person was here'"))  # not committed
    (ws / "notes.txt").write_text("untracked note\n")
    git(ws, "add", "notes.txt")  # staged: the person's index stays so
    before = git(ws, "status", "--porcelain")
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task("Read the app")])),
             *_writer("Read the app", ToolCall(name="Read", input={"file_path": "app.py"}), "it says so"),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Seen."))]
    steps[2] = Step(match=Match(system_contains="# Task\nRead the app", turn=1,
                                last_user_contains="person was here"), reply=Reply(text="it says so"))
    result, _ = _run(steps, tmp_path, ws)
    (task,) = result["tasks"]
    assert (task["status"], task["merge"], task["branch"]) == ("completed", "no_changes", None)
    assert git(ws, "status", "--porcelain") == before
    assert _left_behind(tmp_path, ws) == ([], "")


def test_a_write_into_the_main_workspace_from_a_worktree_is_refused(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    target, by_bash = ws / "escaped.txt", ws / "escaped-by-bash.txt"
    calls = [ToolCall(name="Write", input={"file_path": str(target), "content": "from the worktree\n"}),
             ToolCall(name="Bash", input={"command": "echo made > made.txt"})]  # its cwd: the worktree
    sandboxed = landlock.abi_version() > 0
    if sandboxed:  # the sandbox's write root is the worktree, not the workspace
        calls.append(ToolCall(name="Bash", input={"command": f"echo x > {by_bash}"}))
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task("Write outside")])),
             Step(match=Match(system_contains="# Task\nWrite outside", turn=0), reply=Reply(tool_calls=calls)),
             Step(match=Match(system_contains="# Task\nWrite outside", turn=1,
                              last_user_contains="is outside the workspace"), reply=Reply(text="refused")),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="ok"))]
    result, server = _run(steps, tmp_path, ws)
    assert not target.exists() and not by_bash.exists()
    if sandboxed:
        assert "Permission denied" in str(server.requests[2].body["messages"][-1])
    (task,) = result["tasks"]
    assert (task["merge"], task["files_merged"]) == ("merged", ["made.txt"])
    assert (ws / "made.txt").read_text() == "made\n"


def test_isolation_outside_a_repository_is_refused_in_one_line(tmp_path: Path) -> None:
    ws = tmp_path / "plain"
    ws.mkdir()
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task("Try isolation")])),
             Step(match=Match(system_contains=MAIN, turn=1,
                              last_user_contains="Worktree isolation is unavailable: "),
                  reply=Reply(text="no git here"))]
    result, _ = _run(steps, tmp_path, ws)
    assert result["result"] == "no git here" and result["tasks"] == []


def test_an_agent_files_isolation_with_manual_merge_keeps_the_change_on_its_branch(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    agents = ws / ".agentcli" / "agents"
    agents.mkdir(parents=True)
    (agents / "apart.md").write_text("---\nname: apart\ndescription: Works apart.\nisolation: worktree\n---\nYou.\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "agent")
    call = ToolCall(name="Task", input={"description": "Change it apart", "prompt": "change it",
                                        "subagent_type": "apart", "merge": "manual"})
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[call])),
             *_writer("Change it apart", _edit("return 0", "return 'kept'"), "changed"),
             Step(match=Match(system_contains=MAIN, turn=1, last_user_contains='not merged (merge: "manual")'),
                  reply=Reply(text="Kept."))]
    result, server = _run(steps, tmp_path, ws)
    (task,) = result["tasks"]
    branch = f"agentcli/{task['task_id']}"
    assert (task["merge"], task["branch"], task["files_merged"]) == ("kept", branch, [])
    assert (ws / "app.py").read_text() == APP and git(ws, "status", "--porcelain") == ""
    assert "return 'kept'" in git(ws, "show", f"{branch}:app.py")
    assert _left_behind(tmp_path, ws) == ([], branch)
    shown = run_cli(["tasks", "show", task["task_id"]], cli_env("anthropic", server, tmp_path), ws)
    assert f"worktree:       not merged; kept on branch {branch}" in shown.stdout, shown.stderr
    # `worktrees list` shows the kept branch with its task's record; `prune --branches` removes it.
    env = cli_env("anthropic", server, tmp_path)
    listed = run_cli(["worktrees", "list"], env, ws)
    assert listed.returncode == 0, listed.stderr
    (row,) = [line.split() for line in listed.stdout.splitlines() if line.startswith(task["task_id"])]
    assert row[:4] == [task["task_id"], branch, "completed", "kept"] and row[-1] == "-"
    as_json = json.loads(run_cli(["worktrees", "list", "--json"], env, ws).stdout)
    assert [(e["task_id"], e["branch"], e["worktree"], e["merge"]) for e in as_json] == [
        (task["task_id"], branch, None, "kept")]
    assert run_cli(["worktrees", "prune"], env, ws).stdout == "Nothing to prune.\n"
    pruned = run_cli(["worktrees", "prune", "--branches"], env, ws)
    assert pruned.stdout == f"Removed branch {branch} (task {task['task_id']}).\n", pruned.stderr
    assert _left_behind(tmp_path, ws) == ([], "")
    assert run_cli(["worktrees", "list"], env, ws).stdout == "No agentcli worktrees or branches in this repository.\n"


def test_worktrees_list_outside_a_repository_says_why_in_one_line(tmp_path: Path) -> None:
    with FakeLLMServer(Script(steps=[])) as server:
        proc = run_cli(["worktrees", "list", "--cwd", str(tmp_path)], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 1
    assert proc.stderr.startswith("agentcli: Worktree isolation is unavailable: ") and proc.stderr.count("\n") == 1


def test_a_kill_9_mid_task_leaves_a_worktree_that_the_next_start_prunes(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    steps = [Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="first"),
                  reply=Reply(tool_calls=[_task("Wait forever")])),
             Step(match=Match(system_contains="# Task\nWait forever", turn=0), reply=Reply(text="never"),
                  hold="never"),
             Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="again"), reply=Reply(text="fresh"))]
    with FakeLLMServer(Script(steps=steps)) as server:
        env = cli_env("anthropic", server, tmp_path, **NO_IDENTITY)
        proc = subprocess.Popen([sys.executable, "-m", "agentcli", "run", "--yes", "--cwd", str(ws), "first"],
                                env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            server.wait_for_requests(2, timeout=60)  # the subagent's request, held: it works in its worktree
            folders, branches = _left_behind(tmp_path, ws)
            (task_id,) = [f.name for f in folders if f.is_dir()]
            assert sorted(f.name for f in folders) == [task_id, f"{task_id}.owner.json"]
            assert branches == f"+ agentcli/{task_id}"  # checked out in a worktree
        finally:
            proc.send_signal(signal.SIGKILL)
            proc.wait(timeout=30)
        assert len(_left_behind(tmp_path, ws)[0]) == 2  # nothing cleaned up after a kill -9
        listed = run_cli(["worktrees", "list"], env, ws)
        assert "process gone" in listed.stdout, listed.stderr
        again = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "again"], env)
        assert again.returncode == 0, again.stderr
        assert last_json(again.stdout)["result"] == "fresh"
    assert _left_behind(tmp_path, ws) == ([], "")  # the next start pruned the worktree, its owner file and branch
    assert git(ws, "worktree", "list", "--porcelain").count("worktree ") == 1  # git's metadata too
    assert git(ws, "status", "--porcelain") == "" and (ws / "app.py").read_text() == APP
