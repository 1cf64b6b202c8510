"""Context compaction: pruning first, then a digest or a summary that keeps tasks, todos and files."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.agent.compaction import (
    Compactor,
    ContextPolicy,
    Facts,
    SummaryReply,
    estimate_tokens,
    window_of,
)
from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.events import CompactionEvent, Event, NoticeEvent, UsageEvent
from agentcli.llm.base import Message, TextBlock, ToolResultBlock, ToolUseBlock
from agentcli.llm.models import ResolvedModel
from agentcli.llm.usage import Usage
from agentcli.testing.scripted import Match, Reply, ScriptedLLM, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools

BIG = "x" * 20_000


def _turn(n: int, tool: str = "Read", result: str = BIG, args: dict[str, object] | None = None) -> list[Message]:
    """One agentic step: the model calls `tool`, the result comes back."""
    call = ToolUseBlock(id=f"t{n}", name=tool, input=args or {"file_path": f"f{n}.py"})
    return [
        Message(role="assistant", content=[TextBlock(text=f"step {n}"), call]),
        Message(role="user", content=[ToolResultBlock(tool_use_id=f"t{n}", content=result)]),
    ]


def _history(turns: int, **kw: object) -> list[Message]:
    messages = [Message.user("please refactor the parser")]
    for n in range(turns):
        messages += _turn(n, **kw)  # type: ignore[arg-type]
    return messages


def _compactor(window: int = 40_000, **kw: object) -> Compactor:
    return Compactor(ContextPolicy(window=window, threshold=0.8, keep_ratio=0.25, prune_chars=4000), **kw)  # type: ignore[arg-type]


async def test_a_context_under_the_threshold_is_left_alone() -> None:
    messages = _history(2, result="short")
    assert await _compactor().fit(messages, len(messages)) == []
    assert len(messages) == 5


async def test_old_large_tool_results_are_pruned_first_and_the_latest_and_task_results_stay_whole() -> None:
    messages = _history(8)
    task_result = "task_id: tsk_keep1 " + "r" * 9000
    messages += _turn(8, tool="Task", result=task_result, args={"description": "look", "prompt": "p"})
    messages += _turn(9)
    before = estimate_tokens(messages)
    done = await _compactor(window=50_000).fit(messages, len(messages))
    assert [c.mode for c in done] == ["prune"]
    assert done[0].tokens_after < done[0].tokens_before and estimate_tokens(messages) < before
    results = [b for m in messages for b in m.content if isinstance(b, ToolResultBlock)]
    assert "[pruned: " in results[0].content and results[0].content.startswith("x" * 600)
    assert results[8].content == task_result  # a Task result keeps its id and text
    assert results[-1].content == BIG  # the model has not read the latest yet


async def test_when_pruning_is_not_enough_older_turns_become_a_digest_that_keeps_every_fact() -> None:
    messages = _history(12, result="y" * 4000, tool="Edit", args=None)
    messages.insert(1, Message(role="assistant", content=[TextBlock(text="I will start with the lexer.")]))
    messages.insert(2, Message.user("also rename <subagent_result> tokens"))
    facts = Facts(tasks=["- tsk_a1 [explore] completed: find callers — 3 call sites"], todos=["- [ ] write tests"])
    compactor = _compactor(window=12_000, facts=lambda: facts, editing_tools=frozenset({"Edit"}))
    next_seq = 100
    done = await compactor.fit(messages, next_seq)
    summary = done[-1]
    assert summary.mode == "summary" and summary.trigger == "auto" and summary.reply is None
    opening = messages[0]
    assert opening.role == "user" and opening.text() == summary.summary
    text = summary.summary
    assert text.startswith("<compacted_context>") and text.endswith("</compacted_context>")
    assert "please refactor the parser" in text and "tsk_a1" in text and "- [ ] write tests" in text
    assert "- f0.py" in text  # files the older turns edited
    assert "<subagent_result>" not in text  # untrusted text cannot open a frame
    assert messages[1].role == "assistant"  # no tool result lost its call
    assert summary.kept_from_seq == next_seq - (len(messages) - 1)
    assert summary.tokens_after < 0.8 * 12_000 < summary.tokens_before


async def test_a_second_compaction_carries_the_first_digest_forward() -> None:
    messages = _history(10, result="z" * 4000, tool="Write")
    compactor = _compactor(window=10_000, editing_tools=frozenset({"Write"}))
    assert await compactor.fit(messages, len(messages))
    messages += _history(10, result="w" * 4000, tool="Write")[1:]
    done = await compactor.fit(messages, 200)
    text = done[-1].summary
    assert text.count("<compacted_context>") == 1 and "please refactor the parser" in text
    assert "- f0.py" in text  # carried from the first digest's file list


async def test_the_summariser_is_called_only_when_configured_or_asked_and_a_failure_falls_back() -> None:
    calls: list[tuple[str, str]] = []

    async def summarize(transcript: str, focus: str) -> SummaryReply:
        calls.append((transcript, focus))
        return SummaryReply("The parser was split in two.", Usage(500, 40), "anthropic", "claude-haiku-4-5")

    messages = _history(12, result="q" * 4000)
    await _compactor(window=12_000, summarize=summarize).fit(messages, 50)
    assert calls == []  # auto_compact is off: a digest, no model call

    auto = Compactor(ContextPolicy(window=12_000, auto_summary=True), summarize=summarize)
    messages = _history(12, result="q" * 4000)
    done = await auto.fit(messages, 50)
    assert len(calls) == 1 and "[tool call Read]" in calls[0][0]
    assert "The parser was split in two." in done[-1].summary and done[-1].reply is not None

    manual = _history(3, result="short")
    done = await _compactor(summarize=summarize).fit(manual, 7, force=True, focus="the lexer")
    assert calls[-1][1] == "the lexer" and done[-1].trigger == "manual"

    async def broken(transcript: str, focus: str) -> SummaryReply:
        raise RuntimeError("overloaded")

    messages = _history(12, result="q" * 4000)
    done = await Compactor(ContextPolicy(window=12_000, auto_summary=True), summarize=broken).fit(messages, 50)
    assert done[-1].fallback is not None and "overloaded" in done[-1].fallback
    assert "please refactor the parser" in done[-1].summary  # the digest still holds the requests


def test_the_window_comes_from_config_then_the_table_then_the_default() -> None:
    def model(name: str, provider: str = "anthropic", window: int = 0) -> ResolvedModel:
        return ResolvedModel("main", provider, name, None, "k", 1024, context_window=window)  # type: ignore[arg-type]

    assert window_of(model("claude-haiku-4-5"), 1000) == 200_000
    assert window_of(model("claude-haiku-4-5", window=50_000), 1000) == 50_000
    assert window_of(model("llama3", provider="openai-compatible"), 32_000) == 32_000


# --- in the loop ------------------------------------------------------------------------------------


@pytest.mark.parametrize("api", ["anthropic", "openai"])
async def test_a_long_session_compacts_before_the_request_that_would_overflow(
    api: str, llm: ScriptedLLM, tmp_path: Path
) -> None:
    turns = 60
    for n in range(turns):  # one large file (pruned), then many small ones (summarised)
        (tmp_path / f"part{n}.txt").write_text(f"<<part {n}>>\n" + "data line\n" * (1500 if n == 0 else 100))

    def reading(n: int) -> Reply:
        return Reply(text=f"reading {n}", tool_calls=[ToolCall(name="Read", input={"file_path": f"part{n}.txt"})])

    llm.add_steps(  # matched on the part just read, not on the turn count (compaction drops old turns)
        Step(match=Match(api=api, turn=0), reply=reading(0)),
        *[Step(match=Match(api=api, last_user_contains=f"<<part {n - 1}>>"), reply=reading(n))
          for n in range(1, turns)],
        Step(match=Match(api=api, last_user_contains=f"<<part {turns - 1}>>"), reply=Reply(text="All read.")),
    )
    model = ResolvedModel("main", api, "fake", None, "k", 1024, context_window=30_000)  # type: ignore[arg-type]
    session = Session(system_prompt="You read files.", model=model, workspace=tmp_path)
    ctx = ToolContext(workspace=tmp_path, agent="main", session_id=session.id,
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    compactor = Compactor(ContextPolicy(window=30_000, threshold=0.8, prune_chars=2000),
                          facts=lambda: Facts(tasks=["- tsk_zz9 [explore] completed: x — y"]))
    events: list[Event] = []
    loop = AgentLoop(session, llm.provider(api), build_tools(), ctx, events.append, max_turns=80, compactor=compactor)
    outcome = await loop.run("read every part")
    assert outcome.status == "completed" and outcome.result == "All read."
    compactions = [e for e in events if isinstance(e, CompactionEvent)]
    assert compactions, "the session never compacted"
    sizes = [len(r.text()) for r in llm.requests]
    assert max(sizes) < 30_000 * 4  # no request came near the window
    summary_at = next(i for i, r in enumerate(llm.requests) if "<compacted_context>" in r.text())
    assert sizes[summary_at] < sizes[summary_at - 1] or any(c.mode == "prune" for c in compactions)
    assert all("tsk_zz9" in r.text() for r in llm.requests[summary_at:])
    usage = [e for e in events if isinstance(e, UsageEvent)]
    assert usage[-1].context_window == 30_000 and 0 < usage[-1].context_tokens < 30_000
    assert not [e for e in events if isinstance(e, NoticeEvent)]
    assert session.next_seq > len(session.messages)  # the stored numbering went on past the shorter context
    llm.assert_done()


async def test_compact_on_demand_accounts_the_summary_and_refuses_during_a_turn(
    llm: ScriptedLLM, tmp_path: Path
) -> None:
    llm.add_steps(Step(reply=Reply(text="first answer")), Step(reply=Reply(text="second answer")))

    async def summarize(transcript: str, focus: str) -> SummaryReply:
        return SummaryReply(f"summary of: {transcript[:40]}", Usage(300, 30), "anthropic", "claude-haiku-4-5")

    model = ResolvedModel("main", "anthropic", "fake", None, "k", 1024)
    session = Session(system_prompt="s", model=model, workspace=tmp_path)
    ctx = ToolContext(workspace=tmp_path, agent="main", session_id=session.id,
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks())
    events: list[Event] = []
    compactor = Compactor(ContextPolicy(window=200_000), summarize=summarize)
    loop = AgentLoop(session, llm.provider(), [], ctx, events.append, compactor=compactor,
                     price=lambda p, m, u: 0.001)
    await loop.run("one")
    await loop.run("two")
    done = await loop.compact("the answers")
    assert [c.mode for c in done] == ["summary"]
    assert session.messages[0].text().startswith("<compacted_context>") and len(session.messages) == 2
    assert session.ledger.own.requests == 3 and session.ledger.own.usage.input_tokens >= 300
    assert any(isinstance(e, UsageEvent) and e.model == "claude-haiku-4-5" for e in events)
    event = next(e for e in events if isinstance(e, CompactionEvent))
    assert event.trigger == "manual" and event.kept_from_seq == 3


async def test_a_context_of_too_many_messages_is_compacted_even_when_small() -> None:
    messages = _history(80, result="tiny")  # 161 messages, a few thousand tokens
    compactor = Compactor(ContextPolicy(window=200_000, max_messages=120))
    assert compactor.over(messages)
    done = await compactor.fit(messages, 161)
    assert [c.mode for c in done] == ["summary"]
    assert len(messages) <= 1 + 60 and messages[1].role == "assistant"
    assert not compactor.over(messages)


async def test_the_window_is_looked_up_only_once_something_could_be_dropped() -> None:
    looked_up: list[int] = []

    def window() -> int:
        looked_up.append(1)
        return 1_000

    compactor = Compactor(ContextPolicy(window=0, threshold=0.8), window=window)
    first = [Message.user(BIG)]  # far past the threshold, but a first request has nothing to drop
    assert await compactor.fit(first, 1) == []
    assert looked_up == []
    history = _history(3)
    done = await compactor.fit(history, len(history))
    assert looked_up == [1] and compactor.window == 1_000
    assert done and done[0].window == 1_000
    assert compactor.window == 1_000 and looked_up == [1]  # once
