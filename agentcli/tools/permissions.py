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
   edit, worked out just before asking), or the reason there is none.

Rules: `Tool` or `Tool(pattern)`; tool names are case-insensitive (`edit` = `Edit`), and an
`Edit(...)` rule also covers Write and MultiEdit (every tool that edits files). Patterns of
file tools are path globs on the workspace-relative, symlink-resolved path (`src/**`; `*.md`
without a `/` matches at any depth). Bash patterns match the command with `*` as wildcard
(`Bash(git status*)`; `Bash(npm run test:*)` = that command with any arguments). The command is
split as bash splits it (`tools/bash_syntax`): a compound command (`a && b | c`, `a;>/dev/null b`,
several lines) is allowed only when every part is; a command the splitter is not sure of (`$(…)`,
backticks, `${…}`, here-documents, output redirection to a file, `eval`, `sh -c`, …) is allowed only
by a plain `Bash` rule or a rule equal to the whole command. Bash deny rules also match any part of
a command and any word onward, a program named by its path also by its base name (`Bash(rm *)`
blocks `sudo rm -rf x`, `/bin/rm x` and `find . -exec rm {} ;`): a guard rail, not a sandbox
(`tools/bash_rules`). A WebFetch pattern `domain:example.com` (Claude Code's) matches a URL whose host is
that name (`domain:*.example.com`: any name below it); any other WebFetch pattern matches the URL with `*`.
A deny rule wins over everything, whoever asks (the main agent or any subagent): mode auto,
--yes, allow rules and remembered "allow always" answers never reopen a denied call.

Edits of guarded files (`tools/guarded.py`: `.agentcli/`, `.claude/`, `.opencode/`, `.mcp.json` and any `.git`
at any depth, and agentcli's, Claude Code's and git's own files of the person wherever they are: they change
what runs later) are never allowed by allow rules, remembered answers or mode accept_edits; only mode auto or
the person's answer.

Modes, loosest first: `auto` < `accept_edits` < `ask` < `readonly` (`status.PERMISSION_MODE_STRICTNESS`;
an untrusted project file may only move the mode to the right). The person moves through `mode_cycle()` with
Shift+Tab in the TUI (`set_mode`); one policy object serves the main agent and every subagent, so
a change applies to the next call any of them makes, and to requests still queued for an answer.

Remembered "allow always" answers (for this session, this policy object):
- file edits: one answer for Write, Edit or MultiEdit allows all three from then on;
- Bash: the prefix of each of its parts (the program, plus the next word when it is a sub-command
  word, e.g. `git status`, `pytest`, `npm run`); a part whose prefix would not say what runs
  (assignments alone, `sudo`, `env`, `xargs`, a shell, …) exactly; a command the splitter is not
  sure of, exactly (`tools/bash_rules.BashAnswers`);
- any other mutating tool: by tool name (an MCP tool `mcp__server__tool` also by a rule `mcp__server`,
  which covers all of that server's tools).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import re
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from agentcli.diffs import FileDiff
from agentcli.status import PermissionMode
from agentcli.tools import mcp_names
from agentcli.tools.base import Tool, ToolArgs, ToolContext, ToolError
from agentcli.tools.bash_rules import (
    BashAnswers,
    deny_candidates,
    every_part_allowed,
    normalize_ws,
    rule_stem,
    wild_match,
)
from agentcli.tools.bash_syntax import collapse_blanks, split_command
from agentcli.tools.guarded import guarded_reason
from agentcli.tools.paths import display_path, match_glob, resolve_in_workspace
from agentcli.tools.registry import EDIT_TOOLS, FILE_SHOWING_TOOLS, PATH_TOOLS, canonical_tool_name

if TYPE_CHECKING:
    from agentcli.claude_settings import ClaudeRule
    from agentcli.config_schema import PermissionsSettings

log = logging.getLogger(__name__)

Approval = Literal["allow_once", "allow_always", "deny"]
Mode = PermissionMode
#: What Shift+Tab steps through (Claude Code's habit: ask → accept edits → plan). `auto` joins the cycle
#: only in a session that started in it (the person's own config, or --yes of a one-shot run), after
#: readonly.
MODE_CYCLE: tuple[Mode, ...] = ("ask", "accept_edits", "readonly")

_RULE = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_-]*)\s*(?:\((.*)\))?\s*$", re.DOTALL)


