"""The person's settings a conversation applies: hooks, Claude Code's permission rules and setting sources,
additional directories, the sandbox note, the kept transcript, and the main agent's shape (its system prompt, with
the output style, and the tools it is offered). What cannot be used is told once, with the first turn (`notes`)."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.agent import Session
from agentcli.config import session_additional_dirs
from agentcli.events import EventBus
from agentcli.hooks import HookEngine, load_hooks
from agentcli.plugins import PluginSet
from agentcli.prompts import Style, project_instructions, render_system_prompt
from agentcli.tools import PermissionPolicy, Sandbox, session_bash_env

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.llm import ResolvedModel
    from agentcli.subagents import OutputStyle, OutputStyles

log = logging.getLogger("agentcli.conversation")


class PersonSettings:
    """What the person's settings (and the flags of a program driving the conversation) make of one conversation's
    hooks, permission rules, folders, transcript and main agent, with the lines to tell about what was not taken."""

    def __init__(self, settings: Settings, workspace: Path, permissions: PermissionPolicy, sandbox: Sandbox,
                 bus: EventBus, plugins: PluginSet | None = None) -> None:
        self.settings = settings
        self.plugins = plugins or PluginSet()  # their hooks join the person's
        self.workspace = workspace
        self.permissions = permissions
        self.sandbox = sandbox
        self.bus = bus
        self.instructions = project_instructions(workspace) if settings.agent.project_instructions else ""
        self.notes: list[str] = []  # hook settings not taken, told once with the first turn
        self.sources: frozenset[str] | None = None  # Claude Code's setting sources read (None: all)
        self.extra_dirs: list[Path] = []  # additional directories (`additional_dirs`), shared with every AgentKit
        self.claude_dirs: list[tuple[str, str]] = []  # Claude Code's additionalDirectories read (entry, file)
        self.flag_dirs: list[tuple[str, str]] = []  # folders a program's flags added (`add_directories`)
        self.dir_notes: list[str] = []  # the skipped folders' lines, among `notes`
        self.transcript: Callable[[str], str] | None = None
        self.system: tuple[str | None, str] = (None, "")  # a program's own system prompt, and text to append
        self.offers: Callable[[str], bool] = lambda name: True  # which tools the main agent is offered
        self.style: OutputStyle | None = None  # the output style ("default": none; `use_claude_rules` picks it)

    def load_hooks(self) -> HookEngine:
        """The person's hooks, and a trusted project's (an untrusted workspace's never run: `hooks.settings`)."""
        from agentcli.config import trust

        config = load_hooks(self.settings.hooks, self.workspace, trusted=trust.is_trusted(self.workspace),
                            sources=self.sources, plugins=self.plugins.plugins)
        config.notes[:0] = self.plugins.problems
        for note in config.notes:  # info: a warning before the log is set up would reach stderr a second time
            log.info("%s", note)
        self.notes = config.notes  # told once, with the first turn
        permissions = self.permissions
        return HookEngine(config, self.workspace, env=session_bash_env(self.settings), mode=lambda: permissions.mode)

    def use_claude_rules(self) -> None:
        """Claude Code's settings permission rules join the config's (`claude_settings`: a project's only narrowing
        ones until it is trusted), its additionalDirectories the config's `additional_directories`, and the output
        style is picked (`use_style`); what agentcli cannot use (a missing folder) is told once, with the first
        turn."""
        from agentcli.config import read_claude_permissions, trust

        claude = read_claude_permissions(self.workspace, trusted=trust.is_trusted(self.workspace),
                                         sources=self.sources)
        notes = claude.notes + self.permissions.use_claude_rules(claude.rules)
        self.claude_dirs = claude.directories
        for note in notes:
            log.info("%s", note)  # the person is told through the first turn's notices
        self.notes += notes
        self.use_dirs()
        self.use_style()

    def use_dirs(self) -> None:
        """The session's additional directories, from the config, Claude Code's settings and the flags: every
        agent's file tools (but a worktree's) and Bash's sandbox work there too; a skipped one is told once."""
        dirs, skipped = session_additional_dirs(self.workspace, self.settings.permissions.additional_directories,
                                                [*self.claude_dirs, *self.flag_dirs])
        self.extra_dirs[:] = [d.path for d in dirs]  # in place: the runner's AgentKit holds this list
        self.sandbox.add_write_roots(self.extra_dirs)
        self.notes = [note for note in self.notes if note not in self.dir_notes] + skipped
        self.dir_notes = skipped

    def add_directories(self, named: list[tuple[str, str]]) -> None:
        """More additional directories ((path, the flag that named it)), the person's own as the config's are."""
        self.flag_dirs += named
        self.use_dirs()

    def say_sandbox(self) -> None:
        """Where no sandbox can hold Bash, say so once, with the first turn (beside the hook notes)."""
        if self.sandbox.unsandboxed_reason() or self.sandbox.refusal():
            self.notes.append(self.sandbox.describe())

    def use_sources(self, sources: frozenset[str]) -> HookEngine:
        """Read only these of Claude Code's settings (`--setting-sources`): the hooks read again (returned), the
        permission rules and folders joined again; without `project`, no AGENTS.md / CLAUDE.md either."""
        self.sources = sources
        hooks = self.load_hooks()
        self.use_claude_rules()
        self.say_sandbox()
        if "project" not in sources:
            self.instructions = ""
        return hooks

    def keep_transcript(self, hooks: HookEngine) -> None:
        """Write the session's messages to a JSONL transcript in Claude Code's format (`store.transcript`), whose
        path `hooks` are given."""
        if self.transcript is not None:
            hooks.transcript_path = self.transcript  # the hooks may have been read again
            return
        from agentcli import __version__
        from agentcli.store import TranscriptWriter

        writer = TranscriptWriter(self.workspace, __version__)
        self.bus.subscribe(writer)
        self.transcript = hooks.transcript_path = writer.path

    def shape(self, system_prompt: str | None, append: str, offers: Callable[[str], bool] | None) -> None:
        """The main agent's role replaced by `system_prompt` and/or `append` added to the stable part; `offers`
        picks the tools it is offered."""
        self.system = (system_prompt, append)
        if offers is not None:
            self.offers = offers

    def new_session(self, model: ResolvedModel) -> Session:
        """A fresh main-agent session whose system prompt says what these settings make of it."""
        session = Session(system_prompt="", model=model, workspace=self.workspace)
        self.restyle(session)
        return session

    def restyle(self, session: Session) -> None:
        """Give the main agent's `session` the system prompt these settings make (its output style as now)."""
        role, appended = self.system
        style = self.style
        system = render_system_prompt(self.workspace, instructions=self.instructions, role=role,
                                      extra_dirs=self.extra_dirs,
                                      style=Style(style.name, style.instructions, style.keep_coding) if style else None)
        stable = f"{system.stable}\n\n{appended}" if appended else system.stable
        session.system_prompt, session.system_stable = stable + system.current, len(stable)

    def output_styles(self) -> OutputStyles:
        """The styles this session may use (a project's only when it is trusted)."""
        from agentcli.config import trust
        from agentcli.subagents import OutputStyles

        return OutputStyles.load(self.workspace, trusted=trust.is_trusted(self.workspace), plugins=self.plugins.plugins)

    def use_style(self, name: str | None = None) -> OutputStyle | None:
        """Use the output style `name` ("default": none), else the one `[ui] output_style` or Claude Code's
        `outputStyle` names; a name no style has is told once (the default is used). The style, or None."""
        from agentcli.config import claude_output_style, trust

        wanted = name if name is not None else (self.settings.ui.output_style or claude_output_style(
            self.workspace, trusted=trust.is_trusted(self.workspace), sources=self.sources))
        if not wanted or wanted.strip().lower() == "default":  # no file is read for agentcli's own prompt
            self.style = None
            return None
        styles = self.output_styles()
        self.style = styles.get(wanted)
        if self.style is None and name is None:
            self.notes.append(f"output style {wanted!r} not found (styles: {', '.join(styles.names())}); "
                              "the default is used")
        return self.style
