"""Other tools' agent files (Codex TOML, Gemini CLI and Qwen Code Markdown, opencode.json) as subagent types,
over the vendored public examples in tests/fixtures/agents (see SOURCES.md there)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from agentcli.subagents.definitions.foreign_agents import foreign_tool
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.tools.registry import READ_ONLY_TOOLS

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "agents"


def _load(tmp_path: Path, *kinds: str) -> tuple[AgentRegistry, Path]:
    ws = tmp_path / "ws"
    ws.mkdir()
    for kind in kinds:
        shutil.copytree(FIXTURES / kind, ws, dirs_exist_ok=True)
    return AgentRegistry.load(ws, env={}, home=tmp_path / "home", aliases={"opus": "main", "haiku": "light"}), ws


def test_every_vendored_well_formed_agent_loads_with_its_format(tmp_path: Path) -> None:
    registry, _ = _load(tmp_path, "codex", "gemini", "qwen", "opencode")
    formats = {name: registry.types[name].file_format for name in registry.types if registry.types[name].scope
               == "project"}
    assert formats == {
        "code-reviewer": "codex", "backend-developer": "codex", "code-mapper": "codex",
        "architecture-visualizer": "gemini", "worker": "gemini",
        "product-direction-reviewer": "qwen",
        "docs-writer": "opencode", "security-auditor": "opencode",
    }
    skipped = {Path(p.path.split(" (")[0]).name + (p.path[p.path.find(" ("):] if " (" in p.path else ""): p.reason
               for p in registry.problems}
    assert skipped == {
        "opencode.json (agent.build)": "primary agent, not a subagent (mode: primary)",
        "opencode.json (agent.no-description)": "missing required 'description' in the front matter",
    }


def test_a_codex_agent_keeps_its_instructions_model_effort_and_read_only_sandbox(tmp_path: Path) -> None:
    registry, ws = _load(tmp_path, "codex")
    reviewer = registry.types["code-reviewer"]
    assert reviewer.prompt.startswith("Own code quality review work as evidence-driven")
    assert reviewer.model == "gpt-5.4" and reviewer.effort == "high"
    assert reviewer.read_only and reviewer.tools == READ_ONLY_TOOLS
    assert reviewer.source == str(ws / ".codex" / "agents" / "code-reviewer.toml")
    writer = registry.types["backend-developer"]
    assert writer.tools is None and not writer.read_only  # workspace-write: every tool, under the person's rules
    assert any("used as a model id of the main provider" in w for w in reviewer.warnings)


def test_codex_model_names_go_through_the_aliases(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    shutil.copytree(FIXTURES / "codex", ws)
    registry = AgentRegistry.load(ws, env={}, home=tmp_path / "home", aliases={"gpt-5.4": "main"})
    assert registry.types["code-reviewer"].model == "gpt-5.4"
    assert not any("model" in w for w in registry.types["code-reviewer"].warnings)


def test_gemini_and_qwen_tool_names_map_onto_agentclis(tmp_path: Path) -> None:
    registry, _ = _load(tmp_path, "gemini", "qwen")
    visualizer = registry.types["architecture-visualizer"]
    assert set(visualizer.tools or ()) == {"Bash", "Write", "Grep", "LS", "Read", "Edit", "Skill",
                                           "mcp__mermaid-guide__get_mermaid_style_guide"}
    assert visualizer.max_turns == 30 and visualizer.model == "inherit"
    assert not any("activate_skill" in w for w in visualizer.warnings)  # Gemini's skill loader is our Skill
    reviewer = registry.types["product-direction-reviewer"]
    assert set(reviewer.disallowed_tools) >= {"Bash", "Write", "Read", "Grep", "Glob", "Task"}
    assert registry.types["worker"].tools is None


def test_opencode_json_entries_read_like_opencode_agent_files(tmp_path: Path) -> None:
    registry, _ = _load(tmp_path, "opencode")
    docs = registry.types["docs-writer"]
    assert docs.prompt == "You write concise documentation. Prefer examples over prose."
    assert docs.model == "anthropic:claude-haiku-4-5" and set(docs.disallowed_tools) == {"Bash", "WebFetch"}
    auditor = registry.types["security-auditor"]
    assert {"Write", "Edit", "MultiEdit", "Bash"} <= set(auditor.disallowed_tools)
    assert auditor.warnings == ("opencode keys with no meaning in agentcli ignored: variant",)


def test_each_broken_file_is_one_line_naming_it_and_the_reason(tmp_path: Path) -> None:
    registry, ws = _load(tmp_path, "broken")
    reasons = {Path(p.path).relative_to(ws).as_posix(): p.reason for p in registry.problems}
    assert reasons.keys() == {".codex/agents/not-toml.toml", ".codex/agents/no-instructions.toml",
                              ".gemini/agents/remote.md", ".gemini/agents/no-front-matter.md",
                              ".qwen/agents/bad-yaml.md"}
    assert reasons[".codex/agents/not-toml.toml"].startswith("not valid TOML: ")
    assert reasons[".codex/agents/no-instructions.toml"] == "missing required 'developer_instructions' (Codex " \
        "requires it)"
    assert reasons[".gemini/agents/remote.md"] == "a remote (A2A) agent: agentcli runs local agents only"
    assert all("\n" not in reason for reason in reasons.values())
    assert set(registry.types) == {"general", "explore", "plan", "summary"}


def test_unused_keys_are_named_once_per_file(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".codex" / "agents").mkdir(parents=True)
    (ws / ".codex" / "agents" / "x.toml").write_text(
        'name = "x"\ndescription = "d"\ndeveloper_instructions = "Be brief."\nnickname_candidates = ["Ada"]\n'
        'approval_policy = "never"\nsandbox_mode = "read-only"\n[mcp_servers.docs]\ncommand = "docs-mcp"\n')
    (ws / ".gemini" / "agents").mkdir(parents=True)
    (ws / ".gemini" / "agents" / "g.md").write_text(
        "---\nname: g\ndescription: d\ntemperature: 0.2\ndisplay_name: G\ntimeout_mins: 2\n---\nBody\n")
    (ws / ".gemini" / "agents" / "_draft.md").write_text("not an agent")
    registry = AgentRegistry.load(ws, env={}, home=tmp_path / "home")
    assert registry.types["x"].warnings == (
        "Codex keys with no meaning in agentcli ignored: approval_policy, mcp_servers, nickname_candidates",)
    gemini = registry.types["g"]
    assert gemini.timeout_seconds == 120
    assert gemini.warnings == ("Gemini CLI keys with no meaning in agentcli ignored: display_name, temperature",)
    assert registry.problems == []


def test_project_folders_win_over_the_persons_and_codex_home_is_read(tmp_path: Path) -> None:
    ws, home, codex_home = tmp_path / "ws", tmp_path / "home", tmp_path / "codex"
    for folder, text in ((ws / ".codex" / "agents", "project"), (codex_home / "agents", "user")):
        folder.mkdir(parents=True)
        (folder / "a.toml").write_text(f'name = "a"\ndescription = "{text}"\ndeveloper_instructions = "x"\n')
    (codex_home / "agents" / "nested").mkdir()
    (codex_home / "agents" / "nested" / "b.toml").write_text('name="b"\ndescription="d"\ndeveloper_instructions="y"\n')
    registry = AgentRegistry.load(ws, env={"CODEX_HOME": str(codex_home)}, home=home)
    assert registry.types["a"].description == "project" and registry.types["b"].scope == "user"
    assert [t.description for t in registry.shadowed] == ["user"]


@pytest.mark.parametrize(("name", "ours"), [
    ("read_file", "Read"), ("grep_search", "Grep"), ("search_file_content", "Grep"), ("run_shell_command", "Bash"),
    ("write_file", "Write"), ("replace", "Edit"), ("glob", "Glob"), ("list_directory", "LS"), ("web_fetch", "WebFetch"),
    ("write_todos", "TodoWrite"), ("mcp_github_create_issue", "mcp__github__create_issue"),
    ("mcp_github_*", "mcp__github"), ("google_web_search", "WebSearch"),
])
def test_foreign_tool_names(name: str, ours: str) -> None:
    assert foreign_tool(name) == ours


def test_an_untrusted_projects_opencode_prompt_file_must_stay_inside(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (tmp_path / "secret.md").write_text("outside")
    (ws / "opencode.json").write_text(
        '{"agent": {"x": {"description": "d", "mode": "subagent", "prompt": "{file:../secret.md}"}}}')
    registry = AgentRegistry.load(ws, env={}, home=tmp_path / "home")
    assert "x" not in registry.types
    assert [p.reason for p in registry.problems] == ["prompt file ../secret.md is outside the workspace; not read"]
