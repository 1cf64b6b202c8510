"""Skills (issue 28, item 1): discovery, precedence, the vendored public corpus, broken files, the Skill tool, the
read-only access to a loaded skill's folder, and agent files' `skills:` preload."""

from __future__ import annotations

import shutil
from datetime import date
from pathlib import Path

import pytest

from agentcli.config.load import load_config
from agentcli.subagents.definitions.agent_files import parse_agent_file
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.subagents.definitions.skill_tool import SkillArgs, skill_tool_class
from agentcli.subagents.definitions.skills import LISTED_DESCRIPTION_CHARS, SkillCatalog, listing
from agentcli.subagents.plan import Planner
from agentcli.tools.base import FileLocks, ToolContext, ToolError
from agentcli.tools.files.read import LSArgs, LSTool, ReadArgs, ReadTool
from agentcli.tools.files.write import WriteArgs, WriteTool
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import ALL_TOOLS

CORPUS = Path(__file__).resolve().parent.parent / "fixtures" / "skills" / "anthropics"


def _skill(folder: Path, name: str, description: str = "Does things.", body: str = "Body.", extra: str = "") -> Path:
    (folder / name).mkdir(parents=True, exist_ok=True)
    path = folder / name / "SKILL.md"
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n", encoding="utf-8")
    return path


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    ws, home = tmp_path / "ws", tmp_path / "home"
    ws.mkdir()
    home.mkdir()
    return ws, home


def _ctx(ws: Path) -> ToolContext:
    return ToolContext(workspace=ws.resolve(), agent="main", session_id="s", permissions=PermissionPolicy("auto"),
                       file_locks=FileLocks())


