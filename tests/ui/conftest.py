"""TUI test set-up: a real Conversation against the fake LLM server, driven through Textual's Pilot."""

from __future__ import annotations

import contextlib
import html
import inspect
import os
import re
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widget import Widget

from agentcli.config.load import load_config
from agentcli.conversation import Conversation
from agentcli.store.db import Store
from agentcli.testing.fake_llm import FakeLLMServer, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import BlockItem, Entry
from agentcli.ui.widgets.approval import Approvals
from agentcli.ui.widgets.subagent_block import SubagentBlock

MAIN = "You are agentcli"  # the main agent's system prompt starts with this
SIZE = (120, 50)

MakeApp = Callable[..., AgentApp]


def task(description: str, prompt: str, subagent_type: str = "explore", **extra: Any) -> ToolCall:
    """A Task tool call in a scripted reply."""
    return ToolCall(name="Task", input={"description": description, "prompt": prompt,
                                        "subagent_type": subagent_type, **extra})


def sub(description: str) -> str:
    """What a subagent's system prompt contains (for `Match(system_contains=...)`)."""
    return f"# Task\n{description}"


async def wait_for(pilot: Pilot[Any], predicate: Callable[[], object], timeout: float = 20.0,
                   what: str = "") -> None:
    """Wait until `predicate()` holds, letting the app run (until it is idle) between checks; fail with a clear
    message after `timeout` seconds. This waits for the state itself, never for a guessed delay."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            name = what or getattr(predicate, "__name__", "condition")
            if name == "<lambda>":
                with contextlib.suppress(OSError):
                    name = inspect.getsource(predicate).strip()
            raise AssertionError(f"timed out after {timeout:g} s waiting for: {name}")
        await pilot.pause()


async def submit(pilot: Pilot[Any], text: str) -> None:
    """Type `text` into the prompt and press Enter."""
    app = pilot.app
    assert isinstance(app, AgentApp)
    app.prompt.load_text(text)
    await pilot.press("enter")
    await pilot.pause()


async def idle(pilot: Pilot[Any], timeout: float = 30.0) -> None:
    """Wait until no turn runs and every batched update is on screen (flushed by the frame timer, then mounted)."""
    app = pilot.app
    assert isinstance(app, AgentApp)
    await wait_for(pilot, lambda: not app.turn_running, timeout, "the turn to end")
    await wait_for(pilot, lambda: app.router.settled, timeout, "the router's batched updates to be flushed")
    await pilot.pause()  # the flushed widgets mount


def shown(app: AgentApp, entry: Entry) -> Widget | None:
    """The widget that shows `entry` now (None: not shown, e.g. inside a collapsed block)."""
    return app.router.views.get(entry)


def block_view(app: AgentApp, block: BlockItem) -> SubagentBlock:
    """The widget of a block that is shown."""
    view = app.router.views.block_view(block)
    assert view is not None, f"block {block.description!r} is not shown"
    return view


def screen_text(app: AgentApp) -> str:
    """What the screen shows, as plain text (from `export_screenshot()`; style runs concatenated)."""
    svg = app.export_screenshot()
    body = svg[svg.find("<g class=") :] if "<g class=" in svg else svg
    return html.unescape(re.sub(r"<[^>]+>", "", body)).replace("\xa0", " ")


def notes(app: AgentApp) -> list[str]:
    """The text of every note (prompts, command output, errors) in the main view, in order."""
    from agentcli.ui.model import NoteItem

    return [entry.text for entry in app.router.main.items if isinstance(entry, NoteItem)]


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    """A small project to work on."""
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "config.py").write_text("def load_config():\n    return {'debug': True}\n")
    (ws / "src" / "auth.py").write_text("def login(user):\n    return user == 'admin'\n")
    (ws / "README.md").write_text("demo project\n")
    return ws


@pytest.fixture
async def make_app(monkeypatch: pytest.MonkeyPatch, workspace: Path) -> AsyncIterator[MakeApp]:
    """Build an AgentApp over a real Conversation that talks to `server`."""
    conversations: list[Conversation] = []

    def make(server: FakeLLMServer, *, mode: str = "ask", title: str | None = None, store: Store | None = None,
             **env: str) -> AgentApp:
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-ui-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", server.base_url)
        environ = {**os.environ, "AGENTCLI_LLM__MAX_RETRIES": "0", "AGENTCLI_PERMISSIONS__MODE": mode, **env}
        settings = load_config(workspace=workspace, env=environ).settings
        conversation = Conversation(settings, workspace, approver=Approvals(), store=store)  # closes the store
        conversations.append(conversation)
        return AgentApp(conversation, title=title)

    yield make
    for conversation in conversations:
        await conversation.aclose()
