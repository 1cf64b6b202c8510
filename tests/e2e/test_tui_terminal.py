"""The real `agentcli` TUI in a real terminal (tmux) against the fake server: prompt, subagent blocks, answer, quit."""

from __future__ import annotations

from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN
from tests.terminal import AgentcliTerminal, requires_tmux, terminal_env

pytestmark = requires_tmux


def _task(description: str, tool: ToolCall) -> list[Step]:
    mark = f"# Task\n{description}"
    return [
        Step(match=Match(system_contains=mark, turn=0), reply=Reply(tool_calls=[tool]), latency_ms=150),
        Step(match=Match(system_contains=mark, turn=1), reply=Reply(text=f"{description}: done"), latency_ms=150),
    ]


def test_tui_in_a_real_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('hello')\n")
    calls = [ToolCall(name="Task", input={"description": d, "prompt": f"please {d.lower()}",
                                          "subagent_type": "explore"})
             for d in ("List the files", "Read the app")]
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Delegating to two explorers.",
                                                                    tool_calls=calls)),
        *_task("List the files", ToolCall(name="Glob", input={"pattern": "**/*.py"})),
        *_task("Read the app", ToolCall(name="Read", input={"file_path": "app.py"})),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="FINAL ANSWER: one file, app.py.")),
    ])
    with (FakeLLMServer(script) as server,
          AgentcliTerminal(["--cwd", str(ws)], terminal_env(tmp_path, server), ws) as term):
        term.wait_for("agentcli")
        term.type("look around")
        term.press("Enter")
        screen = term.wait_for("FINAL ANSWER: one file, app.py.")
        screen = term.wait_for("Task completed by explore")
        assert screen.count("Task completed by explore") == 2, screen
        assert "look around" in screen
        term.press("C-q")
        assert term.wait_until_exited() == 0
    server.assert_done()
