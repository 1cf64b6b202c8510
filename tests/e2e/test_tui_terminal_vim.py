"""Vim keys and AskUserQuestion in a real terminal (tmux): Esc reaches the prompt as Esc, and Esc with a key typed
faster than the terminal's escape delay (which arrives as Alt+key) is Esc then that key, as in a shell's vi mode;
the mode shows in the status bar, motions and operators edit what is sent; the model's question is answered with
the dialog's keys and the answer reaches the model."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN
from tests.terminal import AgentcliTerminal, requires_tmux, terminal_env, terminal_timeout

pytestmark = [pytest.mark.terminal, requires_tmux, terminal_timeout]

QUESTION = {"question": "Which greeting style?", "header": "Style",
            "options": [{"label": "Formal", "description": "Good day"}, {"label": "Casual", "description": "Hey"}]}


def _status_shows(term: AgentcliTerminal, mode: str, timeout: float = 20) -> None:
    """Wait until the status bar names the vim mode (`-- NORMAL --`)."""
    deadline = time.monotonic() + timeout
    while f"-- {mode} --" not in term.screen():
        if time.monotonic() > deadline:
            raise AssertionError(f"the status bar never showed {mode}:\n{term.screen()}")
        time.sleep(0.05)


def test_vim_edits_the_prompt_and_a_question_is_answered_in_a_real_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    ask = ToolCall(name="AskUserQuestion", input={"questions": [QUESTION]})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="say hello world!"),
             reply=Reply(tool_calls=[ask])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains='(Style): "Casual"'),
             reply=Reply(text="CASUAL IT IS.")),
    ])
    with FakeLLMServer(script) as server:
        env = terminal_env(tmp_path, server, AGENTCLI_UI__VIM_MODE="true")
        with AgentcliTerminal(["--cwd", str(ws)], env, ws) as term:
            term.wait_started()
            _status_shows(term, "INSERT")
            term.type("say hello wrold")
            term.press("Escape")
            _status_shows(term, "NORMAL")
            for key in ("b", "c", "w"):  # change the last word
                term.press(key)
            _status_shows(term, "INSERT")
            term.type("world")
            term.press("Escape", "A")  # typed faster than the escape delay: the terminal sends Alt+A
            _status_shows(term, "INSERT")  # Esc, then A: append at the end of the line
            term.type("!")
            term.press("Enter")
            term.wait_loaded()
            screen = term.wait_for("Which greeting style?")
            assert "Formal" in screen and "Casual" in screen, screen
            term.press("2")  # the second choice
            screen = term.wait_for("CASUAL IT IS.")
            assert "say hello world!" in screen, screen
            term.press("C-q")
            assert term.wait_until_exited() == 0
    server.assert_done()
