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

from agentcli.agent import AgentLoop, Compaction, RunOutcome, Session
from agentcli.conversation.background import background_event
from agentcli.conversation.checkpoints import PromptCheckpoints, prompt_text
from agentcli.conversation.model_switch import ModelSwitching
from agentcli.conversation.person_settings import PersonSettings
from agentcli.conversation.rewinds import Rewinds
from agentcli.conversation.servers import SessionServers
from agentcli.conversation.sessions import StoredSessions
from agentcli.conversation.turn_hooks import PromptHooks
from agentcli.conversation.warm_up import warm_up, warm_up_quietly
from agentcli.events import EventBus
from agentcli.llm import Message, Provider, ProviderError, ProviderPool, ResolvedModel, cost_usd, resolve_model
from agentcli.mcp import McpManager
from agentcli.plugins import session_plugins
from agentcli.subagents import (
    AgentRegistry,
    ParentLink,
    SessionBudget,
    SkillCatalog,
    SubagentRunner,
    Toolbox,
    message_tools,
    output_tools,
    prune_at_start,
    skill_tool_class,
    task_tools,
)
from agentcli.tools import (
    Approver,
    FileAccess,
    FileLocks,
    PermissionPolicy,
    QuestionAsker,
    Tool,
    is_mcp_name,
    search_absent,
    session_sandbox,
)

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.store import Store

log = logging.getLogger("agentcli.conversation")


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
    elif any(tool.name == "Bash" for tool in tools):
        tools += output_tools(runner)  # to read and stop its background commands
    return tools


