"""`agentcli skills list` and `agentcli commands list`: the skills and custom slash commands of a workspace, where
each came from, what was skipped (one line each: file and reason), shadowed or left unused.

Only typer and the standard library at import time: the catalogs load inside the commands.
"""

from __future__ import annotations

from typing import Any

import typer

from agentcli.cli.common import CwdOption, JsonOption, echo, print_json, short_path, table
from agentcli.frontend import workspace_dir

skills_app = typer.Typer(help="Skills (SKILL.md folders): what the model may load.", rich_markup_mode=None)
commands_app = typer.Typer(help="Custom slash commands (.claude/commands/*.md).", rich_markup_mode=None)


def _cut(text: str, width: int = 70) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


@skills_app.command("list")
def skills_list(cwd: CwdOption = None, as_json: JsonOption = False) -> None:
    """List the skills (project ones first), then skipped files, warnings and shadowed skills."""
    from agentcli.plugins import session_plugins
    from agentcli.subagents import SkillCatalog

    workspace = workspace_dir(cwd)
    catalog = SkillCatalog.load(workspace, plugins=session_plugins(workspace).plugins)
    if as_json:
        winners = {name: str(skill.path) for name, skill in catalog.skills.items()}
        record: dict[str, Any] = {
            "skills": [s.as_dict() for s in catalog.skills.values()],
            "skipped": [{"path": p.path, "reason": p.reason} for p in catalog.problems],
            "shadowed": [{**s.as_dict(), "shadowed_by": winners.get(s.name)} for s in catalog.shadowed],
        }
        print_json(record)
        return
    if catalog.skills:
        rows = [[s.name, s.scope, _cut(s.description), short_path(s.path, workspace)] for s in catalog.skills.values()]
        echo(table(["NAME", "SCOPE", "DESCRIPTION", "SOURCE"], rows))
    else:
        echo("No skills (folders with a SKILL.md in .claude/skills or .agents/skills, of the workspace or ~).")
    if catalog.problems:
        echo("\nSkipped files:")
        for problem in catalog.problems:
            echo(f"  {short_path(problem.path, workspace)}: {problem.reason}")
    lines = [f"  {s.name} ({short_path(s.path, workspace)}): {w}" for s in catalog.with_warnings() for w in s.warnings]
    tools = [f"  {s.name}: {', '.join(s.allowed_tools)}" for s in catalog.skills.values() if s.allowed_tools]
    if lines:
        echo("\nWarnings:")
        echo("\n".join(lines))
    if tools:
        echo("\nallowed-tools (informational: agentcli asks for each call as usual):")
        echo("\n".join(tools))
    if catalog.shadowed:
        echo("\nShadowed skills:")
        for skill in catalog.shadowed:
            winner = catalog.skills[skill.name]
            echo(f"  {skill.name} ({short_path(skill.path, workspace)}) is hidden by "
                               f"{short_path(winner.path, workspace)}")


@commands_app.command("list")
def commands_list(cwd: CwdOption = None, as_json: JsonOption = False) -> None:
    """List the custom slash commands, then skipped or unused files and shadowed commands."""
    from agentcli.frontend import CommandSet
    from agentcli.plugins import session_plugins
    from agentcli.subagents import SkillCatalog
    from agentcli.ui import COMMANDS

    workspace = workspace_dir(cwd)
    plugins = session_plugins(workspace).plugins
    found = CommandSet.load(workspace, reserved=COMMANDS, plugins=plugins,
                            skills=SkillCatalog.load(workspace, plugins=plugins).skills.values())
    if as_json:
        print_json({
            "commands": [c.as_dict() for c in found.commands.values()],
            "skipped": [{"path": p.path, "reason": p.reason} for p in found.problems],
            "shadowed": [c.as_dict() for c in found.shadowed],
        })
        return
    if found.commands:
        rows = [[f"/{command.name if found.find(command.name) is command else command.qualified}", command.where,
                 _cut(command.description + (f" {command.argument_hint}" if command.argument_hint else ""), 60),
                 short_path(command.path, workspace)] for command in found.commands.values()]
        echo(table(["COMMAND", "FROM", "DESCRIPTION", "SOURCE"], rows))
    else:
        echo("No custom slash commands (.claude/commands/*.md of the workspace or ~).")
    if found.problems:
        echo("\nSkipped files:")
        for problem in found.problems:
            echo(f"  {short_path(problem.path, workspace)}: {problem.reason}")
    if found.shadowed:
        echo("\nShadowed commands:")
        for command in found.shadowed:
            echo(f"  /{command.qualified} ({short_path(command.path, workspace)}) is hidden by "
                               f"{short_path(found.commands[command.qualified].path, workspace)}")

