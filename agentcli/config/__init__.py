"""The settings: the typed schema (`schema`), reading one layer (`layers`), the merge with each value's origin
(`merge`), what an untrusted project may set (`untrusted`), the layered load (`load`), `config show`, saving a
setting (`write`), trusted workspaces (`trust`), Claude Code's settings files (`claude_settings`) and the folders
beside the workspace (`additional_dirs`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.config.additional_dirs import session_additional_dirs
    from agentcli.config.claude_settings import (
        ClaudeRule,
        agentcli_rule,
        claude_output_style,
        claude_setting_layers,
        claude_status_line,
        project_claude_settings,
        read_claude_permissions,
        read_settings_doc,
        user_claude_settings,
    )
    from agentcli.config.layers import ENV_PREFIX, ConfigError, is_secret_key, read_config_text, read_toml
    from agentcli.config.load import LoadedConfig, Settings, load_config
    from agentcli.config.schema import (
        BudgetSettings,
        ExecutorSettings,
        HookEventName,
        HookMatcherSettings,
        LightModelSettings,
        McpSettings,
        ModelSettings,
        PermissionsSettings,
        TaskToolSettings,
        WebSearchSettings,
    )
    from agentcli.config.show import render_config
    from agentcli.config.write import SaveError, save_user_setting

__all__ = [
    "ENV_PREFIX",
    "BudgetSettings",
    "ClaudeRule",
    "ConfigError",
    "ExecutorSettings",
    "HookEventName",
    "HookMatcherSettings",
    "LightModelSettings",
    "LoadedConfig",
    "McpSettings",
    "ModelSettings",
    "PermissionsSettings",
    "SaveError",
    "Settings",
    "TaskToolSettings",
    "WebSearchSettings",
    "agentcli_rule",
    "claude_output_style",
    "claude_setting_layers",
    "claude_status_line",
    "is_secret_key",
    "load_config",
    "project_claude_settings",
    "read_claude_permissions",
    "read_config_text",
    "read_settings_doc",
    "read_toml",
    "render_config",
    "save_user_setting",
    "session_additional_dirs",
    "user_claude_settings",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.config.additional_dirs": ["session_additional_dirs"],
    "agentcli.config.claude_settings": [
        "ClaudeRule",
        "agentcli_rule",
        "claude_output_style",
        "claude_setting_layers",
        "claude_status_line",
        "project_claude_settings",
        "read_claude_permissions",
        "read_settings_doc",
        "user_claude_settings",
    ],
    "agentcli.config.layers": ["ConfigError", "ENV_PREFIX", "is_secret_key", "read_config_text", "read_toml"],
    "agentcli.config.load": ["LoadedConfig", "Settings", "load_config"],
    "agentcli.config.schema": [
        "BudgetSettings",
        "HookEventName",
        "HookMatcherSettings",
        "ExecutorSettings",
        "LightModelSettings",
        "McpSettings",
        "ModelSettings",
        "PermissionsSettings",
        "TaskToolSettings",
        "WebSearchSettings",
    ],
    "agentcli.config.show": ["render_config"],
    "agentcli.config.write": ["SaveError", "save_user_setting"],
})