class Conversation(ModelSwitching, StoredSessions, Rewinds):
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
            from agentcli.store import StoreRecorder

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
        self._questions: QuestionAsker | None = None  # who answers AskUserQuestion (`use_questions`)
        self.plugins = session_plugins(workspace, dirs=settings.plugins.dirs, enabled=settings.plugins.enabled)
        self.registry = AgentRegistry.load(workspace, aliases=settings.models.aliases, plugins=self.plugins.plugins)
        self.skills = SkillCatalog.load(workspace, plugins=self.plugins.plugins)  # bodies read when used
        if (skill_tool := skill_tool_class(self.skills)) is not None:  # no skill: no tool, the requests as before
            self.toolbox.add([skill_tool])
        self.search_absent = search_absent(settings.web_search, self.model, self.pool)  # "": WebSearch is offered
        if self.search_absent:  # no agent is offered it; a call to it (an agent file's) gets the line
            self.toolbox.drop("WebSearch")
        self.person_settings = PersonSettings(settings, workspace, self.permissions, self.sandbox, self.bus,
                                              self.plugins)
        self._fallback = ""  # the model to go on with when the main one fails (--fallback-model)
        self.hooks = self.person_settings.load_hooks()
        self.person_settings.use_claude_rules()
        if any(self.hooks.config.by_event.values()):
            self.keep_transcript()  # hooks read it (their input's transcript_path)
        self.person_settings.say_sandbox()
        self.checkpoints = PromptCheckpoints(settings.checkpoints, workspace, store, self.bus)
        self.prompt_hooks = PromptHooks(self.bus)  # SessionStart's source, until it fired for this session
        self.servers = SessionServers(settings, workspace, self.registry, self.toolbox, self.bus, lambda: self.session,
                                      self.plugins.plugins)
        self.mcp: McpManager = self.servers.mcp  # nothing starts before the first turn
        self._drop_cache: Callable[[], None] = lambda: None
        self.runner = self._new_runner()
        self._read_roots: list[Path] = []  # folders the main agent may read once its loop is built (`allow_reads`)
        self.session = self._new_session()
        self._loop: AgentLoop | None = None
        self._turn: asyncio.Task[RunOutcome] | None = None
        self.settling = False  # a turn's model work is over and its checkpoint is being finished
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
        from agentcli.llm import ModelSpecError
        from agentcli.logs import setup_logging
        from agentcli.store import Store, StoreError
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

    @property
    def hook_notes(self) -> list[str]:
        """What the person's settings could not take (hooks, rules, folders, the sandbox), told with the first turn."""
        return self.person_settings.notes

    @hook_notes.setter
    def hook_notes(self, notes: list[str]) -> None:
        self.person_settings.notes = notes

    @property
    def extra_dirs(self) -> list[Path]:
        """The session's additional directories (`additional_dirs`), shared with every AgentKit."""
        return self.person_settings.extra_dirs

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
            instructions=self.person_settings.instructions,
            toolbox=self.toolbox,
            hooks=self.hooks,
            before_task=self.servers.for_task,
            sandbox=self.sandbox,
            skills=self.skills,
            extra_roots=self.person_settings.extra_dirs,
        )
        self._drop_cache()
        self._drop_cache = runner.cache.attach(self.bus)
        runner.kit.shells.listeners.append(lambda job: self.bus(background_event(job)))  # every front end sees them
        runner.kit.files, runner.kit.questions = self._files, self._questions
        runner.kit.lsp.add_plugin_servers(self.plugins.plugins)
        if self.search_absent:
            runner.planner.absent["WebSearch"] = self.search_absent
        return runner

    def use_files(self, files: FileAccess | None) -> None:
        """The file tools of every agent of the session (not of a worktree) read and write text through `files` (an
        editor's buffers) from the next context built; the main agent's is built at the first turn."""
        self._files = self.runner.kit.files = files

    def use_questions(self, questions: QuestionAsker | None) -> None:
        """Every agent's AskUserQuestion asks the person through `questions` (None: no one can answer), the main
        agent's at once, subagents' from the next context built."""
        self._questions = self.runner.kit.questions = questions
        if self._loop is not None:
            self._loop.context.questions = questions

    def add_directories(self, named: list[tuple[str, str]]) -> None:
        """Before the first turn: more additional directories ((path, the flag that named it): Claude Code's
        `--add-dir`, `--settings`' additionalDirectories), the person's own as the config's are."""
        if self._loop is not None:
            raise RuntimeError("add directories before the first turn")
        self.person_settings.add_directories(named)
        if not self.session.messages:
            self._reshape_session()  # the prompt names them

    def keep_transcript(self) -> None:
        """Write the session's messages to a JSONL transcript in Claude Code's format (`store.transcript`), whose
        path the hooks are given."""
        self.person_settings.keep_transcript(self.hooks)

    async def start_servers(self) -> None:
        """Start the session's MCP servers (lazily: before the main agent's first request needs its tool list)
        and offer their tools to the main agent."""
        await self.servers.start(self._loop, self.person_settings.offers)

    def _new_session(self) -> Session:
        return self.person_settings.new_session(self.model)

    def _reshape_session(self) -> None:
        """The session, still empty, with the system prompt the settings now make; its id stays (a program may
        have named it: `--session-id`)."""
        session_id = self.session.id
        self.session = self._new_session()
        self.session.id = session_id

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
        self.hooks = self.person_settings.use_sources(sources)
        if not self.session.messages:
            self._reshape_session()

    @property
    def started(self) -> bool:
        """Whether the main agent is built (its first turn began): its shape is fixed from then on."""
        return self._loop is not None

    def shape_main_agent(self, *, system_prompt: str | None = None, append: str = "",
                         offers: Callable[[str], bool] | None = None) -> None:
        """Before the first turn: the main agent's role replaced by `system_prompt` (the rules for untrusted data, the
        workspace facts, the date and git status stay) and/or `append` added to the stable part; `offers` picks the
        tools it is offered (the Claude Code flags `--system-prompt`, `--append-system-prompt`, `--tools`,
        `--disallowedTools`)."""
        if self._loop is not None:
            raise RuntimeError("shape the main agent before its first turn")
        self.person_settings.shape(system_prompt, append, offers)
        if not self.session.messages:
            self._reshape_session()

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
        offers = self.person_settings.offers
        tools = [t for t in tools if not is_mcp_name(t.name) and offers(t.name)]  # MCP tools: `start_servers`
        self._loop = AgentLoop(
            self.session, provider, tools, context, self.bus,
            max_turns=self.settings.agent.max_turns,
            price=cost_usd,
            unavailable=self.runner.withheld(self.session.depth),
            notices=self.runner.notices_for(self.session.id),
            inbox=self.runner.post.inbox(self.session.id),
            compactor=self.runner.compactor(self.session, context),
            hooks=self.hooks,
            lean_below=self.settings.context.lean_below_tokens,
            defer=self.runner.defer,
        )
        link.specs = self._loop.offered  # what a fork of the main agent is offered (MCP tools join it later)
        self.arm_fallback(self._loop)
        runner = self.runner
        self.budget = SessionBudget(self.settings.budget, self.session, self._loop,
                                    lambda reason: runner.stop_all("budget_exceeded", reason), self.bus, runner.prices)
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

    async def send(self, prompt: str | Message, *, message_id: str | None = None) -> RunOutcome:
        """Run one turn of the main agent on `prompt` (its subagents included); a `Message` carries extra text
        blocks after the prompt's (the TUI's attached files). The workspace's files are checkpointed before it
        and after it (`message_id`: the prompt's uuid, for `rewind_files`)."""
        if self.busy:
            raise RuntimeError("a turn is already running")
        await self.prepare()
        await self.start_servers()
        assert self._loop is not None and self.budget is not None
        loop = self._loop
        if reason := self.budget.exceeded():  # spent: no request goes out until a new session (`clear`)
            return RunOutcome("budget_exceeded", "", 0, f"the session is over its budget: {reason}")
        notes, self.hook_notes = self.hook_notes, []
        prompt, refused = await self.prompt_hooks.apply(prompt, self.session, self.hooks, notes)
        if refused is not None:
            return refused
        gate = asyncio.create_task(self.checkpoints.before(self.session, self.session.next_seq, prompt_text(prompt),
                                                           message_id), name="checkpoint")
        self.permissions.hold(gate)  # taken while the first request is on its way; no edit runs before it
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
            self.permissions.hold(None)
            self.settling = True  # the answer is out; the files after it are being kept (nothing to stop)
            try:
                await self.checkpoints.after(self.session, gate)
            finally:
                self.settling = False

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

    async def fork(self, session_id: str | None = None) -> str:
        """Go on with the resumed session under a new id (`StoredSessions.fork`), its checkpoints held under it."""
        fresh = await super().fork(session_id)
        self.checkpoints.adopt(fresh)
        return fresh

    def message_subagent(self, ref: str, text: str) -> str:
        """The person's message to a queued or running subagent (`/msg`, Ctrl+T): what happened, one line.
        ValueError: why it cannot be sent."""
        return self.runner.switchboard.from_person(ref, text)

    async def clear(self) -> None:
        """Start a fresh session (`/clear`): new history, new task table."""
        if self.busy:
            self.cancel_turn()
        await self.runner.aclose()
        self.runner = self._new_runner()
        self.session = self._new_session()
        self.prompt_hooks.restart("clear")
        self._loop = None
        self._drop_budget()
        self.budget, self._drop_budget = None, lambda: None

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
