"""Remote tasks that cannot finish, through the real CLI on a real Ray: cancelled by the parent with TaskCancel while
the worker runs a command, a worker with no route to its provider, a whole cluster gone mid-task. Each ends in
one line, nothing half-merged, and the session goes on. Also the one line a worker's own error becomes."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.subagents.remote.executor import failure_line
from agentcli.subagents.remote.job import RemoteError
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, git, run_cli
from tests.remote.helpers import ancestor_worker, kill_marked, one_subagent, ray_env, repo, sub_step

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(300)]


def test_a_workers_own_error_is_one_line_without_ray_colours_or_traceback() -> None:
    class RayTaskErrorLike(Exception):  # the shape of Ray's RayTaskError(...): the worker's exception as `cause`
        def __init__(self, cause: BaseException) -> None:
            super().__init__("\x1b[36mray::RemoteWorker.prepare()\x1b[39m (pid=1)\nTraceback (most recent call last):")
            self.cause = cause

    RayTaskErrorLike.__name__ = "RayTaskError(AttributeError)"
    assert failure_line(RayTaskErrorLike(AttributeError("'RemoteJob' has no attribute 'rules'"))) == \
        "AttributeError: 'RemoteJob' has no attribute 'rules'"
    assert failure_line(RayTaskErrorLike(RemoteError("the worker's runtime environment has no model key"))) == \
        "the worker's runtime environment has no model key"
    assert failure_line(ValueError("two\nlines \x1b[31mred")) == "ValueError: two lines red"


def _wait_then(marker: str, act: Any) -> threading.Thread:
    """A thread that runs `act` once a Ray worker runs the command marked `marker` (gives up after 180 s)."""
    def watch() -> None:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if ancestor_worker(marker) is not None:
                act()
                return
            time.sleep(0.2)

    return threading.Thread(target=watch, daemon=True)


def test_task_cancel_reaches_the_worker_and_stops_its_command(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    marker = "sleep 75.319"
    task = ToolCall(name="Task", input={"description": "Slow work", "prompt": "Do the slow work", "isolation": "remote",
                                        "subagent_type": "general", "run_in_background": True})
    steps = [
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        sub_step(0, Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "half.txt", "content": "x\n"}),
                                      ToolCall(name="Bash", input={"command": marker, "timeout": 300})])),
        Step(match=Match(system_contains=MAIN, turn=1), hold="cancel",  # sent once the worker runs the command
             reply=Reply(tool_calls=[ToolCall(name="TaskCancel", input={"task_id": "general#1"})])),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="Cancelled it.")),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        watcher = _wait_then(marker, lambda: server.release("cancel"))
        watcher.start()
        started = time.monotonic()
        try:
            proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                           ray_env(server, tmp_path, cluster), timeout=240)
            took = time.monotonic() - started
            gone = ancestor_worker(marker) is None
        finally:
            server.release("cancel")
            kill_marked(marker)
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    (record,) = result["tasks"]
    assert (record["status"], record["error"]) == ("cancelled", "cancelled by the parent agent")
    assert gone and took < 70  # the worker's command was stopped, not waited for
    assert "Cancelled task" in str(server.requests[-1].body["messages"][-1])
    assert result["result"] == "Cancelled it."
    assert not (ws / "half.txt").exists()  # a cancelled writer's change is not merged
    assert git(ws, "status", "--porcelain") == ""


def test_a_worker_with_no_route_to_its_provider_fails_the_task_in_one_line(cluster: Any, tmp_path: Path) -> None:
    ws = repo(tmp_path)
    result, server, _took = one_subagent(ws, tmp_path, cluster, {"model": "light"}, [],
                                         AGENTCLI_MODELS__LIGHT__BASE_URL="http://127.0.0.1:9")  # nothing listens
    (record,) = result["tasks"]
    assert record["status"] == "failed", record
    error = record["error"] or ""
    assert "\n" not in error and "connect" in error.lower(), error
    told = server.requests[-1].body["messages"][-1]["content"][0]["content"]
    assert told.startswith(error)  # the parent's model was told, and went on
    assert result["result"] == "Went on."
    assert git(ws, "status", "--porcelain") == ""


def test_a_cluster_gone_mid_task_fails_the_task_in_one_line_and_the_session_goes_on(ray_cluster_utils: Any,
                                                                                   tmp_path: Path) -> None:
    own = ray_cluster_utils.Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    own.add_node(num_cpus=2)
    own.wait_for_nodes()
    ws = repo(tmp_path)
    marker = "sleep 64.213"
    watcher = _wait_then(marker, own.shutdown)
    sub = [sub_step(0, Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "half.txt", "content": "x\n"}),
                                         ToolCall(name="Bash", input={"command": marker, "timeout": 300})]))]
    try:
        result, _server, took = one_subagent(ws, tmp_path, own, {}, sub, watcher.start)
    finally:
        own.shutdown()
        kill_marked(marker)
    (record,) = result["tasks"]
    assert record["status"] == "failed", record
    assert record["error"] in ("the remote worker was lost (its process or node died)",
                               "the Ray cluster could not be reached"), record["error"]
    assert result["result"] == "Went on."
    assert not (ws / "half.txt").exists() and git(ws, "status", "--porcelain") == ""
    assert took < 150
