"""A small window gets the lean prompt, through the real CLI against an OpenAI-compatible server: short tool
descriptions, the rarely used tools named in ToolSearch's description, loaded when the model asks and then used."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli


def _local_env(server: FakeLLMServer, home: Path) -> dict[str, str]:
    return cli_env("openai", server, home, AGENTCLI_MODELS__MAIN__PROVIDER="openai-compatible",
                   AGENTCLI_MODELS__MAIN__MODEL="smollm2", AGENTCLI_MODELS__LIGHT__PROVIDER="openai-compatible",
                   AGENTCLI_MODELS__LIGHT__MODEL="smollm2")


def _tools(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [tool["function"] for tool in body["tools"]]


def test_a_small_window_loads_a_rare_tool_on_demand_and_uses_it(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("one\ntwo\n")
    load = ToolCall(name="ToolSearch", input={"query": "select:MultiEdit"})
    edit = ToolCall(name="MultiEdit", input={"file_path": "a.txt", "edits": [
        {"old_string": "one", "new_string": "uno"}, {"old_string": "two", "new_string": "dos"}]})
    script = Script(context_window=16_384, steps=[
        Step(match=Match(api="openai", system_contains=MAIN, turn=0), reply=Reply(tool_calls=[load])),
        Step(match=Match(api="openai", turn=1), reply=Reply(tool_calls=[edit])),
        Step(match=Match(api="openai", turn=2), reply=Reply(text="Both lines translated.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(tmp_path), "translate a.txt"],
                       _local_env(server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert last_json(proc.stdout)["result"] == "Both lines translated."
    assert (tmp_path / "a.txt").read_text() == "uno\ndos\n"
    first, second, third = (_tools(r.body) for r in server.requests)
    names = [tool["name"] for tool in first]
    assert "ToolSearch" in names and not {"MultiEdit", "WebFetch", "TaskOutput", "TaskCancel"} & set(names)
    system = str(server.requests[0].body["messages"][0]["content"])  # OpenAI: the system message first
    assert "\n- MultiEdit: " in system and "\n- WebFetch: " in system  # named in the system prompt
    read = next(tool for tool in first if tool["name"] == "Read")
    assert read["description"] == (Path(__file__).parents[2] / "prompts/tools/lean/read.md").read_text().strip()
    task = next(tool for tool in first if tool["name"] == "Task")["parameters"]
    assert "fork_context" not in task["properties"] and task["required"] == ["description", "prompt", "subagent_type"]
    assert second[:-1] == first and second[-1]["name"] == "MultiEdit"  # added at the end: the prefix is kept
    assert third == second  # and it stays offered
    assert json.dumps(second).startswith(json.dumps(first)[:-1])  # byte for byte


def test_a_large_window_gets_full_descriptions_and_defers_only_what_tools_defer_says(tmp_path: Path) -> None:
    script = Script(context_window=131_072, steps=[Step(match=Match(api="openai"), reply=Reply(text="Hi."))] * 2)
    with FakeLLMServer(script) as server:
        default = run_cli(["run", "--cwd", str(tmp_path), "hello"], _local_env(server, tmp_path))
        env = {**_local_env(server, tmp_path), "AGENTCLI_TOOLS__DEFER": "none"}
        undeferred = run_cli(["run", "--cwd", str(tmp_path), "hello"], env)
    assert default.returncode == 0, default.stderr
    assert undeferred.returncode == 0, undeferred.stderr
    first, second = (_tools(r.body) for r in server.requests)
    names = [tool["name"] for tool in first]
    assert "ToolSearch" in names and "Read" in names and not {"MultiEdit", "WebFetch", "SendMessage"} & set(names)
    read = next(tool for tool in first if tool["name"] == "Read")
    assert read["description"] == (Path(__file__).parents[2] / "prompts/tools/read.md").read_text().strip()
    everything = [tool["name"] for tool in second]
    assert "ToolSearch" not in everything and {"MultiEdit", "WebFetch", "SendMessage", "TaskOutput"} <= set(everything)


def test_loading_a_tool_the_agent_does_not_have_is_a_tool_error(tmp_path: Path) -> None:
    load = ToolCall(name="ToolSearch", input={"query": "select:Nope"})
    script = Script(context_window=8192, steps=[
        Step(match=Match(api="openai", turn=0), reply=Reply(tool_calls=[load])),
        Step(match=Match(api="openai", turn=1, last_user_contains="No deferred tool matches Nope. Deferred tools: "),
             reply=Reply(text="OK.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--cwd", str(tmp_path), "hello"], _local_env(server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
