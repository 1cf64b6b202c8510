"""Subagent types: built-ins, agent files of agentcli / Claude Code / opencode, precedence, lookup."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentcli.subagents.definitions.agent_files import AgentType, all_tool_names
from agentcli.subagents.definitions.registry import AgentRegistry

READ_ONLY = ("LS", "Glob", "Grep", "Read", "TodoWrite", "LSP")


@pytest.fixture
def home(isolated_env: Path) -> Path:
    """The test's HOME (XDG_CONFIG_HOME is HOME/.config)."""
    return isolated_env


def write(folder: Path, name: str, text: str, *, newline: str = "\n", bom: bool = False) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    data = text.replace("\n", newline).encode("utf-8")
    path.write_bytes(b"\xef\xbb\xbf" + data if bom else data)
    return path


def load(ws: Path, home: Path) -> AgentRegistry:
    return AgentRegistry.load(ws, home=home)


# --- built-ins ----------------------------------------------------------------------------------------


def test_builtins_present_with_read_only_explore_plan_summary(tmp_path: Path, home: Path) -> None:
    reg = load(tmp_path, home)
    assert reg.names() == ["general", "explore", "plan", "summary"]
    assert reg.problems == [] and reg.shadowed == []
    general = reg.types["general"]
    assert general.tools is None and general.model == "inherit" and not general.read_only
    assert general.description == "General-purpose agent for multi-step work: research, edits and commands."
    assert general.allowed_tools(["Read", "Bash", "Task"]) == ["Read", "Bash", "Task"]
    for name, model in (("explore", "light"), ("plan", "main"), ("summary", "light")):
        agent = reg.types[name]
        assert agent.read_only and agent.model == model and agent.scope == "built-in"
        assert agent.allowed_tools(all_tool_names()) == [
            "Read", "LS", "Glob", "Grep", "TodoWrite", "LSP", "AskUserQuestion", "SendMessage", "ListAgents"]
        assert "subagent" in agent.prompt and "final answer" in agent.prompt
        assert len(agent.description) > 60
    assert "path:line" in reg.types["explore"].prompt
    assert "step-by-step" in reg.types["plan"].prompt


def test_allowed_tools_policy() -> None:
    agent = AgentType("x", "d", "p", tools=("Read", "Bash", "Write"), disallowed_tools=("Write",))
    assert agent.allowed_tools(["Write", "Grep", "Bash", "Read"]) == ["Bash", "Read"]  # ∩ available − denied
    deny_only = AgentType("y", "d", "p", tools=None, disallowed_tools=("Bash", "Task"))
    assert deny_only.allowed_tools(["Read", "Bash", "Task", "Edit"]) == ["Read", "Edit"]
    assert not deny_only.read_only
    assert AgentType("z", "d", "p", tools=("Read", "Task")).read_only


# --- Claude Code files, as found in the wild ---------------------------------------------------------

