"""Claude Code's stream-json shapes in-process: reading input lines, and the printer's lines for a nested
delegation (a subagent's subagent carries its own Task call's id), retries and compaction, and background commands'
`local_bash` task lines."""

from __future__ import annotations

import io
import json

import pytest

from agentcli.events import (
    BackgroundFinishedEvent,
    BackgroundStartedEvent,
    CompactionEvent,
    Event,
    MessageAddedEvent,
    RetryEvent,
    SessionStartedEvent,
    SubagentBlockAddedEvent,
    SubagentBlockFinishedEvent,
    SubagentEvent,
    TextDeltaEvent,
    UsageEvent,
)
from agentcli.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentcli.oneshot.printer_base import RunSummary
from agentcli.oneshot.stream_json_printer import StreamJsonPrinter
from agentcli.stream_json import InputLineError, parse_input_line, result_subtype


def test_input_lines_in_claude_codes_user_message_shape() -> None:
    plain = parse_input_line('{"type":"user","message":{"role":"user","content":"hi"},"session_id":"x"}', 1)
    assert plain is not None and plain.prompt == "hi"
    blocks = parse_input_line(json.dumps({"type": "user", "message": {"role": "user", "content": [
        {"type": "text", "text": "one"}, {"type": "text", "text": "two"}]}}), 2)
    assert blocks is not None and isinstance(blocks.prompt, Message)
    assert [b.text for b in blocks.prompt.content if isinstance(b, TextBlock)] == ["one", "two"]
    assert parse_input_line("   \n", 3) is None


@pytest.mark.parametrize(("line", "says"), [
    ("{oops", "standard input line 7: not JSON"),
    ("[1]", "expected a JSON object, got list"),
    ('{"type":"control_request"}', "type 'control_request' is not supported"),
    ('{"type":"user"}', '"message" must be an object'),
    ('{"type":"user","message":{"role":"assistant","content":"x"}}', "role 'assistant'"),
    ('{"type":"user","message":{"content":[{"type":"image","source":{}}]}}',
     "content block 0: an image must have a base64 source"),
    ('{"type":"user","message":{"content":[{"type":"image","source":{"type":"base64","data":"aGk="}}]}}',
     "content block 0: the image cannot be sent: not an image"),
    ('{"type":"user","message":{"content":[{"type":"document","source":{}}]}}', "content block 0 ('document')"),
    ('{"type":"user","message":{"content":42}}', '"content" must be a string or a list'),
    ('{"type":"user","message":{"content":"  "}}', "the message is empty"),
])
def test_a_line_that_is_not_a_user_message_is_one_clear_error(line: str, says: str) -> None:
    with pytest.raises(InputLineError) as caught:
        parse_input_line(line, 7)
    assert says in str(caught.value) and str(caught.value).startswith("standard input line 7")
    assert "\n" not in str(caught.value)


def test_run_statuses_read_as_claude_codes_result_subtypes() -> None:
    assert [result_subtype(s) for s in ("completed", "max_turns", "budget_exceeded", "failed", "cancelled")] == [
        "success", "error_max_turns", "error_max_budget_usd", "error_during_execution", "error_during_execution"]


def _wrap(event: Event, *chain: tuple[str, str]) -> Event:
    """`event` relayed up through subagents: chain is (task id, Task call id), innermost first."""
    for task_id, call in chain:
        event = SubagentEvent(session_id="parent", task_id=task_id, parent_tool_call_id=call, subagent_type="explore",
                              event=event)
    return event


