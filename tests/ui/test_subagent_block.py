"""SubagentBlocks against the real engine: parallel blocks, collapse/expand, cancelling one, nesting."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot

from agentcli.figures import compact_tokens
from agentcli.frontend.common import stored_ledger
from agentcli.store.db import Store
from agentcli.testing.fake_llm import FakeLLMServer, Fault, Match, Reply, Script, Step, ToolCall, Usage
from agentcli.ui.app import AgentApp
from agentcli.ui.model import BlockItem, TextItem, ToolItem
from agentcli.ui.widgets.subagent_block import SubagentBlock
from agentcli.ui.widgets.tool_call import ToolCallView
from tests.ui.conftest import (
    MAIN,
    SIZE,
    MakeApp,
    block_view,
    idle,
    screen_text,
    shown,
    sub,
    submit,
    task,
    wait_for,
)

TOPICS = ("Inspect config module", "Inspect auth module", "Inspect readme file")


def _blocks(app: AgentApp) -> dict[str, BlockItem]:
    return {block.description: block for block in app.router.blocks.values()}


def _parallel_script(latencies: tuple[int, ...]) -> Script:
    files = ("src/config.py", "src/auth.py", "README.md")
    steps = [Step(match=Match(system_contains=MAIN, turn=0),
                  reply=Reply(text="Delegating.", tool_calls=[task(t, f"Report on: {t}") for t in TOPICS]))]
    for topic, path, latency in zip(TOPICS, files, latencies, strict=True):
        steps += [
            Step(match=Match(system_contains=sub(topic), turn=0),
                 reply=Reply(text=f"Reading {path}.", tool_calls=[ToolCall(name="Read", input={"file_path": path})])),
            Step(match=Match(system_contains=sub(topic), turn=1),
                 reply=Reply(text=f"report: {topic}", usage=Usage(cache_read_input_tokens=300,
                                                                  cache_creation_input_tokens=50)),
                 latency_ms=latency),
        ]
    steps.append(Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="report: Inspect readme file"),
                      reply=Reply(text="All three reported.", usage=Usage(cache_read_input_tokens=2000))))
    return Script(steps=steps)


async def test_parallel_tasks_get_independent_blocks_that_collapse_to_their_results(
    make_app: MakeApp, tmp_path: Path
) -> None:
    with FakeLLMServer(_parallel_script((100, 700, 1400))) as server:
        app = make_app(server, store=Store.open(tmp_path / "agentcli.db"))
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "inspect everything")
            await wait_for(pilot, lambda: len(app.query(SubagentBlock)) == 3)
            views = {v.item.description: v for v in app.query(SubagentBlock)}
            assert set(views) == set(TOPICS)
            # Each block took the place of its Task call; none of the Task calls is shown as a plain tool line.
            assert not [v for v in app.query(ToolCallView) if v.item.name == "Task"]
            # They update independently: the fast one is done while the slow one still runs.
            blocks = _blocks(app)
            fast, slow = blocks["Inspect config module"], blocks["Inspect readme file"]
            await wait_for(pilot, lambda: fast.status == "completed")
            assert slow.status == "running"
            await wait_for(pilot, lambda: views["Inspect config module"].has_class("-collapsed"))
            assert fast.collapsed and views["Inspect config module"].has_class("-collapsed")
            # Finished, a block's one line is its description and the first line of its result.
            assert "Inspect config module  — report: Inspect config module" in str(
                views["Inspect config module"].header.render())
            # Running, a block is compact: its header and latest activity; expanded, its own text and tool calls.
            slow_view = views["Inspect readme file"]
            assert slow_view.collapsed and 'Read README.md' in str(slow_view.header.render())
            slow_view.collapsed = False
            await pilot.pause()
            slow_tools = [v for v in slow_view.query(ToolCallView) if v.item.name == "Read"]
            assert slow_tools and slow_tools[0].item.summary == "README.md"
            await idle(pilot)
            for description, view in views.items():
                block = view.item
                assert (block.status, block.short_result) == ("completed", "Task completed by explore")
                assert block.collapsed and block.tool_calls == 1 and block.input_tokens > 0
                assert list(view.children) == [view.header]  # collapsed: only the header is mounted
                header = str(view.header.render())
                assert header.startswith("▶ ✓ explore#") and f"{description}  — report: {description}" in header
                assert "done" not in header and "1 tool" in header and "light" in header
            text = screen_text(app)
            assert all(f"— report: {t}" in text for t in TOPICS) and "All three reported." in text
            assert app.router.counts() == (0, 0)
            # /cost includes the subagents' usage; it matches the session's rolled-up ledger.
            ledger = app.conversation.session.ledger
            assert ledger.delegated.usage.input_tokens > 0 and ledger.total.requests == 8
            assert ledger.total == ledger.own + ledger.delegated
            total, own, delegated = ledger.total, ledger.own, ledger.delegated
            assert (own.usage.cache_read_tokens, delegated.usage.cache_read_tokens) == (2000, 900)
            assert delegated.usage.cache_write_tokens == 150 and total.cost_usd is not None
            shown = app.status_bar.shown
            assert shown is not None and shown.input_tokens == ledger.total.usage.input_tokens
            assert shown.output_tokens == ledger.total.usage.output_tokens
            assert shown.cost_usd == total.cost_usd  # the bar is the session total, subagents included
            await submit(pilot, "/cost")
            cost_line = getattr(app.router.main.items[-1], "text", "")
            assert cost_line.startswith(f"Tokens: {ledger.total.usage.input_tokens:,} in / ")
            assert "in 8 requests" in cost_line
            first, main_line, sub_line = cost_line.splitlines()
            assert f"{total.usage.output_tokens:,} out · cache 2,900 read / 150 written" in first
            assert f"Cost: ${total.cost_usd:.4f}" in first
            for line, label, part in ((main_line, "main agent: ", own), (sub_line, "subagents:  ", delegated)):
                assert part.cost_usd is not None
                assert line.startswith(f"  {label}{part.usage.input_tokens:,} in / {part.usage.output_tokens:,} out"
                                       f" · cache {part.usage.cache_read_tokens:,} read / "
                                       f"{part.usage.cache_write_tokens:,} written · ${part.cost_usd:.4f} · "
                                       f"{part.requests} requests"), line
            # The stored session is the same ledger: sessions show/list read this.
            store = app.conversation.store
            assert store is not None
            await store.flush()
            spent = store.session_spend(app.conversation.session.id)
            assert spent is not None and spent.sessions == 4
            stored = stored_ledger(spent)
            assert (stored.own.usage, stored.delegated.usage) == (own.usage, delegated.usage)
            assert (stored.own.requests, stored.delegated.requests) == (own.requests, delegated.requests) == (2, 6)
            assert stored.total.cost_usd == pytest.approx(total.cost_usd)
            await submit(pilot, "/tasks")
            listing = app.router.main.items[-1]
            assert all(t in getattr(listing, "text", "") for t in TOPICS)
    server.assert_done()


async def test_expanding_a_finished_block_shows_its_tool_calls(make_app: MakeApp) -> None:
    with FakeLLMServer(_parallel_script((0, 0, 0))) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "inspect everything")
            await idle(pilot)
            view = next(v for v in app.query(SubagentBlock) if v.item.description == "Inspect auth module")
            assert not view.query(ToolCallView)
            view.header.focus()
            await pilot.press("enter")
            await pilot.pause()
            assert not view.item.collapsed
            (tool,) = view.query(ToolCallView)
            assert (tool.item.name, tool.item.summary, tool.item.status) == ("Read", "src/auth.py", "ok")
            texts = [e.text for e in view.item.items if isinstance(e, TextItem)]
            assert texts == ["Reading src/auth.py.", "report: Inspect auth module"]
            assert "▼" in str(view.header.render())
            tool.focus()
            await pilot.press("enter")  # a tool call's output unfolds
            assert tool.item.expanded and "def login" in str(tool.render())
            await pilot.click(view.header)  # a click on the header collapses it again
            await pilot.pause()
            assert view.item.collapsed and list(view.children) == [view.header]
            assert app.router.views.get(tool.item) is None
    server.assert_done()


async def test_cancelling_one_block_leaves_its_siblings_running(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Hanging search job", "a"), task("Quick search job", "b")])),
        Step(match=Match(system_contains=sub("Hanging search job")), reply=Reply(text="never"), latency_ms=20_000),
        # Held until the test has seen its sibling cancelled (a latency would be a guess at how long that takes).
        Step(match=Match(system_contains=sub("Quick search job")), reply=Reply(text="quick result"), hold="quick"),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="quick result"),
             reply=Reply(text="went on without it")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "search twice")
            await wait_for(pilot, lambda: len(_blocks(app)) == 2 and all(
                b.status == "running" and shown(app, b) is not None for b in _blocks(app).values()))
            hanging, quick = _blocks(app)["Hanging search job"], _blocks(app)["Quick search job"]
            block_view(app, hanging).header.focus()
            await pilot.pause()
            assert "cancel_subagent" in {b.binding.action for b in app.active_bindings.values()}
            await pilot.press("ctrl+x")
            await wait_for(pilot, lambda: hanging.status == "cancelled")
            assert quick.status == "running"  # the sibling goes on
            assert app.turn_running  # and so does the parent
            server.release("quick")
            await idle(pilot)
            assert quick.status == "completed"
            assert hanging.short_result == "Task failed: cancelled"
            header = str(block_view(app, hanging).header.render())
            assert header.startswith("▶ ⊘ explore#") and "Hanging search job  — " in header
            # Finished, it no longer offers "cancel" (the footer hides the key).
            block_view(app, hanging).header.focus()
            await pilot.pause()
            assert block_view(app, hanging).check_action("cancel_subagent", ()) is False
            assert "Cancel subagent" not in screen_text(app)
            records = {r.description: r.status for r in app.conversation.runner.records()}
            assert records == {"Hanging search job": "cancelled", "Quick search job": "completed"}
            # The parent's next request carries the cancelled task's tool error.
            last = str(server.requests[-1].body)
            assert "cancelled by the person" in last and "went on without it" in screen_text(app)
    server.assert_done()


async def test_nested_subagents_nest_inside_their_parent_block(make_app: MakeApp) -> None:
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[task("Level one work", "go one level down", "general")])),
        Step(match=Match(system_contains=sub("Level one work"), turn=0),
             reply=Reply(text="Delegating further.", tool_calls=[task("Level two work", "look around")])),
        Step(match=Match(system_contains=sub("Level two work"), turn=0),
             reply=Reply(tool_calls=[ToolCall(name="LS", input={"path": "."})]), latency_ms=200),
        Step(match=Match(system_contains=sub("Level two work"), turn=1), reply=Reply(text="level two done")),
        Step(match=Match(system_contains=sub("Level one work"), turn=1, last_user_contains="level two done"),
             reply=Reply(text="level one done"), latency_ms=600),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="all done")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=SIZE) as pilot:
            await submit(pilot, "go deep")
            await wait_for(pilot, lambda: _blocks(app) and shown(app, _blocks(app)["Level one work"]))
            block_view(app, _blocks(app)["Level one work"]).collapsed = False  # expanded: nested blocks show
            await wait_for(pilot, lambda: len(_blocks(app)) == 2 and shown(app, _blocks(app)["Level two work"]))
            outer, inner = _blocks(app)["Level one work"], _blocks(app)["Level two work"]
            assert inner.parent is outer and inner.depth == 2 and inner in outer.items
            assert block_view(app, inner).parent is block_view(app, outer)  # nested in the parent's block
            assert outer.agent == "general#1" and inner.agent == "explore#1"
            # The nested block replaced the Task call inside the parent block.
            assert not [e for e in outer.items if isinstance(e, ToolItem) and e.name == "Task"]
            await wait_for(pilot, lambda: inner.status == "completed")
            await wait_for(pilot, lambda: block_view(app, inner).has_class("-collapsed"))
            assert inner.collapsed and outer.status == "running" and not outer.collapsed
            await idle(pilot)
            assert outer.collapsed and shown(app, inner) is None  # folded inside its parent
            block_view(app, outer).header.focus()
            await pilot.press("enter")
            await pilot.pause()
            assert block_view(app, inner).parent is block_view(app, outer) and inner.collapsed
            assert "Level two work  — level two done" in str(block_view(app, inner).header.render())
    server.assert_done()


NARROW = (80, 24)
PROSE = "lorem ipsum dolor sit amet consectetur adipiscing elit " * 60  # one long line: the quoted tail is long


def _block_lines(app: AgentApp, description: str) -> list[str]:
    """The block's lines as the screen shows them: its header line, then its activity line."""
    lines = screen_text(app).splitlines()
    index = next((i for i, line in enumerate(lines) if f"  {description}" in line), None)
    return lines[index : index + 2] if index is not None else []


