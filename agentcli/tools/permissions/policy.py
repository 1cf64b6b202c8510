"""The permission policy: which tool calls run, which are refused, which ask the person.

Order of decision for one call:
1. A matching **deny** rule refuses it: deny wins over everything (auto mode, read-only tools).
2. A matching **ask** rule (Claude Code's `permissions.ask`) asks the person every time, whatever the mode,
   the allow rules and earlier answers say (mode readonly still refuses a mutating call; with no one to ask the
   call is refused, --yes or not). Ask rules match like deny rules (any part of a Bash command).
3. Tools that are not `mutating` (Read, LS, Glob, Grep, TodoWrite) run.
4. Mode `readonly` refuses every mutating tool (allow rules do not reopen it).
5. Mode `auto`, a matching **allow** rule, or an earlier "allow always" answer lets it run; so does
   mode `accept_edits` for a tool that edits files (`edits_files`: Write, Edit, MultiEdit), while
   Bash and every other mutating tool still ask.
6. Otherwise the approver (the TUI) is asked; requests from parallel agents are asked one at
   a time. Without an approver (a one-shot run) the call is refused with a reason the model
   can act on. A request carries the tool's preview of what the call will change (the diff of an
   edit, worked out just before asking), or the reason there is none. An answer that changes the call's
   arguments (a driving program's `updatedInput`) is not the end: the changed call is decided again from
   step 1, as if the model had made it; the answer stands for the question it needs, but a guarded file or an
   ask rule is asked again about the changed call (at most `MAX_CHANGES` rounds).

Rules: `Tool` or `Tool(pattern)`; tool names are case-insensitive (`edit` = `Edit`), and an
`Edit(...)` rule also covers Write and MultiEdit (every tool that edits files). Patterns of
file tools are path globs on the workspace-relative, symlink-resolved path (`src/**`; `*.md`
without a `/` matches at any depth). Bash patterns match the command with `*` as wildcard
(`Bash(git status*)`; `Bash(npm run test:*)` = that command with any arguments). The command is
split as bash splits it (`tools/shell/syntax`): a compound command (`a && b | c`, `a;>/dev/null b`,
several lines) is allowed only when every part is; a command the splitter is not sure of (`$(…)`,
backticks, `${…}`, here-documents, output redirection to a file, `eval`, `sh -c`, …) is allowed only
by a plain `Bash` rule or a rule equal to the whole command. Bash deny rules also match any part of
a command and any word onward, a program named by its path also by its base name (`Bash(rm *)`
blocks `sudo rm -rf x`, `/bin/rm x` and `find . -exec rm {} ;`): a guard rail, not a sandbox
(`tools/shell/rules`). A WebFetch pattern `domain:example.com` (Claude Code's) matches a URL whose host is
that name (`domain:*.example.com`: any name below it); any other WebFetch pattern matches the URL with `*`.
A deny rule wins over everything, whoever asks (the main agent or any subagent): mode auto,
--yes, allow rules and remembered "allow always" answers never reopen a denied call.

Edits of guarded files (`tools/permissions/guarded.py`: `.agentcli/`, `.claude/`, `.opencode/`, `.mcp.json`
and any `.git` at any depth, and agentcli's, Claude Code's and git's own files of the person wherever they are:
they change what runs later) are never allowed by allow rules, remembered answers or mode accept_edits; only mode
auto or the person's answer.

Modes, loosest first: `auto` < `accept_edits` < `ask` < `readonly` (`status.PERMISSION_MODE_STRICTNESS`;
an untrusted project file may only move the mode to the right). The person moves through `mode_cycle()` with
Shift+Tab in the TUI (`set_mode`); one policy object serves the main agent and every subagent, so
a change applies to the next call any of them makes, and to requests still queued for an answer.

Remembered "allow always" answers (for this session, this policy object):
- file edits: one answer for Write, Edit or MultiEdit allows all three from then on;
- Bash: the prefix of each of its parts (the program, plus the next word when it is a sub-command
  word, e.g. `git status`, `pytest`, `npm run`); a part whose prefix would not say what runs
  (assignments alone, `sudo`, `env`, `xargs`, a shell, …) exactly; a command the splitter is not
  sure of, exactly (`tools/shell/rules.BashAnswers`);
- any other mutating tool: by tool name (an MCP tool `mcp__server__tool` also by a rule `mcp__server`,
  which covers all of that server's tools).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentcli.status import PermissionMode
from agentcli.tools import mcp_names
from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError
from agentcli.tools.permissions.approvals import (
    ALLOWED,
    Answer,
    Approval,
    Approver,
    PermissionDecision,
    PermissionRequest,
)
from agentcli.tools.permissions.guarded import guarded_reason
from agentcli.tools.permissions.matching import allowed_by_rules, matching_rule, read_denied, resolved_target
from agentcli.tools.permissions.reasons import no_approver_reason
from agentcli.tools.permissions.remembered import RememberedAnswers
from agentcli.tools.permissions.rules import PermissionRule
from agentcli.tools.registry import EDIT_TOOLS, canonical_tool_name

if TYPE_CHECKING:
    from agentcli.config import ClaudeRule, PermissionsSettings

log = logging.getLogger(__name__)

Mode = PermissionMode
#: What Shift+Tab steps through (Claude Code's habit: ask → accept edits → plan). `auto` joins the cycle
#: only in a session that started in it (the person's own config, or --yes of a one-shot run), after
#: readonly.
MODE_CYCLE: tuple[Mode, ...] = ("ask", "accept_edits", "readonly")

MAX_CHANGES = 3  # an approver that changes a call again each time it is asked about the changed one is refused


async def _with_preview(
    request: PermissionRequest, tool: Tool[Any], args: ToolArgs, ctx: ToolContext
) -> PermissionRequest:
    """The request with the tool's preview of the call, or the reason it has none."""
    try:
        diff = await tool.preview(args, ctx)
    except ToolError as exc:
        return dataclasses.replace(request, preview_note=str(exc))
    except Exception as exc:  # a preview bug must not keep the person from answering
        log.exception("preview of %s failed", tool.name)
        return dataclasses.replace(request, preview_note=f"no preview ({type(exc).__name__}: {exc})")
    return dataclasses.replace(request, diff=diff) if diff is not None else request