@dataclass(frozen=True)
class PermissionRequest:
    """What the approver is asked: `[agent] wants to run <tool>: <summary>`."""

    agent: str
    tool: str
    summary: str
    target: str
    always_scope: str = ""  # what "allow always" would allow from then on, for the dialog
    diff: FileDiff | None = None  # what the call will change (Edit, MultiEdit, Write), worked out without writing
    preview_note: str = ""  # why there is no diff to show (the call would fail: old_string not found, ...)
    tool_input: dict[str, Any] = dataclasses.field(default_factory=dict)  # the call's arguments, as the model sent them
    tool_call_id: str = ""
    session_id: str = ""  # the asking agent's session
    outside_sandbox: bool = False  # a refused Bash command asked to run again without the sandbox
    worktree: bool = False  # the agent works in its task's git worktree: paths are relative to it (`[worktree]`)


@dataclass(frozen=True)
class Answer:
    """An answer that says more than allow or deny (a program's, over the Claude Agent SDK's `can_use_tool`):
    the arguments to run the call with instead, or the reason a refusal gives the model."""

    approval: Approval
    updated_input: dict[str, Any] | None = None
    message: str = ""


Approver = Callable[[PermissionRequest], Awaitable[Approval | Answer]]


@dataclass(frozen=True)
class PermissionDecision:
    """The verdict on one call; `reason` (for refusals) goes to the model as the tool result; `updated_input`: the
    arguments the approver changed the call to (it runs with those)."""

    allowed: bool
    reason: str = ""
    updated_input: dict[str, Any] | None = None


_ALLOWED = PermissionDecision(True)


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


def _folded(rule: PermissionRule) -> PermissionRule:
    """`rule` with its pattern in lower case (for matching lower-cased paths)."""
    return PermissionRule(rule.tool, rule.pattern.lower() if rule.pattern else None, rule.text, rule.origin)


