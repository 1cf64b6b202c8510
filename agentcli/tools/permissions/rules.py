"""Permission rules as written: `Tool` or `Tool(pattern)`, which tools a rule is about, and the matching helpers
the policy (`tools/permissions/policy`) shares."""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from agentcli.tools import mcp_names
from agentcli.tools.registry import EDIT_TOOLS, FILE_SHOWING_TOOLS, canonical_tool_name

_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


def _tool_key(name: str) -> str:
    return canonical_tool_name(name) or name.strip()


@dataclass(frozen=True)
class PermissionRule:
    """One `Tool` or `Tool(pattern)` rule."""

    tool: str  # canonical tool name (as written when agentcli has no such tool)
    pattern: str | None
    text: str
    origin: str = ""  # where the rule was written, when not agentcli's [permissions] (a Claude Code settings file)

    @classmethod
    def parse(cls, text: str, origin: str = "") -> PermissionRule:
        """Parse a rule; ValueError on bad syntax."""
        match = _RULE.match(text)
        if not match:
            raise ValueError(f"bad permission rule {text!r}: write Tool or Tool(pattern), e.g. 'Bash(git status*)'")
        pattern = match.group(2)
        pattern = pattern.strip() if pattern is not None else None
        return cls(_tool_key(match.group(1)), pattern or None, text.strip(), origin)

    def where(self, kind: str) -> str:
        """Where the rule is written: `[permissions] deny`, or the settings file and key it came from."""
        return f"{self.origin} permissions.{kind}" if self.origin else f"[permissions] {kind}"

    def covers(self, tool: str) -> bool:
        """Whether the rule is about `tool` (an Edit rule covers every file-editing tool)."""
        if self.tool == "Edit":
            return tool in EDIT_TOOLS
        return self.tool.lower() == tool.lower() or mcp_names.covers(self.tool, tool)

    def denies(self, tool: str) -> bool:
        """Whether this rule, as a deny rule, is about `tool`: a rule on any file-editing tool covers
        them all (`Write(x)` also stops Edit and MultiEdit on x: they change the same file), and a Read
        rule also stops Edit and MultiEdit (they read the file and show the changed part)."""
        if self.tool in EDIT_TOOLS:
            return tool in EDIT_TOOLS
        if self.tool == "Read" and tool in FILE_SHOWING_TOOLS:
            return True
        return self.covers(tool)


def folded(rule: PermissionRule) -> PermissionRule:
    """`rule` with its pattern in lower case (for matching lower-cased paths)."""
    return PermissionRule(rule.tool, rule.pattern.lower() if rule.pattern else None, rule.text, rule.origin)


def domain_match(pattern: str, url: str) -> bool:
    """Claude Code's `domain:host` (`domain:*.host` for the names below it) against a URL's host."""
    wanted = pattern[len("domain:"):].strip().lower().rstrip(".")
    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".")
    except ValueError:
        return False
    if wanted.startswith("*."):
        return host.endswith(wanted[1:])
    return host == wanted
