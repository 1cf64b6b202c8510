"""The real TUI in a real terminal (tmux, `tests/terminal.py`): an approval shows the diff of the edit it asks about.

Kept apart from `test_tui_terminal.py` so each real-terminal scenario reads on its own.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN
from tests.terminal import AgentcliTerminal, requires_tmux, terminal_env, terminal_timeout

pytestmark = [pytest.mark.terminal, requires_tmux, terminal_timeout]

SGR = re.compile(r"\x1b\[([0-9;]*)m")


def _backgrounds(line: str) -> set[str]:
    """The background colours an ANSI-coloured line sets (`48;…` SGR parameters)."""
    found: set[str] = set()
    for params in SGR.findall(line):
        parts = params.split(";")
        for i, part in enumerate(parts):
            if part == "48":
                found.add(";".join(parts[i:i + 5] if parts[i + 1:i + 2] == ["2"] else parts[i:i + 3]))
    return found


def test_an_approval_shows_the_diff_in_a_real_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "settings.py").write_text("".join(f"option_{n} = {n}\n" for n in range(1, 31)))
    edit = ToolCall(name="Edit", input={"file_path": "settings.py", "old_string": "option_15 = 15\n",
                                        "new_string": "option_15 = 'fifteen'\n"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Editing.", tool_calls=[edit])),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="Applied 1 edit"),
             reply=Reply(text="EDIT DONE.")),
    ])
    with (FakeLLMServer(script) as server,
          AgentcliTerminal(["--cwd", str(ws)], terminal_env(tmp_path, server), ws) as term):
        term.wait_started()
        term.type("change option 15")
        term.press("Enter")
        term.wait_loaded()  # the turn waits for the SDK's import, however long it takes here
        screen = term.wait_for("wants to run: Edit settings.py")
        lines = screen.splitlines()
        assert any("settings.py  +1 \u22121" in line for line in lines), screen
        assert any("@@ -12,7 +12,7 @@" in line for line in lines), screen
        assert any(re.search(r"15\s+- option_15 = 15\b", line) for line in lines), screen
        assert any(re.search(r"\b15 \+ option_15 = 'fifteen'", line) for line in lines), screen
        coloured = subprocess.run([*term.tmux, "capture-pane", "-e", "-p", "-t", term.name],
                                  capture_output=True, text=True, check=True).stdout.splitlines()
        removed = next(line for line in coloured if "option_15" in SGR.sub("", line) and "- " in SGR.sub("", line))
        added = next(line for line in coloured if "'fifteen'" in SGR.sub("", line))
        context = next(line for line in coloured if "option_14 = 14" in SGR.sub("", line))
        assert _backgrounds(removed) - _backgrounds(context), removed  # a colour of its own (red)
        assert _backgrounds(added) - _backgrounds(context), added  # and green
        assert _backgrounds(removed) != _backgrounds(added)
        term.press("y")
        screen = term.wait_for("EDIT DONE.")
        assert "Edit  settings.py  +1 \u22121" in screen, screen
        assert "option_15 = 'fifteen'" in (ws / "settings.py").read_text()
        term.press("C-q")
        assert term.wait_until_exited() == 0
    server.assert_done()