def _readonly_refusal(name: str) -> str:
    return (f"Permission denied: {name} is not allowed in readonly mode. It changes files or runs commands; "
            "continue with read-only tools, or explain what you would have done.")


def _guarded(name: str, target: str, ctx: ToolContext) -> str:
    """What the file is when this is an edit of a guarded file (`tools.guarded`: asked every time), else "".
    An additional directory's files are guarded as the workspace's (its `.git`, `.claude`, … and the person's
    own config folders)."""
    if name not in EDIT_TOOLS:
        return ""
    for root in (ctx.workspace, *ctx.extra_roots):
        if reason := guarded_reason(target, root):
            return reason
    return ""


class PermissionPolicy:
    """Decides every tool call of one session tree (shared by the main agent and its subagents)."""

    def __init__(
        self,
        mode: Mode,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        approver: Approver | None = None,
        *,
        non_interactive: bool = False,
        ask: Sequence[str] = (),
    ) -> None:
        self.mode: Mode = mode
        self.started_mode: Mode = mode  # what the session began with (decides whether auto is in the cycle)
        self.allow = [PermissionRule.parse(rule) for rule in allow]
        self.deny = [PermissionRule.parse(rule) for rule in deny]
        self.ask = [PermissionRule.parse(rule) for rule in ask]
        self.approver = approver
        self.non_interactive = non_interactive
        self._approval_lock = asyncio.Lock()
        self.waiting = 0  # requests queued behind the question being asked (the dialog says how many)
        self._answers = RememberedAnswers()  # the person's "allow always" answers
        # Why Bash runs without a sandbox though [sandbox] mode is "auto" (set by the session); then auto mode
        # and --yes do not approve Bash: it is asked (refused where no one can answer).
        self.bash_unsandboxed = ""
        self._gate: asyncio.Future[Any] | None = None  # what mutating calls wait for first (`hold`)
        self.mode_watchers: list[Callable[[Mode], None]] = []  # told of every mode change (remote subagents' copies)

    @classmethod
    def from_settings(
        cls,
        perms: PermissionsSettings,
        *,
        approver: Approver | None = None,
        oneshot: bool = False,
        yes: bool = False,
    ) -> PermissionPolicy:
        """The policy for a session. `yes` (--yes) means auto; so does `allow_mutating_in_run` in a
        one-shot run. Neither overrides mode readonly: readonly wins (see `yes_ignored`). A one-shot
        run without either never asks."""
        mode: Mode = perms.mode
        if mode != "readonly" and (yes or (oneshot and perms.allow_mutating_in_run)):
            mode = "auto"
        return cls(mode, perms.allow, perms.deny, approver, non_interactive=oneshot, ask=perms.ask)

    def use_claude_rules(self, rules: Sequence[ClaudeRule]) -> list[str]:
        """Join Claude Code's settings rules (`claude_settings`) to the config's, in place of those joined
        before; one note per rule agentcli has no tool for (it is kept, and never matches)."""
        notes: list[str] = []
        lists = {"allow": self.allow, "deny": self.deny, "ask": self.ask}
        for kept in lists.values():
            kept[:] = [rule for rule in kept if not rule.origin]
        for claude in rules:
            rule = PermissionRule.parse(claude.rule, claude.source)
            if canonical_tool_name(rule.tool) is None and not mcp_names.is_mcp_name(rule.tool):
                notes.append(f"{claude.source}: permissions.{claude.kind} rule {claude.written!r} has no effect: "
                             f"agentcli has no {rule.tool} tool")
            lists[claude.kind].append(rule)
        return notes

    @staticmethod
    def yes_ignored(perms: PermissionsSettings, yes: bool) -> str | None:
        """The one line to tell the person when --yes is ignored because the mode is readonly."""
        if yes and perms.mode == "readonly":
            return '--yes ignored: permissions.mode is "readonly"'
        return None

    # ---- the mode ------------------------------------------------------------------------

    def mode_cycle(self) -> tuple[Mode, ...]:
        """The modes Shift+Tab steps through: MODE_CYCLE, plus `auto` when the session started in it."""
        return (*MODE_CYCLE, "auto") if self.started_mode == "auto" else MODE_CYCLE

    def next_mode(self) -> Mode:
        """The mode after the current one in `mode_cycle()` (a mode outside it goes to the first)."""
        cycle = self.mode_cycle()
        return cycle[(cycle.index(self.mode) + 1) % len(cycle)] if self.mode in cycle else cycle[0]

    def set_mode(self, mode: Mode) -> None:
        """Decide the next calls of every agent of this tree (and those waiting for an answer) in `mode`."""
        self.mode = mode
        for watcher in list(self.mode_watchers):
            watcher(mode)

    # ---- the decision -------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _one_question(self) -> AsyncIterator[None]:
        """Hold the question lock, counting the requests that wait for it (`waiting`)."""
        self.waiting += 1
        try:
            await self._approval_lock.acquire()
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self._approval_lock.release()

    async def check(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext) -> PermissionDecision:
        """Whether this call may run; may wait for the person's answer. A mutating call first waits for the
        gate (`hold`: the prompt's checkpoint, taken while the model writes its first reply)."""
        if tool.mutating and self._gate is not None and not self._gate.done():
            await asyncio.shield(self._gate)
        return await self._decide(tool, args, ctx, 0)

    def hold(self, gate: asyncio.Future[Any] | None) -> None:
        """Make every agent's mutating calls wait until `gate` is done (None: no more waiting); its failure is the
        gate-keeper's to report, never the call's."""
        self._gate = gate

    async def _decide(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext, changes: int) -> PermissionDecision:
        """`check`, for a call the approver has changed `changes` times so far (and approved as changed)."""
        name = tool.name
        if not tool.mutating and not any(rule.denies(name) for rule in (*self.deny, *self.ask)):
            return ALLOWED  # the common case (reads): no path resolution, no parsing
        raw_target = tool.permission_target(args)
        target = resolved_target(name, raw_target, ctx)
        rule = matching_rule(self.deny, name, raw_target, target)
        if rule is not None:
            return PermissionDecision(
                False,
                f"Permission denied: {name} {target} is blocked by the rule {rule.text!r} in {rule.where('deny')}. "
                "Do not retry this call; continue without it or explain what you would have done.",
            )
        asking = matching_rule(self.ask, name, raw_target, target)
        if not tool.mutating and asking is None:
            return ALLOWED
        guard = _guarded(name, target, ctx)
        guarded = bool(guard) or asking is not None  # asked every time, like a guarded file
        if asking is not None and not guard:
            guard = f"the rule {asking.text!r} in {asking.where('ask')}"
        if (by_mode := self._by_mode(tool, guarded, asking is not None)) is not None:
            return by_mode
        if not guarded and (allowed_by_rules(self.allow, name, target, self._answers.bash)
                            or self._remembered(name, target)):
            return ALLOWED
        if changes and not guarded:
            return ALLOWED  # the approver's own change: its allow is the answer (a guarded file is asked again)
        if self.approver is None:
            rule_words = (asking.text, asking.where("ask")) if asking is not None else None
            return PermissionDecision(False, no_approver_reason(
                name, target, guard, rule_words, mode=self.mode, bash_unsandboxed=self.bash_unsandboxed,
                non_interactive=self.non_interactive))
        request = PermissionRequest(
            agent=ctx.agent,
            tool=name,
            summary=tool.summary(args),
            target=target,
            always_scope=RememberedAnswers.scope(name, target, guard),
            tool_input=args.model_dump(mode="json", exclude_unset=True),
            tool_call_id=ctx.tool_call_id,
            session_id=ctx.session_id,
            worktree=ctx.worktree,
            every_time=guarded,
        )
        reply = await self._ask(tool, args, ctx, request, guarded, asking is not None)
        if isinstance(reply, PermissionDecision):
            return reply
        answer = reply.approval if isinstance(reply, Answer) else reply
        if answer in ("allow_once", "allow_always"):
            changed = reply.updated_input if isinstance(reply, Answer) else None
            return ALLOWED if changed is None else await self._changed(tool, args, ctx, changed, changes)
        if isinstance(reply, Answer) and reply.message:  # a program's own words, passed as Claude Code passes them
            return PermissionDecision(False, reply.message)
        return PermissionDecision(
            False,
            f"Permission denied: the person declined this {name} call ({request.summary}). Do not retry it; "
            "ask them what to do instead, or continue another way.",
        )

    async def _ask(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext, request: PermissionRequest,
                   guarded: bool, asked: bool) -> Approval | Answer | PermissionDecision:
        """The approver's answer (an "allow always" remembered), or the decision the wait for it came to."""
        async with self._one_question():  # one question at a time, across parallel subagents
            if (by_mode := self._by_mode(tool, guarded, asked)) is not None:  # the mode changed meanwhile
                return by_mode
            if not guarded and self._remembered(request.tool, request.target):  # "always" while this one queued
                return ALLOWED
            request = await _with_preview(request, tool, args, ctx)  # now: earlier answers may have changed the file
            try:
                reply = await self.approver(request) if self.approver is not None else "deny"
            except Exception as exc:  # the UI went away: refuse, never crash the agent
                return PermissionDecision(False, f"Permission denied: asking the person for approval failed ({exc}).")
            answer = reply.approval if isinstance(reply, Answer) else reply
            if answer == "allow_always" and not guarded:
                self._answers.remember(request.tool, request.target)
            return reply

    async def _changed(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext, changed: dict[str, Any],
                       changes: int) -> PermissionDecision:
        """An approval that changed the call's arguments (a program's `updatedInput`): the changed call is decided
        again as if the model had made it (deny and ask rules, guarded files, the mode), so an answer never reaches
        past what the policy refuses. Where it needs a question, the approver's allow of its own change answers
        it, but for a guarded file or an ask rule: those are asked again, about the changed call."""
        try:
            new_args = tool.parse(changed)
        except ToolError as exc:
            return PermissionDecision(False, f"The approved arguments are invalid: {exc}")
        if new_args.model_dump(mode="json") == args.model_dump(mode="json"):
            return ALLOWED  # the same call (the SDK sends the input back unchanged)
        if changes >= MAX_CHANGES:
            return PermissionDecision(False, f"Permission denied: the approver changed this {tool.name} call "
                                             f"{changes + 1} times in a row; it does not run.")
        decision = await self._decide(tool, new_args, ctx, changes + 1)
        if not decision.allowed:
            return PermissionDecision(False, f"The approver changed this {tool.name} call, and the changed call is "
                                             f"refused. {decision.reason}")
        return PermissionDecision(True, updated_input=decision.updated_input or changed)

    def _by_mode(self, tool: Tool[Any], guarded: bool, asked: bool = False) -> PermissionDecision | None:
        """The current mode's verdict on a mutating call, or None when the mode leaves it to rules and the person
        (always for a call an ask rule names, but in readonly mode)."""
        if self.mode == "readonly" and tool.mutating:
            return PermissionDecision(False, _readonly_refusal(tool.name))
        if asked or not tool.mutating:
            return None  # an ask rule: the person answers, whatever the mode
        if self.mode == "auto" and tool.name == "Bash" and self.bash_unsandboxed:
            return None  # no sandbox: the person is asked (or the call refused), whatever the mode says
        if self.mode == "auto" or (self.mode == "accept_edits" and tool.edits_files and not guarded):
            return ALLOWED
        return None

    async def approve_outside_sandbox(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext, why: str) -> bool:
        """Ask the person whether one command the sandbox refused may run again outside it.

        Only in the modes where Bash is asked (ask, accept_edits) and with someone to ask: never in auto mode,
        never through --yes or a one-shot run. The answer is never remembered.
        """
        if self.mode not in ("ask", "accept_edits") or self.approver is None or self.non_interactive:
            return False
        request = PermissionRequest(
            agent=ctx.agent,
            tool=tool.name,
            summary=f"run again OUTSIDE the sandbox: {tool.summary(args)}",
            target=tool.permission_target(args),
            always_scope="this command, this once, outside the sandbox (never remembered)",
            preview_note=f"The sandbox refused it; approving runs it with all of your access:\n{why}",
            tool_input=args.model_dump(mode="json", exclude_unset=True),
            tool_call_id=ctx.tool_call_id,
            session_id=ctx.session_id,
            outside_sandbox=True,
            worktree=ctx.worktree,
        )
        async with self._one_question():
            if self.mode not in ("ask", "accept_edits"):
                return False
            try:
                reply = await self.approver(request)
            except Exception:
                return False
        if isinstance(reply, Answer):  # a program's answer: only the very command refused runs outside
            return reply.approval in ("allow_once", "allow_always") and reply.updated_input is None
        return reply in ("allow_once", "allow_always")

    async def relay(self, request: PermissionRequest) -> Approval | Answer:
        """Answer a question a remote subagent's own copy of this policy came to on its worker (its rules applied
        there): in this tree's turn of questions, refused when the mode is readonly by now, allowed by an earlier
        "allow always" of any agent of the tree, else the approver's answer, an "allow always" remembered here."""
        async with self._one_question():
            if self.mode == "readonly":
                return Answer("deny", message=_readonly_refusal(request.tool))
            if request.outside_sandbox:
                if self.mode not in ("ask", "accept_edits") or self.non_interactive:
                    return Answer("deny", message="Permission denied: running outside the sandbox is not approved in "
                                                  f"{self.mode} mode.")
            elif not request.every_time and self._remembered(request.tool, request.target):
                return "allow_once"
            if self.approver is None:
                return Answer("deny", message=f"Permission denied: {request.tool} needs approval and there is no one "
                                              "to ask. Do not retry this call; continue without it.")
            try:
                reply = await self.approver(request)
            except Exception as exc:  # the UI went away
                return Answer("deny", message=f"Permission denied: asking the person for approval failed ({exc}).")
            approval = reply.approval if isinstance(reply, Answer) else reply
            if approval == "allow_always" and not (request.every_time or request.outside_sandbox):
                self._answers.remember(request.tool, request.target)
            return reply

    def _remembered(self, name: str, target: str) -> bool:
        """Whether an earlier "allow always" answer allows this call."""
        return self._answers.covers(name, target)

    # ---- rules --------------------------------------------------------------------------

    def read_denied(self, rel: str) -> bool:
        """Whether a Read deny rule covers the workspace-relative path `rel` (Grep leaves such files out)."""
        return read_denied(self.deny, rel)

    @property
    def denies_reads(self) -> bool:
        """Whether any deny rule is about Read."""
        return any(rule.denies("Read") for rule in self.deny)
