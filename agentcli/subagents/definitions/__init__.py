"""What agents there are: the built-in and file-defined agent types (`registry`), agent files in agentcli's,
Claude Code's and opencode's formats (`agent_files`), other tools' formats (`foreign_agents`), their safe YAML front
matter (`front_matter`), skills with their `Skill` tool (`skills`, `skill_tool`), and what the catalogs of
definition files share, custom slash commands' too: their folders, problems and front-matter reading (`catalog`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.subagents.definitions.agent_files import (
        AgentType,
        agent_from_front_matter,
        all_tool_names,
        parse_agent_file,
    )
    from agentcli.subagents.definitions.catalog import (
        FolderGate,
        Place,
        Problem,
        Root,
        folders,
        keep_first,
        skipped,
        user_home,
    )
    from agentcli.subagents.definitions.front_matter import (
        TOOL_TOKEN,
        AgentFileError,
        read_bounded,
        read_front_matter,
        text_value,
    )
    from agentcli.subagents.definitions.registry import READ_ONLY_AGENT, AgentRegistry
    from agentcli.subagents.definitions.skill_tool import skill_tool_class
    from agentcli.subagents.definitions.skills import Skill, SkillCatalog, loaded_text, skill_body

__all__ = [
    "READ_ONLY_AGENT",
    "TOOL_TOKEN",
    "AgentFileError",
    "AgentRegistry",
    "AgentType",
    "FolderGate",
    "Place",
    "Problem",
    "Root",
    "Skill",
    "SkillCatalog",
    "agent_from_front_matter",
    "all_tool_names",
    "folders",
    "keep_first",
    "loaded_text",
    "parse_agent_file",
    "read_bounded",
    "read_front_matter",
    "skill_body",
    "skill_tool_class",
    "skipped",
    "text_value",
    "user_home",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.subagents.definitions.agent_files": [
        "AgentType",
        "agent_from_front_matter",
        "all_tool_names",
        "parse_agent_file",
    ],
    "agentcli.subagents.definitions.catalog": [
        "FolderGate",
        "Place",
        "Problem",
        "Root",
        "folders",
        "keep_first",
        "skipped",
        "user_home",
    ],
    "agentcli.subagents.definitions.front_matter": [
        "AgentFileError",
        "TOOL_TOKEN",
        "read_bounded",
        "read_front_matter",
        "text_value",
    ],
    "agentcli.subagents.definitions.registry": ["AgentRegistry", "READ_ONLY_AGENT"],
    "agentcli.subagents.definitions.skill_tool": ["skill_tool_class"],
    "agentcli.subagents.definitions.skills": ["Skill", "SkillCatalog", "loaded_text", "skill_body"],
})
