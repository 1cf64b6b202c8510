"""Continue and resume through the real CLI and the fake server: what the next request sends, which session
is picked, tasks a session's end cut off, and the lock a live process holds on its session."""

from __future__ import annotations

import contextlib
import json
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, db, last_json, run_cli
from tests.terminal import (
    POLL_SECONDS,
    READY_BOUND,
    AgentcliTerminal,
    requires_tmux,
    terminal_env,
    terminal_timeout,
)


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "config.py").write_text("def load_config():\n    return {'debug': True}\n")
    return ws


def _run(server: FakeLLMServer, home: Path, ws: Path, *args: str, api: str = "anthropic") -> dict[str, Any]:
    proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), *args], cli_env(api, server, home))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout)


def _texts(body: dict[str, Any]) -> str:
    """Every message of a request body, as one string (both APIs)."""
    return json.dumps(body["messages"], ensure_ascii=False)


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_continue_sends_the_first_runs_messages(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(api=api, last_user_contains="codeword PELICAN"), reply=Reply(text="Noted, I will remember.")),
        Step(match=Match(api=api, last_user_contains="what was the codeword", any_message_contains="PELICAN"),
             reply=Reply(text="It was PELICAN.")),
    ])
    with FakeLLMServer(script) as server:
        first = _run(server, tmp_path, ws, "remember the codeword PELICAN", api=api)
        second = _run(server, tmp_path, ws, "--continue", "what was the codeword?", api=api)
    server.assert_done()
    assert second["result"] == "It was PELICAN."
    assert second["session_id"] == first["session_id"]
    sent = _texts(server.requests[-1].body)
    said = ("remember the codeword PELICAN", "Noted, I will remember.", "what was the codeword")
    order = [sent.index(s) for s in said]
    assert order == sorted(order), sent
    # The json reports the whole session: both runs' turns and requests.
    assert second["turns"] == 2
    assert second["ledger"]["total"]["requests"] == 2
    assert second["usage"]["input_tokens"] > first["usage"]["input_tokens"]
    with db(tmp_path) as conn:
        seqs = [r[0] for r in conn.execute("SELECT seq FROM messages WHERE session_id = ? ORDER BY seq",
                                           (first["session_id"],))]
        holder = conn.execute("SELECT count(*) FROM sessions WHERE parent_session_id IS NULL").fetchone()[0]
    assert seqs == [0, 1, 2, 3]  # the second run went on at the stored numbering, nothing overwritten
    assert holder == 1


def test_resume_picks_the_session_it_names(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    names = ("alpha", "beta", "gamma")
    steps = [Step(match=Match(last_user_contains=f"{n} job"), reply=Reply(text=f"{n} noted")) for n in names]
    steps += [
        Step(match=Match(last_user_contains="go on with beta"), reply=Reply(text="continuing beta"), name="beta"),
        Step(match=Match(last_user_contains="go on with the latest"), reply=Reply(text="continuing"), name="latest"),
    ]
    with FakeLLMServer(Script(steps=steps)) as server:
        ids = {n: _run(server, tmp_path, ws, f"the {n} job")["session_id"] for n in names}
        beta = _run(server, tmp_path, ws, "--resume", ids["beta"][:12], "go on with beta")
        beta_request = _texts(server.requests[-1].body)
        latest = _run(server, tmp_path, ws, "-c", "go on with the latest")
        latest_request = _texts(server.requests[-1].body)
    server.assert_done()
    assert beta["session_id"] == ids["beta"]
    assert "the beta job" in beta_request and "beta noted" in beta_request
    assert "alpha" not in beta_request and "gamma" not in beta_request
    # --continue takes the session used last: beta, just resumed, not gamma, the last created.
    assert latest["session_id"] == ids["beta"]
    assert "go on with beta" in latest_request and "gamma" not in latest_request


def test_resume_mistakes_are_one_line(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    other = tmp_path / "other"
    other.mkdir()
    script = Script(steps=[Step(match=Match(last_user_contains="first job"), reply=Reply(text="done"))])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        session = _run(server, tmp_path, ws, "first job")["session_id"]
        cases = {
            ("run", "--cwd", str(ws), "--resume", "ses_nothing", "hi"): (1, "no session matches 'ses_nothing'"),
            ("run", "--cwd", str(other), "--continue", "hi"): (1, f"no session to continue in {other}"),
            ("run", "--cwd", str(other), "--resume", session, "hi"): (1, f"session {session} belongs to {ws}"),
            ("run", "--cwd", str(ws), "--resume", "hi there"): (2, "--resume needs a session id"),
            ("run", "--cwd", str(ws), "--resume"): (2, "the prompt is missing"),
            ("run", "--cwd", str(ws), "-c", "--resume", session, "hi"): (2, "cannot be used together"),
            ("--cwd", str(ws), "--resume", "ses_nothing"): (1, "no session matches 'ses_nothing'"),
        }
        for args, (code, text) in cases.items():
            proc = run_cli(list(args), env)
            assert proc.returncode == code, (args, proc.stderr)
            assert proc.stderr.startswith("agentcli: ") and text in proc.stderr, (args, proc.stderr)
            assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, (args, proc.stderr)
            assert proc.stdout == ""
    server.assert_done()


def _task(description: str, prompt: str, **extra: object) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": prompt,
                                        "subagent_type": "explore", **extra})


