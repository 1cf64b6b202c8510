"""The permission policy: deny wins, allow rules, modes, one-shot refusals, the approval queue."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path
from typing import Any

import pytest

from agentcli.config.schema import PermissionsSettings
from agentcli.tools.base import Tool, ToolContext
from agentcli.tools.permissions.approvals import Approval, PermissionDecision, PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy, PermissionRule
from agentcli.tools.registry import build_tools

TOOLS: dict[str, Tool[Any]] = {tool.name: tool for tool in build_tools()}


class ScriptedApprover:
    """Answers approval requests from a list, recording each request."""

    def __init__(self, *answers: Approval) -> None:
        self.answers = list(answers)
        self.requests: list[PermissionRequest] = []

    async def __call__(self, request: PermissionRequest) -> Approval:
        self.requests.append(request)
        return self.answers.pop(0)


async def check(policy: PermissionPolicy, ctx: ToolContext, name: str, **raw: Any) -> PermissionDecision:
    tool = TOOLS[name]
    return await policy.check(tool, tool.parse(raw), dataclasses.replace(ctx, permissions=policy))


def edit_args(path: str) -> dict[str, str]:
    return {"file_path": path, "old_string": "a", "new_string": "b"}


async def test_read_only_tools_are_allowed_even_in_readonly(ctx: ToolContext) -> None:
    policy = PermissionPolicy("readonly")
    assert (await check(policy, ctx, "Read", file_path="x.py")).allowed
    assert (await check(policy, ctx, "Grep", pattern="x")).allowed
    assert (await check(policy, ctx, "TodoWrite", todos=[])).allowed


async def test_readonly_refuses_mutating_tools(ctx: ToolContext) -> None:
    policy = PermissionPolicy("readonly", allow=["Bash"])
    decision = await check(policy, ctx, "Bash", command="ls")
    assert not decision.allowed
    assert decision.reason.startswith("Permission denied: Bash is not allowed in readonly mode.")
    assert not (await check(policy, ctx, "Write", file_path="a", content="")).allowed


async def test_deny_wins_over_everything(ctx: ToolContext) -> None:
    policy = PermissionPolicy("auto", allow=["Bash", "Read"], deny=["Bash(rm *)", "Read(secrets/**)", "Write(*.lock)"])
    denied = await check(policy, ctx, "Bash", command="rm -rf build")
    assert not denied.allowed
    assert "'Bash(rm *)'" in denied.reason and "Do not retry" in denied.reason
    for command in ("ls && rm -rf x", "sudo rm -rf /", "echo $(rm x)", "FOO=1 rm -rf x", "ls\nrm x"):
        assert not (await check(policy, ctx, "Bash", command=command)).allowed, command
    assert (await check(policy, ctx, "Bash", command="ls -la")).allowed
    assert not (await check(policy, ctx, "Read", file_path="secrets/key.pem")).allowed
    assert (await check(policy, ctx, "Read", file_path="src/key.py")).allowed
    assert not (await check(policy, ctx, "Write", file_path="deep/poetry.lock", content="")).allowed


async def test_deny_follows_symlinks(ctx: ToolContext, workspace: Path) -> None:
    (workspace / "secrets").mkdir()
    (workspace / "alias").symlink_to(workspace / "secrets", target_is_directory=True)
    policy = PermissionPolicy("auto", deny=["Edit(secrets/**)"])
    assert not (await check(policy, ctx, "Edit", **edit_args("alias/key.txt"))).allowed
    assert not (await check(policy, ctx, "Write", file_path=str(workspace / "secrets/k"), content="")).allowed


async def test_auto_allows_mutating_tools(ctx: ToolContext) -> None:
    policy = PermissionPolicy("auto")
    assert (await check(policy, ctx, "Bash", command="make")).allowed
    assert (await check(policy, ctx, "Edit", **edit_args("src/a.py"))).allowed


async def test_allow_rules_with_globs(ctx: ToolContext) -> None:
    policy = PermissionPolicy("ask", allow=["Edit(src/**)", "Write(*.md)", "bash(git status*)", "Bash(npm run test:*)"])
    assert (await check(policy, ctx, "Edit", **edit_args("src/pkg/a.py"))).allowed
    one_edit = [{"old_string": "a", "new_string": "b"}]
    assert (await check(policy, ctx, "MultiEdit", file_path="src/a.py", edits=one_edit)).allowed  # Edit covers it
    assert (await check(policy, ctx, "Write", file_path="docs/guide.md", content="")).allowed
    assert not (await check(policy, ctx, "Edit", **edit_args("docs/guide.txt"))).allowed
    assert (await check(policy, ctx, "Bash", command="git status --short")).allowed
    assert (await check(policy, ctx, "Bash", command="git status && git status -s | cat")).allowed is False
    assert (await check(policy, ctx, "Bash", command="npm run test -- -u")).allowed
    assert not (await check(policy, ctx, "Bash", command="npm run testing")).allowed
    for sneaky in ("git status; rm -rf /", "git status $(rm -rf /)", "git status > ~/.bashrc", "git status\nrm x",
                   "git status#; rm x", "git status;>/dev/null rm x", "git status|>/dev/null rm x"):
        assert not (await check(policy, ctx, "Bash", command=sneaky)).allowed, sneaky


async def test_ask_calls_the_approver_with_a_labelled_request(ctx: ToolContext) -> None:
    approver = ScriptedApprover("allow_once", "deny")
    policy = PermissionPolicy("ask", approver=approver)
    sub = dataclasses.replace(ctx, agent="explore#2")
    assert (await check(policy, sub, "Bash", command="rm -rf build/")).allowed
    refused = await check(policy, sub, "Bash", command="rm -rf build/")
    assert not refused.allowed
    assert "declined" in refused.reason and "Do not retry" in refused.reason
    first = approver.requests[0]
    assert (first.agent, first.tool, first.summary, first.target) == (
        "explore#2",
        "Bash",
        "rm -rf build/",
        "rm -rf build/",
    )
    assert "`rm`" in first.always_scope
    assert len(approver.requests) == 2  # allow_once is not remembered


async def test_allow_always_is_remembered_for_file_edits(ctx: ToolContext) -> None:
    approver = ScriptedApprover("allow_always")
    policy = PermissionPolicy("ask", approver=approver)
    assert (await check(policy, ctx, "Edit", **edit_args("a.py"))).allowed
    assert (await check(policy, ctx, "Write", file_path="b.py", content="")).allowed
    assert (
        await check(policy, ctx, "MultiEdit", file_path="c.py", edits=[{"old_string": "a", "new_string": "b"}])
    ).allowed
    assert len(approver.requests) == 1
    assert approver.requests[0].target == "a.py"


async def test_allow_always_is_remembered_per_bash_prefix(ctx: ToolContext) -> None:
    approver = ScriptedApprover("allow_always", "deny", "deny")
    policy = PermissionPolicy("ask", approver=approver)
    assert (await check(policy, ctx, "Bash", command="git status")).allowed
    assert (await check(policy, ctx, "Bash", command="git status --short")).allowed
    assert not (await check(policy, ctx, "Bash", command="git push")).allowed
    assert not (await check(policy, ctx, "Bash", command="git status && git push")).allowed
    assert [r.target for r in approver.requests] == ["git status", "git push", "git status && git push"]


async def test_one_shot_refusal_tells_the_model_what_to_do(ctx: ToolContext) -> None:
    policy = PermissionPolicy.from_settings(PermissionsSettings(), oneshot=True)
    decision = await check(policy, ctx, "Bash", command="pytest -x tests")
    assert not decision.allowed
    assert decision.reason.startswith("Permission denied: Bash needs approval, and this is a non-interactive run")
    assert "--yes" in decision.reason and '"Bash(pytest*)"' in decision.reason
    assert "Do not retry this call" in decision.reason and "\n" not in decision.reason
    unsure = await check(policy, ctx, "Bash", command="pytest $(cat tests.txt)")
    assert '"Bash(pytest $(cat tests.txt))"' in unsure.reason  # a prefix rule would not allow it
    edit = await check(policy, ctx, "Edit", **edit_args("./src/a.py"))
    assert '"Edit(src/a.py)"' in edit.reason
    assert (await check(policy, ctx, "Read", file_path="a.py")).allowed


def test_from_settings_modes() -> None:
    assert PermissionPolicy.from_settings(PermissionsSettings(), oneshot=True, yes=True).mode == "auto"
    allowed = PermissionsSettings(allow_mutating_in_run=True)
    assert PermissionPolicy.from_settings(allowed, oneshot=True).mode == "auto"
    assert PermissionPolicy.from_settings(allowed).mode == "ask"
    readonly = PermissionsSettings(mode="readonly", allow_mutating_in_run=True)
    assert PermissionPolicy.from_settings(readonly, oneshot=True).mode == "readonly"
    policy = PermissionPolicy.from_settings(PermissionsSettings(deny=["Bash(rm *)"]), oneshot=True)
    assert policy.non_interactive and policy.deny[0].tool == "Bash"


async def test_concurrent_requests_are_asked_one_at_a_time(ctx: ToolContext) -> None:
    inside = 0
    most_inside = 0
    pending: list[asyncio.Future[Approval]] = []
    entered = asyncio.Event()

    async def approver(request: PermissionRequest) -> Approval:
        nonlocal inside, most_inside
        inside += 1
        most_inside = max(most_inside, inside)
        answer: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()
        pending.append(answer)
        entered.set()
        try:
            return await answer
        finally:
            inside -= 1

    policy = PermissionPolicy("ask", approver=approver)
    tasks = [
        asyncio.create_task(check(policy, dataclasses.replace(ctx, agent=f"explore#{n}"), "Bash", command=f"make t{n}"))
        for n in range(4)
    ]
    for answered in range(4):
        await entered.wait()
        entered.clear()
        for _ in range(20):  # let every other task run as far as it can
            await asyncio.sleep(0)
        assert len(pending) == answered + 1 and inside == 1
        pending[-1].set_result("allow_once")
    decisions = await asyncio.gather(*tasks)
    assert all(d.allowed for d in decisions)
    assert most_inside == 1


async def test_queued_request_is_not_asked_again_after_allow_always(ctx: ToolContext) -> None:
    requests: list[PermissionRequest] = []
    answer: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()

    async def approver(request: PermissionRequest) -> Approval:
        requests.append(request)
        return await answer  # the others queue meanwhile

    policy = PermissionPolicy("ask", approver=approver)
    tasks = [asyncio.create_task(check(policy, ctx, "Edit", **edit_args(f"f{n}.py"))) for n in range(5)]
    for _ in range(20):
        await asyncio.sleep(0)
    assert len(requests) == 1
    answer.set_result("allow_always")
    decisions = await asyncio.gather(*tasks)
    assert all(d.allowed for d in decisions)
    assert len(requests) == 1


async def test_failing_approver_refuses_instead_of_crashing(ctx: ToolContext) -> None:
    async def broken(request: PermissionRequest) -> Approval:
        raise RuntimeError("screen closed")

    decision = await check(PermissionPolicy("ask", approver=broken), ctx, "Bash", command="ls")
    assert not decision.allowed and "screen closed" in decision.reason


async def test_accept_edits_runs_file_edits_but_asks_for_bash(ctx: ToolContext) -> None:
    approver = ScriptedApprover("deny", "allow_once")
    policy = PermissionPolicy("accept_edits", deny=["Write(secrets/**)"], approver=approver)
    assert (await check(policy, ctx, "Edit", **edit_args("src/a.py"))).allowed
    assert (await check(policy, ctx, "Write", file_path="b.py", content="")).allowed
    one_edit = [{"old_string": "a", "new_string": "b"}]
    assert (await check(policy, ctx, "MultiEdit", file_path="c.py", edits=one_edit)).allowed
    assert approver.requests == []  # no edit was asked
    assert not (await check(policy, ctx, "Bash", command="make")).allowed  # Bash asks: the person said no
    assert [r.tool for r in approver.requests] == ["Bash"]
    assert not (await check(policy, ctx, "Write", file_path="secrets/k.txt", content="")).allowed  # deny wins
    assert (await check(policy, ctx, "Edit", **edit_args(".git/config"))).allowed  # a guarded edit is asked
    assert [r.target for r in approver.requests] == ["make", ".git/config"]


async def test_accept_edits_in_a_one_shot_refuses_bash_with_its_reason(ctx: ToolContext) -> None:
    policy = PermissionPolicy.from_settings(PermissionsSettings(mode="accept_edits"), oneshot=True)
    assert policy.mode == "accept_edits"
    assert (await check(policy, ctx, "Edit", **edit_args("src/a.py"))).allowed
    refused = await check(policy, ctx, "Bash", command="pytest -q")
    assert not refused.allowed and "non-interactive run" in refused.reason


def test_the_mode_cycle_is_ask_accept_edits_readonly_and_auto_only_when_started_in_it() -> None:
    policy = PermissionPolicy("ask")
    seen = []
    for _ in range(4):
        policy.set_mode(policy.next_mode())
        seen.append(policy.mode)
    assert seen == ["accept_edits", "readonly", "ask", "accept_edits"]
    assert PermissionPolicy("readonly").next_mode() == "ask"
    started_auto = PermissionPolicy("auto")
    assert started_auto.mode_cycle() == ("ask", "accept_edits", "readonly", "auto")
    assert started_auto.next_mode() == "ask"


async def test_a_mode_change_decides_the_requests_still_queued(ctx: ToolContext) -> None:
    requests: list[PermissionRequest] = []
    answer: asyncio.Future[Approval] = asyncio.get_running_loop().create_future()

    async def approver(request: PermissionRequest) -> Approval:
        requests.append(request)
        return await answer  # the others queue meanwhile

    policy = PermissionPolicy("ask", approver=approver)
    first = asyncio.create_task(check(policy, ctx, "Bash", command="make"))
    for _ in range(20):
        await asyncio.sleep(0)
    queued = [asyncio.create_task(check(policy, ctx, "Edit", **edit_args("a.py"))),
              asyncio.create_task(check(policy, ctx, "Bash", command="make test"))]
    for _ in range(20):
        await asyncio.sleep(0)
    policy.set_mode("readonly")  # the person pressed Shift+Tab while the Bash question was open
    answer.set_result("allow_once")
    assert (await first).allowed  # the question already asked keeps its answer
    edit, bash = await asyncio.gather(*queued)
    assert not edit.allowed and not bash.allowed and "readonly mode" in bash.reason
    assert len(requests) == 1


def test_the_permission_modes_are_one_vocabulary() -> None:
    from typing import get_args

    from agentcli.status import PERMISSION_MODE_STRICTNESS, PermissionMode

    assert set(get_args(PermissionsSettings.model_fields["mode"].annotation)) == set(get_args(PermissionMode))
    assert set(PERMISSION_MODE_STRICTNESS) == set(get_args(PermissionMode))


def test_rule_parsing() -> None:
    assert PermissionRule.parse("bash(git status*)") == PermissionRule("Bash", "git status*", "bash(git status*)")
    assert PermissionRule.parse("multiedit").tool == "MultiEdit"
    assert PermissionRule.parse("Edit").covers("Write") and not PermissionRule.parse("Write").covers("Edit")
    with pytest.raises(ValueError, match=r"bad permission rule"):
        PermissionRule.parse("Bash(")


async def test_a_changed_call_is_decided_again_and_an_endless_changer_is_refused(ctx: ToolContext) -> None:
    """A program's `updatedInput`: a deny rule and an ask rule see the changed call; an approver that changes a call
    it is asked about again each time is refused after `MAX_CHANGES` rounds."""
    from agentcli.tools.permissions.approvals import Answer
    from agentcli.tools.permissions.policy import MAX_CHANGES

    asked: list[dict[str, Any]] = []

    async def rewrite(request: PermissionRequest) -> Answer:
        asked.append(request.tool_input)
        command = request.tool_input["command"]
        return Answer("allow_once", updated_input={"command": "git push" if command == "ls" else command + " -f"})

    policy = PermissionPolicy("ask", deny=["Bash(rm *)"], ask=["Bash(git push*)"], approver=rewrite)
    decision = await check(policy, ctx, "Bash", command="ls")
    assert not decision.allowed and f"changed this Bash call {MAX_CHANGES + 1} times" in decision.reason
    assert [a["command"] for a in asked] == ["ls", "git push", "git push -f", "git push -f -f"]

    async def to_rm(request: PermissionRequest) -> Answer:
        return Answer("allow_once", updated_input={"command": "rm -rf /"})

    policy = PermissionPolicy("ask", deny=["Bash(rm *)"], approver=to_rm)
    decision = await check(policy, ctx, "Bash", command="ls")
    assert not decision.allowed and "the changed call is refused" in decision.reason
    assert "'Bash(rm *)'" in decision.reason


async def test_mutating_calls_wait_for_the_gate_and_reads_do_not(ctx: ToolContext) -> None:
    policy = PermissionPolicy("auto")
    gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    policy.hold(gate)
    assert (await check(policy, ctx, "Read", file_path="x.py")).allowed  # not held
    write = asyncio.create_task(check(policy, ctx, "Write", file_path="a", content=""))
    await asyncio.sleep(0.05)
    assert not write.done()
    gate.set_result(None)
    assert (await write).allowed
    failed: asyncio.Future[None] = asyncio.get_running_loop().create_future()
    failed.set_exception(RuntimeError("the checkpoint failed"))
    policy.hold(failed)
    assert (await check(policy, ctx, "Bash", command="ls")).allowed  # a failed gate is its keeper's to report
    assert isinstance(failed.exception(), RuntimeError)
    policy.hold(None)
    assert (await check(policy, ctx, "Bash", command="ls")).allowed