def _streams_then_hangs(first: Reply | None = None) -> Script:
    """A light explore task that streams PROSE and then hangs mid-reply (optionally after a first request that
    completes with usage); the main agent goes on once it is cancelled."""
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task("Token probe", "write")]))]
    if first is not None:
        steps.append(Step(match=Match(system_contains=sub("Token probe"), turn=0), reply=first))
    steps += [
        Step(match=Match(system_contains=sub("Token probe"), turn=1 if first is not None else 0),
             reply=Reply(text=PROSE, chunk_size=40), chunk_delay_ms=5,
             fault=Fault(kind="stall", after_events=30, seconds=60)),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="went on")),
    ]
    return Script(steps=steps)


async def _cancel(app: AgentApp, pilot: Pilot[None], block: BlockItem) -> None:
    block_view(app, block).action_cancel_subagent()
    await idle(pilot)


async def test_a_streaming_block_shows_its_estimated_tokens_on_its_first_line(make_app: MakeApp) -> None:
    """While a subagent streams, its compact block's header line says how many tokens so far (about 4 characters
    each, marked `~`), on an 80-column terminal too: the quoted tail of what it writes, on the line under it, is
    cut by the ellipsis, never the figures."""
    with FakeLLMServer(_streams_then_hangs()) as server:
        app = make_app(server)
        async with app.run_test(size=NARROW) as pilot:
            await submit(pilot, "probe")
            await wait_for(pilot, lambda: "Token probe" in _blocks(app))
            probe = _blocks(app)["Token probe"]
            await wait_for(pilot, lambda: probe.estimated_tokens > 100)  # it streams: nothing counted yet
            assert (probe.input_tokens, probe.output_tokens) == (0, 0) and probe.status == "running"

            def header_shows_the_estimate() -> bool:  # the spinner's tick re-renders it with the figure of now
                lines = _block_lines(app, "Token probe")
                return bool(lines) and f"· light · 0 tools · ~{compact_tokens(probe.tokens)} tok" in lines[0]

            await wait_for(pilot, header_shows_the_estimate)
            head, activity = _block_lines(app, "Token probe")
            assert "explore#1  Token probe" in head and "⎿ “" in activity  # what it writes, cut to the width
            await _cancel(app, pilot, probe)
    server.assert_done()


