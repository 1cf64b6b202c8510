"""Deciding a Task call, without running anything: the type, the model, the tools, the limits, the texts.

Pure: no asyncio, no store, no event. The runner looks up what must be looked up (a resumed
task's record, the parent's confinement) and hands it in; every refusal comes back as a
`Refusal` with its SPEC §4 code and message.

Delegation never widens what an agent may do. A subagent's write confinement is inherited and
intersected down the tree: a child writes only where its own `write_paths` AND every ancestor's
allow (`ToolContext.write_scopes`), gets no command tool (Bash: it could write anywhere) below a
confined ancestor, and below a read-only type gets non-mutating tools only (an empty scope: no
write matches). Which tool is which comes from the tool classes' traits.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING, Any

from agentcli.llm import ResolvedModel, resolve_model, with_effort
from agentcli.prompts import SystemPrompt
from agentcli.status import DELEGATION_FAILED
from agentcli.store import TaskRecord
from agentcli.subagents.budget import Budgets
from agentcli.subagents.definitions.front_matter import AgentFileError
from agentcli.subagents.definitions.skills import Skill, SkillCatalog, loaded_text, skill_body
from agentcli.subagents.limits import cycle_error, depth_error
from agentcli.subagents.task_tool import TASK_TOOL_CLASSES, TaskArgs
from agentcli.text import defang_tags
from agentcli.tools import MESSAGE_TOOL_NAMES, TASK_TOOL_NAMES, Tool, ToolResult

if TYPE_CHECKING:
    from agentcli.agent import Session
    from agentcli.config import Settings
    from agentcli.subagents.definitions.registry import AgentRegistry, AgentType

Scopes = tuple[tuple[str, ...], ...]
log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Refusal:
    """A Task call refused before it ran: SPEC §4's code and message."""

    message: str
    code: str

    def result(self) -> ToolResult:
        """The parent's tool error."""
        return ToolResult(self.message, is_error=True, metadata={"code": self.code, "short_result": DELEGATION_FAILED})


@dataclass(frozen=True, slots=True)
class TaskPlan:
    """Everything decided about one Task call before it runs."""

    agent_type: AgentType
    model: ResolvedModel
    tool_names: tuple[str, ...]  # type policy ∩ depth rule − deny_tools, narrowed by confinement
    write_paths: list[str] | None  # the call's own confinement
    write_scopes: Scopes  # the ancestors' confinement (see the module docstring)
    system_prompt: str
    system_stable: int  # leading characters of system_prompt that every task of its type shares (caching)
    user_message: str
    timeout: float  # wall-clock seconds
    max_turns: int
    budgets: Budgets  # the call's max_tokens / max_cost_usd, else task_tool's
    note: str = ""  # told to the parent with the result: what of its call was not followed, and why
    fork: bool = False  # starts from the parent's conversation, with its system prompt (fork.py)
    isolated: bool = False  # works in its own git worktree, merged back when it finishes (isolation.py)
    remote: bool = False  # isolated, and run on the executor's cluster (`remote/`), its changes brought back
    keep_branch: bool = False  # isolated with `merge: "manual"`: its changes stay on its branch
    skill_roots: tuple[Path, ...] = ()  # folders of the skills its type preloads: its Read may read there


def _working(names: Sequence[str]) -> list[str]:
    """The tools that do the work, without the messaging tools (an agent of only those has nothing to work with)."""
    return [n for n in names if n not in MESSAGE_TOOL_NAMES]


def inherited_scopes(scopes: Scopes, write_paths: list[str] | None, read_only: bool) -> Scopes:
    """The write scopes every child of a subagent inherits: its own scopes, plus its write_paths, plus an
    empty scope when its type is read-only (no write can match it). The main agent passes none."""
    if write_paths is not None:
        scopes = (*scopes, tuple(write_paths))
    if read_only and () not in scopes:
        scopes = (*scopes, ())
    return scopes


