"""`agentcli agents list|show|new`: the subagent types of a workspace, where each came from, what was skipped.

Only typer and the standard library at import time: the registry and config load inside the commands.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agentcli.cli.common import ConfigOption, CwdOption, JsonOption, echo, print_json, short_path, table
from agentcli.frontend import EXIT_USAGE, fail, load, workspace_dir

if TYPE_CHECKING:
    from agentcli.subagents import AgentRegistry, AgentType

agents_app = typer.Typer(help="Subagent types: built-in and from agent files.", rich_markup_mode=None)

def _registry(cwd: Path | None, config: Path | None) -> tuple[AgentRegistry, Path]:
    """The workspace's registry, with the model aliases of its effective config."""
    from agentcli.subagents import AgentRegistry

    workspace = workspace_dir(cwd)
    loaded = load(workspace, config)  # trust decision, one warning line, exit 2 on a config error
    from agentcli.plugins import session_plugins

    plugins = session_plugins(workspace, dirs=loaded.settings.plugins.dirs, enabled=loaded.settings.plugins.enabled)
    return AgentRegistry.load(workspace, aliases=loaded.settings.models.aliases, plugins=plugins.plugins), workspace


def tools_summary(agent: AgentType) -> str:
    """`all`, `read-only`, `all except ...` or the allowed tools."""
    from agentcli.subagents import READ_ONLY_AGENT, all_tool_names
    from agentcli.tools import is_mcp_name

    allowed = agent.allowed_tools(all_tool_names())
    if agent.tools is None and not agent.disallowed_tools:
        return "all"
    if set(allowed) == set(READ_ONLY_AGENT):  # the read-only tools and messaging, as the built-in read-only types
        return "read-only"
    if agent.tools is None:
        return "all except " + ", ".join(agent.disallowed_tools)
    mcp = [t for t in agent.tools if is_mcp_name(t)]  # known once their servers run
    if not allowed and not mcp:
        return "none"
    return ", ".join([*allowed, *mcp]) + (" (read-only)" if agent.read_only and not mcp else "")


def _label(agent: AgentType, workspace: Path) -> str:
    return f"{agent.name} ({agent.scope}, {short_path(agent.source, workspace)})"


@agents_app.command("list")
def agents_list(cwd: CwdOption = None, config: ConfigOption = None, as_json: JsonOption = False) -> None:
    """List the subagent types, then skipped files, warnings and shadowed definitions."""
    registry, workspace = _registry(cwd, config)
    if as_json:
        winners = {name: agent.source for name, agent in registry.types.items()}
        record: dict[str, Any] = {
            "agents": [t.as_dict(prompt=False) for t in registry.types.values()],
            "skipped": [{"path": p.path, "reason": p.reason} for p in registry.problems],
            "shadowed": [{**t.as_dict(prompt=False), "shadowed_by": winners.get(t.name)} for t in registry.shadowed],
        }
        print_json(record)
        return

    rows = [
        [t.name, t.scope, t.file_format, t.model or "inherit", tools_summary(t), short_path(t.source, workspace)]
        for t in registry.types.values()
    ]
    echo(table(["NAME", "SCOPE", "FORMAT", "MODEL", "TOOLS", "SOURCE"], rows))
    if registry.problems:
        echo("\nSkipped files:")
        for problem in registry.problems:
            echo(f"  {short_path(problem.path, workspace)}: {problem.reason}")
    flagged = registry.with_warnings()
    if flagged:
        echo("\nWarnings:")
        for agent in flagged:
            for warning in agent.warnings:
                echo(f"  {_label(agent, workspace)}: {warning}")
    if registry.shadowed:
        echo("\nShadowed definitions:")
        for agent in registry.shadowed:
            winner = registry.types[agent.name]
            echo(f"  {_label(agent, workspace)} is hidden by {_label(winner, workspace)}")