def test_nested_subagents_carry_their_own_task_calls_id() -> None:
    out, err = io.StringIO(), io.StringIO()
    printer = StreamJsonPrinter(out, err, partial=True)
    task_call = ToolUseBlock(id="toolu_outer", name="Task", input={"subagent_type": "general"})
    inner_call = ToolUseBlock(id="toolu_inner", name="Task", input={"subagent_type": "explore"})
    events: list[Event] = [
        SessionStartedEvent(session_id="main", model="main", model_id="claude-x", workspace="/w", tools=["Task"]),
        UsageEvent(session_id="main", provider="anthropic", model="claude-x", input_tokens=5, output_tokens=2,
                   duration_ms=40),
        MessageAddedEvent(session_id="main", seq=1, message=Message(role="assistant", content=[task_call])),
        SubagentBlockAddedEvent(session_id="main", task_id="t1", parent_tool_call_id="toolu_outer",
                                subagent_type="general", description="outer", model="light", depth=1),
        _wrap(SessionStartedEvent(session_id="s1", model="light", model_id="claude-l", workspace="/w"),
              ("t1", "toolu_outer")),
        _wrap(MessageAddedEvent(session_id="s1", seq=1, message=Message(role="assistant", content=[inner_call])),
              ("t1", "toolu_outer")),
        _wrap(SubagentBlockAddedEvent(session_id="s1", task_id="t2", parent_tool_call_id="toolu_inner",
                                      subagent_type="explore", description="inner", model="light", depth=2),
              ("t1", "toolu_outer")),
        _wrap(TextDeltaEvent(session_id="s2", text="deep"), ("t2", "toolu_inner"), ("t1", "toolu_outer")),
        _wrap(UsageEvent(session_id="s2", provider="anthropic", model="claude-l", input_tokens=3, output_tokens=1,
                         duration_ms=10), ("t2", "toolu_inner"), ("t1", "toolu_outer")),
        _wrap(MessageAddedEvent(session_id="s2", seq=1, message=Message(role="assistant", content=[
            TextBlock(text="deep")])), ("t2", "toolu_inner"), ("t1", "toolu_outer")),
        _wrap(RetryEvent(session_id="s2", attempt=1, delay_seconds=0.5, error="overloaded"),
              ("t2", "toolu_inner"), ("t1", "toolu_outer")),
        _wrap(CompactionEvent(session_id="s1", mode="prune", tokens_before=900, tokens_after=300, window=1000),
              ("t1", "toolu_outer")),
        _wrap(SubagentBlockFinishedEvent(session_id="s1", task_id="t2", status="timed_out", short_result="Task failed",
                                         input_tokens=3, output_tokens=1, tool_calls=0, elapsed_ms=12.4),
              ("t1", "toolu_outer")),
        MessageAddedEvent(session_id="main", seq=2, message=Message(role="user", content=[
            ToolResultBlock(tool_use_id="toolu_outer", content="done")])),
    ]
    for event in events:
        printer(event)
    printer.finish(RunSummary(status="completed", result="ok", session_id="main", model="main", turns=1,
                              error=None, usage={"input_tokens": 8, "output_tokens": 3, "cache_read_tokens": 0,
                                                 "cache_write_tokens": 0}, cost_usd=None))
    lines = [json.loads(line) for line in out.getvalue().splitlines()]
    assert {line["session_id"] for line in lines} == {"main"}
    shapes = [(ln["type"], ln.get("subtype") or ln.get("event", {}).get("type"), ln.get("parent_tool_use_id"))
              for ln in lines]
    assert shapes == [
        ("system", "init", None),
        ("assistant", None, None),
        ("system", "task_started", None),
        ("assistant", None, "toolu_outer"),
        ("system", "task_started", "toolu_outer"),
        ("stream_event", "message_start", "toolu_inner"),
        ("stream_event", "content_block_start", "toolu_inner"),
        ("stream_event", "content_block_delta", "toolu_inner"),
        ("stream_event", "content_block_stop", "toolu_inner"),
        ("stream_event", "message_delta", "toolu_inner"),  # the stop reason and the request's usage
        ("stream_event", "message_stop", "toolu_inner"),
        ("assistant", None, "toolu_inner"),
        ("system", "api_retry", "toolu_inner"),
        ("system", "compact_boundary", "toolu_outer"),
        ("system", "task_notification", "toolu_outer"),
        ("user", None, None),
        ("result", "success", None),
    ]
    assert lines[9]["event"]["delta"]["stop_reason"] == "end_turn"
    deep = lines[11]["message"]
    assert (deep["model"], deep["usage"]["input_tokens"]) == ("claude-l", 3)  # its own request's
    notification = lines[14]
    assert (notification["tool_use_id"], notification["status"], notification["task_status"]) == (
        "toolu_inner", "failed", "timed_out")
    assert lines[13]["compact_metadata"] == {"trigger": "auto", "pre_tokens": 900}
    result = lines[-1]
    assert result["duration_api_ms"] == 50 and result["total_cost_usd"] == 0.0 and result["cost_usd"] is None
    assert result["usage"]["cache_read_input_tokens"] == 0 and result["num_turns"] == 1


