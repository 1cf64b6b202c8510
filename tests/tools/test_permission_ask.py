"""Ask rules (Claude Code's `permissions.ask`) and `WebFetch(domain:…)` patterns in the permission policy."""

from __future__ import annotations

import dataclasses

from agentcli.config.claude_settings import ClaudeRule
from agentcli.tools.base import ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from tests.tools.test_permissions import ScriptedApprover as Approver
from tests.tools.test_permissions import check


async def test_an_ask_rule_asks_in_auto_mode_over_an_allow_rule_and_every_time(ctx: ToolContext) -> None:
    approver = Approver("allow_always", "allow_once")
    policy = PermissionPolicy("auto", allow=["Bash"], ask=["Bash(git push:*)"], approver=approver)
    assert (await check(policy, ctx, "Bash", command="git push origin main")).allowed
    assert (await check(policy, ctx, "Bash", command="git status && git push")).allowed  # any part asks
    assert len(approver.requests) == 2, "an 'allow always' answer does not cover an ask rule"
    assert "asked every time" in approver.requests[0].always_scope
    assert (await check(policy, ctx, "Bash", command="git status")).allowed  # not named: auto mode runs it
    assert len(approver.requests) == 2


async def test_an_ask_rule_without_anyone_to_ask_refuses_even_with_yes(ctx: ToolContext) -> None:
    policy = PermissionPolicy("auto", ask=["Edit(src/**)"], non_interactive=True)
    decision = await check(policy, ctx, "Write", file_path="src/a.py", content="x")
    assert not decision.allowed
    assert "is asked every time by the rule 'Edit(src/**)' in [permissions] ask" in decision.reason
    assert "--yes, auto mode and allow rules do not cover it" in decision.reason
    assert (await check(policy, ctx, "Write", file_path="b.py", content="x")).allowed


async def test_an_ask_rule_asks_before_a_read_and_deny_wins_over_ask(ctx: ToolContext) -> None:
    approver = Approver("deny")
    policy = PermissionPolicy("ask", deny=["Read(.env)"], ask=["Read(config/**)", "Read(.env)"], approver=approver)
    assert not (await check(policy, ctx, "Read", file_path="config/prod.yml")).allowed
    assert len(approver.requests) == 1
    denied = await check(policy, ctx, "Read", file_path=".env")
    assert not denied.allowed and "[permissions] deny" in denied.reason
    assert len(approver.requests) == 1
    assert (await check(policy, ctx, "Read", file_path="README.md")).allowed


async def test_readonly_still_refuses_what_an_ask_rule_names(ctx: ToolContext) -> None:
    approver = Approver()
    policy = PermissionPolicy("readonly", ask=["Bash"], approver=approver)
    assert not (await check(policy, ctx, "Bash", command="ls")).allowed
    assert approver.requests == []


async def test_webfetch_domain_rules_match_the_urls_host(ctx: ToolContext) -> None:
    policy = PermissionPolicy("auto", deny=["WebFetch(domain:evil.example)", "WebFetch(domain:*.tracker.test)"])
    for url in ("https://evil.example/x", "http://EVIL.example:8080/", "https://a.b.tracker.test/p"):
        decision = await check(policy, ctx, "WebFetch", url=url, prompt="read it")
        assert not decision.allowed, url
    allow = PermissionPolicy("ask", allow=["WebFetch(domain:docs.python.org)"], non_interactive=True)
    assert (await check(allow, ctx, "WebFetch", url="https://docs.python.org/3/", prompt="p")).allowed
    other = await check(allow, ctx, "WebFetch", url="https://docs.python.org.evil.example/", prompt="p")
    assert not other.allowed


async def test_claude_rules_join_with_their_file_and_replace_those_joined_before(ctx: ToolContext) -> None:
    policy = PermissionPolicy("auto", deny=["Bash(rm *)"])
    notes = policy.use_claude_rules([
        ClaudeRule("deny", "Bash(curl:*)", "Bash(curl:*)", "/home/me/.claude/settings.json"),
        ClaudeRule("deny", "ExitPlanMode", "ExitPlanMode", "/home/me/.claude/settings.json"),
    ])
    assert notes == ["/home/me/.claude/settings.json: permissions.deny rule 'ExitPlanMode' has no effect: "
                     "agentcli has no ExitPlanMode tool"]
    decision = await check(policy, ctx, "Bash", command="curl -s x")
    assert "in /home/me/.claude/settings.json permissions.deny" in decision.reason
    assert policy.use_claude_rules([]) == []
    assert [rule.text for rule in policy.deny] == ["Bash(rm *)"]
    assert (await check(policy, ctx, "Bash", command="curl -s x")).allowed




async def test_a_claude_task_rule_names_a_subagent_type(ctx: ToolContext) -> None:
    from agentcli.subagents.task_tool import TaskArgs, TaskTool

    policy = PermissionPolicy("auto")
    policy.use_claude_rules([ClaudeRule("deny", "Task(explore: *)", "Agent(explore)", "/s.json")])
    tool = TaskTool.__new__(TaskTool)  # the permission target needs no runner
    args = TaskArgs(description="Find the loader", prompt="Where is it?", subagent_type="explore")
    denied = await policy.check(tool, args, dataclasses.replace(ctx, permissions=policy))
    assert not denied.allowed and "'Task(explore: *)' in /s.json permissions.deny" in denied.reason
    other = TaskArgs(description="Find the loader", prompt="Where is it?", subagent_type="plan")
    assert (await policy.check(tool, other, dataclasses.replace(ctx, permissions=policy))).allowed
