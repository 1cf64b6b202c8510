"""What agents there are: the built-in and file-defined agent types (`registry`), agent files in agentcli's,
Claude Code's and opencode's formats (`agent_files`), other tools' formats (`foreign_agents`), their safe YAML front
matter (`front_matter`), skills with their `Skill` tool (`skills`, `skill_tool`), the main agent's output styles
(`output_styles`), and what the catalogs of definition files share, custom slash commands' too: their folders,
problems and front-matter reading (`catalog`).

Its modules are its face; other packages import their names from `agentcli.subagents`.
"""

__all__ = [
    "agent_files",
    "catalog",
    "foreign_agents",
    "front_matter",
    "output_styles",
    "registry",
    "skill_tool",
    "skills",
]
