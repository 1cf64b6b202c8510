"""Scripts of one tool call per model turn, and the tool results the model was sent: what the security tests
that drive the real CLI share."""

from __future__ import annotations

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall


def one_call_per_turn(*calls: ToolCall) -> Script:
    """Turn n makes `calls[n]`; the turn after the last answers "done."."""
    steps = [Step(match=Match(turn=n), reply=Reply(tool_calls=[call])) for n, call in enumerate(calls)]
    return Script(steps=[*steps, Step(match=Match(turn=len(calls)), reply=Reply(text="done."))])


def bash_calls(*commands: str) -> Script:
    """One Bash call per turn, one command each."""
    return one_call_per_turn(*(ToolCall(name="Bash", input={"command": command}) for command in commands))


def tool_results(server: FakeLLMServer) -> list[str]:
    """The text of every tool result the model was sent, in order."""
    found: list[str] = []
    for request in server.requests:
        content = request.body["messages"][-1]["content"]
        if isinstance(content, list):
            found += [str(block["content"]) for block in content if block.get("type") == "tool_result"]
    return found
