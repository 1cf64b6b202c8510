"""Other tools' agent files through the real CLI and the fake server: a Codex TOML agent runs as a subagent with
its developer_instructions as its role, its model through [models.aliases] and its read-only sandbox as its
tools; `agents list` names each agent's format."""

from __future__ import annotations

from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

INSTRUCTIONS = "You are the Codex reviewer of this repository. End every answer with REVIEWED-BY-CODEX."
CODEX_AGENT = f'''name = "codex-reviewer"
description = "Reviews a change for bugs; use after any edit."
model = "gpt-5.4"
model_reasoning_effort = "low"
sandbox_mode = "read-only"
nickname_candidates = ["Ada"]
developer_instructions = """
{INSTRUCTIONS}
"""
'''


def test_a_codex_toml_agent_runs_as_a_subagent_with_its_instructions(tmp_path: Path) -> None:
    ws, home = tmp_path / "ws", tmp_path / "home"
    (ws / ".codex" / "agents").mkdir(parents=True)
    (ws / ".codex" / "agents" / "reviewer.toml").write_text(CODEX_AGENT)
    (ws / "app.py").write_text("print('hi')\n")
    config = home / "config" / "agentcli"
    config.mkdir(parents=True)
    (config / "config.toml").write_text('[models.aliases]\n"gpt-5.4" = "light"\n')
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[ToolCall(name="Task", input={
            "description": "Review app.py", "prompt": "Review app.py for bugs.", "subagent_type": "codex-reviewer"})])),
        Step(match=Match(system_contains=INSTRUCTIONS, turn=0), reply=Reply(text="No bugs. REVIEWED-BY-CODEX")),
        Step(match=Match(system_contains=MAIN, turn=1, last_user_contains="REVIEWED-BY-CODEX"),
             reply=Reply(text="The reviewer found no bugs.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "review my change"],
                       cli_env("anthropic", server, home, HOME=str(home)))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    result = last_json(proc.stdout)
    assert result["result"] == "The reviewer found no bugs."
    (task,) = result["tasks"]
    assert task["subagent_type"] == "codex-reviewer" and task["status"] == "completed"
    assert task["model_used"] == "light"  # gpt-5.4 through [models.aliases]
    sub = next(r for r in server.requests if INSTRUCTIONS in str(r.body.get("system", "")))
    offered = {tool["name"] for tool in sub.body["tools"]}
    assert "Bash" not in offered and "Write" not in offered and "Read" in offered  # sandbox_mode = "read-only"

    listed = run_cli(["agents", "list", "--cwd", str(ws)], cli_env("anthropic", server, home, HOME=str(home)))
    assert listed.returncode == 0, listed.stderr
    row = next(line for line in listed.stdout.splitlines() if line.startswith("codex-reviewer"))
    assert row.split()[:4] == ["codex-reviewer", "project", "codex", "gpt-5.4"]
    assert "Codex keys with no meaning in agentcli ignored: nickname_candidates" in listed.stdout