CLAUDE_FILES: dict[str, str] = {
    "code-reviewer.md": """---
name: code-reviewer
description: Expert code review specialist. Proactively reviews code for quality, security, and maintainability.
tools: Read, Grep, Glob, Bash
model: sonnet
color: blue
---

You are a senior code reviewer ensuring high standards of code quality and security.
""",
    "debugger.md": """---
name: debugger
description: Debugging specialist for errors, test failures, and unexpected behavior.
tools:
  - Read
  - Edit
  - Bash
model: opus
---
You are an expert debugger specializing in root cause analysis.
""",
    "data-scientist.md": """---
name: data-scientist
description: Data analysis expert for SQL queries and data insights.
model: haiku
---
You are a data scientist.
""",
    "researcher.md": """---
name: researcher
description: Researches libraries on the web and in the code base.
tools: Read, WebFetch, WebSearch, ExitPlanMode, Grep, mcp__github__create_issue
model: inherit
---
Research things.
""",
    "architect.md": """---
name: architect
description: |
  Designs systems.
  Use it for: architecture reviews, module boundaries.
tools: Read, Glob
---
You are an architect.
""",
    "tester.md": """---
name: tester
description: "Use this agent when: tests fail. Example: user: 'fix the tests' assistant: 'using tester'"
tools: Read, Edit, Bash
---
You run and fix tests.
""",
    "windows-agent.md": """---
name: windows-agent
description: Written on Windows with CRLF line endings.
tools: Read, Write
---
CRLF body.
""",
    "bom-agent.md": """---
name: bom-agent
description: Saved with a UTF-8 byte order mark.
---
BOM body.
""",
    "casing.md": """---
name: casing
description: Odd tool casing.
tools: read, GREP, multi_edit
---
Casing body.
""",
    "plugin-style.md": """---
name: silent-failure-hunter
description: Use this agent when reviewing code changes in a pull request. Examples:\\n\\n<example>\\nContext: \
Daisy has finished a feature.\\nuser: "Review it"\\nassistant: "Using the silent-failure-hunter agent."\\n</example>
model: inherit
color: yellow
---
You hunt silent failures.
""",
    "git-only.md": """---
name: git-only
description: Looks at git history.
tools: Bash(git log:*), Read
disallowedTools: Write, Edit
---
Git body.
""",
    "bare-model.md": """---
name: bare-model
description: Names a model id directly.
model: claude-sonnet-4-5
---
""",
}


@pytest.fixture
def claude_ws(tmp_path: Path) -> Path:
    folder = tmp_path / ".claude" / "agents"
    for name, text in CLAUDE_FILES.items():
        write(
            folder,
            name,
            text,
            newline="\r\n" if name == "windows-agent.md" else "\n",
            bom=name == "bom-agent.md",
        )
    return tmp_path


def test_a_dozen_claude_code_files_load_unchanged(claude_ws: Path, home: Path) -> None:
    reg = load(claude_ws, home)
    assert reg.problems == []
    expected = {
        "code-reviewer",
        "debugger",
        "data-scientist",
        "researcher",
        "architect",
        "tester",
        "windows-agent",
        "bom-agent",
        "casing",
        "silent-failure-hunter",
        "git-only",
        "bare-model",
    }
    assert set(reg.names()) == {"general", "explore", "plan", "summary", *expected}
    assert reg.names()[4:] == sorted(expected)  # built-ins first, then files by name
    t = reg.types
    for name in expected:
        assert t[name].scope == "project" and t[name].file_format == "claude"
        assert t[name].source.endswith(".md") and ".claude/agents" in t[name].source

    assert t["code-reviewer"].tools == ("Read", "Grep", "Glob", "Bash") and t["code-reviewer"].model == "sonnet"
    assert t["code-reviewer"].prompt.startswith("You are a senior code reviewer") and not t["code-reviewer"].warnings
    assert t["debugger"].tools == ("Read", "Edit", "Bash") and t["debugger"].model == "opus"
    assert t["data-scientist"].tools is None and t["data-scientist"].model == "haiku"
    assert t["researcher"].tools == ("Read", "WebFetch", "WebSearch", "Grep", "mcp__github__create_issue")
    assert t["researcher"].model == "inherit"
    assert t["researcher"].warnings == ("tools agentcli lacks were dropped: ExitPlanMode",)
    assert t["architect"].description == "Designs systems.\nUse it for: architecture reviews, module boundaries."
    assert t["tester"].description.startswith("Use this agent when: tests fail. Example: user:")
    assert t["windows-agent"].tools == ("Read", "Write") and t["windows-agent"].prompt == "CRLF body."
    assert "\r" not in t["windows-agent"].description
    assert t["bom-agent"].prompt == "BOM body." and not t["bom-agent"].warnings
    assert t["casing"].tools == ("Read", "Grep", "MultiEdit") and not t["casing"].warnings
    hunter = t["silent-failure-hunter"]
    assert "Context: Daisy" in hunter.description and hunter.model == "inherit"
    assert any("read leniently" in w for w in hunter.warnings)
    git = t["git-only"]
    assert git.tools == ("Read",) and git.disallowed_tools == ("Write", "Edit")
    assert git.warnings == ("tools agentcli lacks were dropped: Bash(git log:*)",)
    bare = t["bare-model"]
    assert bare.model == "claude-sonnet-4-5" and bare.prompt == bare.description
    assert any("model id of the main provider" in w for w in bare.warnings)
    assert any("empty body" in w for w in bare.warnings)