def test_every_vendored_public_skill_loads(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    shutil.copytree(CORPUS, home / ".claude" / "skills")
    catalog = SkillCatalog.load(ws, home=home, env={})
    assert catalog.problems == []
    assert sorted(catalog.names()) == ["brand-guidelines", "internal-comms", "webapp-testing"]
    comms = catalog.skills["internal-comms"]
    assert comms.scope == "user" and comms.license == "Complete terms in LICENSE.txt" and not comms.warnings
    assert comms.description.startswith("A set of resources to help me write all kinds of internal communications")


def test_broken_skills_are_one_line_each_and_never_fatal(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    folder = ws / ".claude" / "skills"
    _skill(folder, "good")
    (folder / "no-front").mkdir()
    (folder / "no-front" / "SKILL.md").write_text("# Just text\n")
    (folder / "no-desc").mkdir()
    (folder / "no-desc" / "SKILL.md").write_text("---\nname: no-desc\n---\nbody\n")
    (folder / "bad-yaml").mkdir()
    (folder / "bad-yaml" / "SKILL.md").write_text("---\nname: [unclosed\ndescription: x\n---\n")
    (folder / "binary").mkdir()
    (folder / "binary" / "SKILL.md").write_bytes(b"\xff\xfe\x00bad")
    (folder / "not-a-skill").mkdir()  # a folder without SKILL.md is passed over silently
    catalog = SkillCatalog.load(ws, home=home, env={})
    assert catalog.names() == ["good"]
    reasons = {Path(p.path).parent.name: p.reason for p in catalog.problems}
    assert reasons == {
        "no-front": "no YAML front matter: the file must start with a '---' line",
        "no-desc": "missing required 'description' in the front matter",
        "bad-yaml": reasons["bad-yaml"],
        "binary": "not UTF-8 text",
    }
    assert reasons["bad-yaml"].startswith("bad YAML front matter (line 3)")
    assert all("\n" not in p.reason for p in catalog.problems)


def test_precedence_project_over_user_and_claude_over_agents(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    _skill(home / ".claude" / "skills", "lint", "user claude")
    _skill(home / ".agents" / "skills", "lint", "user agents")
    _skill(ws / ".agents" / "skills", "lint", "project agents")
    _skill(ws / ".claude" / "skills", "lint", "project claude")
    _skill(home / ".agents" / "skills", "only-user")
    catalog = SkillCatalog.load(ws, home=home, env={})
    assert catalog.skills["lint"].description == "project claude"
    assert [s.description for s in catalog.shadowed] == ["project agents", "user claude", "user agents"]
    assert catalog.skills["only-user"].scope == "user"


def test_a_project_skill_that_links_out_of_the_workspace_is_refused(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    ws, home = dirs
    elsewhere = tmp_path / "elsewhere"
    _skill(elsewhere, "sneaky")
    (ws / ".claude" / "skills").mkdir(parents=True)
    (ws / ".claude" / "skills" / "sneaky").symlink_to(elsewhere / "sneaky")
    catalog = SkillCatalog.load(ws, home=home, env={})
    assert catalog.names() == []
    assert "symlink that leaves the skills folder" in catalog.problems[0].reason


def test_names_off_the_format_warn_and_load(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    folder = ws / ".claude" / "skills"
    _skill(folder, "Odd_Name")
    (folder / "unnamed").mkdir()
    (folder / "unnamed" / "SKILL.md").write_text("---\ndescription: d\nallowed-tools: Read Bash(git:*)\n---\nb\n")
    _skill(folder, "evil<tag>")
    catalog = SkillCatalog.load(ws, home=home, env={})
    assert sorted(catalog.names()) == ["Odd_Name", "unnamed"]
    assert any("not lowercase letters" in w for w in catalog.skills["Odd_Name"].warnings)
    assert catalog.skills["unnamed"].allowed_tools == ("Read", "Bash(git:*)")
    assert "refused skill name" in catalog.problems[0].reason


async def test_a_skill_kept_from_the_model_is_neither_listed_nor_loaded(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    _skill(ws / ".claude" / "skills", "deploy", extra="disable-model-invocation: true\n")
    _skill(ws / ".claude" / "skills", "lint")
    catalog = SkillCatalog.load(ws, home=home, env={})
    tool_cls = skill_tool_class(catalog)
    assert tool_cls is not None and "deploy" not in tool_cls().description()
    with pytest.raises(ToolError, match=r"No skill named 'deploy'\. Available: lint"):
        await tool_cls().run(SkillArgs(skill="deploy"), _ctx(ws))
    only_kept = SkillCatalog.load(ws, home=home, env={})
    del only_kept.skills["lint"]
    assert skill_tool_class(only_kept) is None


async def test_a_link_inside_a_loaded_skill_to_elsewhere_is_not_read(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    ws, home = dirs
    _skill(home / ".claude" / "skills", "tricky")
    secret = tmp_path / "secret.txt"
    secret.write_text("private\n")
    (home / ".claude" / "skills" / "tricky" / "key.txt").symlink_to(secret)
    catalog = SkillCatalog.load(ws, home=home, env={})
    tool_cls = skill_tool_class(catalog)
    assert tool_cls is not None
    ctx = _ctx(ws)
    await tool_cls().run(SkillArgs(skill="tricky"), ctx)
    with pytest.raises(ToolError, match="outside the workspace"):
        await ReadTool().run(ReadArgs(file_path=str(home / ".claude" / "skills" / "tricky" / "key.txt")), ctx)


def test_the_listing_is_short_and_only_names_and_descriptions(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    _skill(ws / ".claude" / "skills", "long", "word " * 300, body="SECRET BODY")
    catalog = SkillCatalog.load(ws, home=home, env={})
    text = listing(catalog.skills.values())
    assert text.startswith("- long: word word") and text.endswith("…")
    assert len(text) <= LISTED_DESCRIPTION_CHARS + len("- long: ")
    tool = skill_tool_class(catalog)
    assert tool is not None and "SECRET BODY" not in tool().description()
    assert skill_tool_class(SkillCatalog()) is None  # no skill: no tool at all
    assert "Skill" not in ALL_TOOLS


async def test_the_skill_tool_returns_the_body_and_opens_its_folder_for_reading_only(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    shutil.copytree(CORPUS, home / ".claude" / "skills")
    catalog = SkillCatalog.load(ws, home=home, env={})
    tool_cls = skill_tool_class(catalog)
    assert tool_cls is not None
    ctx = _ctx(ws)
    example = (home / ".claude" / "skills" / "internal-comms" / "examples" / "faq-answers.md").resolve()
    with pytest.raises(ToolError, match="outside the workspace"):  # before the skill is loaded
        await ReadTool().run(ReadArgs(file_path=str(example)), ctx)
    result = await tool_cls().run(SkillArgs(skill="internal-comms"), ctx)
    assert "## When to use this skill" in result.content
    assert "examples/faq-answers.md" in result.content
    read = await ReadTool().run(ReadArgs(file_path=str(example)), ctx)
    assert not read.is_error and "FAQ" in read.content
    listed = await LSTool().run(LSArgs(path=str(example.parent)), ctx)
    assert "general-comms.md" in listed.content
    with pytest.raises(ToolError, match="outside the workspace"):  # never written
        await WriteTool().run(WriteArgs(file_path=str(example), content="x"), ctx)
    other = (home / ".claude" / "skills" / "brand-guidelines" / "SKILL.md").resolve()
    with pytest.raises(ToolError, match="outside the workspace"):  # only the loaded skill's folder
        await ReadTool().run(ReadArgs(file_path=str(other)), ctx)
    with pytest.raises(ToolError, match="No skill named 'nope'"):
        await tool_cls().run(SkillArgs(skill="nope"), ctx)


def test_agent_files_skills_preload_into_the_subagents_system_prompt(dirs: tuple[Path, Path]) -> None:
    ws, home = dirs
    shutil.copytree(CORPUS, home / ".claude" / "skills")
    agents = ws / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "writer.md").write_text("---\nname: writer\ndescription: Writes updates.\ntools: Read, Skill\n"
                                      "skills: [internal-comms, missing]\n---\nYou write.\n")
    agent = parse_agent_file(agents / "writer.md", scope="project", file_format="claude")
    assert agent.skills == ("internal-comms", "missing") and agent.tools == ("Read", "Skill")
    assert not agent.warnings
    catalog = SkillCatalog.load(ws, home=home, env={})
    settings = load_config(workspace=ws).settings
    planner = Planner(settings, AgentRegistry([agent]), ws, dict(ALL_TOOLS), skills=catalog)
    prompt = planner.system_prompt(agent, "draft", None, (), date(2026, 1, 1))
    assert prompt.stable.startswith("You write.\n\n<skill name=\"internal-comms\"")
    assert "## When to use this skill" in prompt.stable
    assert [s.name for s in planner.preloaded(agent)] == ["internal-comms"]
