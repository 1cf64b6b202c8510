"""Why a call that needs approval is refused when no one can give it: the text the model reads, naming what would
let the call run (`tools/permissions/policy` decides; this module only words it)."""

from __future__ import annotations

from agentcli.status import PermissionMode
from agentcli.tools.registry import EDIT_TOOLS, PATH_TOOLS
from agentcli.tools.shell.rules import rule_stem
from agentcli.tools.shell.syntax import split_command


def no_approver_reason(
    name: str, target: str, guard: str = "", asking: tuple[str, str] | None = None, *, mode: PermissionMode,
    bash_unsandboxed: str, non_interactive: bool,
) -> str:
    """The refusal of a `name` call on `target` that needs approval with no approver: `guard` names a guarded file,
    `asking` an ask rule (its text and where it is written)."""
    if asking is not None:
        who = "this is a non-interactive run (agentcli run)" if non_interactive else "there is no one to ask"
        return (
            f"Permission denied: {name} {target} is asked every time by the rule {asking[0]!r} in "
            f"{asking[1]}, and {who}; --yes, auto mode and allow rules do not cover it. The person can "
            "run agentcli interactively to answer. Do not retry this call; continue without it or explain what "
            "you would have done."
        )
    if name == "Bash" and mode == "auto" and bash_unsandboxed:
        return (
            f"Permission denied: Bash runs without a sandbox here ({bash_unsandboxed}), so auto mode and "
            '--yes do not approve it. The person can run agentcli interactively to approve each command, or set '
            '[sandbox] mode = "off" to run Bash unsandboxed on purpose. Do not retry this call; continue '
            "without it or explain what you would have done."
        )
    if guard:
        who = "this is a non-interactive run (agentcli run)" if non_interactive else "there is no one to ask"
        return (
            f"Permission denied: {name} of {target} needs approval every time: it is {guard}. Allow rules, "
            f'"allow always" and accept_edits mode do not cover it, and {who}. The person can make this change '
            "themselves, or re-run with --yes. Do not retry this call; continue without it or explain what "
            "you would have done."
        )
    if name == "Bash":
        parsed = split_command(target)
        if not parsed.certain:  # only a rule equal to the whole command would allow it
            example = f"Bash({parsed.text})" if "\n" not in parsed.text else "Bash"
        else:
            example = f"Bash({rule_stem(parsed.segments[0])}*)"
    elif name in PATH_TOOLS:
        example = f"Edit({target})" if name in EDIT_TOOLS else f"{name}({target})"
    else:
        example = name
    if non_interactive:
        return (
            f"Permission denied: {name} needs approval, and this is a non-interactive run (agentcli run). "
            f'The person can re-run with --yes or allow it in config ([permissions] allow = ["{example}"]). '
            "Do not retry this call; continue without it or explain what you would have done."
        )
    return (
        f"Permission denied: {name} needs approval and there is no one to ask in this session. The person can "
        f'allow it in config ([permissions] allow = ["{example}"]) or set [permissions] mode = "auto". '
        "Do not retry this call; continue without it or explain what you would have done."
    )
