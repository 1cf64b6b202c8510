"""`run --output-format stream-json` read the way a Claude Code consumer reads it, through the real CLI and
the fake server: a delegation run's transcript, an error before the run, and `--input-format stream-json`.

`read_transcript` below is a small typed reader written from Claude Code's documented SDK message types
(system/init, assistant, user, result; system task lines and stream_event): strict on the fields those
types require and on their JSON types, tolerant of keys it does not know, as such readers are.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall, Usage
from tests.e2e.helpers import MAIN, cli_env, db, run_cli

# --- the reader ----------------------------------------------------------------------------------


class TranscriptError(AssertionError):
    """A line does not have the documented shape."""


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if key not in data:
        raise TranscriptError(f"{where}: missing {key!r} in {data}")
    value = data[key]
    if isinstance(value, bool) and kind in (int, float, (int, float)):
        raise TranscriptError(f"{where}: {key!r} is a bool")
    if not isinstance(value, kind):
        raise TranscriptError(f"{where}: {key!r} is {type(value).__name__}, not {kind}")
    return value


def _optional_id(data: dict[str, Any], key: str, where: str) -> str | None:
    if key not in data:
        raise TranscriptError(f"{where}: missing {key!r}")
    value = data[key]
    if value is not None and not isinstance(value, str):
        raise TranscriptError(f"{where}: {key!r} is neither null nor a string")
    return value


@dataclass(frozen=True)
class TextBlock:
    text: str


@dataclass(frozen=True)
class ToolUseBlock:
    id: str
    name: str
    input: dict[str, Any]


@dataclass(frozen=True)
class ToolResultBlock:
    tool_use_id: str
    content: str | list[Any] | None
    is_error: bool | None


@dataclass(frozen=True)
class ThinkingBlock:
    thinking: str
    signature: str


Block = TextBlock | ToolUseBlock | ToolResultBlock | ThinkingBlock


def _block(data: Any, where: str) -> Block:
    if not isinstance(data, dict):
        raise TranscriptError(f"{where}: content block is not an object")
    kind = _field(data, "type", str, where)
    if kind == "text":
        return TextBlock(_field(data, "text", str, where))
    if kind == "tool_use":
        return ToolUseBlock(_field(data, "id", str, where), _field(data, "name", str, where),
                            _field(data, "input", dict, where))
    if kind == "tool_result":
        content = data.get("content")
        if content is not None and not isinstance(content, (str, list)):
            raise TranscriptError(f"{where}: tool_result content is {type(content).__name__}")
        is_error = data.get("is_error")
        if is_error is not None and not isinstance(is_error, bool):
            raise TranscriptError(f"{where}: is_error is not a bool")
        return ToolResultBlock(_field(data, "tool_use_id", str, where), content, is_error)
    if kind == "thinking":
        return ThinkingBlock(_field(data, "thinking", str, where), _field(data, "signature", str, where))
    raise TranscriptError(f"{where}: unknown content block type {kind!r}")


@dataclass(frozen=True)
class SystemInit:
    session_id: str
    cwd: str
    model: str
    tools: list[str]


@dataclass(frozen=True)
class SystemMessage:
    subtype: str
    session_id: str
    data: dict[str, Any]


@dataclass(frozen=True)
class AssistantMessage:
    session_id: str
    parent_tool_use_id: str | None
    id: str
    model: str
    content: list[Block]
    usage: dict[str, int]


@dataclass(frozen=True)
class UserMessage:
    session_id: str
    parent_tool_use_id: str | None
    content: str | list[Block]


@dataclass(frozen=True)
class StreamEvent:
    session_id: str
    parent_tool_use_id: str | None
    event: dict[str, Any]


@dataclass(frozen=True)
class ResultMessage:
    subtype: str
    is_error: bool
    duration_ms: int
    duration_api_ms: int
    num_turns: int
    session_id: str
    result: str | None
    total_cost_usd: float
    usage: dict[str, int]


Line = SystemInit | SystemMessage | AssistantMessage | UserMessage | StreamEvent | ResultMessage
USAGE_KEYS = ("input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


def _usage(data: dict[str, Any], where: str) -> dict[str, int]:
    usage = _field(data, "usage", dict, where)
    return {key: _field(usage, key, int, f"{where}.usage") for key in USAGE_KEYS}


def read_line(text: str, number: int) -> Line:
    """One stdout line as a Claude Code SDK message."""
    where = f"line {number}"
    data = json.loads(text)
    if not isinstance(data, dict):
        raise TranscriptError(f"{where}: not an object")
    kind = _field(data, "type", str, where)
    if kind == "system":
        subtype = _field(data, "subtype", str, where)
        session_id = _field(data, "session_id", str, where)
        if subtype == "init":
            tools = _field(data, "tools", list, where)
            if not all(isinstance(t, str) for t in tools):
                raise TranscriptError(f"{where}: tools must be strings")
            return SystemInit(session_id, _field(data, "cwd", str, where), _field(data, "model", str, where), tools)
        if subtype == "task_started":
            _field(data, "task_id", str, where), _field(data, "description", str, where)
            _field(data, "uuid", str, where)
        if subtype == "task_notification":
            _field(data, "task_id", str, where), _field(data, "summary", str, where)
            _field(data, "output_file", str, where), _field(data, "uuid", str, where)
            if _field(data, "status", str, where) not in ("completed", "failed", "stopped"):
                raise TranscriptError(f"{where}: task_notification status {data['status']!r}")
        return SystemMessage(subtype, session_id, data)
    if kind == "assistant":
        message = _field(data, "message", dict, where)
        content = [_block(b, where) for b in _field(message, "content", list, where)]
        return AssistantMessage(
            _field(data, "session_id", str, where), _optional_id(data, "parent_tool_use_id", where),
            _field(message, "id", str, where), _field(message, "model", str, where), content,
            _usage(message, f"{where}.message"),
        )
    if kind == "user":
        message = _field(data, "message", dict, where)
        if _field(message, "role", str, where) != "user":
            raise TranscriptError(f"{where}: role is not user")
        raw = _field(message, "content", (str, list), where)
        return UserMessage(
            _field(data, "session_id", str, where), _optional_id(data, "parent_tool_use_id", where),
            raw if isinstance(raw, str) else [_block(b, where) for b in raw],
        )
    if kind == "stream_event":
        _field(data, "uuid", str, where)
        return StreamEvent(_field(data, "session_id", str, where), _optional_id(data, "parent_tool_use_id", where),
                           _field(data, "event", dict, where))
    if kind == "result":
        result = data.get("result")
        if result is not None and not isinstance(result, str):
            raise TranscriptError(f"{where}: result is not a string")
        return ResultMessage(
            _field(data, "subtype", str, where), _field(data, "is_error", bool, where),
            _field(data, "duration_ms", int, where), _field(data, "duration_api_ms", int, where),
            _field(data, "num_turns", int, where), _field(data, "session_id", str, where), result,
            _field(data, "total_cost_usd", (int, float), where), _usage(data, where),
        )
    raise TranscriptError(f"{where}: unknown message type {kind!r}")


def read_transcript(stdout: str) -> list[Line]:
    """Every line of a stream-json run, in order."""
    return [read_line(line, n) for n, line in enumerate(stdout.splitlines(), 1) if line.strip()]


# --- the runs ------------------------------------------------------------------------------------

SUB = "# Task\nFind config loader"
MAIN_USAGE = (Usage(input_tokens=300, output_tokens=40, cache_read_input_tokens=1000),
              Usage(input_tokens=500, output_tokens=25))
SUB_USAGE = (Usage(input_tokens=120, output_tokens=30, cache_creation_input_tokens=400),
             Usage(input_tokens=90, output_tokens=15, cache_read_input_tokens=400))


def _workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "config.py").write_text("def load_config():\n    return {}\n")
    return ws


def _delegation(api: str) -> Script:
    task = ToolCall(name="Task", input={"description": "Find config loader", "prompt": "Where is load_config?",
                                        "subagent_type": "explore"})
    return Script(steps=[
        Step(match=Match(api=api, system_contains=MAIN, turn=0),
             reply=Reply(text="Delegating.", tool_calls=[task], usage=MAIN_USAGE[0])),
        Step(match=Match(api=api, system_contains=SUB, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": "config.py"})], usage=SUB_USAGE[0])),
        Step(match=Match(api=api, system_contains=SUB, turn=1, last_user_contains="def load_config"),
             reply=Reply(text="load_config is in config.py:1.", usage=SUB_USAGE[1])),
        Step(match=Match(api=api, system_contains=MAIN, turn=1, last_user_contains="load_config is in config.py:1."),
             reply=Reply(text="It is in config.py.", usage=MAIN_USAGE[1])),
    ])


@pytest.mark.parametrize("api", ["anthropic", "openai"])
def test_a_delegation_run_reads_as_claude_code_stream_json(api: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with FakeLLMServer(_delegation(api)) as server:
        env = cli_env(api, server, tmp_path)
        proc = run_cli(["run", "--output-format", "stream-json", "--cwd", str(ws), "Where is the config loaded?"], env)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    lines = read_transcript(proc.stdout)

    init, *middle, result = lines
    assert isinstance(init, SystemInit) and isinstance(result, ResultMessage)
    session = init.session_id
    assert init.cwd == str(ws) and "Task" in init.tools and "Read" in init.tools
    assert all(getattr(line, "session_id", session) == session for line in lines)  # one session id throughout

    assistants = [m for m in middle if isinstance(m, AssistantMessage)]
    main = [m for m in assistants if m.parent_tool_use_id is None]
    sub = [m for m in assistants if m.parent_tool_use_id is not None]
    (task_call,) = [b for m in main for b in m.content if isinstance(b, ToolUseBlock) and b.name == "Task"]
    assert task_call.input["subagent_type"] == "explore"
    assert [m.parent_tool_use_id for m in sub] == [task_call.id, task_call.id]  # both subagent replies
    (read_call,) = [b for m in sub for b in m.content if isinstance(b, ToolUseBlock)]
    assert read_call.name == "Read"
    assert [b.text for b in main[-1].content if isinstance(b, TextBlock)] == ["It is in config.py."]
    assert [b.text for b in sub[-1].content if isinstance(b, TextBlock)] == ["load_config is in config.py:1."]
    # each assistant message carries its own request's usage, in the Anthropic names
    assert [m.usage["output_tokens"] for m in assistants] == [40, 30, 15, 25]
    assert len({m.id for m in assistants}) == 4

    users = [m for m in middle if isinstance(m, UserMessage)]
    results = {b.tool_use_id: (b, m.parent_tool_use_id) for m in users if isinstance(m.content, list)
               for b in m.content if isinstance(b, ToolResultBlock)}
    read_result, read_parent = results[read_call.id]
    assert read_parent == task_call.id and read_result.is_error is False
    assert "def load_config" in str(read_result.content)
    task_result, task_parent = results[task_call.id]
    assert task_parent is None and "load_config is in config.py:1." in str(task_result.content)
    # the subagent's prompt is a user message of its own, under the Task call
    assert any(m.parent_tool_use_id == task_call.id and "Where is load_config?" in json.dumps(
        [getattr(b, "text", "") for b in m.content] if isinstance(m.content, list) else m.content) for m in users)

    system = {m.subtype: m.data for m in middle if isinstance(m, SystemMessage)}
    assert system["task_started"]["tool_use_id"] == task_call.id
    assert system["task_started"]["task_type"] == "local_agent"  # Claude Code's value; the type has its own field
    assert system["task_started"]["subagent_type"] == "explore"
    notification = system["task_notification"]
    assert (notification["tool_use_id"], notification["status"]) == (task_call.id, "completed")
    assert notification["task_id"] == system["task_started"]["task_id"]
    assert notification["usage"]["tool_uses"] == 1

    assert (result.subtype, result.is_error, result.result) == ("success", False, "It is in config.py.")
    assert result.num_turns == 2  # the main agent's model turns
    assert result.duration_ms >= result.duration_api_ms > 0
    billed_out = sum(u.output_tokens or 0 for u in (*MAIN_USAGE, *SUB_USAGE))
    assert result.usage["output_tokens"] == billed_out  # the whole tree's
    assert result.usage["output_tokens"] == sum(m.usage["output_tokens"] for m in assistants)
    # total_cost_usd covers the tree: the main agent's part alone is less, and it matches the ledger
    final = json.loads(proc.stdout.splitlines()[-1])
    assert final["ledger"]["delegated"]["requests"] == 2
    if api == "anthropic":  # a priced model
        assert result.total_cost_usd == pytest.approx(final["ledger"]["total"]["cost_usd"])
        assert result.total_cost_usd > final["ledger"]["own"]["cost_usd"] > 0
    else:  # a compatible server's model has no known price: Claude Code's number is 0, agentcli's own key null
        assert (result.total_cost_usd, final["cost_usd"]) == (0, None)
    assert "Traceback" not in proc.stderr


def test_partial_messages_stream_the_text_only_when_asked(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[Step(match=Match(system_contains=MAIN), reply=Reply(text="Hello there, friend."))])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        plain = run_cli(["run", "--output-format", "stream-json", "--cwd", str(ws), "hi"], env)
    assert plain.returncode == 0, plain.stderr
    assert not [m for m in read_transcript(plain.stdout) if isinstance(m, StreamEvent)]
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = run_cli(["run", "--output-format", "stream-json", "--include-partial-messages", "--cwd", str(ws),
                        "hi"], env)
    assert proc.returncode == 0, proc.stderr
    lines = read_transcript(proc.stdout)
    events = [m.event for m in lines if isinstance(m, StreamEvent)]
    assert [e["type"] for e in events][:2] == ["message_start", "content_block_start"]
    assert [e["type"] for e in events][-2:] == ["content_block_stop", "message_stop"]
    streamed = "".join(e["delta"]["text"] for e in events if e["type"] == "content_block_delta")
    assert streamed == "Hello there, friend."
    # the complete assistant message follows its partial events
    kinds = [type(m).__name__ for m in lines]
    assert kinds.index("AssistantMessage") > max(i for i, k in enumerate(kinds) if k == "StreamEvent")


@pytest.mark.parametrize("fmt", ["json", "stream-json"])
def test_errors_before_the_run_end_with_a_result_line(fmt: str, tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    (tmp_path / "bad.toml").write_text("[models.main]\nmax_output_tokens = -5\n")
    script = Script(steps=[])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        bad_config = run_cli(["run", "--output-format", fmt, "--config", str(tmp_path / "bad.toml"), "--cwd", str(ws),
                              "hi"], env)
        no_key = run_cli(["run", "--output-format", fmt, "--cwd", str(ws), "hi"],
                         {k: v for k, v in env.items() if k != "ANTHROPIC_API_KEY"})
        no_prompt = run_cli(["run", "--output-format", fmt, "--cwd", str(ws), " "], env)
        bad_flag = run_cli(["run", f"--output-format={fmt}", "--max-budget-usd", "lots", "--cwd", str(ws), "hi"], env)
    cases = [(bad_config, 2, "max_output_tokens"), (no_key, 1, "ANTHROPIC_API_KEY"), (no_prompt, 2, "prompt is empty"),
             (bad_flag, 2, "--max-budget-usd")]
    for proc, code, words in cases:
        assert proc.returncode == code, proc.stderr
        assert "Traceback" not in proc.stderr
        (line,) = proc.stdout.splitlines()  # the result line only: no init, the run never started
        result = read_line(line, 1)
        assert isinstance(result, ResultMessage)
        assert result.is_error and result.subtype == "error_during_execution" and result.num_turns == 0
        assert result.result is not None and words in result.result and "\n" not in result.result
        assert words in proc.stderr.strip().splitlines()[-1]  # and the usual one line on stderr


def _driven(ws: Path, env: dict[str, str], stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentcli", "run", "--input-format", "stream-json", "--output-format", "stream-json",
         "--cwd", str(ws)], input=stdin, capture_output=True, text=True, env=env, timeout=120)


def _user(content: object) -> str:
    return json.dumps({"type": "user", "message": {"role": "user", "content": content}}) + "\n"


def test_stream_json_input_drives_one_session_turn_by_turn(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="First question"),
             reply=Reply(text="First answer.")),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="Second question",
                         any_message_contains="First answer."),
             reply=Reply(text="Second answer.")),
    ])
    stdin = (_user("First question") + "\n" + "this is not json\n"
             + _user([{"type": "text", "text": "Second question"}, {"type": "text", "text": "(be brief)"}]))
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        proc = _driven(ws, env, stdin)
    server.assert_done()
    assert proc.returncode == 1, proc.stderr  # a bad line makes the run's status a failure; the session went on
    assert "Traceback" not in proc.stderr
    assert "standard input line 3: not JSON" in proc.stderr
    lines = read_transcript(proc.stdout)
    assert isinstance(lines[0], SystemInit)
    assert sum(isinstance(m, SystemInit) for m in lines) == 1
    session = lines[0].session_id
    results = [m for m in lines if isinstance(m, ResultMessage)]
    assert [(r.is_error, r.result, r.num_turns) for r in results] == [
        (False, "First answer.", 1),
        (True, 'standard input line 3: not JSON (Expecting value at column 1)', 1),
        (False, "Second answer.", 2),
    ]
    assert {r.session_id for r in results} == {session}
    answers = [b.text for m in lines if isinstance(m, AssistantMessage) for b in m.content if isinstance(b, TextBlock)]
    assert answers == ["First answer.", "Second answer."]
    # the store has one session, with both turns
    sessions = db(tmp_path).execute("SELECT id FROM sessions WHERE parent_session_id IS NULL").fetchall()
    assert sessions == [(session,)]


def test_stream_json_input_needs_stream_json_output_and_no_prompt(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    with FakeLLMServer(Script(steps=[])) as server:
        env = cli_env("anthropic", server, tmp_path)
        text_out = run_cli(["run", "--input-format", "stream-json", "--cwd", str(ws)], env)
        json_out = run_cli(["run", "--input-format", "stream-json", "--output-format", "json", "--cwd", str(ws)], env)
        with_prompt = run_cli(["run", "--input-format", "stream-json", "--output-format", "stream-json",
                               "--cwd", str(ws), "hi"], env)
        empty = _driven(ws, env, "\n")
    assert (text_out.returncode, text_out.stdout) == (2, "")
    assert "--input-format stream-json needs --output-format stream-json" in text_out.stderr
    assert json_out.returncode == 2 and json.loads(json_out.stdout)["is_error"] is True
    assert with_prompt.returncode == 2 and "give no PROMPT" in json.loads(with_prompt.stdout)["result"]
    assert empty.returncode == 1
    (result,) = read_transcript(empty.stdout)
    assert isinstance(result, ResultMessage) and result.is_error and "no user message" in str(result.result)


def test_ctrl_c_ends_a_driven_session_with_one_result_per_turn(tmp_path: Path) -> None:
    """Ctrl-C while waiting for input: exit 130, no extra result; during a turn: that turn's result, cancelled."""
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="One.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="never"),
             fault=Fault(kind="stall", after_events=0, seconds=30)),
    ])
    with FakeLLMServer(script) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--input-format", "stream-json", "--output-format",
             "stream-json", "--cwd", str(ws)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=cli_env("anthropic", server, tmp_path))
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_user("first"))
        proc.stdin.flush()
        first = [proc.stdout.readline()]
        while '"type": "result"' not in first[-1]:
            first.append(proc.stdout.readline())
        proc.stdin.write(_user("second"))
        proc.stdin.flush()
        deadline = time.monotonic() + 30
        while len(server.requests) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        rest, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert "Traceback" not in stderr
    results = [m for m in read_transcript("".join(first) + rest) if isinstance(m, ResultMessage)]
    assert [(r.is_error, r.result) for r in results] == [(False, "One."), (True, "")]
    assert json.loads(rest.splitlines()[-1])["status"] == "cancelled"

    with FakeLLMServer(Script(steps=[Step(match=Match(system_contains=MAIN), reply=Reply(text="Only."))])) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agentcli", "run", "--input-format", "stream-json", "--output-format",
             "stream-json", "--cwd", str(ws)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            text=True, env=cli_env("anthropic", server, tmp_path))
        assert proc.stdin is not None and proc.stdout is not None
        proc.stdin.write(_user("only"))
        proc.stdin.flush()
        lines = [proc.stdout.readline()]
        while '"type": "result"' not in lines[-1]:
            lines.append(proc.stdout.readline())
        proc.send_signal(signal.SIGINT)  # idle, waiting for the next message
        rest, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert rest == ""  # the one turn had its result; nothing more


def test_a_driven_session_can_resume_a_stored_one(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="One.")),
        Step(match=Match(system_contains=MAIN, any_message_contains="One.", last_user_contains="second"),
             reply=Reply(text="Two.")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path)
        first = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "first"], env)
        session = json.loads(first.stdout)["session_id"]
        proc = subprocess.run(
            [sys.executable, "-m", "agentcli", "run", "--input-format", "stream-json", "--output-format", "stream-json",
             "--cwd", str(ws), "--resume", session], input=_user("second"), capture_output=True, text=True, env=env,
            timeout=120)
    server.assert_done()
    assert proc.returncode == 0, proc.stderr
    lines = read_transcript(proc.stdout)
    assert {getattr(m, "session_id", None) for m in lines} == {session}
    result = lines[-1]
    assert isinstance(result, ResultMessage) and (result.result, result.num_turns) == ("Two.", 2)
