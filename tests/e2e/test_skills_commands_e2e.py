"""Skills and custom slash commands through the real CLI against the scripted fake server (issue 28, items 1-2):
the model sees the skills' names, calls Skill, gets the body and reads a bundled file; a session without skills
offers no Skill tool; a command's expansion is the first user message; its `!` lines run only trusted and approved."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"


def _dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    return ws, home


def _texts(content: Any) -> list[str]:
    if isinstance(content, str):
        return [content]
    return [block.get("text", "") for block in content if block.get("type") == "text"]


def test_the_model_sees_skill_names_loads_one_and_reads_its_bundled_file(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    shutil.copytree(FIXTURES / "skills" / "anthropics", home / ".claude" / "skills")
    example = (home / ".claude" / "skills" / "internal-comms" / "examples" / "faq-answers.md").resolve()
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, tools_include=["Skill"]),
             reply=Reply(tool_calls=[ToolCall(name="Skill", input={"skill": "internal-comms"})])),
        Step(match=Match(last_user_contains="## When to use this skill"),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": str(example)})])),
        Step(match=Match(last_user_contains="FAQ"), reply=Reply(text="Drafted.")),
    ])
    with FakeLLMServer(script) as server:
        result = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "write the weekly update"],
                         cli_env("anthropic", server, home, HOME=str(home)))
        assert result.returncode == 0, result.stderr
        server.assert_done()
        first, second, third = (r.body for r in server.requests)
    assert last_json(result.stdout)["result"] == "Drafted."
    skill_tool = next(t for t in first["tools"] if t["name"] == "Skill")
    assert "- internal-comms: A set of resources to help me write" in skill_tool["description"]
    assert "- brand-guidelines: " in skill_tool["description"] and "- webapp-testing: " in skill_tool["description"]
    assert "## When to use this skill" not in json.dumps(first)  # names and descriptions only, never a body
    assert [t["description"] for t in second["tools"]] == [t["description"] for t in first["tools"]]  # cache-stable
    loaded = json.dumps(second["messages"][-1])
    assert "examples/faq-answers.md" in loaded
    read = third["messages"][-1]["content"][0]
    assert not read.get("is_error") and "FAQ" in json.dumps(read)


def test_without_skills_no_skill_tool_is_offered(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    script = Script(steps=[Step(match=Match(system_contains=MAIN, tools_exclude=["Skill"]), reply=Reply(text="ok"))])
    with FakeLLMServer(script) as server:
        result = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "hello"],
                         cli_env("anthropic", server, home, HOME=str(home)))
        assert result.returncode == 0, result.stderr
        server.assert_done()
        body = server.requests[0].body
    assert "Skill" not in [tool["name"] for tool in body["tools"]]
    assert "Skills available" not in json.dumps(body)


def test_a_commands_expansion_is_the_first_user_message(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    (ws / "src").mkdir()
    (ws / "src" / "app.py").write_text("def handler():\n    return 1 / 0\n")
    commands = ws / ".claude" / "commands" / "code"
    commands.mkdir(parents=True)
    (commands / "review.md").write_text("---\ndescription: Review a file\nargument-hint: [file]\n---\n"
                                        "Review @$1 for bugs; report each with its line.\n")
    script = Script(steps=[Step(match=Match(system_contains=MAIN, last_user_contains="Review @src/app.py for bugs"),
                                reply=Reply(text="Line 2 divides by zero."))])
    with FakeLLMServer(script) as server:
        result = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "/review src/app.py"],
                         cli_env("anthropic", server, home, HOME=str(home)))
        assert result.returncode == 0, result.stderr
        server.assert_done()
        messages = server.requests[0].body["messages"]
    assert len(messages) == 1
    texts = _texts(messages[0]["content"])
    assert texts[0] == "Review @src/app.py for bugs; report each with its line."
    assert texts[1].startswith('<attached_file path="src/app.py">') and "return 1 / 0" in texts[1]
    assert last_json(result.stdout)["result"] == "Line 2 divides by zero."


def _status_command(ws: Path) -> None:
    folder = ws / ".claude" / "commands"
    folder.mkdir(parents=True)
    (folder / "status.md").write_text("---\nallowed-tools: Bash(echo:*)\n---\nState: !`echo marker-$1`\nSay it.\n")


def _run_status(ws: Path, home: Path, *flags: str, **env: str) -> tuple[str, str]:
    script = Script(steps=[Step(match=Match(system_contains=MAIN), reply=Reply(text="ok"))])
    with FakeLLMServer(script) as server:
        result = run_cli(["run", *flags, "--cwd", str(ws), "/status 7"],
                         cli_env("anthropic", server, home, HOME=str(home), **env))
        assert result.returncode == 0, result.stderr
        return _texts(server.requests[0].body["messages"][0]["content"])[0], result.stderr


def test_shell_lines_run_only_in_a_trusted_workspace_with_approval(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    _status_command(ws)
    prompt, err = _run_status(ws, home, "--yes")
    assert prompt == "State: [not run: echo marker-7]\nSay it."
    assert "/status: !`echo marker-7` not run: the workspace is not trusted" in err

    with FakeLLMServer(Script(steps=[])) as server:
        trusted = run_cli(["trust", str(ws)], cli_env("anthropic", server, home, HOME=str(home)))
    assert trusted.returncode == 0, trusted.stderr
    prompt, err = _run_status(ws, home)  # trusted, but a one-shot without --yes cannot ask
    assert prompt == "State: [not run: echo marker-7]\nSay it."
    assert "/status: !`echo marker-7` not run: Permission denied" in err

    prompt, err = _run_status(ws, home, "--yes", AGENTCLI_SANDBOX__MODE="off")  # trusted and approved
    assert prompt.startswith('State: <person_command command="echo marker-7" status="exit 0">\nmarker-7\n')
    assert "not run" not in err


def test_a_skill_invoked_by_name_is_the_message_and_opens_its_folder(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    shutil.copytree(FIXTURES / "skills" / "anthropics", home / ".claude" / "skills")
    example = (home / ".claude" / "skills" / "internal-comms" / "examples" / "general-comms.md").resolve()
    script = Script(steps=[
        Step(match=Match(system_contains=MAIN, turn=0, last_user_contains="## When to use this skill"),
             reply=Reply(tool_calls=[ToolCall(name="Read", input={"file_path": str(example)})])),
        Step(match=Match(last_user_is_tool_result=True), reply=Reply(text="Written.")),
    ])
    with FakeLLMServer(script) as server:
        result = run_cli(["run", "--output-format", "json", "--cwd", str(ws), "/internal-comms a weekly update"],
                         cli_env("anthropic", server, home, HOME=str(home)))
        assert result.returncode == 0, result.stderr
        server.assert_done()
        first, second = (r.body for r in server.requests)
    texts = _texts(first["messages"][0]["content"])
    assert texts[0].startswith("## When to use this skill") and texts[0].endswith("ARGUMENTS: a weekly update")
    read = second["messages"][-1]["content"][0]
    assert not read.get("is_error"), read


def test_a_vendored_commands_model_serves_its_run_unless_model_is_given(tmp_path: Path) -> None:
    ws, home = _dirs(tmp_path)
    shutil.copytree(FIXTURES / "commands" / "wshobson", ws / ".claude" / "commands")
    models: list[str] = []
    for flags in ([], ["--model", "anthropic:claude-flag-model"]):
        script = Script(steps=[Step(match=Match(system_contains=MAIN, last_user_contains="Target branch: main"),
                                    reply=Reply(text="ok"))])
        with FakeLLMServer(script) as server:
            result = run_cli(["run", *flags, "--cwd", str(ws), "/workflows:git-workflow main"],
                             cli_env("anthropic", server, home, HOME=str(home)))
            assert result.returncode == 0, result.stderr
            server.assert_done()
            models.append(server.requests[0].body["model"])
    assert models == ["claude-opus-4-1", "claude-flag-model"]
