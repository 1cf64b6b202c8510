"""Task, TaskOutput and TaskCancel: thin tools that validate their input and call a `Delegator`.

The tools know the runtime only through the `Delegator` protocol below (the `SubagentRunner`
implements it), so this module imports nothing else of the subagent layer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal, Protocol

from pydantic import Field, ValidationError, ValidationInfo, field_validator

from agentcli.agent import Offered, Session
from agentcli.events import EventSink
from agentcli.tools import Tool, ToolArgs, ToolContext, ToolError, ToolResult


@dataclass(slots=True)
class ParentLink:
    """The agent that makes Task calls: its session, its event sink, its own task (None for main), and the
    tools its requests offer now (`AgentLoop.offered`, set once its loop is built: what a fork of it is offered)."""

    session: Session
    emit: EventSink
    task_id: str | None = None
    specs: Callable[[], Offered] | None = None


class Delegator(Protocol):
    """What the Task tools need of the subagent runtime."""

    def task_tool_description(self, *, lean: bool = False) -> str:
        """The Task tool's description (the agent types): the same for every agent of the tree (`lean`: its short
        form, for a small window's lean prompt)."""
        ...

    def argument_limits(self) -> Mapping[str, Any]:
        """The validation context of `TaskArgs`: allow_model_override and the configured limits."""
        ...

    async def run_task(self, args: TaskArgs, parent: ParentLink, tool_call_id: str) -> ToolResult:
        """Run one Task call; failures come back as tool errors."""
        ...

    async def task_output(self, task_id: str, offset: int, wait_seconds: float, pattern: str | None = None
                          ) -> ToolResult:
        """TaskOutput."""
        ...

    async def cancel(self, task_id: str, reason: str = "cancelled") -> bool:
        """TaskCancel: stop one running task; False when there is none."""
        ...