def _domain_match(pattern: str, url: str) -> bool:
    """Claude Code's `domain:host` (`domain:*.host` for the names below it) against a URL's host."""
    wanted = pattern[len("domain:"):].strip().lower().rstrip(".")
    try:
        host = (urlsplit(url.strip()).hostname or "").rstrip(".")
    except ValueError:
        return False
    if wanted.startswith("*."):
        return host.endswith(wanted[1:])
    return host == wanted


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
        self._always_tools: set[str] = set()  # tool names (file edits as "Edit")
        self._always_bash = BashAnswers()
        # Why Bash runs without a sandbox though [sandbox] mode is "auto" (set by the session); then auto mode
        # and --yes do not approve Bash: it is asked (refused where no one can answer).
        self.bash_unsandboxed = ""

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
        """Whether this call may run; may wait for the person's answer."""
        name = tool.name
        if not tool.mutating and not any(rule.denies(name) for rule in (*self.deny, *self.ask)):
            return _ALLOWED  # the common case (reads): no path resolution, no parsing
        raw_target = tool.permission_target(args)
        target = self._resolved_target(name, raw_target, ctx)
        rule = self._matching_rule(self.deny, name, raw_target, target)
        if rule is not None:
            return PermissionDecision(
                False,
                f"Permission denied: {name} {target} is blocked by the rule {rule.text!r} in {rule.where('deny')}. "
                "Do not retry this call; continue without it or explain what you would have done.",
            )
        asking = self._matching_rule(self.ask, name, raw_target, target)
        if not tool.mutating and asking is None:
            return _ALLOWED
        guard = _guarded(name, target, ctx)
        guarded = bool(guard) or asking is not None  # asked every time, like a guarded file
        if asking is not None and not guard:
            guard = f"the rule {asking.text!r} in {asking.where('ask')}"
        if (by_mode := self._by_mode(tool, guarded, asking is not None)) is not None:
            return by_mode
        if not guarded and (self._allowed_by_rules(name, target) or self._remembered(name, target)):
            return _ALLOWED
        if self.approver is None:
            return PermissionDecision(False, self._no_approver_reason(name, target, guard, asking))
        request = PermissionRequest(
            agent=ctx.agent,
            tool=name,
            summary=tool.summary(args),
            target=target,
            always_scope=self._scope(name, target, guard),
            tool_input=args.model_dump(mode="json", exclude_unset=True),
            tool_call_id=ctx.tool_call_id,
            session_id=ctx.session_id,
            worktree=ctx.worktree,
        )
        async with self._one_question():  # one question at a time, across parallel subagents
            if (by_mode := self._by_mode(tool, guarded, asking is not None)) is not None:  # mode changed meanwhile
                return by_mode
            if not guarded and self._remembered(name, target):  # answered "always" while this one queued
                return _ALLOWED
            request = await _with_preview(request, tool, args, ctx)  # now: earlier answers may have changed the file
            try:
                reply = await self.approver(request)
            except Exception as exc:  # the UI went away: refuse, never crash the agent
                return PermissionDecision(False, f"Permission denied: asking the person for approval failed ({exc}).")
            answer = reply.approval if isinstance(reply, Answer) else reply
            if answer == "allow_always" and not guarded:
                self._remember(name, target)
            if answer in ("allow_once", "allow_always"):
                changed = reply.updated_input if isinstance(reply, Answer) else None
                return _ALLOWED if changed is None else PermissionDecision(True, updated_input=changed)
        if isinstance(reply, Answer) and reply.message:  # a program's own words, passed as Claude Code passes them
            return PermissionDecision(False, reply.message)
        return PermissionDecision(
            False,
            f"Permission denied: the person declined this {name} call ({request.summary}). Do not retry it; "
            "ask them what to do instead, or continue another way.",
        )

    def _by_mode(self, tool: Tool[Any], guarded: bool, asked: bool = False) -> PermissionDecision | None:
        """The current mode's verdict on a mutating call, or None when the mode leaves it to rules and the person
        (always for a call an ask rule names, but in readonly mode)."""
        if self.mode == "readonly" and tool.mutating:
            return PermissionDecision(
                False,
                f"Permission denied: {tool.name} is not allowed in readonly mode. It changes files or runs "
                "commands; continue with read-only tools, or explain what you would have done.",
            )
        if asked or not tool.mutating:
            return None  # an ask rule: the person answers, whatever the mode
        if self.mode == "auto" and tool.name == "Bash" and self.bash_unsandboxed:
            return None  # no sandbox: the person is asked (or the call refused), whatever the mode says
        if self.mode == "auto" or (self.mode == "accept_edits" and tool.edits_files and not guarded):
            return _ALLOWED
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

    # ---- rules --------------------------------------------------------------------------

    @staticmethod
    def _resolved_target(name: str, raw: str, ctx: ToolContext) -> str:
        """For file tools, the workspace-relative path after following symlinks (absolute in an additional
        directory: rules written as workspace-relative globs never match there, `//abs/**` ones do)."""
        if name not in PATH_TOOLS or not raw:
            return raw
        try:
            return display_path(ctx, resolve_in_workspace(ctx, raw))
        except ToolError:
            return raw  # outside the workspace: the tool refuses it itself

    @staticmethod
    def _matches(rule: PermissionRule, name: str, target: str) -> bool:
        if rule.pattern is None:
            return True
        if name == "WebFetch" and rule.pattern.startswith("domain:"):
            return _domain_match(rule.pattern, target)
        if name in PATH_TOOLS:
            return match_glob(rule.pattern, target, anchored=False)
        return wild_match(rule.pattern, normalize_ws(target))

    def _matching_rule(
        self, rules_of_kind: Sequence[PermissionRule], name: str, raw: str, target: str
    ) -> PermissionRule | None:
        """The first deny (or ask) rule that matches the call, read as deny rules are (any part of a command)."""
        rules = [rule for rule in rules_of_kind if rule.denies(name)]
        if not rules:
            return None
        # Paths also in lower case against lower-case patterns: on a case-insensitive file system
        # (macOS, Windows) `.ENV` is the file `.env` a rule names.
        candidates = deny_candidates(target) if name == "Bash" else {target, raw}
        if name in PATH_TOOLS:
            rules += [_folded(rule) for rule in rules if rule.pattern]
            candidates |= {c.lower() for c in candidates}
        for rule in rules:
            if rule.pattern is None or any(self._matches(rule, name, c) for c in candidates):
                return rule
        return None

    def read_denied(self, rel: str) -> bool:
        """Whether a Read deny rule covers the workspace-relative path `rel` (Grep leaves such files out)."""
        rules = [rule for rule in self.deny if rule.denies("Read")]
        rules += [_folded(rule) for rule in rules if rule.pattern]
        return any(self._matches(rule, "Read", c) for rule in rules for c in {rel, rel.lower()})

    @property
    def denies_reads(self) -> bool:
        """Whether any deny rule is about Read."""
        return any(rule.denies("Read") for rule in self.deny)

    def _allowed_by_rules(self, name: str, target: str) -> bool:
        rules = [rule for rule in self.allow if rule.covers(name)]
        if any(rule.pattern is None for rule in rules):
            return True
        if name != "Bash":
            return any(self._matches(rule, name, target) for rule in rules)
        parsed = split_command(target)
        if any(collapse_blanks(rule.pattern or "") == parsed.text for rule in rules):
            return True
        return every_part_allowed(parsed, [rule.pattern for rule in rules if rule.pattern], self._always_bash)

    # ---- remembered answers -------------------------------------------------------------

    @staticmethod
    def _family(name: str) -> str:
        return "Edit" if name in EDIT_TOOLS else name

    def _remembered(self, name: str, target: str) -> bool:
        if name != "Bash":
            return self._family(name) in self._always_tools
        return self._always_bash.covers(split_command(target))

    def _remember(self, name: str, target: str) -> None:
        if name != "Bash":
            self._always_tools.add(self._family(name))
            return
        self._always_bash.remember(split_command(target))

    def _scope(self, name: str, target: str, guard: str = "") -> str:
        """Words for the dialog: what "allow always" would allow (`guard`: what a guarded file is)."""
        if guard:
            return f"this call only: {target} is asked every time ({guard})"
        if name in EDIT_TOOLS:
            return "all file edits (Write, Edit, MultiEdit) for the rest of this session"
        if name != "Bash":
            return f"every {name} call for the rest of this session"
        return BashAnswers.scope(split_command(target))

    def _no_approver_reason(
        self, name: str, target: str, guard: str = "", asking: PermissionRule | None = None
    ) -> str:
        if asking is not None:
            who = "this is a non-interactive run (agentcli run)" if self.non_interactive else "there is no one to ask"
            return (
                f"Permission denied: {name} {target} is asked every time by the rule {asking.text!r} in "
                f"{asking.where('ask')}, and {who}; --yes, auto mode and allow rules do not cover it. The person can "
                "run agentcli interactively to answer. Do not retry this call; continue without it or explain what "
                "you would have done."
            )
        if name == "Bash" and self.mode == "auto" and self.bash_unsandboxed:
            return (
                f"Permission denied: Bash runs without a sandbox here ({self.bash_unsandboxed}), so auto mode and "
                '--yes do not approve it. The person can run agentcli interactively to approve each command, or set '
                '[sandbox] mode = "off" to run Bash unsandboxed on purpose. Do not retry this call; continue '
                "without it or explain what you would have done."
            )
        if guard:
            who = "this is a non-interactive run (agentcli run)" if self.non_interactive else "there is no one to ask"
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
        if self.non_interactive:
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
