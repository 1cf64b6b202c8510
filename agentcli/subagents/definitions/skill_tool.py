"""The `Skill` tool: the model loads a skill's instructions by name (progressive disclosure, `subagents.skills`).

It exists only when the session has skills, so a session without any sends exactly what it sent before. Its
description lists each skill's name and description (built once per session from the catalog: the text is the
same in every request, so the provider's prompt cache keeps serving it); a call returns the skill's `SKILL.md`
body and the files it bundles, and lets this agent's Read and LS read inside that skill's folder (never write).
"""

from __future__ import annotations

import asyncio
from typing import Any, ClassVar

from pydantic import Field

from agentcli.subagents.definitions.front_matter import AgentFileError
from agentcli.subagents.definitions.skills import Skill, SkillCatalog, listing, loaded_text, skill_body
from agentcli.tools import SKILL_TOOL_NAME, Tool, ToolArgs, ToolContext, ToolError, ToolResult

_HEAD = (
    "Load a skill: instructions (and files) for a kind of task, written by the person or their team. When a "
    "task matches one of the skills below, call this tool with its name first and follow what it returns. "
    "Skills available:"
)


class SkillArgs(ToolArgs):
    """Arguments of Skill."""

    skill: str = Field(description="The skill's name, as listed")
    args: str | None = Field(None, description="Optional arguments for the skill")


class SkillTool(Tool[SkillArgs]):
    """Returns one skill's body; the catalog is bound by `skill_tool_class`."""

    name: ClassVar[str] = SKILL_TOOL_NAME
    args_model: ClassVar[type[ToolArgs]] = SkillArgs
    concurrency_safe: ClassVar[bool] = True
    catalog: ClassVar[SkillCatalog] = SkillCatalog()
    listed: ClassVar[str] = ""

    def description(self) -> str:
        return self.listed

    def summary(self, args: SkillArgs) -> str:
        return args.skill.strip()[:120]

    async def run(self, args: SkillArgs, ctx: ToolContext) -> ToolResult:
        skill = self.catalog.get(args.skill)
        if skill is None or not skill.model_invocable:  # one its author keeps to the person is not there for you
            names = ", ".join(s.name for s in self.catalog.for_model()) or "none"
            raise ToolError(f"No skill named {args.skill.strip()!r}. Available: {names}")
        try:
            body = await asyncio.to_thread(skill_body, skill)
            text = await asyncio.to_thread(loaded_text, skill, body, args.args or "")
        except AgentFileError as exc:
            raise ToolError(f"Skill {skill.name} cannot be loaded ({skill.path}): {exc}") from None
        grant_reads(ctx, [skill])
        return ToolResult(text, metadata={"skill": skill.name, "path": str(skill.path)})


def grant_reads(ctx: ToolContext, skills: list[Skill]) -> None:
    """Let this agent's Read and LS read inside these skills' folders (read-only; `tools.paths.resolve_for_read`)."""
    for skill in skills:
        if skill.folder not in ctx.read_roots:
            ctx.read_roots.append(skill.folder)


def skill_tool_class(catalog: SkillCatalog) -> type[Tool[Any]] | None:
    """The session's Skill tool class with its listing, or None when there is no skill (no tool is offered)."""
    skills = catalog.for_model()
    if not skills:
        return None
    text = f"{_HEAD}\n{listing(skills)}"
    return type("SkillTool", (SkillTool,), {"catalog": catalog, "listed": text})