def test_a_background_task_cut_off_by_the_sessions_end_resumes_after_the_session_does(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    first = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[_task("Survey config", "survey the config module", run_in_background=True)])),
        # The subagent is still waiting for its answer when the main agent's turn ends: the run cancels it.
        Step(match=Match(system_contains="# Task\nSurvey config"), reply=Reply(text="never seen"), latency_ms=60_000,
             optional=True),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Started the survey.")),
    ])
    with FakeLLMServer(first) as server:
        run1 = _run(server, tmp_path, ws, "start the config survey in the background")
    (task,) = run1["tasks"]
    assert task["status"] == "cancelled" and task["error"] == "the session ended"
    task_id, child = task["task_id"], task["child_session_id"]
    second = Script(steps=[
        Step(match=Match(system_contains=MAIN, last_user_contains=f'Task(resume="{task_id}"'),
             reply=Reply(tool_calls=[ToolCall(name="TaskOutput", input={"task_id": task_id})])),
        Step(match=Match(system_contains=MAIN, last_user_contains=f"Task {task_id} (explore): cancelled"),
             reply=Reply(tool_calls=[ToolCall(name="Task", input={
                 "description": "Finish the survey", "prompt": "please finish the survey",
                 "subagent_type": "explore", "resume": task_id})])),
        Step(match=Match(system_contains="# Task\nFinish the survey", any_message_contains="survey the config module",
                         last_user_contains="please finish the survey"),
             reply=Reply(text="config.py defines load_config.")),
        Step(match=Match(system_contains=MAIN, last_user_contains="config.py defines load_config."),
             reply=Reply(text="The survey is done.")),
    ])
    with FakeLLMServer(second) as server:
        run2 = _run(server, tmp_path, ws, "--resume", run1["session_id"], "finish what you started")
    server.assert_done()
    assert run2["result"] == "The survey is done."
    old, new = run2["tasks"]  # the resumed session's earlier task, then the one that resumed it
    assert (old["task_id"], old["status"]) == (task_id, "cancelled")
    assert new["status"] == "completed" and new["child_session_id"] == child
    with db(tmp_path) as conn:
        rows = conn.execute("SELECT seq, content FROM messages WHERE session_id = ? ORDER BY seq", (child,)).fetchall()
    assert [r[0] for r in rows] == list(range(len(rows)))
    assert "survey the config module" in rows[0][1]  # the first run's prompt is still there, not overwritten
    assert "please finish the survey" in rows[-2][1] and "load_config" in rows[-1][1]


def _wait_for_request(server: FakeLLMServer, proc: subprocess.Popen[str], n: int) -> None:
    """Wait until `server` has received `n` requests, the last from `proc`: after its start-up and the SDK's import,
    however long those take here. Fails at once if `proc` exits first (with what it said), or at `READY_BOUND`, a
    failure bound."""
    deadline = time.monotonic() + READY_BOUND
    while len(server.requests) < n:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"the process exited ({proc.returncode}) before its request:\n{out}{err}")
        if time.monotonic() > deadline:
            raise AssertionError(f"no request from the process {READY_BOUND:g} s after its launch")
        with contextlib.suppress(TimeoutError):  # wakes at the request; checks on the process between slices
            server.wait_for_requests(n, timeout=POLL_SECONDS)


