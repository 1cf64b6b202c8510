"""Plan mode, as a person coming from Claude Code expects it: in read-only mode the main agent is asked for a plan,
and `/go` carries the plan out once the person agrees (switching to accept-edits, or ask with `/go ask`)."""

from __future__ import annotations

#: Sent with every prompt of the person's while the mode is read-only (agentcli's own words, not untrusted).
PLAN_MODE_NOTE = (
    "<plan_mode>The person switched agentcli to plan mode: every tool that changes files or runs commands is "
    "refused. Investigate with the read-only tools (subagents included), then answer with a concise, numbered "
    "plan of the changes you would make (files, what changes, how to check it). Do not try to make the changes: "
    "the person reads the plan and tells agentcli to carry it out.</plan_mode>"
)
#: What the person is told when a turn in plan mode ends.
PLAN_READY_NOTE = (
    "Plan mode: /go carries out this plan (edits accepted without asking), /go ask asks before each change; "
    "or keep planning with another prompt."
)
#: The prompt `/go` sends.
GO_PROMPT = "Go ahead: carry out the plan above."
