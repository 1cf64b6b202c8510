"""Bash allow rules and "allow always" answers cannot be stretched over a command they do not name.

With `allow = ["Bash(echo *)"]` a one-shot run (no --yes) must refuse every command that runs something
besides echo, however it is glued, commented or hidden in an expansion; in the TUI an "allow always" answer
must never cover a later command that runs another program. The side effect (`touch X`) must not happen.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, run_cli
from tests.security.scripted import bash_calls, tool_results
from tests.ui.conftest import make_app, workspace  # noqa: F401  (Pilot fixtures)


def _run_with_echo_allowed(tmp_path: Path, command: str) -> tuple[Path, list[str]]:
    """`agentcli run` (no --yes) with only `Bash(echo *)` allowed; the model runs `command`, then a plain echo."""
    repo = tmp_path / "repo"
    repo.mkdir()
    config = tmp_path / "config" / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text('[permissions]\nallow = ["Bash(echo *)"]\n')
    with FakeLLMServer(bash_calls(command, "echo still-allowed")) as server:
        proc = run_cli(["run", "--cwd", str(repo), "say hi"], cli_env("anthropic", server, tmp_path))
        results = tool_results(server)
    assert proc.returncode == 0, proc.stderr
    assert len(results) == 2, results
    assert "still-allowed" in results[1]  # the rule itself still works
    return repo, results


HIDDEN_BY_THE_SPLIT = {
    "comment-inside-a-word": "echo hi#; touch X",  # `#` inside a word is not a comment
    "semicolon-glued-to-redirection": "echo hi;>/dev/null touch X",
    "pipe-glued-to-redirection": "echo hi|>/dev/null touch X",
    "and-glued-to-redirection": "echo hi&&>/dev/null touch X",
    "semicolon-glued-to-input-redirection": "echo hi;</dev/null touch X",
}


@pytest.mark.parametrize("command", HIDDEN_BY_THE_SPLIT.values(), ids=HIDDEN_BY_THE_SPLIT)
def test_an_allow_rule_cannot_run_a_command_hidden_by_how_it_is_split(tmp_path: Path, command: str) -> None:
    repo, results = _run_with_echo_allowed(tmp_path, command)
    assert not (repo / "X").exists()
    assert "Bash needs approval" in results[0], results[0]


HIDDEN_IN_AN_EXPANSION = {
    # `${X:=…}` sets X to the text `$(touch X)` (no `$(` in the command); these expansions then run it.
    "prompt-expansion": r"echo ${X:=\$\(touch\ X\)} ${X@P}",
    "arithmetic-subscript": r"echo ${X:=a[\$\(touch\ X\)]} $[X]",
    "indirect-expansion": r"echo ${X:=a[\$\(touch\ X\)]} ${!X}",
}


@pytest.mark.parametrize("command", HIDDEN_IN_AN_EXPANSION.values(), ids=HIDDEN_IN_AN_EXPANSION)
def test_an_allow_rule_cannot_run_code_hidden_in_an_expansion(tmp_path: Path, command: str) -> None:
    repo, results = _run_with_echo_allowed(tmp_path, command)
    assert not (repo / "X").exists()
    assert "Bash needs approval" in results[0], results[0]


ALLOW_ALWAYS = {
    "echo-then-a-redirection-glued-to-semicolon": ("echo hi", "echo hi;>/dev/null touch X"),
    "echo-then-a-comment-inside-a-word": ("echo hi", "echo hi#; touch X"),
    "assignment-then-a-command-after-it": ("X=1", "X=1 touch X"),
    "eval-then-an-escaped-separator": ("eval echo hi", "eval echo hi\\; touch X"),
    "time-then-another-program": ("time -p echo hi", "time touch X"),
    "env-then-another-program": ("env A=1 echo hi", "env A=1 touch X"),
}


@pytest.mark.parametrize(("first", "later"), ALLOW_ALWAYS.values(), ids=ALLOW_ALWAYS)
async def test_allow_always_never_covers_a_command_it_did_not_name(
    first: str, later: str, make_app: Any, workspace: Path  # noqa: F811
) -> None:
    from agentcli.ui.widgets.approval import ApprovalScreen
    from tests.ui.conftest import idle, submit, wait_for

    def asking(command: str) -> bool:
        screen = app.screen
        return isinstance(screen, ApprovalScreen) and (
            str(screen.query_one("#approval-question").render()) == f"[main] wants to run: {command}"
        )

    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": first})])),
        Step(match=Match(system_contains=MAIN, turn=1),
             reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": later})])),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="done")),
    ])
    with FakeLLMServer(script) as server:
        app = make_app(server, mode="ask")
        async with app.run_test(size=(160, 40)) as pilot:
            await submit(pilot, "go")
            await wait_for(pilot, lambda: asking(first))
            await pilot.press("a")  # allow always
            await wait_for(pilot, lambda: asking(later) or not app.turn_running)
            asked_again = asking(later)
            if asked_again:
                await pilot.press("n")
            await idle(pilot)
    assert asked_again, f"{later!r} ran under the answer to {first!r}"
    assert not (workspace / "X").exists()
    server.assert_done()
