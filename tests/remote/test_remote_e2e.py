"""`isolation: "remote"` through the real CLI, the scripted fake on 127.0.0.1 and a real Ray cluster of a head and two
worker nodes: the subagent writes a file and runs Bash on a Ray worker (not below agentcli's process), its tool calls
stream into its block while it runs, its change is merged into the workspace, and the provider key never shows in
what agentcli stores or prints, nor in Ray's logs."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, git, run_cli
from tests.remote.helpers import ancestor_worker, kill_marked, one_subagent, ray_env, repo, sub_step

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]
ANCESTRY = (  # the Bash command's process and its ancestors, with their command lines
    "python3 -c \"import os\np = os.getpid()\nwhile p > 1:\n"
    "    print(p, open(f'/proc/{p}/cmdline', 'rb').read().replace(bytes(1), b' ')[:120].decode())\n"
    "    p = int(open(f'/proc/{p}/stat').read().rsplit(')', 1)[1].split()[1])\""
)


def _lines(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]


def test_a_remote_writer_runs_on_a_ray_worker_streams_live_and_is_merged_back(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    (ws / "app.py").write_text("print('hi there')\n")  # uncommitted: the snapshot the worker gets has it
    task = ToolCall(name="Task", input={"description": "Write the notes", "prompt": "Write notes.txt, then look around",
                                        "subagent_type": "general", "isolation": "remote"})
    sub = "# Task\nWrite the notes"
    steps = [
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains=sub, turn=0), reply=Reply(tool_calls=[ToolCall(
            name="Write", input={"file_path": "notes.txt", "content": "written remotely\n"})])),
        Step(match=Match(system_contains=sub, turn=1), reply=Reply(tool_calls=[ToolCall(
            name="Bash", input={"command": f"cat app.py && {ANCESTRY}"})])),
        Step(match=Match(system_contains=sub, turn=2), reply=Reply(text="Notes written.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "stream-json", "--verbose", "--cwd", str(ws), "go"],
                       ray_env(server, tmp_path, cluster), timeout=240)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    server.assert_done()
    assert (ws / "notes.txt").read_text() == "written remotely\n"  # merged into the workspace, uncommitted
    assert [line.strip() for line in git(ws, "status", "--porcelain").splitlines()] == ["M app.py", "?? notes.txt"]

    bash_result = str(server.requests[3].body["messages"][-1])
    assert "hi there" in bash_result  # the person's uncommitted edit travelled in the snapshot
    assert "ray::RemoteWorker" in bash_result  # Bash ran under the Ray worker's actor process
    assert f"{proc.args[0]} -m agentcli" not in bash_result  # ... not below agentcli's own process

    lines = _lines(proc.stdout)
    kinds = [(line.get("type"), line.get("parent_tool_use_id")) for line in lines]
    write_at = next(i for i, line in enumerate(lines) if "Write" in json.dumps(line.get("message", {}))
                    and line.get("parent_tool_use_id"))
    task_result_at = next(i for i, line in enumerate(lines) if line.get("type") == "user"
                          and not line.get("parent_tool_use_id") and "Notes written" in json.dumps(line))
    assert write_at < task_result_at, kinds  # the subagent's tool call reached the stream before its result
    merged = (ws / ".." / "data").resolve()
    stored = subprocess.run(["grep", "-rl", "sk-ant-e2e-secret", str(merged)], capture_output=True, text=True)
    assert stored.stdout == "", "the provider key was stored"
    assert "sk-ant-e2e-secret" not in proc.stdout + proc.stderr
    ray_logs = {node.get_logs_dir_path() for node in cluster.list_all_nodes()}  # Ray logs a runtime env: no key there
    logged = subprocess.run(["grep", "-rl", "sk-ant-e2e-secret", *ray_logs], capture_output=True, text=True)
    assert ray_logs and logged.stdout == "", f"the provider key is in Ray's logs: {logged.stdout}"


def test_without_ray_configured_a_remote_task_is_refused_in_one_line(tmp_path: Path) -> None:
    ws = repo(tmp_path)
    task = ToolCall(name="Task", input={"description": "Write the notes", "prompt": "Write notes.txt",
                                        "subagent_type": "general", "isolation": "remote"})
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Refused."))]
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(ws), "go"], cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    told = str(server.requests[-1].body["messages"][-1])
    assert 'isolation \\"remote\\" needs [executor] kind = \\"ray\\"' in told or \
        'isolation "remote" needs [executor] kind = "ray"' in told
    assert os.listdir(ws) == [".git", "app.py"] or sorted(os.listdir(ws)) == [".git", "app.py"]


def test_a_timeout_reaches_the_worker_and_stops_its_command(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    marker = "sleep 97.531"
    sub = [sub_step(0, Reply(tool_calls=[ToolCall(name="Bash", input={"command": marker, "timeout": 300})]))]
    try:
        result, server, took = one_subagent(ws, tmp_path, cluster, {"timeout_seconds": 15}, sub)
        assert ancestor_worker(marker) is None  # the worker stopped its command (and is gone)
    finally:
        kill_marked(marker)
    (task,) = result["tasks"]
    assert task["status"] == "timed_out" and "timed out" in (task["error"] or "")
    assert took < 90  # stopped by its timeout, not by the command's end (a generous ceiling)
    assert task["merge"] == "no_changes" and git(ws, "status", "--porcelain") == ""
    assert "timed out" in str(server.requests[-1].body["messages"][-1])


def test_a_limit_stops_the_worker_and_what_it_wrote_is_kept_on_its_branch(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    sub = [sub_step(0, Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "half.txt", "content": "x\n"})])),
           sub_step(1, Reply(tool_calls=[ToolCall(name="Bash", input={"command": "echo past the limit"})])),
           sub_step(2, Reply(text="never"))]
    result, server, _took = one_subagent(ws, tmp_path, cluster, {}, sub, AGENTCLI_TASK_TOOL__MAX_TOOL_CALLS="1")
    (task,) = result["tasks"]
    assert task["status"] == "budget_exceeded" and "tool call limit reached (1 calls)" in task["error"]
    assert task["merge"] == "kept" and task["branch"]  # its change came back, kept on its branch, not merged
    assert not (ws / "half.txt").exists()
    assert git(ws, "show", f"{task['branch']}:half.txt") == "x"
    assert len([r for r in server.requests if "Slow work" in str(r.body.get("system"))]) == 2


def test_a_worker_killed_mid_task_fails_the_task_in_one_line_and_the_session_goes_on(cluster: Any,
                                                                                     tmp_path: Path) -> None:
    import signal
    import time

    ws = repo(tmp_path)
    marker = "sleep 86.421"

    def kill_worker() -> None:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            pid = ancestor_worker(marker)
            if pid is not None:
                os.kill(pid, signal.SIGKILL)
                return
            time.sleep(0.2)

    sub = [sub_step(0, Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "half.txt", "content": "x\n"}),
                                     ToolCall(name="Bash", input={"command": marker, "timeout": 300})]))]
    try:
        result, server, _took = one_subagent(ws, tmp_path, cluster, {}, sub, kill_worker)
    finally:
        kill_marked(marker)
    (task,) = result["tasks"]
    assert task["status"] == "failed"
    assert task["error"] == "the remote worker was lost (its process or node died)"
    assert not (ws / "half.txt").exists() and git(ws, "status", "--porcelain") == ""  # nothing half-merged
    told = str(server.requests[-1].body["messages"][-1])
    assert "the remote worker was lost" in told and result["result"] == "Went on."


def test_a_budget_stop_reaches_the_worker(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    sub = [sub_step(0, Reply(tool_calls=[ToolCall(name="Bash", input={"command": "echo one"})])),
           sub_step(1, Reply(tool_calls=[ToolCall(name="Bash", input={"command": "echo two"})])),
           sub_step(2, Reply(text="never"))]
    result, server, _took = one_subagent(ws, tmp_path, cluster, {"max_tokens": 100}, sub)
    (task,) = result["tasks"]
    assert task["status"] == "budget_exceeded", task
    assert task["input_tokens"] > 0  # the worker's usage reached the parent's ledger
    subagent_requests = [r for r in server.requests if "Slow work" in str(r.body.get("system"))]
    assert len(subagent_requests) == 1  # the worker stopped itself at once, not a round trip later


def test_eight_remote_writers_of_one_turn_are_all_merged_back(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    names = [f"part{n}" for n in range(8)]
    tasks = [ToolCall(name="Task", input={"description": f"Write {name}", "prompt": f"Write {name}.txt",
                                          "subagent_type": "general", "isolation": "remote"}) for name in names]
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=tasks))]
    for name in names:
        steps += [Step(match=Match(system_contains=f"# Task\nWrite {name}", turn=0), reply=Reply(tool_calls=[
                      ToolCall(name="Write", input={"file_path": f"{name}.txt", "content": f"{name}\n"})]),
                       latency_ms=1500),  # each first answer takes a while: the writers overlap
                  Step(match=Match(system_contains=f"# Task\nWrite {name}", turn=1), reply=Reply(text=f"{name} done"))]
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="All written.")))
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                       {**ray_env(server, tmp_path, cluster), "AGENTCLI_TASK_TOOL__MAX_CONCURRENT": "8"}, timeout=280)
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    server.assert_done()
    assert sorted((t["status"], t["merge"], tuple(t["files_merged"])) for t in result["tasks"]) == sorted(
        ("completed", "merged", (f"{name}.txt",)) for name in names)
    assert all((ws / f"{name}.txt").read_text() == f"{name}\n" for name in names)
    assert server.in_flight_max >= 2  # they ran at once


def _results(body: dict[str, Any]) -> str:
    """The text of the tool results in a request's last message."""
    found = []
    for block in body["messages"][-1]["content"]:
        content = block.get("content") if isinstance(block, dict) and block.get("type") == "tool_result" else None
        found += [content] if isinstance(content, str) else [c.get("text", "") for c in content or []]
    return "\n".join(found)


