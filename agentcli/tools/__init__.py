"""The tools an agent calls, by family: `files/` (Read, Write, Edit, MultiEdit, LS, NotebookEdit, LSP), `search/`
(Glob, Grep), `shell/` (Bash, background commands, its lexer and rules, the reaper), `sandbox/` (Landlock, Seatbelt,
namespaces), `web/` (WebFetch, WebSearch), `permissions/` (the policy, its rules, guarded files); beside them what
every tool shares: the `Tool` base and its traits (`base`), what the tools ask of language servers (`code_intel`),
argument schemas, the registry, workspace paths and globs, ToolSearch (deferred tools), TodoWrite, and AskUserQuestion
(`ask_user`) with what it asks a front end (`questions`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.tools.arg_schema import self_contained
    from agentcli.tools.ask_user import AskUserQuestionTool
    from agentcli.tools.base import (
        FileAccess,
        FileLocks,
        Tool,
        ToolArgs,
        ToolContext,
        ToolError,
        ToolResult,
        tool_specs,
    )
    from agentcli.tools.code_intel import (
        LSP_OPERATIONS,
        MAX_DIAGNOSTICS,
        SEVERITY_RANK,
        CodeIntel,
        Diagnostic,
        EditDiagnostics,
        diagnostics_text,
    )
    from agentcli.tools.files.read import LSArgs, LSTool, ReadArgs, ReadTool, human_size
    from agentcli.tools.mcp_names import covers, full_name, is_mcp_name, server_of
    from agentcli.tools.on_demand import ToolSearchTool, defer_rule, deferred_note
    from agentcli.tools.paths import display_path, match_glob, resolve_in_workspace
    from agentcli.tools.permissions.approvals import Answer, Approval, Approver, PermissionRequest
    from agentcli.tools.permissions.guarded import guarded_reason
    from agentcli.tools.permissions.policy import PermissionPolicy
    from agentcli.tools.permissions.rules import PermissionRule
    from agentcli.tools.questions import (
        Choice,
        Picked,
        Question,
        QuestionAsker,
        QuestionReply,
        QuestionRequest,
        picked_from_program,
        replies_from_program,
    )
    from agentcli.tools.registry import (
        ALL_TOOLS,
        EDIT_TOOLS,
        KNOWN_TOOL_NAMES,
        MESSAGE_TOOL_NAMES,
        PATH_TOOLS,
        READ_ONLY_TOOLS,
        SKILL_TOOL_NAME,
        TASK_TOOL_NAMES,
        canonical_tool_name,
        names_with,
    )
    from agentcli.tools.sandbox.policy import Sandbox, session_sandbox
    from agentcli.tools.search.walk import SKIP_DIRS, Walk
    from agentcli.tools.shell.background import BackgroundCommand, BackgroundShells
    from agentcli.tools.shell.bash import (
        DRAIN_GRACE_SECONDS,
        TERM_GRACE_SECONDS,
        BashArgs,
        BashTool,
        stop_process_group,
    )
    from agentcli.tools.shell.env import KEY_VARIABLES, session_bash_env
    from agentcli.tools.shell.reaper import MARK_VARIABLE, reaper
    from agentcli.tools.web.netguard import WebFetchLimits
    from agentcli.tools.web.search_backends import (
        WebSearcher,
        not_configured,
        search_absent,
        searcher_for,
        session_backend,
    )

__all__ = [
    "ALL_TOOLS",
    "DRAIN_GRACE_SECONDS",
    "EDIT_TOOLS",
    "KEY_VARIABLES",
    "KNOWN_TOOL_NAMES",
    "LSP_OPERATIONS",
    "MARK_VARIABLE",
    "MAX_DIAGNOSTICS",
    "MESSAGE_TOOL_NAMES",
    "PATH_TOOLS",
    "READ_ONLY_TOOLS",
    "SEVERITY_RANK",
    "SKILL_TOOL_NAME",
    "SKIP_DIRS",
    "TASK_TOOL_NAMES",
    "TERM_GRACE_SECONDS",
    "Answer",
    "Approval",
    "Approver",
    "AskUserQuestionTool",
    "BackgroundCommand",
    "BackgroundShells",
    "BashArgs",
    "BashTool",
    "Choice",
    "CodeIntel",
    "Diagnostic",
    "EditDiagnostics",
    "FileAccess",
    "FileLocks",
    "LSArgs",
    "LSTool",
    "PermissionPolicy",
    "PermissionRequest",
    "PermissionRule",
    "Picked",
    "Question",
    "QuestionAsker",
    "QuestionReply",
    "QuestionRequest",
    "ReadArgs",
    "ReadTool",
    "Sandbox",
    "Tool",
    "ToolArgs",
    "ToolContext",
    "ToolError",
    "ToolResult",
    "ToolSearchTool",
    "Walk",
    "WebFetchLimits",
    "WebSearcher",
    "canonical_tool_name",
    "covers",
    "defer_rule",
    "deferred_note",
    "diagnostics_text",
    "display_path",
    "full_name",
    "guarded_reason",
    "human_size",
    "is_mcp_name",
    "match_glob",
    "names_with",
    "not_configured",
    "picked_from_program",
    "reaper",
    "replies_from_program",
    "resolve_in_workspace",
    "search_absent",
    "searcher_for",
    "self_contained",
    "server_of",
    "session_backend",
    "session_bash_env",
    "session_sandbox",
    "stop_process_group",
    "tool_specs",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.tools.arg_schema": ["self_contained"],
    "agentcli.tools.ask_user": ["AskUserQuestionTool"],
    "agentcli.tools.code_intel": [
        "LSP_OPERATIONS", "MAX_DIAGNOSTICS", "SEVERITY_RANK", "CodeIntel", "Diagnostic", "EditDiagnostics",
        "diagnostics_text",
    ],
    "agentcli.tools.base": [
        "FileAccess",
        "FileLocks",
        "Tool",
        "ToolArgs",
        "ToolContext",
        "ToolError",
        "ToolResult",
        "tool_specs",
    ],
    "agentcli.tools.files.read": ["LSArgs", "LSTool", "ReadArgs", "ReadTool", "human_size"],
    "agentcli.tools.mcp_names": ["covers", "full_name", "is_mcp_name", "server_of"],
    "agentcli.tools.on_demand": ["ToolSearchTool", "defer_rule", "deferred_note"],
    "agentcli.tools.paths": ["display_path", "match_glob", "resolve_in_workspace"],
    "agentcli.tools.permissions.approvals": ["Answer", "Approval", "Approver", "PermissionRequest"],
    "agentcli.tools.permissions.guarded": ["guarded_reason"],
    "agentcli.tools.permissions.policy": ["PermissionPolicy"],
    "agentcli.tools.permissions.rules": ["PermissionRule"],
    "agentcli.tools.questions": [
        "Choice", "Picked", "Question", "QuestionAsker", "QuestionReply", "QuestionRequest", "picked_from_program",
        "replies_from_program",
    ],
    "agentcli.tools.registry": [
        "ALL_TOOLS",
        "EDIT_TOOLS",
        "KNOWN_TOOL_NAMES",
        "MESSAGE_TOOL_NAMES",
        "PATH_TOOLS",
        "READ_ONLY_TOOLS",
        "SKILL_TOOL_NAME",
        "TASK_TOOL_NAMES",
        "canonical_tool_name",
        "names_with",
    ],
    "agentcli.tools.sandbox.policy": ["Sandbox", "session_sandbox"],
    "agentcli.tools.search.walk": ["SKIP_DIRS", "Walk"],
    "agentcli.tools.shell.background": ["BackgroundCommand", "BackgroundShells"],
    "agentcli.tools.shell.bash": [
        "BashArgs",
        "BashTool",
        "DRAIN_GRACE_SECONDS",
        "TERM_GRACE_SECONDS",
        "stop_process_group",
    ],
    "agentcli.tools.shell.env": ["KEY_VARIABLES", "session_bash_env"],
    "agentcli.tools.shell.reaper": ["MARK_VARIABLE", "reaper"],
    "agentcli.tools.web.netguard": ["WebFetchLimits"],
    "agentcli.tools.web.search_backends": [
        "WebSearcher", "not_configured", "search_absent", "searcher_for", "session_backend",
    ],
})
