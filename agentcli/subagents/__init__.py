"""Delegation: the Task tools (`task_tool`), the planner (`plan`), the runner and its task table (`runner`,
`tasks`), the supervisor of one running subagent, budgets, limits, results, forks; by concern in folders:
`definitions/` (agent types, agent files, skills), `worktrees/` (isolated tasks), `messaging/` (messages between
agents) and `result_cache/` (reused results).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.subagents.budget import SessionBudget
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
    from agentcli.subagents.definitions.output_styles import OutputStyle, OutputStyles
    from agentcli.subagents.definitions.registry import READ_ONLY_AGENT, AgentRegistry, plugin_agents
    from agentcli.subagents.definitions.skill_tool import skill_tool_class
    from agentcli.subagents.definitions.skills import Skill, SkillCatalog
    from agentcli.subagents.messaging.mailbox import PERSON
    from agentcli.subagents.messaging.tools import message_tools
    from agentcli.subagents.runner import SubagentRunner
    from agentcli.subagents.schema import answer_format, compile_schema, document_text
    from agentcli.subagents.supervisor import schema_problem
    from agentcli.subagents.task_tool import ParentLink, TaskArgs, output_tools, task_tools
    from agentcli.subagents.toolbox import Toolbox, deferred_line
    from agentcli.subagents.worktrees.admin import Leftover, age, leftovers, prune, prune_at_start
    from agentcli.subagents.worktrees.worktree import WorktreeError

__all__ = [
    "PERSON",
    "READ_ONLY_AGENT",
    "TOOL_TOKEN",
    "AgentFileError",
    "AgentRegistry",
    "AgentType",
    "FolderGate",
    "Leftover",
    "OutputStyle",
    "OutputStyles",
    "ParentLink",
    "Place",
    "Problem",
    "Root",
    "SessionBudget",
    "Skill",
    "SkillCatalog",
    "SubagentRunner",
    "TaskArgs",
    "Toolbox",
    "WorktreeError",
    "age",
    "agent_from_front_matter",
    "all_tool_names",
    "answer_format",
    "compile_schema",
    "deferred_line",
    "document_text",
    "folders",
    "keep_first",
    "leftovers",
    "message_tools",
    "output_tools",
    "parse_agent_file",
    "plugin_agents",
    "prune",
    "prune_at_start",
    "read_bounded",
    "read_front_matter",
    "schema_problem",
    "skill_tool_class",
    "skipped",
    "task_tools",
    "text_value",
    "user_home",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.subagents.budget": ["SessionBudget"],
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
    "agentcli.subagents.definitions.output_styles": ["OutputStyle", "OutputStyles"],
    "agentcli.subagents.definitions.registry": ["AgentRegistry", "READ_ONLY_AGENT", "plugin_agents"],
    "agentcli.subagents.definitions.skill_tool": ["skill_tool_class"],
    "agentcli.subagents.definitions.skills": ["Skill", "SkillCatalog"],
    "agentcli.subagents.messaging.mailbox": ["PERSON"],
    "agentcli.subagents.messaging.tools": ["message_tools"],
    "agentcli.subagents.runner": ["SubagentRunner"],
    "agentcli.subagents.schema": ["answer_format", "compile_schema", "document_text"],
    "agentcli.subagents.supervisor": ["schema_problem"],
    "agentcli.subagents.task_tool": ["ParentLink", "TaskArgs", "output_tools", "task_tools"],
    "agentcli.subagents.toolbox": ["Toolbox", "deferred_line"],
    "agentcli.subagents.worktrees.admin": ["Leftover", "age", "leftovers", "prune", "prune_at_start"],
    "agentcli.subagents.worktrees.worktree": ["WorktreeError"],
})