async def test_a_running_blocks_tokens_become_the_providers_count_once_its_usage_arrives(
    make_app: MakeApp,
) -> None:
    """A finished request's usage replaces its estimate with the provider's figure; the next request's stream is
    estimated on top of it."""
    first = Reply(text="Reading the readme.", tool_calls=[ToolCall(name="Read", input={"file_path": "README.md"})],
                  usage=Usage(input_tokens=1500, output_tokens=40))
    with FakeLLMServer(_streams_then_hangs(first)) as server:
        app = make_app(server)
        async with app.run_test(size=NARROW) as pilot:
            await submit(pilot, "probe")
            await wait_for(pilot, lambda: "Token probe" in _blocks(app))
            probe = _blocks(app)["Token probe"]
            await wait_for(pilot, lambda: probe.input_tokens == 1500 and probe.estimated_tokens > 100)
            counted = probe.input_tokens + probe.output_tokens
            assert probe.tokens == counted + probe.estimated_tokens  # the first request counted, the second estimated

            def header_shows_both() -> bool:
                lines = _block_lines(app, "Token probe")
                return bool(lines) and f"· light · 1 tool · ~{compact_tokens(probe.tokens)} tok" in lines[0]

            await wait_for(pilot, header_shows_both)
            await _cancel(app, pilot, probe)
            # Finished: the spend is all counted (the cut-off stream too, as the runner records it), no `~`.
            head = block_view(app, probe).header_content().plain
            assert f" {compact_tokens(probe.tokens)} tok" in head and "~" not in head, head
            assert not probe.streamed and probe.input_tokens >= 1500
    server.assert_done()
