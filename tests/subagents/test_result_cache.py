"""Reused results in-process: the real runner, loops, store and result cache against a scripted model.

A repeated read-only task is answered from the first one's result without a request, unless something it
looked at changed or may have (a write under it, a command, a change during the run), or the call, its
type or the configuration rule it out.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentcli.events import SubagentBlockFinishedEvent, ToolCallFinishedEvent, unwrap
from agentcli.llm.base import ToolResultBlock
from agentcli.subagents.result_cache.fingerprints import window_ns
from agentcli.testing.scripted import Fault, Match, Reply, ScriptedLLM, Step, ToolCall
from tests.subagents.harness import Harness, Make, main_step, requests_for, sub, task_call, write_agent

TASK = ("Find the login code", "Where is login defined?")


def settle(path: Path) -> None:
    """Wait until `path`'s last change is older than the filesystem's timestamp granularity: a run that reads
    it now can be proven to have seen it as it is (the cache refuses files changed just before a read)."""
    time.sleep(window_ns(os.stat(path)) / 1e9 + 0.02)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "src").mkdir(parents=True)
    (workspace / "src" / "auth.py").write_text("def login():\n    return True\n")
    (workspace / "docs").mkdir()
    (workspace / "docs" / "guide.md").write_text("# Guide\n")
    settle(workspace / "docs" / "guide.md")
    return workspace


def explore_run(times: int = 1, tool: ToolCall | None = None, description: str = TASK[0]) -> list[Step]:
    """The subagent's two requests (a look, then its answer), answering `times` runs."""
    look = tool or ToolCall(name="Read", input={"file_path": "src/auth.py"})
    return [
        Step(match=Match(system_contains=sub(description), turn=0), reply=Reply(tool_calls=[look]), times=times),
        Step(match=Match(system_contains=sub(description), turn=1), reply=Reply(text="login is in src/auth.py:1"),
             times=times),
    ]


def task(**extra: object) -> ToolCall:
    return task_call(*TASK, **extra)


def results_of(h: Harness) -> list[ToolResultBlock]:
    return [b for m in h.session.messages for b in m.content if isinstance(b, ToolResultBlock)]


def subagent_requests(server: ScriptedLLM) -> int:
    return len(requests_for(server, sub(TASK[0])))


async def test_a_repeated_explore_task_is_answered_from_the_first_result_without_a_request(
    server: ScriptedLLM, make: Make
) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task()])),
        *explore_run(),
        main_step(1, Reply(tool_calls=[task()])),
        main_step(2, Reply(text="done"), last_user_contains="cached: the result of the identical task"),
    )
    h = make()
    await h.run()
    server.assert_done()
    assert subagent_requests(server) == 2  # the first run's only
    first, second = h.runner.records()
    assert (first.status, first.cached_from) == ("completed", None)
    assert (second.status, second.cached_from) == ("completed", first.task_id)
    assert second.result == first.result == "login is in src/auth.py:1"
    assert (second.input_tokens, second.output_tokens, second.tool_calls, second.cost_usd) == (0, 0, 0, 0.0)
    assert second.child_session_id is None
    reused = results_of(h)[1]
    assert not reused.is_error and first.task_id in reused.content and "login is in src/auth.py:1" in reused.content
    finished = [e for e in h.events if isinstance(e, SubagentBlockFinishedEvent)]
    assert [(e.task_id, e.cached_from) for e in finished] == [(first.task_id, None), (second.task_id, first.task_id)]
    assert finished[1].short_result == f"Task completed by explore (cached from {first.task_id})"
    stored = h.store.get_task(second.task_id)
    assert stored is not None and stored.cached_from == first.task_id


async def test_resume_of_a_reused_task_continues_the_original(server: ScriptedLLM, make: Make) -> None:
    h = make()
    server.add_steps(main_step(0, Reply(tool_calls=[task()])), *explore_run(), main_step(1, Reply(tool_calls=[task()])),
                     main_step(2, Reply(text="done")))
    await h.run()
    first, second = h.runner.records()
    server.add_steps(
        main_step(3, Reply(tool_calls=[task_call("Go on please", "and the logout?", resume=second.task_id)])),
        Step(match=Match(system_contains=sub("Go on please"), last_user_contains="and the logout?",
                         any_message_contains="login is in src/auth.py:1"), reply=Reply(text="no logout")),
        main_step(4, Reply(text="ok")),
    )
    await h.run("more")
    server.assert_done()
    assert h.runner.records()[2].child_session_id == first.child_session_id


@pytest.mark.parametrize(
    ("between", "reused"),
    [
        (ToolCall(name="Write", input={"file_path": "docs/new.md", "content": "x"}), True),  # not what it read
        (ToolCall(name="Write", input={"file_path": "src/auth.py", "content": "def login(): ..."}), False),
        (ToolCall(name="Bash", input={"command": "true"}), False),  # a command may write anywhere
    ],
)
async def test_a_write_of_the_session_under_what_it_read_rules_a_hit_out(
    server: ScriptedLLM, make: Make, between: ToolCall, reused: bool
) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task()])),
        *explore_run(1 if reused else 2),
        main_step(1, Reply(tool_calls=[between])),
        main_step(2, Reply(tool_calls=[task()])),
        main_step(3, Reply(text="done")),
    )
    h = make()
    await h.run()
    server.assert_done()
    assert subagent_requests(server) == (2 if reused else 4)
    assert (h.runner.records()[1].cached_from is not None) is reused


