"""Shared by the remote e2e tests: the workspace, the CLI's environment for the cluster, one remote subagent's run
through the CLI, and the Ray worker process that runs a marked command."""

from __future__ import annotations

import json
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, NO_IDENTITY, cli_env, git_workspace, run_cli


def repo(tmp_path: Path) -> Path:
    return git_workspace(tmp_path, "print('hi')\n")


def ray_env(server: FakeLLMServer, tmp_path: Path, cluster: Any) -> dict[str, str]:
    return cli_env("anthropic", server, tmp_path, AGENTCLI_EXECUTOR__KIND="ray",
                   AGENTCLI_EXECUTOR__ADDRESS=cluster.address, **NO_IDENTITY)


def ancestor_worker(marker: str) -> int | None:
    """The pid of the Ray actor process above the process whose command line has `marker`."""
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            cmd = Path(f"/proc/{name}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if marker not in cmd or "bash" in cmd:
            continue
        pid = int(name)
        while pid > 1:
            try:
                if "ray::RemoteWorker" in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                    return pid
                pid = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                break
    return None


def kill_marked(marker: str) -> None:
    subprocess.run(["pkill", "-9", "-f", marker], check=False)


def one_subagent(ws: Path, tmp_path: Path, cluster: Any, task_extra: dict[str, Any], sub_steps: list[Step],
                 while_running: Any = None, **env: str) -> tuple[dict[str, Any], FakeLLMServer, float]:
    task = ToolCall(name="Task", input={"description": "Slow work", "prompt": "Do the slow work",
                                        "subagent_type": "general", "isolation": "remote", **task_extra})
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])), *sub_steps,
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Went on."))]
    with FakeLLMServer(Script(steps=steps)) as server:
        helper = threading.Thread(target=while_running, daemon=True) if while_running else None
        if helper:
            helper.start()
        started = time.monotonic()
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "go"],
                       {**ray_env(server, tmp_path, cluster), **env}, timeout=240)
        took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1]), server, took


def sub_step(turn: int, reply: Reply) -> Step:
    return Step(match=Match(system_contains="# Task\nSlow work", turn=turn), reply=reply)