@terminal_timeout  # not a terminal, but the same start-up bound (READY_BOUND) for the holder
def test_a_live_process_holds_its_session_and_a_dead_ones_may_be_taken_over(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(last_user_contains="first job"), reply=Reply(text="done")),
        Step(match=Match(last_user_contains="slow job"), reply=Reply(text="never seen"), latency_ms=60_000),
        Step(match=Match(last_user_contains="third job"), reply=Reply(text="taken over")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        session = _run(server, tmp_path, ws, "first job")["session_id"]
        sent = len(server.requests)
        holder = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--cwd", str(ws), "--resume", session, "slow job"],
            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        try:
            _wait_for_request(server, holder, sent + 1)  # the holder claimed the session and waits on its answer
            refused = run_cli(["run", "--cwd", str(ws), "--continue", "another job"], env)
        finally:
            holder.send_signal(signal.SIGTERM)
            holder.communicate(timeout=60)
        assert refused.returncode == 1
        assert refused.stderr == (f"agentcli: session {session} is in use by agentcli (pid {holder.pid}); "
                                  "close it there first, or start a new session\n")
        taken = _run(server, tmp_path, ws, "--resume", session, "third job")
    assert taken["session_id"] == session and taken["result"] == "taken over"


@pytest.mark.terminal
@requires_tmux
@terminal_timeout
def test_the_tui_resumes_a_session_with_its_subagent_block_and_holds_it_while_open(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(text="Delegating.", tool_calls=[_task("Find config loader", "Where is load_config?")])),
        Step(match=Match(system_contains="# Task\nFind config loader", turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "src/config.py"})])),
        Step(match=Match(system_contains="# Task\nFind config loader", turn=1), reply=Reply(text="src/config.py:1")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="It is in src/config.py.")),
        Step(match=Match(last_user_contains="and the auth module?", any_message_contains="src/config.py:1"),
             reply=Reply(text="RESUMED ANSWER: no auth module here.")),
        Step(match=Match(last_user_contains="after the TUI"), reply=Reply(text="taken over")),
    ])
    with FakeLLMServer(script) as server:
        env = terminal_env(tmp_path, server)
        session = _run(server, tmp_path, ws, "where is the config loaded?")["session_id"]
        with AgentcliTerminal(["--cwd", str(ws), "--resume", session], env, ws) as term:
            term.wait_started()
            term.wait_for("Resumed session")
            block_line = "Find config loader  — src/config.py:1"  # a finished block: description, result's first line
            for shown in ("where is the config loaded?", "It is in src/config.py.", block_line):
                screen = term.wait_for(shown)  # mounted in one frame; Markdown renders a little later
            assert "▶ ✓ explore#1" in screen  # the block, collapsed to its one line: description and result
            refused = run_cli(["run", "--cwd", str(ws), "--continue", "meanwhile"], env)
            assert refused.returncode == 1
            assert f"session {session} is in use by agentcli (pid {term.pid})" in refused.stderr
            term.type("and the auth module?")
            term.press("Enter")
            term.wait_loaded()  # the turn waits for the SDK's import, however long it takes here
            term.wait_for("RESUMED ANSWER: no auth module here.")
            term.press("C-q")
            assert term.wait_until_exited() == 0
            said = f"agentcli: session {session} (agentcli --resume {session} continues it)"
            deadline = time.monotonic() + 30  # tmux reads the pane's last output on its own time
            while said not in term.scrollback():
                assert time.monotonic() < deadline, term.scrollback()
                time.sleep(0.05)
        taken = _run(server, tmp_path, ws, "--continue", "after the TUI")
    server.assert_done()
    assert taken["session_id"] == session


@pytest.mark.terminal
@requires_tmux
@terminal_timeout
def test_run_resume_without_an_id_asks_on_a_terminal(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        *(Step(match=Match(last_user_contains=f"the {n} job"), reply=Reply(text=f"{n} noted"))
          for n in ("alpha", "beta")),
        Step(match=Match(last_user_contains="pick up again", any_message_contains="the alpha job"),
             reply=Reply(text="PICKED ALPHA")),
    ])
    with FakeLLMServer(script) as server:
        env = terminal_env(tmp_path, server)
        alpha = _run(server, tmp_path, ws, "the alpha job")["session_id"]
        _run(server, tmp_path, ws, "the beta job")
        with AgentcliTerminal(["run", "--cwd", str(ws), "--resume", "pick up again"], env, ws) as term:
            screen = term.wait_for("Resume which one (1-2", timeout=READY_BOUND)  # start-up: its own time
            assert screen.index("the beta job") < screen.index("the alpha job")  # most recent first
            assert alpha in screen
            sent = len(server.requests)
            term.type("2")
            term.press("Enter")
            server.wait_for_requests(sent + 1, timeout=READY_BOUND)  # after the SDK's import, however long
            term.wait_for("PICKED ALPHA")
            assert term.wait_until_exited() == 0
    server.assert_done()