def test_remote_tasks_share_a_worker_process_each_in_a_checkout_of_its_own_and_the_next_runs_on_it_warm(
        cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    steps: list[Step] = []
    for turn, names in enumerate((("first", "second"), ("third",))):
        steps.append(Step(match=Match(system_contains=MAIN, turn=turn), reply=Reply(tool_calls=[
            ToolCall(name="Task", input={"description": f"Write the {name}", "prompt": "Write a file",
                                         "subagent_type": "general", "isolation": "remote"}) for name in names])))
        for name in names:
            sub = f"# Task\nWrite the {name}"
            steps += [
                Step(match=Match(system_contains=sub, turn=0), reply=Reply(tool_calls=[
                    ToolCall(name="Write", input={"file_path": f"{name}.txt", "content": f"{name}\n"}),
                    ToolCall(name="Bash", input={"command": f"pwd; ls; {ANCESTRY}"})])),
                Step(match=Match(system_contains=sub, turn=1), reply=Reply(text=f"{name} written")),
            ]
    steps.append(Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="All written.")))
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                       ray_env(server, tmp_path, cluster), timeout=240)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    outputs = {name: _results(r.body) for r in server.requests for name in ("first", "second", "third")
               if f"Write the {name}" in str(r.body["system"]) and "ray::RemoteWorker" in _results(r.body)}
    assert len(outputs) == 3
    workers = {name: next(line.split()[0] for line in out.splitlines() if "ray::RemoteWorker" in line)
               for name, out in outputs.items()}
    folders = {name: next(line for line in out.splitlines() if line.startswith("/")) for name, out in outputs.items()}
    assert len(set(workers.values())) == 1  # one process ran the two of the first turn, then the third, kept warm
    assert len(set(folders.values())) == 3 and not any(os.path.exists(f) for f in folders.values())  # own checkouts
    assert "first.txt" in outputs["third"] and "second.txt" in outputs["third"]  # its snapshot: after both merged
    assert "second.txt" not in outputs["first"].split("ray::")[0]  # siblings do not see each other's work
    assert all((ws / f"{name}.txt").read_text() == f"{name}\n" for name in ("first", "second", "third"))
