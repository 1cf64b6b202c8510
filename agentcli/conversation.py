"""Conversation: the composition root. One person's session with the main agent, as the TUI,
`agentcli run` and the demo drive it.

It wires the engine's parts together (store, logging, model, provider pool, permissions, agent
types, the subagent runner, the main agent's tools and AgentLoop) and publishes everything on one
`EventBus`. `Conversation.open()` is the one way in (store opened, logging set up, a crashed run's
rows marked cancelled) and `aclose()` the one way out (turn stopped, subagents cancelled, clients
closed, store flushed and closed). It never imports the UI, and it imports no SDK until
`prepare()` (which does so in a worker thread, so a UI can paint meanwhile).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.additional_dirs import session_additional_dirs
from agentcli.agent.compaction import Compaction
from agentcli.agent.ledger import Ledger
from agentcli.agent.loop import AgentLoop, RunOutcome
from agentcli.agent.session import Session
from agentcli.events import EventBus, NoticeEvent
from agentcli.hooks.engine import HookEngine
from agentcli.hooks.settings import load_hooks
from agentcli.llm.base import Message, Provider, ProviderError, TextBlock
from agentcli.llm.models import ProviderPool, ResolvedModel, resolve_model
from agentcli.llm.prices import cost_usd
from agentcli.mcp.manager import McpManager, session_manager
from agentcli.prompts import project_instructions, render_system_prompt
from agentcli.stored_sessions import (
    Resumed,
    ResumeError,
    find_session,
    fork_stored,
    stored_model,
    stored_spent,
    take_session,
)
from agentcli.subagents.budget import SessionBudget
from agentcli.subagents.message_tools import message_tools
from agentcli.subagents.registry import AgentRegistry
from agentcli.subagents.runner import SubagentRunner
from agentcli.subagents.skill_tool import skill_tool_class
from agentcli.subagents.skills import SkillCatalog
from agentcli.subagents.task_tool import ParentLink, TaskArgs, task_tools
from agentcli.subagents.toolbox import Toolbox
from agentcli.subagents.worktree_admin import prune_at_start
from agentcli.text import defang_tags
from agentcli.tools.base import FileAccess, FileLocks, Tool
from agentcli.tools.mcp_names import is_mcp_name
from agentcli.tools.permissions import Approver, PermissionPolicy
from agentcli.tools.sandbox import session_sandbox
from agentcli.tools.shell_env import session_bash_env
from agentcli.warm_up import warm_up, warm_up_quietly

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.store.db import Store
    from agentcli.store.records import SessionRecord

log = logging.getLogger(__name__)


class OpenError(Exception):
    """The conversation cannot start (the store cannot be opened, the model does not resolve);
    `str()` is the one line for the person."""


def main_agent_tools(runner: SubagentRunner, parent: ParentLink) -> list[Tool[Any]]:
    """The main agent's tools: the runner's toolbox, and the Task and message tools while delegation is on."""
    tools = runner.toolbox.build()
    if runner.can_delegate(parent.session.depth):
        tools += task_tools(runner, parent)
        tools += message_tools(runner.switchboard, parent)
        runner.switchboard.main_link = parent  # where a subagent's message to its parent goes
    return tools


class Conversation:
    """The main agent's session plus everything it needs; one turn at a time."""

    def __init__(
        self,
        settings: Settings,
        workspace: Path,
        *,
        model: str = "main",
        store: Store | None = None,
        approver: Approver | None = None,
        oneshot: bool = False,
        yes: bool = False,
    ) -> None:
        self.settings = settings
        self.workspace = workspace
        self.store = store
        self.bus = EventBus()
        if store is not None:
            from agentcli.store.recorder import StoreRecorder

            self.bus.subscribe(StoreRecorder(store))
        self.model: ResolvedModel = resolve_model(model, settings)  # raises MissingCredentialsError early
        self.pool = ProviderPool.from_settings(settings)
        self.toolbox = Toolbox.builtin()
        self.permissions = PermissionPolicy.from_settings(
            settings.permissions, approver=approver, oneshot=oneshot, yes=yes
        )
        self.sandbox = session_sandbox(settings, workspace)
        self.permissions.bash_unsandboxed = self.sandbox.unsandboxed_reason()  # then auto mode asks before Bash
        self.file_locks = FileLocks()
        self._files: FileAccess | None = None  # an editor's buffers for the file tools' text (`use_files`)
        self.registry = AgentRegistry.load(workspace, aliases=settings.models.aliases)
        self.skills = SkillCatalog.load(workspace)  # names and descriptions only; bodies when used
        if (skill_tool := skill_tool_class(self.skills)) is not None:  # no skill: no tool, the requests as before
            self.toolbox.add([skill_tool])
        self._instructions = project_instructions(workspace) if settings.agent.project_instructions else ""
        self.hook_notes: list[str] = []  # hook settings not taken, told once with the first turn
        self._sources: frozenset[str] | None = None  # Claude Code's setting sources read (None: all)
        self.extra_dirs: list[Path] = []  # additional directories (`additional_dirs`), shared with every AgentKit
        self._claude_dirs: list[tuple[str, str]] = []  # Claude Code's additionalDirectories read (entry, file)
        self._flag_dirs: list[tuple[str, str]] = []  # folders a program's flags added (`add_directories`)
        self._dir_notes: list[str] = []  # the skipped folders' lines, among `hook_notes`
        self._fallback = ""  # the model to go on with when the main one fails (--fallback-model)
        self.hooks = self._load_hooks()
        self._use_claude_rules()
        self._transcript: Callable[[str], str] | None = None
        if any(self.hooks.config.by_event.values()):
            self.keep_transcript()  # hooks read it (their input's transcript_path)
        self._say_sandbox()
        self._hook_source: str | None = "startup"  # SessionStart's source, until it fired for this session
        self.mcp: McpManager = session_manager(settings.mcp, workspace)  # nothing starts before the first turn
        self.mcp.on_tools = self.toolbox.add
        self.mcp.notice = self._notice
        self._drop_cache: Callable[[], None] = lambda: None
        self.runner = self._new_runner()
        self._system: tuple[str | None, str] = (None, "")  # a program's own system prompt, and text to append
        self._offers: Callable[[str], bool] = lambda name: True  # which tools the main agent is offered
        self._read_roots: list[Path] = []  # folders the main agent may read once its loop is built (`allow_reads`)
        self.session = self._new_session()
        self._loop: AgentLoop | None = None
        self._turn: asyncio.Task[RunOutcome] | None = None
        self.budget: SessionBudget | None = None  # [budget] of this session tree, once prepared
        self._drop_budget: Callable[[], None] = lambda: None
        self._after_send: Callable[[], None] | None = None  # prepare(in_thread=False): see there
        self._sent: asyncio.Task[None] | None = None

    @classmethod
    def open(
        cls,
        settings: Settings,
        workspace: Path,
        *,
        model: str = "main",
        approver: Approver | None = None,
        oneshot: bool = False,
        yes: bool = False,
        verbose: bool = False,
        store_path: Path | None = None,
    ) -> Conversation:
        """Open the store (the default database unless `store_path`), build the conversation, set up
        logging, mark the rows of crashed runs cancelled and prune the worktrees they left in this workspace. Raises
        `OpenError` with the line to print."""
        from agentcli.llm.base import ProviderError
        from agentcli.llm.models import ModelSpecError
        from agentcli.logs import setup_logging
        from agentcli.store.db import Store, StoreError
        from agentcli.text import terminal_safe

        try:
            store = Store.open(store_path)
        except StoreError as exc:
            raise OpenError(terminal_safe(str(exc))) from exc
        try:
            conversation = cls(
                settings, workspace, model=model, store=store, approver=approver, oneshot=oneshot, yes=yes
            )
        except (ProviderError, ModelSpecError) as exc:
            store.close()
            raise OpenError(terminal_safe(str(exc))) from exc
        setup_logging(settings.logging.level, verbose=verbose, secrets=[conversation.model.api_key])
        if settings.task_tool.enable_verbose_logging:
            logging.getLogger("agentcli.subagents").setLevel(logging.DEBUG)
        store.mark_running_cancelled()
        prune_at_start(workspace)  # worktrees of isolated tasks whose process died (a glob when there are none)
        return conversation

    # --- set-up -----------------------------------------------------------------------------------

    def _new_runner(self) -> SubagentRunner:
        """A new session's task table; its result cache watches the bus (all agents' tool calls), the old one stops."""
        runner = SubagentRunner(
            settings=self.settings,
            registry=self.registry,
            pool=self.pool,
            workspace=self.workspace,
            permissions=self.permissions,
            store=self.store,
            file_locks=self.file_locks,
            price=cost_usd,
            instructions=self._instructions,
            toolbox=self.toolbox,
            hooks=self.hooks,
            before_task=self._task_servers,
            sandbox=self.sandbox,
            skills=self.skills,
            extra_roots=self.extra_dirs,
        )
        self._drop_cache()
        self._drop_cache = runner.cache.attach(self.bus)
        runner.kit.files = self._files
        return runner

    def use_files(self, files: FileAccess | None) -> None:
        """The file tools of every agent of the session (not of a worktree) read and write text through `files` (an
        editor's buffers) from the next context built; the main agent's is built at the first turn."""
        self._files = self.runner.kit.files = files

    def _load_hooks(self) -> HookEngine:
        """The person's hooks, and a trusted project's (an untrusted workspace's never run: `hooks.settings`)."""
        from agentcli import trust

        config = load_hooks(self.settings.hooks, self.workspace, trusted=trust.is_trusted(self.workspace),
                            sources=self._sources)
        for note in config.notes:  # info: a warning before the log is set up would reach stderr a second time
            log.info("%s", note)
        self.hook_notes = config.notes  # told once, with the first turn
        permissions = self.permissions
        return HookEngine(config, self.workspace, env=session_bash_env(self.settings), mode=lambda: permissions.mode)

    def _use_claude_rules(self) -> None:
        """Claude Code's settings permission rules join the config's (`claude_settings`: a project's only narrowing
        ones until it is trusted), its additionalDirectories the config's `additional_directories`; what agentcli
        cannot use (a missing folder) is told once, with the first turn."""
        from agentcli import trust
        from agentcli.claude_settings import read_claude_permissions

        claude = read_claude_permissions(self.workspace, trusted=trust.is_trusted(self.workspace),
                                         sources=self._sources)
        notes = claude.notes + self.permissions.use_claude_rules(claude.rules)
        self._claude_dirs = claude.directories
        for note in notes:
            log.info("%s", note)  # the person is told through the first turn's notices
        self.hook_notes += notes
        self._use_dirs()

    def _use_dirs(self) -> None:
        """The session's additional directories, from the config, Claude Code's settings and the flags: every
        agent's file tools (but a worktree's) and Bash's sandbox work there too; a skipped one is told once."""
        dirs, skipped = session_additional_dirs(self.workspace, self.settings.permissions.additional_directories,
                                                [*self._claude_dirs, *self._flag_dirs])
        self.extra_dirs[:] = [d.path for d in dirs]  # in place: the runner's AgentKit holds this list
        self.sandbox.add_write_roots(self.extra_dirs)
        self.hook_notes = [note for note in self.hook_notes if note not in self._dir_notes] + skipped
        self._dir_notes = skipped

    def add_directories(self, named: list[tuple[str, str]]) -> None:
        """Before the first turn: more additional directories ((path, the flag that named it): Claude Code's
        `--add-dir`, `--settings`' additionalDirectories), the person's own as the config's are."""
        if self._loop is not None:
            raise RuntimeError("add directories before the first turn")
        self._flag_dirs += named
        self._use_dirs()
        if not self.session.messages:
            self.session = self._new_session()  # the prompt names them

    def _say_sandbox(self) -> None:
        """Where no sandbox can hold Bash, say so once, with the first turn (beside the hook notes)."""
        if self.sandbox.unsandboxed_reason() or self.sandbox.refusal():
            self.hook_notes.append(self.sandbox.describe())

    def keep_transcript(self) -> None:
        """Write the session's messages to a JSONL transcript in Claude Code's format (`store.transcript`), whose
        path the hooks are given."""
        if self._transcript is not None:
            self.hooks.transcript_path = self._transcript  # the hooks may have been read again
            return
        from agentcli import __version__
        from agentcli.store.transcript import TranscriptWriter

        writer = TranscriptWriter(self.workspace, __version__)
        self.bus.subscribe(writer)
        self._transcript = self.hooks.transcript_path = writer.path

    def _notice(self, line: str) -> None:
        """A one-line warning for the person (an MCP server that failed or was refused)."""
        self.bus(NoticeEvent(session_id=self.session.id, message=line))

    async def start_servers(self) -> None:
        """Start the session's MCP servers (lazily: before the main agent's first request needs its tool list)
        and offer their tools to the main agent."""
        if not self.mcp.servers and not self.mcp.problems:
            return
        await self.mcp.start_all()
        if self._loop is not None:
            tools = (cls() for cls in self.mcp.tools(self.mcp.configured))
            self._loop.add_tools(tool for tool in tools if self._offers(tool.name))

    async def _task_servers(self, args: TaskArgs) -> None:
        """Before a task is planned: start the MCP servers its type's agent file defines or names."""
        from agentcli.tools.mcp_names import server_of

        agent_type = self.registry.resolve(args.subagent_type, self.settings.task_tool.type_fallback)
        if agent_type is None:
            return
        for spec in agent_type.mcp_specs:
            if clash := self.mcp.add(spec):
                self._notice(clash)
        names = [*agent_type.mcp_servers, *(server_of(t) or "" for t in agent_type.tools or ())]
        await self.mcp.ensure(n for n in names if n)

    def _new_session(self) -> Session:
        role, appended = self._system
        system = render_system_prompt(self.workspace, instructions=self._instructions, role=role,  # read in __init__
                                      extra_dirs=self.extra_dirs)
        stable = f"{system.stable}\n\n{appended}" if appended else system.stable
        return Session(system_prompt=stable + system.current, system_stable=len(stable), model=self.model,
                       workspace=self.workspace)

    def allow_reads(self, folder: Path) -> None:
        """Let the main agent's Read and LS read inside `folder` (never write): a skill the person invoked as
        `/name`, whose bundled files its instructions name (`tools.paths.resolve_for_read`)."""
        roots = self._loop.context.read_roots if self._loop is not None else self._read_roots
        if folder not in roots:
            roots.append(folder)

    def use_setting_sources(self, sources: frozenset[str]) -> None:
        """Before the first turn: read only these of Claude Code's settings (`--setting-sources`): `user`,
        `project` and `local` settings files for hooks; without `project`, no AGENTS.md / CLAUDE.md either."""
        if self._loop is not None:
            raise RuntimeError("choose the setting sources before the first turn")
        self._sources = sources
        self.hooks = self._load_hooks()
        self._use_claude_rules()
        self._say_sandbox()
        if "project" not in sources:
            self._instructions = ""
        if not self.session.messages:
            self.session = self._new_session()

    def shape_main_agent(self, *, system_prompt: str | None = None, append: str = "",
                         offers: Callable[[str], bool] | None = None) -> None:
        """Before the first turn: the main agent's role replaced by `system_prompt` (the rules for untrusted data, the
        workspace facts, the date and git status stay) and/or `append` added to the stable part; `offers` picks the
        tools it is offered (the Claude Code flags `--system-prompt`, `--append-system-prompt`, `--tools`,
        `--disallowedTools`)."""
        if self._loop is not None:
            raise RuntimeError("shape the main agent before its first turn")
        self._system = (system_prompt, append)
        if offers is not None:
            self._offers = offers
        if not self.session.messages:
            self.session = self._new_session()

    def _load_provider(self) -> Provider:
        """Import the SDK and build its client; warm the price table and the event schemas too."""
        provider = self.pool.get(self.model)
        warm_up(self.model)
        return provider

    async def _after_first_send(self, on_sent: Callable[[], None]) -> None:
        """The first request is on its way: `on_sent`, then `warm_up` in a daemon thread while the answer is
        awaited (the price table loaded at the first cost instead delayed the next request by ~0.05 s; a daemon
        thread, so it never holds up the exit)."""
        on_sent()
        threading.Thread(target=warm_up_quietly, args=(self.model,), name="agentcli-warm-up", daemon=True).start()

    async def prepare(self, *, in_thread: bool = True, on_sent: Callable[[], None] | None = None) -> None:
        """Import the provider SDK and build the agent loop; the SDK import runs in a worker thread, so a UI can
        paint meanwhile. Without `in_thread` (a one-shot: nothing to paint) it runs here, the price table loads
        on first use (after the first answer, not before the first request), and `on_sent` is called once the
        first turn has started (its request is going out)."""
        if self._loop is not None:
            return
        if in_thread:
            provider = await asyncio.to_thread(self._load_provider)
        else:
            provider = self.pool.get(self.model)
            self._after_send = on_sent or (lambda: None)
        context = self.runner.tool_context(self.session)
        context.read_roots.extend(self._read_roots)  # skills the person invoked before the first turn was ready
        self._read_roots = []
        link = ParentLink(self.session, self.bus)
        tools = main_agent_tools(self.runner, link)
        tools = [t for t in tools if not is_mcp_name(t.name) and self._offers(t.name)]  # MCP tools: `_start_servers`
        self._loop = AgentLoop(
            self.session,
            provider,
            tools,
            context,
            self.bus,
            max_turns=self.settings.agent.max_turns,
            price=cost_usd,
            notices=self.runner.notices_for(self.session.id),
            inbox=self.runner.post.inbox(self.session.id),
            compactor=self.runner.compactor(self.session, context),
            hooks=self.hooks,
            lean_below=self.settings.context.lean_below_tokens,
        )
        link.specs = self._loop.tool_specs  # what a fork of the main agent is offered (MCP tools join it later)
        if self._fallback:
            self._loop.fallback = self._fall_back
        runner = self.runner
        self.budget = SessionBudget(
            self.settings.budget,
            self.session,
            self._loop,
            lambda reason: runner.stop_all("budget_exceeded", reason),
            self.bus,
            runner.prices,
        )
        self._drop_budget = self.bus.subscribe(self.budget)

    async def offered_tools(self) -> list[str]:
        """The names of the tools the main agent's next request offers (its MCP servers started first)."""
        await self.prepare()
        await self.start_servers()
        assert self._loop is not None
        return list(self._loop.tools)

    # --- turns ------------------------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        """Whether a turn is running."""
        return self._turn is not None and not self._turn.done()

    async def send(self, prompt: str | Message) -> RunOutcome:
        """Run one turn of the main agent on `prompt` (its subagents included); a `Message` carries extra text
        blocks after the prompt's (the TUI's attached files)."""
        if self.busy:
            raise RuntimeError("a turn is already running")
        await self.prepare()
        await self.start_servers()
        assert self._loop is not None and self.budget is not None
        loop = self._loop
        if reason := self.budget.exceeded():  # spent: no request goes out until a new session (`clear`)
            return RunOutcome("budget_exceeded", "", 0, f"the session is over its budget: {reason}")
        prompt, refused = await self._prompt_hooks(prompt)
        if refused is not None:
            return refused
        self._turn = turn = asyncio.create_task(loop.run(prompt), name="main-turn")
        if self._after_send is not None:  # a task: it runs once the turn has yielded, its request on its way
            self._sent = asyncio.create_task(self._after_first_send(self._after_send), name="after-first-send")
            self._after_send = None
        try:
            return await turn
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise  # our caller is being cancelled (Ctrl-C): propagate
            # A budget stop ends the turn normally (`AgentLoop.stop`); the turn raising means someone cancelled it.
            return RunOutcome("cancelled", loop.last_text(), self.session.turns, "cancelled by the person")
        finally:
            self._turn = None

    async def _prompt_hooks(self, prompt: str | Message) -> tuple[str | Message, RunOutcome | None]:
        """SessionStart (first turn of a session) and UserPromptSubmit hooks: the prompt with what they add
        for the model, or the outcome of a prompt they block (it is not sent)."""
        from agentcli.events import NoticeEvent

        session, notes = self.session, self.hook_notes
        context: list[str] = []
        self.hook_notes = []
        for note in notes:
            self.bus(NoticeEvent(session_id=session.id, agent=session.agent, message=note))
        fire = self.hooks.fire
        if self._hook_source is not None and self.hooks.has("SessionStart"):
            verdict = await fire("SessionStart", {"source": self._hook_source}, session_id=session.id,
                                 agent=session.agent, emit=self.bus, target=self._hook_source)
            context += verdict.context
        self._hook_source = None
        if self.hooks.has("UserPromptSubmit"):
            blocks = [] if isinstance(prompt, str) else [b for b in prompt.content if isinstance(b, TextBlock)]
            text = prompt if isinstance(prompt, str) else blocks[0].text if blocks else ""  # the typed prompt
            verdict = await fire("UserPromptSubmit", {"prompt": text}, session_id=session.id, agent=session.agent,
                                 emit=self.bus)
            if verdict.blocked or verdict.stop:
                why = verdict.reason if verdict.blocked else verdict.stop_reason or verdict.reason
                return prompt, RunOutcome("failed", "", 0, f"prompt blocked by a UserPromptSubmit hook: {why}")
            context += verdict.context
        if not context:
            return prompt, None
        message = Message.user(prompt) if isinstance(prompt, str) else prompt
        extra = [TextBlock(text=f"<system-notice>{defang_tags('Hook context: ' + c)}</system-notice>") for c in context]
        return Message(role=message.role, content=[*message.content, *extra]), None

    async def compact(self, focus: str = "") -> list[Compaction]:
        """`/compact [focus]`: compact the main agent's context now (between turns)."""
        if self.busy:
            raise RuntimeError("a turn is running: compact between turns")
        await self.prepare()
        assert self._loop is not None
        return await self._loop.compact(focus)

    def context_use(self) -> tuple[int, int] | None:
        """(tokens the next request would send, the model's window), None before the first prepare."""
        return self._loop.context_use() if self._loop is not None else None

    def window_source(self) -> str:
        """Where the main agent's window came from (configured, `server: …`, model table, default); "" before
        the first prepare."""
        return self._loop.window_source() if self._loop is not None else ""

    def cancel_turn(self) -> bool:
        """Stop the running turn (Esc / Ctrl-C): every subagent under it stops too."""
        if self._turn is None or self._turn.done():
            return False
        self._turn.cancel()
        return True

    async def cancel_task(self, task_id: str) -> bool:
        """Stop one subagent; its siblings and the parent go on (the parent gets a tool error)."""
        return await self.runner.cancel(task_id, reason="cancelled by the person")

    def message_subagent(self, ref: str, text: str) -> str:
        """The person's message to a queued or running subagent (`/msg`, Ctrl+T): what happened, one line.
        ValueError: why it cannot be sent."""
        return self.runner.switchboard.from_person(ref, text)

    def set_model(self, spec: str) -> ResolvedModel:
        """Switch the main agent's model for the next turns (`/model`)."""
        return self.use_model(resolve_model(spec, self.settings))

    def use_model(self, model: ResolvedModel) -> ResolvedModel:
        """Switch the main agent to a model already resolved (`set_model`; the TUI gives the model back after a
        custom command's turn that used its own `model:`)."""
        self.model = model
        self.session.model = model
        if self._loop is not None:
            self._loop.provider = self.pool.get(model)
            self._loop.use_compactor(self.runner.compactor(self.session, self._loop.context))  # its own window
        return model

    def use_fallback(self, spec: str) -> None:
        """When the main model is overloaded or failing after its retries, go on with `spec` (the turn is tried again
        on it); `--fallback-model`. Raises what `resolve_model` raises for a spec that cannot be used."""
        resolve_model(spec, self.settings)  # a spec that cannot be used fails now, not when the main model does
        self._fallback = spec
        if self._loop is not None:
            self._loop.fallback = self._fall_back

    def _fall_back(self, error: ProviderError) -> bool:
        from agentcli.events import NoticeEvent
        from agentcli.llm.base import OverloadedError, ProviderConnectionError, RateLimitError, ServerError

        spec = self._fallback
        if not spec or not isinstance(error, OverloadedError | ServerError | RateLimitError | ProviderConnectionError):
            return False
        failed = self.model.display
        if self.set_model(spec).display == failed:
            return False
        self.bus(NoticeEvent(session_id=self.session.id, agent=self.session.agent,
                             message=f"{failed} failed ({str(error).splitlines()[0]}); going on with {spec}"))
        return True

    def use_effort(self, effort: str) -> None:
        """Think with `effort` (low | medium | high), as a Task call's `effort` does (`llm.models.with_effort`)."""
        from agentcli.llm.models import with_effort

        self.model = self.session.model = with_effort(self.model, effort)

    async def clear(self) -> None:
        """Start a fresh session (`/clear`): new history, new task table."""
        if self.busy:
            self.cancel_turn()
        await self.runner.aclose()
        self.runner = self._new_runner()
        self.session = self._new_session()
        self._hook_source = "clear"
        self._loop = None
        self._drop_budget()
        self.budget, self._drop_budget = None, lambda: None

    # --- sessions that last (--continue, --resume, /resume, /new) ------------------------------------

    def _store(self) -> Store:
        if self.store is None:
            raise ResumeError("sessions are not stored (no database), so none can be resumed")
        return self.store

    def recent_sessions(self, limit: int = 20) -> list[SessionRecord]:
        """This workspace's top-level sessions, most recently used first (the pickers)."""
        return self._store().list_sessions(limit=limit, workspace=str(self.workspace))

    def spent(self, session_id: str) -> Ledger:
        """A stored session tree's usage as a ledger (zero when it has none)."""
        return stored_spent(self._store(), session_id)

    def find_session(self, ref: str | None) -> SessionRecord:
        """The session `ref` names (an id or a unique prefix), or with None this workspace's latest one."""
        return find_session(self._store(), self.workspace, ref)

    async def resume(self, ref: str | None, *, keep_model: bool = False) -> Resumed:
        """Make a stored session the current one (`None`: this workspace's latest): its model context (from
        the latest compaction on), its stored numbering, turns, usage totals and model (unless `keep_model`:
        the one chosen on the command line), and its earlier tasks. Takes it for this process first: one
        a live process holds raises `ResumeError`. The session used until now is released."""
        if self.busy:
            raise RuntimeError("a turn is running")
        from agentcli.text import terminal_safe

        store = self._store()
        record, context = await take_session(store, self.workspace, ref, current=self.session.id)
        await self.release()
        await self.clear()
        session = self.session
        session.id = record.id
        session.messages, session.next_seq = context.messages, context.next_seq
        session.turns = record.turns
        session.ledger = self.spent(record.id)
        notes: list[str] = []
        if not keep_model:
            try:
                self.set_model(stored_model(record, self.settings))
            except Exception as exc:
                notes.append(
                    terminal_safe(f"its model {record.provider}:{record.model} cannot be used "
                                  f"({str(exc).splitlines()[0] if str(exc) else type(exc).__name__}); "
                                  f"using {self.model.display}")
                )
        self.runner.settle_history(session)
        self._hook_source = "resume"
        cut = self.runner.restore(store.tree_tasks(record.id), record.id)
        log.info("session %s resumed: %d messages, compacted %s", record.id, len(session.messages), context.compacted)
        return Resumed(record, len(session.messages), context.compacted, cut, notes)

    async def fork(self, session_id: str | None = None) -> str:
        """Go on with the resumed session under a new id (`--fork-session`; `session_id`, else a fresh one): its
        stored history is copied, the original is left as it was and released."""
        self.session.id = await fork_stored(self._store(), self.session.id, session_id)
        return self.session.id

    async def release(self) -> None:
        """Let other processes resume the current session (this one moves on to another)."""
        if self.store is not None and self.session.next_seq:
            from agentcli.store.writes import release_session

            try:
                await self.store.write(release_session(self.session.id))
            except Exception as exc:  # the store remembers the failure; see persistence_report
                log.warning("session %s not released: %s", self.session.id, exc)

    async def new_session(self) -> None:
        """`/new`: release the current session and start a fresh one."""
        if self.busy:
            raise RuntimeError("a turn is running")
        await self.release()
        await self.clear()

    async def aclose(self) -> None:
        """End: stop a running turn (and wait for its clean-up), cancel background subagents, close
        SDK clients, flush and close the store (every write has succeeded or failed after this)."""
        turn = self._turn
        if turn is not None and not turn.done():
            turn.cancel()
            await asyncio.wait({turn})
        try:
            await self.runner.aclose()
            await self.mcp.aclose()  # every server stopped (stdio process groups killed)
            await self.pool.aclose()
            if self._sent is not None:
                await asyncio.gather(self._sent, return_exceptions=True)
            if self.store is not None:
                try:
                    await self.store.flush()
                except Exception as exc:  # the store remembers the failure (`Store.failure`); see persistence_report
                    log.warning("store flush failed: %s", exc)
        finally:
            self.close()

    def close(self) -> None:
        """Close the store (drains its queue) and the sandbox (its temp folder goes); idempotent, for a caller
        whose event loop is gone."""
        self.sandbox.close()
        if self.store is not None:
            self.store.close()

    def persistence_report(self, what: str) -> str | None:
        """The line that says the store failed (`what`: run, session), None when every write succeeded."""
        failure = self.store.failure if self.store is not None else None
        if failure is None:
            return None
        return f"agentcli: persistence failed: {failure}; this {what} was not fully saved"
