"""What every agent of one session tree is given: its tool context and what keeps its context in its window."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.agent import (
    Compactor,
    ContextPolicy,
    Discover,
    Facts,
    Session,
    SummaryReply,
    model_summarizer,
    window_and_source,
)
from agentcli.lsp import LanguageServers, RootIntel
from agentcli.subagents.plan import Scopes
from agentcli.tools import (
    BackgroundShells,
    FileAccess,
    FileLocks,
    QuestionAsker,
    ToolContext,
    WebFetchLimits,
    WebSearcher,
    searcher_for,
    session_bash_env,
)

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.llm import ProviderPool, ResolvedModel
    from agentcli.tools import PermissionPolicy, Sandbox


class AgentKit:
    """The shared parts (permissions, file locks, Bash's environment and sandbox, WebFetch's limits) and each agent's
    own."""

    def __init__(
        self,
        settings: Settings,
        workspace: Path,
        permissions: PermissionPolicy,
        file_locks: FileLocks,
        pool: ProviderPool,
        task_lines: Callable[[str], list[str]],
        sandbox: Sandbox | None = None,
        extra_roots: list[Path] | None = None,
    ) -> None:
        self.settings = settings
        self.workspace = workspace
        self.permissions = permissions
        self.file_locks = file_locks
        self.pool = pool
        self.task_lines = task_lines  # a session's delegated tasks, one line each: a compaction keeps them
        self.sandbox = sandbox  # every agent's Bash runs in it (the conversation's, [sandbox])
        self.shells = BackgroundShells(settings.shell.max_background, settings.shell.max_output_bytes)
        self.files: FileAccess | None = None  # an editor's buffers for the file tools' text (ACP); None: the disk
        self.questions: QuestionAsker | None = None  # the person who answers AskUserQuestion; None: no one
        # The session's additional directories (`additional_dirs`), resolved: a list the conversation keeps up to date
        self.extra_roots: list[Path] = extra_roots if extra_roots is not None else []
        self.bash_env = session_bash_env(settings)  # no provider keys; computed once per session tree
        # The session tree's language servers ([lsp]): one per server and root, shared by every agent; a worktree
        # agent's view roots them in its worktree (servers of its own, started lazily, within `max_servers`).
        # An untrusted workspace's code runs in no server outside the sandbox (build scripts, a local tsserver).
        from agentcli.config import trust

        self.lsp = LanguageServers(settings, self.bash_env, sandbox, trusted=trust.is_trusted(workspace))
        self._searchers: dict[ResolvedModel, WebSearcher] = {}
        fetch = settings.web_fetch
        self.web_fetch = WebFetchLimits(tuple(fetch.allow_private_hosts), fetch.max_download_bytes,
                                        fetch.max_output_chars, fetch.timeout_seconds, fetch.max_redirects)

    def tool_context(
        self,
        session: Session,
        *,
        write_paths: list[str] | None = None,
        write_scopes: Scopes = (),
        progress: Callable[[], None] | None = None,
        workspace: Path | None = None,
        sandbox: Sandbox | None = None,
    ) -> ToolContext:
        """The ToolContext of one agent of this tree (shared permissions and file locks, its own todos); an agent in
        a worktree has it as its `workspace`, with a `sandbox` writing there (and its files on the disk: an editor's
        buffers are the workspace's), and no additional directory: it keeps to its worktree."""
        agent = self.settings.agent
        root = (workspace or self.workspace).resolve()  # once: each resolve is a stat of every part of the path
        return ToolContext(
            workspace=root,
            agent=session.agent,
            session_id=session.id,
            permissions=self.permissions,
            file_locks=self.file_locks,
            bash_timeout_seconds=agent.bash_timeout_seconds,
            bash_output_limit_bytes=agent.bash_output_limit_bytes,
            read_max_chars=agent.read_max_chars,
            tool_timeout_seconds=agent.tool_timeout_seconds,
            write_paths=write_paths,
            write_scopes=write_scopes,
            progress=progress or (lambda: None),
            bash_env=self.bash_env,
            web_fetch=self.web_fetch,
            web_search=self.searcher(session.model),
            sandbox=sandbox or self.sandbox,
            shells=self.shells,
            files=self.files if workspace is None else None,
            worktree=workspace is not None,
            extra_roots=self.extra_roots if workspace is None else [],
            code_intel=RootIntel(self.lsp, root, sandbox or self.sandbox),
            questions=self.questions,
        )

    def searcher(self, model: ResolvedModel) -> WebSearcher:
        """Where an agent running `model` sends its WebSearch queries (`[web_search]`): one searcher per model and
        session tree, shared by its agents (a fan-out's subagents would each build the same one)."""
        import os

        from agentcli.llm import resolve_model

        found = self._searchers.get(model)
        if found is None:
            found = self._searchers[model] = searcher_for(
                self.settings.web_search, model, self.pool, lambda spec: resolve_model(spec, self.settings), os.environ)
        return found

    def compactor(self, session: Session, context: ToolContext) -> Compactor:
        """What keeps one agent's context inside its model's window (`[context]`): its tasks and todos survive."""
        cfg = self.settings.context
        policy = ContextPolicy(
            window=cfg.default_window,  # until the Compactor looks the model's up, on first use
            threshold=cfg.compact_threshold,
            auto_summary=cfg.auto_compact,
            prune_chars=cfg.prune_tool_results_chars,
            keep_ratio=cfg.keep_recent_ratio,
            max_messages=cfg.max_messages,
        )

        def facts() -> Facts:
            todos = [
                f"- [{'~' if t.status == 'in_progress' else ' '}] {t.content}"
                for t in context.todos
                if t.status != "completed"
            ]
            return Facts(tasks=self.task_lines(session.id), todos=todos)

        def window() -> int:
            tokens, compactor.window_source = window_and_source(session.model, cfg.default_window)
            return tokens

        compactor = Compactor(policy, summarize=self._summarize, facts=facts, window=window,
                              discover=self._discover(session.model))
        return compactor

    def _discover(self, model: ResolvedModel) -> Discover | None:
        """Asks an OpenAI-compatible server for its window when none is configured (`[context]
        server_window_timeout_seconds`; 0: never); the session's pool asks each server once."""
        cfg = self.settings.context
        if model.provider != "openai-compatible" or model.context_window or cfg.server_window_timeout_seconds <= 0:
            return None

        async def discover() -> tuple[int, str] | None:
            found = await self.pool.server_window(model, timeout=cfg.server_window_timeout_seconds,
                                                  default=cfg.default_window)
            return (found.tokens, f"server: {found.source}") if found is not None else None

        return discover

    async def _summarize(self, transcript: str, focus: str) -> SummaryReply:
        """Summaries are the light model's work (resolved at the first compaction, not before)."""
        from agentcli.llm import resolve_model

        light = resolve_model("light", self.settings)
        return await model_summarizer(self.pool.get(light), light)(transcript, focus)
