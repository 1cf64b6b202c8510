"""Whether permission rules match a tool call: its target resolved, deny and ask rules read as deny rules are (any
part of a Bash command, paths also in lower case), allow rules read per part of a command."""

from __future__ import annotations

from collections.abc import Sequence

from agentcli.tools.base import ToolContext, ToolError
from agentcli.tools.paths import display_path, match_glob, resolve_in_workspace
from agentcli.tools.permissions.rules import PermissionRule, domain_match, folded
from agentcli.tools.registry import PATH_TOOLS
from agentcli.tools.shell.rules import BashAnswers, deny_candidates, every_part_allowed, normalize_ws, wild_match
from agentcli.tools.shell.syntax import collapse_blanks, split_command


def resolved_target(name: str, raw: str, ctx: ToolContext) -> str:
    """For file tools, the workspace-relative path after following symlinks (absolute in an additional
    directory: rules written as workspace-relative globs never match there, `//abs/**` ones do)."""
    if name not in PATH_TOOLS or not raw:
        return raw
    try:
        return display_path(ctx, resolve_in_workspace(ctx, raw))
    except ToolError:
        return raw  # outside the workspace: the tool refuses it itself


def matches(rule: PermissionRule, name: str, target: str) -> bool:
    """Whether the rule's pattern (none: every call) matches one target of a call of tool `name`."""
    if rule.pattern is None:
        return True
    if name == "WebFetch" and rule.pattern.startswith("domain:"):
        return domain_match(rule.pattern, target)
    if name in PATH_TOOLS:
        return match_glob(rule.pattern, target, anchored=False)
    return wild_match(rule.pattern, normalize_ws(target))


def matching_rule(rules_of_kind: Sequence[PermissionRule], name: str, raw: str, target: str) -> PermissionRule | None:
    """The first deny (or ask) rule that matches the call, read as deny rules are (any part of a command)."""
    rules = [rule for rule in rules_of_kind if rule.denies(name)]
    if not rules:
        return None
    # Paths also in lower case against lower-case patterns: on a case-insensitive file system
    # (macOS, Windows) `.ENV` is the file `.env` a rule names.
    candidates = deny_candidates(target) if name == "Bash" else {target, raw}
    if name in PATH_TOOLS:
        rules += [folded(rule) for rule in rules if rule.pattern]
        candidates |= {c.lower() for c in candidates}
    for rule in rules:
        if rule.pattern is None or any(matches(rule, name, c) for c in candidates):
            return rule
    return None


def read_denied(deny: Sequence[PermissionRule], rel: str) -> bool:
    """Whether a Read deny rule covers the workspace-relative path `rel`."""
    rules = [rule for rule in deny if rule.denies("Read")]
    rules += [folded(rule) for rule in rules if rule.pattern]
    return any(matches(rule, "Read", c) for rule in rules for c in {rel, rel.lower()})


def allowed_by_rules(allow: Sequence[PermissionRule], name: str, target: str, answers: BashAnswers) -> bool:
    """Whether allow rules let the call run (a Bash command: every part of it, or the rule is the whole command;
    `answers`: the remembered "allow always" prefixes, which may cover the parts no rule does)."""
    rules = [rule for rule in allow if rule.covers(name)]
    if any(rule.pattern is None for rule in rules):
        return True
    if name != "Bash":
        return any(matches(rule, name, target) for rule in rules)
    parsed = split_command(target)
    if any(collapse_blanks(rule.pattern or "") == parsed.text for rule in rules):
        return True
    return every_part_allowed(parsed, [rule.pattern for rule in rules if rule.pattern], answers)