def test_aliases_come_from_config(tmp_path: Path, home: Path) -> None:
    write(tmp_path / ".agentcli" / "agents", "local.md", "---\nname: local\ndescription: d\nmodel: Fast\n---\nx\n")
    reg = AgentRegistry.load(tmp_path, home=home, aliases={"fast": "light"})
    assert reg.types["local"].model == "fast" and not reg.types["local"].warnings
    reg = AgentRegistry.load(tmp_path, home=home)  # default aliases: opus, sonnet, haiku
    assert reg.types["local"].model == "Fast" and reg.types["local"].warnings


# --- opencode ------------------------------------------------------------------------------------------


def test_opencode_files(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / ".opencode" / "agents"
    write(
        folder,
        "review.md",
        """---
description: Reviews code for quality and best practices
mode: subagent
model: anthropic/claude-sonnet-4-20250514
temperature: 0.1
tools:
  write: false
  edit: false
  bash: false
---
You are in code review mode.
""",
    )
    write(
        folder,
        "docs.md",
        """---
description: Writes documentation
model: ollama/llama3
tools:
  "*": false
  read: true
  write: true
  webfetch: true
---
Write docs.
""",
    )
    write(
        folder,
        "careful.md",
        "---\ndescription: Never edits\npermission:\n  edit: deny\n  bash:\n    '*': deny\n---\nLook only.\n",
    )
    write(folder, "build.md", "---\ndescription: The main build agent\nmode: primary\n---\nBuild.\n")
    write(tmp_path / ".opencode" / "agent", "legacy.md", "---\ndescription: From the singular folder\n---\nOld.\n")
    reg = load(tmp_path, home)
    review = reg.types["review"]
    assert review.file_format == "opencode" and review.model == "anthropic:claude-sonnet-4-20250514"
    assert review.tools is None and review.disallowed_tools == ("Write", "Edit", "MultiEdit", "Bash", "NotebookEdit")
    assert review.read_only and not review.warnings  # temperature and mode are ignored quietly
    docs = reg.types["docs"]
    assert docs.allowed_tools(all_tool_names()) == ["Read", "Write", "WebFetch"]
    assert docs.model == "ollama:llama3"
    assert any("unknown provider 'ollama'" in w for w in docs.warnings)
    assert not any("lacks" in w for w in docs.warnings)  # opencode's webfetch is our WebFetch
    careful = reg.types["careful"]
    assert careful.read_only and set(careful.disallowed_tools) == {"Write", "Edit", "MultiEdit", "NotebookEdit", "Bash"}
    assert reg.types["legacy"].scope == "project"
    assert "build" not in reg.types
    (problem,) = reg.problems
    assert problem.path.endswith("build.md") and problem.reason == "primary agent, not a subagent (mode: primary)"


# --- precedence ---------------------------------------------------------------------------------------


def agent_text(name: str, marker: str) -> str:
    return f"---\nname: {name}\ndescription: {marker}\n---\n{marker} prompt\n"


def test_precedence_project_over_user_over_builtin(tmp_path: Path, home: Path) -> None:
    ws = tmp_path / "ws"
    user = home / ".config" / "agentcli" / "agents"
    write(user, "explore.md", agent_text("explore", "user explore"))
    write(user, "reviewer.md", agent_text("reviewer", "user reviewer"))
    write(home / ".claude" / "agents", "reviewer.md", agent_text("reviewer", "user claude reviewer"))
    write(home / ".claude" / "agents", "helper.md", agent_text("helper", "user claude helper"))
    write(home / ".config" / "opencode" / "agents", "helper.md", "---\ndescription: user opencode helper\n---\nx\n")
    write(ws / ".agentcli" / "agents", "reviewer.md", agent_text("reviewer", "project reviewer"))
    write(ws / ".claude" / "agents", "reviewer.md", agent_text("reviewer", "project claude reviewer"))
    write(ws / ".claude" / "agents", "planner.md", agent_text("planner", "project claude planner"))
    write(ws / ".opencode" / "agents", "planner.md", "---\ndescription: project opencode planner\n---\nx\n")
    write(ws / ".opencode" / "agent", "planner.md", "---\ndescription: project opencode singular\n---\nx\n")
    reg = load(ws, home)
    t = reg.types
    assert reg.names() == ["general", "explore", "plan", "summary", "helper", "planner", "reviewer"]
    assert t["explore"].description == "user explore" and t["explore"].scope == "user"
    assert t["reviewer"].description == "project reviewer" and t["reviewer"].file_format == "agentcli"
    assert t["planner"].description == "project claude planner"
    assert t["helper"].description == "user claude helper" and t["helper"].scope == "user"
    hidden = sorted((s.name, s.description) for s in reg.shadowed)
    assert hidden == [
        ("explore", AgentRegistry.builtins().types["explore"].description),
        ("helper", "user opencode helper"),
        ("planner", "project opencode planner"),
        ("planner", "project opencode singular"),
        ("reviewer", "project claude reviewer"),
        ("reviewer", "user claude reviewer"),
        ("reviewer", "user reviewer"),
    ]
    builtin_explore = next(s for s in reg.shadowed if s.name == "explore")
    assert builtin_explore.scope == "built-in"


def test_workspace_at_home_is_read_once(home: Path) -> None:
    write(home / ".claude" / "agents", "solo.md", agent_text("solo", "only once"))
    reg = load(home, home)
    assert reg.types["solo"].scope == "project" and reg.shadowed == []


# --- broken and hostile files -------------------------------------------------------------------------


def test_broken_files_are_reported_and_the_rest_load(tmp_path: Path, home: Path) -> None:
    folder = tmp_path / ".agentcli" / "agents"
    write(folder, "bad-yaml.md", "---\nname: bad\ndescription: [unclosed\n---\nbody\n")
    write(folder, "no-description.md", "---\nname: nodesc\n---\nbody\n")
    write(folder, "no-name.md", "---\ndescription: nameless\n---\nbody\n")
    write(folder, "no-front-matter.md", "# Just a README\n\nNo front matter here.\n")
    write(folder, "not-mapping.md", "---\n- a\n- b\n---\nbody\n")
    write(folder, "unclosed.md", "---\nname: x\ndescription: y\n")
    write(folder, "good.md", agent_text("good", "works"))
    reg = load(tmp_path, home)
    assert "good" in reg.types
    reasons = {Path(p.path).name: p.reason for p in reg.problems}
    assert set(reasons) == {
        "bad-yaml.md",
        "no-description.md",
        "no-name.md",
        "no-front-matter.md",
        "not-mapping.md",
        "unclosed.md",
    }
    assert reasons["bad-yaml.md"].startswith("bad YAML front matter")
    assert reasons["no-description.md"] == "missing required 'description' in the front matter"
    assert reasons["no-name.md"] == "missing required 'name' in the front matter"
    assert reasons["no-front-matter.md"].startswith("no YAML front matter")
    assert "not a mapping" in reasons["not-mapping.md"]
    assert "not closed" in reasons["unclosed.md"]
    assert all("\n" not in r for r in reasons.values())
    assert all(Path(p.path).is_absolute() for p in reg.problems)


def test_python_tags_are_refused_and_nothing_runs(tmp_path: Path, home: Path) -> None:
    marker = tmp_path / "pwned"
    folder = tmp_path / ".claude" / "agents"
    write(folder, "evil.md", f'---\n!!python/object/apply:os.system ["touch {marker}"]\n---\nbody\n')
    write(
        folder,
        "evil2.md",
        f'---\nname: evil2\ndescription: !!python/object/apply:os.system ["touch {marker}"]\n---\nbody\n',
    )
    write(
        folder,
        "evil3.md",  # not strict YAML either: the lenient reading must not run it
        f'---\nname: evil3\ndescription: a: b\ntools: !!python/object/apply:os.system ["touch {marker}"]\n---\nx\n',
    )
    reg = load(tmp_path, home)
    assert not marker.exists()
    assert not {"evil2", "evil3"} & set(reg.types)
    reasons = {Path(p.path).name: p.reason for p in reg.problems}
    assert set(reasons) == {"evil.md", "evil2.md", "evil3.md"}
    assert "refused YAML" in reasons["evil.md"] and "python/object/apply" in reasons["evil.md"]


def test_bad_values_warn_but_load(tmp_path: Path, home: Path) -> None:
    write(
        tmp_path / ".agentcli" / "agents",
        "odd.md",
        "---\nname: '  spaced name  '\ndescription: 42\ntools: 7\nmax_turns: many\ntimeout_seconds: '90'\n"
        "disallow_tools: Bash\n---\nbody\n",
    )
    agent = load(tmp_path, home).types["spaced name"]
    assert agent.description == "42" and agent.tools is None and agent.timeout_seconds == 90
    assert agent.max_turns is None
    joined = " | ".join(agent.warnings)
    assert "'tools' ignored" in joined and "'max_turns: many' ignored" in joined
    assert "unknown front matter keys ignored: disallow_tools" in joined


# --- lookup ----------------------------------------------------------------------------------------------


@pytest.fixture
def reviewers(tmp_path: Path, home: Path) -> AgentRegistry:
    folder = tmp_path / ".agentcli" / "agents"
    write(folder, "a.md", agent_text("code-reviewer", "Reviews code changes for bugs, style and missing tests."))
    write(folder, "b.md", agent_text("db_migrator", "Writes and checks database schema migrations."))
    return load(tmp_path, home)


def test_normalize(reviewers: AgentRegistry) -> None:
    assert reviewers.normalize("Explore") is reviewers.types["explore"]
    assert reviewers.normalize("code_reviewer") is reviewers.types["code-reviewer"]
    assert reviewers.normalize(" Code Reviewer ") is reviewers.types["code-reviewer"]
    assert reviewers.normalize("db-migrator") is reviewers.types["db_migrator"]
    assert reviewers.normalize("general-purpose") is reviewers.types["general"]  # Claude Code's name
    assert reviewers.normalize("reviewer") is None
    assert reviewers.normalize("") is None


def test_best_match(reviewers: AgentRegistry) -> None:
    assert reviewers.best_match("reviewer") is reviewers.types["code-reviewer"]
    assert reviewers.best_match("explorer") is reviewers.types["explore"]
    assert reviewers.best_match("search the codebase for files") is reviewers.types["explore"]
    assert reviewers.best_match("database migrations") is reviewers.types["db_migrator"]
    assert reviewers.best_match("implementation planner") is reviewers.types["plan"]
    assert reviewers.best_match("quantum physics") is None
    assert reviewers.best_match("") is None


def test_resolve_per_fallback(reviewers: AgentRegistry) -> None:
    assert reviewers.resolve("explore", "error") is reviewers.types["explore"]
    assert reviewers.resolve("Explore", "error") is None
    assert reviewers.resolve("Explore", "normalize") is reviewers.types["explore"]
    assert reviewers.resolve("reviewer", "normalize") is None
    assert reviewers.resolve("reviewer", "best_match") is reviewers.types["code-reviewer"]
    assert reviewers.resolve("CODE_REVIEWER", "best_match") is reviewers.types["code-reviewer"]
    assert reviewers.resolve("nothing like it", "best_match") is None


def test_a_claude_agent_file_keeps_notebookedit(tmp_path: Path, home: Path) -> None:
    write(tmp_path / ".claude" / "agents", "nb.md",
          "---\nname: nb\ndescription: Edits notebooks\ntools: Read, NotebookEdit, WebSearch\n---\nCells.\n")
    nb = load(tmp_path, home).types["nb"]
    assert nb.tools == ("Read", "NotebookEdit", "WebSearch") and not nb.read_only
    assert nb.warnings == ()