def test_brackets_inside_strings_do_not_count_as_nesting() -> None:
    from agentcli.stream_json import MAX_INPUT_DEPTH, nested_deeper

    text = json.dumps({"type": "user", "message": {"role": "user", "content": "[" * 5000 + '\\"{' * 300}})
    assert not nested_deeper(text, MAX_INPUT_DEPTH)
    assert parse_input_line(text, 1) is not None  # a prompt full of brackets is still a prompt
    assert nested_deeper("[" * 101 + "]" * 101, 100) and not nested_deeper("[" * 100 + "]" * 100, 100)
    with pytest.raises(InputLineError, match="nested deeper than"):
        parse_input_line('{"a": ' + "[" * 200 + "]" * 200 + "}", 7)


def test_background_commands_are_local_bash_task_lines_with_claude_codes_statuses() -> None:
    out = io.StringIO()
    printer = StreamJsonPrinter(out, io.StringIO())
    printer(SessionStartedEvent(session_id="main", model="main", model_id="claude-x", workspace="/w", tools=["Bash"]))
    head = {"session_id": "main", "agent": "main", "output_file": "/tmp/shells/bash_1.log"}
    ends = [("exited", 0, "Background command \"Serve the docs\" completed (exit code 0)", "completed"),
            ("exited", 2, "Background command \"Serve the docs\" failed with exit code 2", "failed"),
            ("exited", None, "Background command \"Serve the docs\" failed", "failed"),
            ("stopped", None, "Background command \"Serve the docs\" was stopped", "stopped")]
    printer(BackgroundStartedEvent(**head, task_id="bash_1", command="make docs", tool_call_id="toolu_1",
                                   description="Serve the docs"))
    for status, code, _, _ in ends:
        printer(BackgroundFinishedEvent(**head, task_id="bash_1", command="make docs", tool_call_id="toolu_1",
                                        description="Serve the docs", status=status, exit_code=code,
                                        last_lines="serving\nbye", elapsed_seconds=1.5))
    printer(BackgroundStartedEvent(**head, task_id="bash_2", command="sleep 9"))  # no description, no call id
    init, started, *finished, bare = [json.loads(line) for line in out.getvalue().splitlines()]
    assert init["subtype"] == "init"
    assert {k: started[k] for k in ("subtype", "task_id", "tool_use_id", "description", "task_type",
                                    "is_backgrounded", "session_id", "output_file")} == {
        "subtype": "task_started", "task_id": "bash_1", "tool_use_id": "toolu_1", "description": "Serve the docs",
        "task_type": "local_bash", "is_backgrounded": True, "session_id": "main",
        "output_file": "/tmp/shells/bash_1.log"}
    assert [(ln["subtype"], ln["status"], ln["summary"], ln["exit_code"]) for ln in finished] == [
        ("task_notification", wire, summary, code) for _, code, summary, wire in ends]
    assert all(ln["output_file"] == "/tmp/shells/bash_1.log" and ln["last_lines"] == "serving\nbye"
               and ln["tool_use_id"] == "toolu_1" and "usage" not in ln for ln in finished)
    assert (bare["description"], bare["tool_use_id"]) == ("sleep 9", None)