async def test_a_search_of_the_workspace_is_ruled_out_by_a_write_anywhere_in_it(
    server: ScriptedLLM, make: Make
) -> None:
    grep = ToolCall(name="Grep", input={"pattern": "def login"})  # no path: the whole workspace
    server.add_steps(
        main_step(0, Reply(tool_calls=[task()])),
        *explore_run(2, grep),
        main_step(1, Reply(tool_calls=[ToolCall(name="Write", input={"file_path": "docs/new.md", "content": "x"})])),
        main_step(2, Reply(tool_calls=[task()])),
        main_step(3, Reply(text="done")),
    )
    h = make()
    await h.run()
    server.assert_done()
    assert subagent_requests(server) == 4


async def test_a_file_changed_outside_the_session_between_turns_runs_the_task_again(
    server: ScriptedLLM, ws: Path, make: Make
) -> None:
    h = make()
    server.add_steps(main_step(0, Reply(tool_calls=[task()])), *explore_run(), main_step(1, Reply(text="one")))
    await h.run("first")
    server.add_steps(main_step(2, Reply(tool_calls=[task()])), main_step(3, Reply(text="two")))
    await h.run("second")  # unchanged: reused
    assert subagent_requests(server) == 2
    (ws / "src" / "auth.py").write_text("def login():\n    return False\n")  # same size, another text
    settle(ws / "src" / "auth.py")
    server.add_steps(main_step(4, Reply(tool_calls=[task()])), *explore_run(), main_step(5, Reply(text="three")))
    await h.run("third")
    server.assert_done()
    assert subagent_requests(server) == 4
    assert [r.cached_from is not None for r in h.runner.records()] == [False, True, False]


async def test_a_file_changed_while_the_task_ran_is_never_reused(server: ScriptedLLM, ws: Path, make: Make) -> None:
    h = make()

    def change_after_the_read(event: object) -> None:
        _, inner = unwrap(event)  # type: ignore[arg-type]
        if isinstance(inner, ToolCallFinishedEvent) and inner.name == "Read" and inner.agent != "main":
            (ws / "src" / "auth.py").write_text("def login():\n    return None\n")

    h.bus.subscribe(change_after_the_read)
    server.add_steps(
        main_step(0, Reply(tool_calls=[task()])),
        *explore_run(2),
        main_step(1, Reply(tool_calls=[task()])),
        main_step(2, Reply(text="done")),
    )
    await h.run()
    server.assert_done()
    assert subagent_requests(server) == 4


@pytest.mark.parametrize("case", ["no_cache", "general", "cache_results off", "web fetch"])
async def test_what_never_reuses_a_result(server: ScriptedLLM, ws: Path, make: Make, case: str) -> None:
    extra: dict[str, object] = {"no_cache": True} if case == "no_cache" else {}
    kind = {"general": "general", "web fetch": "fetcher"}.get(case, "explore")
    look = ToolCall(name="WebFetch", input={"url": "http://127.0.0.1:9/x"}) if case == "web fetch" else None
    if case == "web fetch":  # a read-only type that may fetch pages
        write_agent(ws, "fetcher", "Reads files and pages.", tools="Read, WebFetch")
    server.add_steps(
        main_step(0, Reply(tool_calls=[task_call(*TASK, kind)])),
        *explore_run(2, look),
        main_step(1, Reply(tool_calls=[task_call(*TASK, kind, **extra)])),
        main_step(2, Reply(text="done")),
    )
    h = make({"task_tool.cache_results": False} if case == "cache_results off" else None)
    await h.run()
    server.assert_done()
    assert subagent_requests(server) == 4
    assert [r.cached_from for r in h.runner.records()] == [None, None]


async def test_a_task_whose_first_run_failed_is_not_reused(server: ScriptedLLM, make: Make) -> None:
    server.add_steps(
        main_step(0, Reply(tool_calls=[task()])),
        Step(match=Match(system_contains=sub(TASK[0]), turn=0), fault=Fault(kind="http", status=400)),  # failed
        *explore_run(),
        main_step(1, Reply(tool_calls=[task()])),
        main_step(2, Reply(text="done")),
    )
    h = make()
    await h.run()
    server.assert_done()
    assert [(r.status, r.cached_from) for r in h.runner.records()] == [("failed", None), ("completed", None)]


async def test_a_task_that_was_sent_a_message_while_it_ran_is_never_reused(server: ScriptedLLM, make: Make) -> None:
    steps = explore_run(2)
    steps[0] = steps[0].model_copy(update={"latency_ms": 300})  # the message is sent while it waits for its model
    server.add_steps(
        main_step(0, Reply(tool_calls=[task(run_in_background=True)])),
        *steps,
        main_step(1, Reply(tool_calls=[ToolCall(name="SendMessage", input={"to": "explore#1",
                                                                             "message": "look at docs too"})])),
        main_step(2, Reply(tool_calls=[ToolCall(name="TaskOutput", input={"task_id": "explore#1",
                                                                            "wait_seconds": 30})])),
        main_step(3, Reply(tool_calls=[task()])),
        main_step(4, Reply(text="done")),
    )
    h = make()
    await h.run()
    server.assert_done()
    assert subagent_requests(server) == 4
    assert [(r.status, r.cached_from) for r in h.runner.records()] == [("completed", None), ("completed", None)]