class TaskArgs(ToolArgs):
    """The Task tool's input (SPEC §4). Limits that depend on config come through the validation context."""

    description: str = Field(description="A short (3-5 word) summary of the task")
    prompt: str = Field(description="Full instructions for the subagent")
    subagent_type: str = Field(description="Agent type (listed in the description)")
    model: str | None = Field(
        None, description="main, light or provider:model; default: the type's model (a fork's: yours)"
    )
    expected_response: str | None = Field(None, description="Format the answer must follow")
    run_in_background: bool = Field(False, description="Return a task_id at once; read the result with TaskOutput")
    write_paths: list[str] | None = Field(None, description="Globs the subagent may write to (e.g. src/api/**)")
    timeout_seconds: int | None = Field(None, description="Wall-clock limit for this task")
    output_schema: dict[str, Any] | None = Field(None, description="JSON schema the final answer must satisfy")
    resume: str | None = Field(
        None, description="task_id of a finished subagent to continue with this prompt (it keeps its type and model)"
    )
    fork_context: bool = Field(
        False, description="Start the subagent from this conversation so far (it knows what you know); not with resume"
    )
    effort: Literal["low", "medium", "high"] | None = Field(None, description="How hard the subagent thinks")
    max_tokens: int | None = Field(None, description="Token budget (its requests and its subagents')")
    max_cost_usd: float | None = Field(None, description="Dollar budget (where prices are known)")
    no_cache: bool = Field(False, description="Run even when an identical finished task's result could be reused")
    isolation: Literal["worktree", "remote"] | None = Field(
        None, description="worktree: it writes in its own git worktree, merged back when it finishes (kept on its "
        "branch on a conflict); remote: the same, run on the configured cluster"
    )
    merge: Literal["auto", "manual"] = Field(
        "auto", description="With isolation: manual keeps the changes on branch agentcli/<task_id>, unmerged"
    )

    @field_validator("fork_context")
    @classmethod
    def _fork_context(cls, value: bool, info: ValidationInfo) -> bool:
        if value and info.data.get("resume"):
            raise ValueError("a resumed task goes on from its own conversation: use fork_context without resume")
        return value

    @field_validator("description")
    @classmethod
    def _description(cls, value: str) -> str:
        text = value.strip()
        if len(text) < 3:
            raise ValueError("must be at least 3 characters")
        words = len(text.split())
        if words > 10:
            raise ValueError(f"must be a 3-5 word summary, got {words} words")
        return text

    @field_validator("prompt", "subagent_type")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("model")
    @classmethod
    def _model(cls, value: str | None, info: ValidationInfo) -> str | None:
        ctx = info.context or {}
        if value is not None and not ctx.get("allow_model_override", True):
            raise ValueError("model override is disabled by configuration (task_tool.allow_model_override)")
        if value is not None and not value.strip():
            raise ValueError("must not be empty")
        return value

    @field_validator("timeout_seconds")
    @classmethod
    def _timeout(cls, value: int | None, info: ValidationInfo) -> int | None:
        limit = (info.context or {}).get("max_timeout_seconds", 1800)
        if value is not None and not 1 <= value <= limit:
            raise ValueError(f"must be between 1 and {limit} (task_tool.max_timeout_seconds)")
        return value

    @field_validator("max_tokens")
    @classmethod
    def _max_tokens(cls, value: int | None, info: ValidationInfo) -> int | None:
        limit = (info.context or {}).get("max_tokens")
        if value is not None and (value < 1 or (limit is not None and value > limit)):
            raise ValueError(f"must be between 1 and {limit} (task_tool.max_tokens)" if limit else "must be at least 1")
        return value

    @field_validator("max_cost_usd")
    @classmethod
    def _max_cost(cls, value: float | None, info: ValidationInfo) -> float | None:
        limit = (info.context or {}).get("max_cost_usd")
        if value is None:
            return None
        if value <= 0:
            raise ValueError("must be more than 0")
        if limit is not None and value > limit:
            raise ValueError(f"must be at most {limit:g} (task_tool.max_cost_usd)")
        return value

    @field_validator("write_paths")
    @classmethod
    def _write_paths(cls, value: list[str] | None) -> list[str] | None:
        if value is None:
            return None
        bad = [p for p in value if not p.strip() or p.startswith("/") or ".." in p.split("/")]
        if bad:
            raise ValueError(f"must be workspace-relative globs without '..': {', '.join(map(repr, bad))}")
        if not value:
            raise ValueError("must list at least one glob (omit it for no write restriction)")
        return [p.strip() for p in value]

    @field_validator("output_schema")
    @classmethod
    def _schema(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        if value is None:
            return None
        from agentcli.subagents.schema import compile_schema

        compile_schema(value)  # ValueError: only local references, compilable, bounded patterns
        return value

    @field_validator("resume")
    @classmethod
    def _resume(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("must be the task_id of a finished task")
        return value.strip() if value is not None else None


def invalid_parameters(exc: ValidationError) -> str:
    """The INVALID_PARAM message listing every problem."""
    problems = []
    for err in exc.errors():
        where = ".".join(str(p) for p in err["loc"])
        message = err["msg"].removeprefix("Value error, ")
        if err["type"] == "extra_forbidden":
            message = "unknown parameter"
        problems.append(f"{where}: {message}" if where else message)
    return "Invalid parameters: " + "; ".join(problems)


class TaskTool(Tool[TaskArgs]):
    """Delegate focused work to an isolated subagent; one instance per agent, bound to it."""

    name: ClassVar[str] = "Task"
    args_model: ClassVar[type[ToolArgs]] = TaskArgs
    own_time_limit: ClassVar[bool] = True
    mutating: ClassVar[bool] = False
    concurrency_safe: ClassVar[bool] = True  # several Task calls of one turn run at once

    def __init__(self, runner: Delegator, parent: ParentLink) -> None:
        self.runner = runner
        self.parent = parent

    def description(self) -> str:
        return self.runner.task_tool_description()

    def lean_description(self) -> str:
        return self.runner.task_tool_description(lean=True)

    def lean_input_schema(self) -> dict[str, Any]:
        """The arguments a small model needs (`LEAN_ARGUMENTS`); budgets, forks, schemas, isolation and the rest are
        still accepted when sent."""
        return _lean_schema(self.input_schema())

    def parse(self, raw: dict[str, Any]) -> TaskArgs:
        try:
            return TaskArgs.model_validate(raw, context=dict(self.runner.argument_limits()))
        except ValidationError as exc:
            raise ToolError(invalid_parameters(exc)) from None

    def summary(self, args: TaskArgs) -> str:
        return f"{args.subagent_type}: {args.description}"

    async def run(self, args: TaskArgs, ctx: ToolContext) -> ToolResult:
        return await self.runner.run_task(args, self.parent, ctx.tool_call_id)


#: The Task arguments a lean prompt offers (every required one among them).
LEAN_ARGUMENTS = frozenset({"description", "prompt", "subagent_type", "model", "run_in_background", "resume"})
_LEAN_SCHEMAS: dict[int, tuple[dict[str, Any], dict[str, Any]]] = {}  # id(full schema) -> (full, lean)


def _lean_schema(full: dict[str, Any]) -> dict[str, Any]:
    """`full` with only `LEAN_ARGUMENTS`, built once per schema (the same object every time: a stable tool list)."""
    held = _LEAN_SCHEMAS.get(id(full))
    if held is None or held[0] is not full:
        properties = {k: v for k, v in full["properties"].items() if k in LEAN_ARGUMENTS}
        held = _LEAN_SCHEMAS[id(full)] = (full, {**full, "properties": properties})
    return held[1]


class TaskOutputArgs(ToolArgs):
    """TaskOutput's input."""

    task_id: str = Field(description="The task's id, from Task or a truncation marker")
    offset: int = Field(0, ge=0, description="Character offset into the full result")
    wait_seconds: float = Field(0, ge=0, le=1800, description="Wait up to this long for a running task to finish "
                                                              "(a background command: for new output)")
    filter: str | None = Field(None, description="A background command: only the new lines matching this regex")


class TaskOutputTool(Tool[TaskOutputArgs]):
    """Status of a task and its full result from an offset (background or finished tasks)."""

    name: ClassVar[str] = "TaskOutput"
    on_demand: ClassVar[bool] = True
    args_model: ClassVar[type[ToolArgs]] = TaskOutputArgs
    own_time_limit: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True

    def __init__(self, runner: Delegator) -> None:
        self.runner = runner

    def summary(self, args: TaskOutputArgs) -> str:
        return f"{args.task_id} from {args.offset}" if args.offset else args.task_id

    async def run(self, args: TaskOutputArgs, ctx: ToolContext) -> ToolResult:
        return await self.runner.task_output(args.task_id, args.offset, args.wait_seconds, args.filter)


class TaskCancelArgs(ToolArgs):
    """TaskCancel's input."""

    task_id: str = Field(description="The running task to stop")


class TaskCancelTool(Tool[TaskCancelArgs]):
    """Stop a running (usually background) subagent; its transcript is kept and it can be resumed."""

    name: ClassVar[str] = "TaskCancel"
    on_demand: ClassVar[bool] = True
    args_model: ClassVar[type[ToolArgs]] = TaskCancelArgs
    own_time_limit: ClassVar[bool] = True
    concurrency_safe: ClassVar[bool] = True

    def __init__(self, runner: Delegator) -> None:
        self.runner = runner

    def summary(self, args: TaskCancelArgs) -> str:
        return args.task_id

    async def run(self, args: TaskCancelArgs, ctx: ToolContext) -> ToolResult:
        if args.task_id.strip().startswith("bash_"):
            if await self.runner.cancel(args.task_id, reason="stopped by the agent"):
                return ToolResult(f"Stopped background command {args.task_id.strip()} (and everything it started).")
            raise ToolError(f"No running background command '{args.task_id}' to stop.")
        if await self.runner.cancel(args.task_id, reason="cancelled by the parent agent"):
            return ToolResult(
                f"Cancelled task {args.task_id}. Its transcript is kept; resume it with Task(resume=...)."
            )
        raise ToolError(f"No running task '{args.task_id}' to cancel.")


TASK_TOOL_CLASSES: dict[str, type[Tool[Any]]] = {cls.name: cls for cls in (TaskTool, TaskOutputTool, TaskCancelTool)}


def output_tools(runner: Delegator) -> list[Tool[Any]]:
    """TaskOutput and TaskCancel alone: an agent with Bash but no Task reads and stops its background commands."""
    return [TaskOutputTool(runner), TaskCancelTool(runner)]


def task_tools(runner: Delegator, parent: ParentLink) -> list[Tool[Any]]:
    """Task, TaskOutput and TaskCancel bound to one agent (they come together: an agent given Task
    can also read and stop the tasks it started)."""
    return [TaskTool(runner, parent), TaskOutputTool(runner), TaskCancelTool(runner)]