@agents_app.command("show")
def agents_show(
    name: Annotated[str, typer.Argument(metavar="NAME", help="The agent's name (case-insensitive).")],
    cwd: CwdOption = None,
    config: ConfigOption = None,
    as_json: JsonOption = False,
) -> None:
    """Show one subagent type: where it came from, its model, tools, limits, warnings and prompt."""
    registry, workspace = _registry(cwd, config)
    agent = registry.normalize(name)
    if agent is None:
        fail(f"no agent named '{name}'. Available: {', '.join(registry.names())}")
    if as_json:
        print_json(agent.as_dict())
        return
    from agentcli.subagents import all_tool_names

    fields = [
        ("source", agent.source),
        ("format", agent.file_format),
        ("scope", agent.scope),
        ("description", agent.description),
        ("model", agent.model or "inherit"),
        ("tools", ", ".join(agent.allowed_tools(all_tool_names())) or "none"),
        ("disallowed", ", ".join(agent.disallowed_tools) or "-"),
        ("read-only", "yes" if agent.read_only else "no"),
        ("max turns", str(agent.max_turns) if agent.max_turns else "-"),
        ("timeout", f"{agent.timeout_seconds} s" if agent.timeout_seconds else "-"),
    ]
    if agent.fork_context:
        fields.append(("fork", "yes: every task starts from its parent's conversation"))
    if agent.skills:
        from agentcli.subagents import SkillCatalog

        catalog = SkillCatalog.load(workspace)
        named = [name if catalog.get(name) is not None else f"{name} (not found)" for name in agent.skills]
        fields.append(("skills", ", ".join(named) + ": preloaded into its system prompt"))
    fields += [("warning", w) for w in agent.warnings]
    width = max(len(k) for k, _ in fields) + 1
    pad = " " * (width + 3)
    lines = [f"Agent {agent.name}"]
    for key, value in fields:
        value = value.replace("\n", "\n" + pad)
        lines.append(f"  {(key + ':').ljust(width)} {value}")
    echo("\n".join(lines))
    echo("\nPrompt:\n")
    echo(agent.prompt)


_NEW_NAME = r"[a-z0-9][a-z0-9-]{0,63}"
_NEW_BODY = """You are the {name} subagent. Your purpose: {description}

Work only on the task you are given; when it is done, answer with what you found or changed, the files
involved (with line numbers where they help) and anything left undone.
"""


def agent_file_text(name: str, description: str, tools: list[str], model: str) -> str:
    """A Claude Code-format agent file: YAML front matter (name, description, tools, model), then the prompt."""
    import yaml

    front: dict[str, str] = {"name": name, "description": description}
    if tools:
        front["tools"] = ", ".join(tools)
    if model:
        front["model"] = model
    head = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000)
    return f"---\n{head}---\n\n" + _NEW_BODY.format(name=name, description=description)


@agents_app.command("new")
def agents_new(
    name: Annotated[str, typer.Argument(metavar="NAME", help="Lowercase letters, digits and hyphens.")],
    description: Annotated[
        str, typer.Option("--description", "-d", help="When the main agent should use it (shown to the model).")
    ] = "",
    tools: Annotated[
        str, typer.Option("--tools", help="Comma-separated tool names (default: every tool), e.g. Read, Grep, Glob.")
    ] = "",
    model: Annotated[str, typer.Option("--model", help="inherit (default), sonnet, opus, haiku, main or light.")] = "",
    user: Annotated[bool, typer.Option("--user", help="Write it to ~/.claude/agents (all workspaces).")] = False,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing file of that name.")] = False,
    cwd: CwdOption = None,
) -> None:
    """Write a new agent file in Claude Code's format (`.claude/agents/NAME.md`) and check that it loads."""
    import re

    from agentcli.subagents import AgentFileError, all_tool_names, parse_agent_file
    from agentcli.text import terminal_safe
    from agentcli.tools import canonical_tool_name

    if re.fullmatch(_NEW_NAME, name) is None:
        fail(f"'{terminal_safe(name)}' is not a valid agent name: use lowercase letters, digits and hyphens",
             EXIT_USAGE)
    wanted = [t.strip() for t in tools.split(",") if t.strip()]
    unknown = [t for t in wanted if canonical_tool_name(t) not in all_tool_names()]
    if unknown:
        fail(f"unknown tool(s): {', '.join(map(terminal_safe, unknown))}; known: {', '.join(all_tool_names())}",
             EXIT_USAGE)
    folder = (Path.home() if user else workspace_dir(cwd)) / ".claude" / "agents"
    path = folder / f"{name}.md"
    if path.exists() and not force:
        fail(f"{path} already exists (--force replaces it)")
    canonical = [canonical_tool_name(t) or t for t in wanted]  # `read` is written as Read
    text = agent_file_text(name, " ".join(description.split()) or f"Use for {name.replace('-', ' ')} tasks.",
                           canonical, model.strip())
    try:
        folder.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        fail(f"cannot write {path}: {exc.strerror or exc}")
    try:
        agent = parse_agent_file(path, scope="user" if user else "project", file_format="claude")
    except AgentFileError as exc:  # our own output must load: say so rather than leave a broken file unnoticed
        fail(f"{path} was written but does not load: {exc}")
    for warning in agent.warnings:
        echo(f"warning: {terminal_safe(warning)}")
    echo(f"created {path}: agent '{agent.name}', tools: {tools_summary(agent)}; its prompt follows the front matter")
