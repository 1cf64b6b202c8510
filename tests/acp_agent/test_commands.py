"""Custom slash commands and skills over ACP: offered in `available_commands_update` after the built-in ones, and a
prompt naming one is sent as its expansion (issue 28, item 2)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from acp.client.connection import ClientSideConnection
from acp.schema import AvailableCommandsUpdate

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.acp_agent.test_acp import EditorClient, _prompt, run_acp, workspace
from tests.e2e.helpers import MAIN

pytestmark = pytest.mark.e2e  # agentcli end to end (the fast loop, `-m "not e2e and not terminal"`, leaves it out)

__all__ = ["run_acp", "workspace"]  # the fixtures, shared with test_acp


def test_a_command_file_is_offered_and_sent_as_its_expansion(run_acp: Callable[..., Any], workspace: Path) -> None:
    folder = workspace / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text("---\ndescription: Review a file\nargument-hint: [file]\n---\n"
                                      "Review @$1 for bugs.\n")
    (folder / "cost.md").write_text("not the built-in\n")
    script = Script(steps=[Step(match=Match(system_contains=MAIN, last_user_contains="Review @notes.txt for bugs."),
                                reply=Reply(text="Nothing wrong."))])

    async def body(conn: ClientSideConnection, client: EditorClient, server: FakeLLMServer) -> Any:
        session = await conn.new_session(cwd=str(workspace), mcp_servers=[])
        stop = await _prompt(conn, session.session_id, "/review notes.txt")
        return stop, server.requests[0].body["messages"][0]["content"]

    client = EditorClient()
    stop, content = run_acp(script, body, client)
    assert stop == "end_turn" and client.text() == "Nothing wrong."
    offered = {c.name: c for c in client.of(AvailableCommandsUpdate)[0].available_commands}
    assert offered["review"].description == "Review a file [file] (project)"
    assert offered["review"].input is not None and offered["review"].input.root.hint == "[file]"
    assert offered["cost"].description.startswith("tokens and cost")  # the built-in keeps its name
    texts = [block["text"] for block in content if block.get("type") == "text"]
    assert texts[0] == "Review @notes.txt for bugs." and "second line" in texts[1]
