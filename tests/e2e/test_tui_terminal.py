"""The real `agentcli` TUI in a real terminal (tmux) against the fake server: prompt, subagent blocks, answer, quit."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN
from tests.terminal import AgentcliTerminal, requires_tmux, terminal_env, terminal_timeout

pytestmark = [pytest.mark.terminal, requires_tmux, terminal_timeout]


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
        term.wait_started()
        term.type("look around")
        term.press("Enter")
        term.wait_loaded()  # the turn waits for the SDK's import, however long it takes here
        screen = term.wait_for("FINAL ANSWER: one file, app.py.")
        screen = term.wait_for("Read the app  — Read the app: done")
        # A finished block's line: its description and the first line of its result.
        assert "List the files  — List the files: done" in screen, screen
        assert "look around" in screen
        term.press("C-q")
        assert term.wait_until_exited() == 0
    server.assert_done()


def _wait_gone(term: AgentcliTerminal, text: str, timeout: float = 30) -> str:
    """Wait until `text` is no longer on screen; the screen then."""
    import time

    deadline = time.monotonic() + timeout
    while text in (screen := term.screen()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{text!r} stayed on screen:\n{screen}")
        time.sleep(0.05)
    return screen


def test_keys_in_a_real_terminal_tab_then_type_page_up_and_ctrl_q_during_a_turn(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    rows = "\n".join(f"- row {n:02d}" for n in range(1, 81))
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="show rows"),
             reply=Reply(text=f"TOP OF ANSWER\n\n{rows}\n")),
        Step(match=Match(system_contains=MAIN, last_user_contains="hello there"), reply=Reply(text="never"),
             latency_ms=30_000),
    ])
    with (FakeLLMServer(script) as server,
          AgentcliTerminal(["--cwd", str(ws)], terminal_env(tmp_path, server), ws) as term):
        term.wait_started()
        term.type("show rows")
        term.press("Enter")
        term.wait_loaded()  # the turn waits for the SDK's import, however long it takes here
        term.wait_for("row 80")
        # Tab takes the focus away from the prompt (as if to complete); what is typed next still lands there.
        term.press("Tab")
        term.type("hello there")
        screen = term.wait_for("hello there")
        prompt_lines = [line for line in screen.splitlines() if "hello there" in line]
        assert len(prompt_lines) == 1 and "│" in prompt_lines[0], screen  # inside the prompt's border
        # PageUp scrolls the conversation while the focus is in the prompt; PageDown comes back.
        term.press("PPage")
        screen = _wait_gone(term, "row 80")
        assert "hello there" in screen and "row " in screen, screen
        term.press("NPage", "NPage", "NPage")
        term.wait_for("row 80")
        # The typed text is a real prompt: Enter sends it. During the turn Ctrl+Q asks once, then quits.
        term.press("Enter")
        term.wait_for("working")
        term.press("C-q")
        term.wait_for("again to quit")
        term.press("C-q")
        assert term.wait_until_exited() == 0
        assert "(agentcli --resume ses" in term.scrollback()


AREAS = [f"Scan area {n:02d}" for n in range(1, 21)]


def test_twenty_parallel_subagents_fit_a_140x45_terminal(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("# TODO: nothing\n")
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text="Delegating.", tool_calls=[
        ToolCall(name="Task", input={"description": a, "prompt": f"look at {a}", "subagent_type": "explore"})
        for a in AREAS]))]
    for n, area in enumerate(AREAS):
        mark = f"# Task\n{area}"
        steps += [
            Step(match=Match(system_contains=mark, turn=0),
                 reply=Reply(tool_calls=[ToolCall(name="Grep", input={"pattern": f"TODO{n}"})])),
            Step(match=Match(system_contains=mark, turn=1), reply=Reply(text=f"Area {n + 1} is clean."),
                 latency_ms=8000),  # all twenty run at once for a while, even on a busy machine
        ]
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="TWENTY REPORTED.")))
    with (FakeLLMServer(Script(steps=steps)) as server,
          AgentcliTerminal(["--cwd", str(ws)], terminal_env(tmp_path, server, AGENTCLI_TASK_TOOL__MAX_CONCURRENT="20"),
                           ws, size=(140, 45)) as term):
        term.wait_started()
        term.type("scan all twenty areas")
        term.press("Enter")
        term.wait_loaded()  # the turn waits for the SDK's import, however long it takes here
        term.wait_for('· Grep "TODO19"')  # the last agent's activity (last on its line): every one has started

        def all_running(screen: str) -> bool:  # all twenty on the one screen, each on a line with its status
            lines = screen.splitlines()
            rows = [[ln for ln in lines if f"  {area}  " in ln] for area in AREAS]
            return "20 subagents running" in screen and all(
                len(row) == 1 and "explore#" in row[0] and "1 tool · " in row[0] and " tok · " in row[0]
                for row in rows)

        deadline = time.monotonic() + 30
        while not all_running(screen := term.screen()):
            assert time.monotonic() < deadline, screen
            time.sleep(0.1)
        screen = term.wait_for("TWENTY REPORTED.")
        for n, area in enumerate(AREAS):
            assert f"{area}  — Area {n + 1} is clean." in screen, screen
        term.press("C-q")
        assert term.wait_until_exited() == 0
    server.assert_done()


def test_rewind_in_a_real_terminal_previews_the_files_then_puts_them_back(tmp_path: Path) -> None:
    """/rewind in a real terminal: the picker, the mode, the preview naming the file, its diff on `d`, then the file
    back as it was and the prompt back in the input."""
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "app.py").write_text("print('hello')\n")
    edit = ToolCall(name="Edit", input={"file_path": "app.py", "old_string": "hello", "new_string": "REWRITTEN"})
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[edit])),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="EDIT MADE.")),
    ])
    with FakeLLMServer(script) as server:
        env = terminal_env(tmp_path, server, AGENTCLI_PERMISSIONS__MODE="accept_edits")
        with AgentcliTerminal(["--cwd", str(ws)], env, ws) as term:
            term.wait_started()
            term.type("change the greeting")
            term.press("Enter")
            term.wait_loaded()
            term.wait_for("EDIT MADE.")
            term.wait_idle()  # the reply's words show a moment before the turn ends; /rewind waits for its end
            assert (ws / "app.py").read_text() == "print('REWRITTEN')\n"
            term.type("/rewind")
            term.press("Enter")
            term.wait_for("Rewind to which prompt?")
            screen = term.wait_for("change the greeting  · 1 file changed")
            term.press("Enter")
            term.wait_for("what goes back?")
            term.press("Enter")  # code and conversation
            screen = term.wait_for("M app.py  put back as it was")
            assert "1 file will change:" in screen, screen
            term.press("d")
            screen = term.wait_for("the whole diff:")
            assert "- print('REWRITTEN')" in screen and "+ print('hello')" in screen, screen
            term.press("Escape")
            term.wait_for("d diff of the highlighted file")
            term.press("Enter")
            screen = term.wait_for("rewound (code and conversation)")
            assert (ws / "app.py").read_text() == "print('hello')\n"
            assert "EDIT MADE." not in screen, screen
            prompt_lines = [line for line in screen.splitlines() if "change the greeting" in line]
            assert len(prompt_lines) == 2 and "│" in prompt_lines[-1], screen  # the note, and the prompt's text
            term.press("C-q")
            assert term.wait_until_exited() == 0
    server.assert_done()
