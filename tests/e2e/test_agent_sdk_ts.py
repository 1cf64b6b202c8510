"""The real TypeScript Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`, pinned in tests/e2e/ts/package.json) drives
agentcli: node runs the SDK code of one scenario (`ts/run.mjs`), the SDK starts agentcli's console script through
`pathToClaudeCodeExecutable` (its bundled Claude Code binary is never installed here: `npm ci --omit=optional`), and
agentcli answers from the scripted fake server (`ts/scenarios.py`). These are the Python SDK's scenarios
(test_agent_sdk.py) that apply, plus what the TypeScript SDK sends only in its `initialize` request: its system
prompt, its appended text, its in-process and other MCP servers.

Without node or the SDK the tests skip, naming the command that installs it; in CI (`AGENTCLI_TS_SDK_REQUIRED=1`,
set by .ci/run after it installs both) they fail instead.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.e2e.helpers import agentcli_path
from tests.e2e.ts.scenarios import BY_NAME, SCENARIOS, Outcome, missing, run, system_text, tool_names

REQUIRED = os.environ.get("AGENTCLI_TS_SDK_REQUIRED") == "1"  # CI: a missing node or SDK fails, never skips
pytestmark = pytest.mark.timeout(240)


@pytest.fixture(scope="module")
def ready() -> None:
    if (problem := missing()) is not None:
        if REQUIRED:
            pytest.fail(problem)
        pytest.skip(problem)


def scenario(name: str, tmp_path: Path) -> Outcome:
    outcome = run(BY_NAME[name], agentcli_path(), tmp_path)
    assert outcome.passed, f"{name}: {outcome.failed}; turns {outcome.turns}; agentcli stderr {outcome.stderr}"
    return outcome


@pytest.mark.parametrize("name", [s.name for s in SCENARIOS])
def test_a_scenario_of_the_typescript_sdk_passes(ready: None, name: str, tmp_path: Path) -> None:
    scenario(name, tmp_path)


def test_system_prompt_from_initialize_replaces_the_role_and_keeps_the_rules(ready: None, tmp_path: Path) -> None:
    outcome = scenario("system_prompt", tmp_path)
    (request,) = [r for r in outcome.requests if "SYS-1" in str(r.body.get("messages"))]
    system = system_text(request)
    assert "CUSTOM-ROLE You are the test role." in system
    assert "You are agentcli" not in system  # agentcli's own role is replaced
    assert "untrusted" in system.lower() and str(tmp_path / "ws") in system  # the rules and workspace facts stay


def test_append_system_prompt_from_initialize_keeps_agentclis_role(ready: None, tmp_path: Path) -> None:
    outcome = scenario("append_system_prompt", tmp_path)
    (request,) = [r for r in outcome.requests if "APPEND-1" in str(r.body.get("messages"))]
    system = system_text(request)
    assert "APPENDED-NOTE Sign every answer as Tester." in system
    assert "agentcli" in system and system.index("agentcli") < system.index("APPENDED-NOTE")


def test_an_in_process_mcp_tool_named_only_at_initialize_answers_the_model(ready: None, tmp_path: Path) -> None:
    outcome = scenario("sdk_mcp", tmp_path)
    search, call, answer = outcome.requests  # deferred as Claude Code defers it: one ToolSearch round, no more
    assert "mcp__calc__add" not in tool_names(search) and "- mcp__calc__add: " in system_text(search)
    assert "mcp__calc__add" in tool_names(call) and "mcp__calc__add" in tool_names(answer)
    assert "sum=5" in str(answer.body["messages"][-1])  # the program's tool answered over mcp_message


def test_an_agent_defined_with_read_only_is_offered_exactly_read(ready: None, tmp_path: Path) -> None:
    outcome = scenario("sdk_agent", tmp_path)
    reviewer = [tool_names(r) for r in outcome.requests if "REVIEWER-SYS" in system_text(r)]
    assert reviewer == [["Read"], ["Read"]]  # no ListAgents, no SendMessage
    main = [tool_names(r) for r in outcome.requests if "AGENT-1" in str(r.body.get("messages"))]
    assert "Task" in main[0]  # the main agent has no list: it keeps them all, the messaging tools deferred
    system = next(system_text(r) for r in outcome.requests if "AGENT-1" in str(r.body.get("messages")))
    assert "- SendMessage: " in system and "- ListAgents: " in system


def test_rewind_files_answers_a_dry_run_then_rewinds(ready: None, tmp_path: Path) -> None:
    outcome = scenario("rewind_files", tmp_path)  # run.mjs checked the files themselves
    ws = (tmp_path / "ws").resolve()
    files = sorted(str(ws / name) for name in ("data.bin", "made.txt", "notes.txt", "sub/dir/new.txt"))
    kept = "left as they are (changed outside the agent's turns since that message): keep.txt"
    assert outcome.data["unknown"] == {"canRewind": False, "error": "No file checkpoint found for this message."}
    for answer in (outcome.data["dry"], outcome.data["rewound"]):
        # notes.txt: one line back, one away; made.txt and new.txt: one line each away; data.bin: binary
        assert {**answer, "filesChanged": sorted(answer["filesChanged"])} == {
            "canRewind": True, "filesChanged": files, "insertions": 1, "deletions": 3, "error": kept}