def user_message(args: TaskArgs) -> str:
    """The subagent's user message: the prompt, the expected response, the output schema."""
    text = args.prompt
    if args.expected_response:
        text += f"\n\n# Expected response\n{args.expected_response}"
    if args.output_schema is not None:
        from agentcli.subagents.schema import answer_format

        text += answer_format(args.output_schema)
    return text


def fork_message(agent_type: str, role: str, tools: tuple[str, ...], task: str) -> str:
    """A fork's first user message. A fork keeps its parent's system prompt (byte-identical, for the prompt
    cache), so what a subagent's system prompt would say (its role, its task, its confinement) comes here."""
    return (
        f"You are now a fork of the conversation above: a subagent of type {agent_type} that knows what your "
        "parent knew when it called Task. Your parent goes on without you and reads only your final answer. "
        f"Of the tools above you may call {', '.join(tools)}; a call to any other is refused. Where your role "
        "below says you do not see your caller's conversation: as a fork, you do.\n\n"
        f"{role}\n\n# Prompt\n{task}"
    )


class Planner:
    """Decides Task calls for one session tree from its settings, agent types and tool classes."""

    def __init__(
        self,
        settings: Settings,
        registry: AgentRegistry,
        workspace: Path,
        tool_classes: Mapping[str, type[Tool[Any]]],
        instructions: str = "",
        skills: SkillCatalog | None = None,
    ) -> None:
        self.settings = settings
        self.registry = registry
        self.workspace = workspace
        self.tool_classes = tool_classes  # the tools a child may be built with (Task tools come on top)
        self.instructions = instructions  # project AGENTS.md / CLAUDE.md, read once
        self.skills = skills or SkillCatalog()  # what agent files' `skills:` preload
        self.subagent_append = ""  # added to every subagent's role (a program's `appendSubagentSystemPrompt`)
        # Tools this session does not offer, with the line a call to one gets (WebSearch without a backend)
        self.absent: dict[str, str] = {}
        self._skill_texts: dict[str, str] = {}
        # Per agent type (held, so its id is never reused meanwhile): what every task of the type shares, built once
        # per session instead of once per Task call (a fan-out plans many tasks of one type at once).
        self._allowed: dict[tuple[int, tuple[str, ...]], tuple[AgentType, tuple[str, ...]]] = {}
        self._roles: dict[tuple[int, str, str], tuple[AgentType, str]] = {}

    # --- what an agent is offered -------------------------------------------------------------------

    def can_delegate(self, depth: int) -> bool:
        """Whether an agent at `depth` is offered the Task tool."""
        cfg = self.settings.task_tool
        return cfg.enabled and depth < cfg.max_depth

    def withheld(self, depth: int) -> dict[str, str]:
        """Why an agent past the depth limit gets no Task tools, and why the session offers no WebSearch (said to a
        model that calls one anyway)."""
        if self.can_delegate(depth) or not self.settings.task_tool.enabled:
            return dict(self.absent)
        message = depth_error(depth, self.settings.task_tool.max_depth) or ""
        return {**self.absent, **dict.fromkeys(TASK_TOOL_NAMES, message)}

    def task_description(self, header: str) -> str:
        """The Task tool's description: `header`, then every agent type with its model and what it may do.

        The same text for every agent of the tree, at every depth, so every agent's tool list stays a prefix
        of the main agent's (the provider's prompt cache serves it). What depends on the caller is decided
        when it calls: a type already in its chain is refused (CIRCULAR), so is a call past max_depth, and
        below a read-only or confined agent a child gets only what the confinement allows (`tool_names`).
        """
        lines = [header.strip(), "", "Available agent types:"]
        for agent in self.registry.types.values():
            access = "read-only" if agent.read_only else "can edit and run commands"
            model = agent.model or "inherit"
            lines.append(defang_tags(f"- {agent.name} ({model}, {access}): {agent.description.strip()}"))
        return "\n".join(lines)

    # --- one Task call ------------------------------------------------------------------------------

    def plan(
        self,
        args: TaskArgs,
        parent: Session,
        scopes: Scopes,
        previous: TaskRecord | None,
        today: date,
    ) -> TaskPlan | Refusal:
        """Decide a Task call of the agent `parent`, whose children inherit `scopes`.

        `previous` is the finished task that `args.resume` names (None when there is none).
        """
        if not self.registry.types:
            return Refusal("No subagents available for delegation", "NOT_FOUND")
        if args.resume and previous is None:
            return Refusal(f"Invalid parameters: resume: no finished task '{args.resume}'", "INVALID_PARAM")
        if previous is not None:
            agent_type = self.registry.get(previous.subagent_type)
        else:
            agent_type = self.registry.resolve(args.subagent_type, self.settings.task_tool.type_fallback)
        if agent_type is None:
            wanted = previous.subagent_type if previous else args.subagent_type
            return Refusal(f"Subagent '{wanted}' not found. Available: {', '.join(self.registry.names())}", "NOT_FOUND")
        fork = previous is None and (args.fork_context or agent_type.fork_context)
        isolation = args.isolation or agent_type.isolation
        if args.merge == "manual" and isolation is None:
            return Refusal('Invalid parameters: merge: "manual" needs isolation: "worktree"', "INVALID_PARAM")
        if isolation == "remote" and fork:
            return Refusal('Invalid parameters: fork_context cannot run with isolation: "remote"', "INVALID_PARAM")
        problem = depth_error(parent.depth, self.settings.task_tool.max_depth) or cycle_error(
            parent.chain, parent.lineage, agent_type.name, args.prompt
        )
        if problem:
            return Refusal(problem, "CIRCULAR")
        try:
            # A Task call's effort overrides the agent file's, which overrides the model's own thinking setting.
            # A fork runs on its parent's model and thinking unless the call names them: the history is that
            # model's, and the provider's prompt cache is per model and thinking setting.
            model = self.model(args.model or ("inherit" if fork else None), agent_type, parent.model, previous)
            model = with_effort(model, args.effort or (None if fork else agent_type.effort))
        except Exception as exc:  # a model that does not resolve: a missing key, an unknown provider
            return Refusal(f"Failed to initialize subagent: {exc}", "INTERNAL_ERROR")
        note = self.ignored_model(args.model, agent_type, parent.model, previous)
        names = self.tool_names(agent_type, parent.depth + 1, args.write_paths, scopes)
        if isinstance(names, Refusal):
            return names
        if isolation is None and not fork and any(self._trait(n, "mutating") for n in names):
            isolation = self.settings.executor.isolate_writers or None  # every writer isolated ([executor])
        cfg = self.settings.task_tool
        timeout = args.timeout_seconds or agent_type.timeout_seconds or cfg.default_timeout_seconds
        # A fork's own instructions go into its first message; the project's are in its parent's system prompt.
        system = self.system_prompt(agent_type, args.description, args.write_paths, scopes, today,
                                    instructions=not fork)
        return TaskPlan(
            agent_type=agent_type,
            model=model,
            tool_names=tuple(names),
            write_paths=args.write_paths,
            write_scopes=scopes,
            system_prompt=parent.system_prompt if fork else system.text,
            system_stable=parent.system_stable if fork else len(system.stable),
            user_message=fork_message(agent_type.name, system.text, tuple(names), user_message(args)) if fork
            else user_message(args),
            timeout=float(min(timeout, cfg.max_timeout_seconds)),
            max_turns=agent_type.max_turns or self.settings.agent.max_turns,
            budgets=self.budgets(args),
            note=note,
            fork=fork,
            isolated=isolation in ("worktree", "remote"),
            remote=isolation == "remote",
            keep_branch=args.merge == "manual",
            skill_roots=tuple(skill.folder for skill in self.preloaded(agent_type)),
        )

    def budgets(self, args: TaskArgs) -> Budgets:
        """A task's limits: the call's `max_tokens` / `max_cost_usd` (validated to be within the
        configured ones), else `task_tool.max_tokens` / `max_cost_usd`."""
        cfg = self.settings.task_tool
        return Budgets(
            max_tokens=args.max_tokens or cfg.max_tokens,
            max_tool_calls=cfg.max_tool_calls,
            idle_seconds=float(cfg.idle_timeout_seconds),
            max_cost_usd=args.max_cost_usd if args.max_cost_usd is not None else cfg.max_cost_usd,
        )

    def model(
        self, requested: str | None, agent_type: AgentType, inherited: ResolvedModel, previous: TaskRecord | None
    ) -> ResolvedModel:
        """The child's model: a resumed task's (SPEC §4: same type and model; its transcript and the
        provider's prompt cache belong to that model), else the call's, else its type's; `inherit` is the parent's."""
        if previous is not None and previous.model_used:
            requested = previous.model_used
        spec = (requested or agent_type.model or "inherit").strip()
        if spec == "inherit":
            return inherited
        models = self.settings.models
        if spec in ("main", "light") or spec in models.aliases or ":" in spec:
            return resolve_model(spec, self.settings)
        return resolve_model(f"{models.main.provider}:{spec}", self.settings)  # a bare model id

    def ignored_model(
        self, requested: str | None, agent_type: AgentType, inherited: ResolvedModel, previous: TaskRecord | None
    ) -> str:
        """The note for a resume whose call names another model than the task's: it is kept, never switched
        silently. Empty when nothing was asked, or what was asked is the task's model anyway."""
        if previous is None or not previous.model_used or not requested:
            return ""
        try:
            asked = self.model(requested, agent_type, inherited, None).display
        except Exception:  # a model that does not resolve is not the task's either
            asked = ""
        if asked == previous.model_used:
            return ""
        return defang_tags(
            f"Note: model={requested!r} was ignored: a resumed task keeps its model ({previous.model_used}). "
            "Start a new Task (without resume) to use another model."
        )

    def tool_names(
        self, agent_type: AgentType, depth: int, write_paths: list[str] | None, scopes: Scopes = ()
    ) -> list[str] | Refusal:
        """Type policy ∩ depth rule − deny_tools, narrowed by the confinement (module docstring)."""
        available = (*self.tool_classes, *(TASK_TOOL_NAMES if self.can_delegate(depth) else ()), *MESSAGE_TOOL_NAMES)
        allowed = self.allowed_tools(agent_type, available)  # an explicit list is exact: messaging tools only if named
        denied = set(self.settings.task_tool.deny_tools)
        names = [n for n in allowed if n not in denied]
        if () in scopes:  # below a read-only type: non-mutating tools only
            if write_paths is not None:
                return Refusal(
                    "Subagent lacks permission for required tools: Write, Edit (it would run below a read-only "
                    "agent, so write_paths cannot be honoured)",
                    "FORBIDDEN",
                )
            kept = [n for n in names if not self._trait(n, "mutating")]
            if not _working(kept):
                return Refusal(
                    f"Subagent lacks permission for required tools: {', '.join(names) or 'none'} "
                    "(it would run below a read-only agent: read-only tools only)",
                    "FORBIDDEN",
                )
            return kept
        if scopes:  # a command could write outside the inherited confinement
            names = [n for n in names if not self._runs_commands(n)]
        if write_paths is not None:
            if not any(self._trait(n, "edits_files") for n in names):
                return Refusal(
                    f"Subagent lacks permission for required tools: Write, Edit (type {agent_type.name} "
                    f"cannot write, so write_paths cannot be honoured)",
                    "FORBIDDEN",
                )
            names = [n for n in names if not self._runs_commands(n)]  # a command could write outside write_paths
        if not _working(names):
            return Refusal(
                f"Subagent lacks permission for required tools: {', '.join(_working(allowed)) or 'none'} "
                f"(all denied by task_tool.deny_tools)",
                "FORBIDDEN",
            )
        return names

    def _trait(self, name: str, trait: str) -> bool:
        cls = self.tool_classes.get(name) or TASK_TOOL_CLASSES.get(name)
        return bool(cls is not None and getattr(cls, trait))

    def _runs_commands(self, name: str) -> bool:
        """Mutating without being a file tool: write confinement cannot hold it (Bash)."""
        return self._trait(name, "mutating") and not self._trait(name, "edits_files")

    def preloaded(self, agent_type: AgentType) -> list[Skill]:
        """The skills its agent file's `skills:` names that exist (an unknown name is passed over, and logged)."""
        found: list[Skill] = []
        for name in agent_type.skills:
            skill = self.skills.get(name)
            if skill is None:
                log.warning("agent %s: skill %r is not found; not preloaded", agent_type.name, name)
            elif skill not in found:
                found.append(skill)
        return found

    def allowed_tools(self, agent_type: AgentType, available: tuple[str, ...]) -> tuple[str, ...]:
        """`agent_type.allowed_tools(available)`, worked out once per type and toolbox (the toolbox grows when an
        MCP server starts: a new `available`, a new entry)."""
        key = (id(agent_type), available)
        held = self._allowed.get(key)
        if held is None or held[0] is not agent_type:
            held = self._allowed[key] = (agent_type, tuple(agent_type.allowed_tools(available)))
        return held[1]

    def role_prompt(self, agent_type: AgentType, today: date) -> str:
        """The stable head of every task's system prompt of the type: its role prompt, its preloaded skills, the
        program's addition. Built once per type and day."""
        key = (id(agent_type), today.isoformat(), self.subagent_append)
        held = self._roles.get(key)
        if held is None or held[0] is not agent_type:
            stable = Template(agent_type.prompt).safe_substitute(workspace=str(self.workspace), date=key[1])
            stable += self.preloaded_text(agent_type)
            if self.subagent_append.strip():
                stable += f"\n\n{self.subagent_append.strip()}"
            held = self._roles[key] = (agent_type, stable)
        return held[1]

    def preloaded_text(self, agent_type: AgentType) -> str:
        """The preloaded skills' bodies, after the role prompt (the same for every task of the type: cached)."""
        parts: list[str] = []
        for skill in self.preloaded(agent_type):
            text = self._skill_texts.get(skill.name)
            if text is None:  # read once per session: every task of the type sends the same prompt
                try:
                    text = self._skill_texts[skill.name] = loaded_text(skill, skill_body(skill))
                except AgentFileError as exc:
                    log.warning("agent %s: skill %s not preloaded: %s", agent_type.name, skill.name, exc)
                    continue
            parts.append(text)
        return "".join(f"\n\n{text}" for text in parts)

    def system_prompt(
        self, agent_type: AgentType, description: str, write_paths: list[str] | None, scopes: Scopes, today: date,
        *, instructions: bool = True,
    ) -> SystemPrompt:
        """Role prompt (stable: every task of the type shares it), then `# Task` and the description, the
        confinement said in words, project instructions (SPEC §4's order; a fork's leave them out)."""
        stable = self.role_prompt(agent_type, today)
        text = f"\n\n# Task\n{description}"
        every = [*scopes, *([tuple(write_paths)] if write_paths else [])]
        if () in every:
            text += "\n\nYou may not write files or run commands: you work below a read-only agent."
        elif len(every) == 1:
            text += "\n\nYou may write only to files matching: " + ", ".join(every[0])
        elif every:
            text += "\n\nYou may write only to files matching all of: " + " and ".join(
                "(" + ", ".join(scope) + ")" for scope in every
            )
        if self.instructions and instructions:
            text += f"\n\n{self.instructions}"
        return SystemPrompt(stable, text)
