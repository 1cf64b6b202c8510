"""Tool base: a pydantic `Args` model, a markdown description, `run()` returning a `ToolResult`."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict, ValidationError

from agentcli.diffs import FileDiff
from agentcli.llm import ImageBlock, ToolSpec
from agentcli.tools.arg_schema import model_schema
from agentcli.tools.web.netguard import WebFetchLimits

if TYPE_CHECKING:
    from agentcli.tools.code_intel import CodeIntel
    from agentcli.tools.questions import QuestionAsker
    from agentcli.tools.sandbox.policy import Sandbox
    from agentcli.tools.web.search_backends import WebSearcher


class ToolArgs(BaseModel):
    """Base of every tool's arguments: input comes from a model, so unknown fields are errors."""

    model_config = ConfigDict(extra="forbid")


@dataclass(slots=True)
class ToolResult:
    """What a tool returns to the model; `is_error` marks a failed or refused call."""

    content: str
    is_error: bool = False
    files_modified: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)
    images: list[ImageBlock] = field(default_factory=list)  # what the model is shown besides the text


class ToolError(Exception):
    """Raised inside a tool for a failure the model should read (bad path, no match, ...)."""


@dataclass(slots=True)
class TodoItem:
    """One entry of an agent's todo list."""

    content: str
    status: str  # pending | in_progress | completed
    id: str = ""


class FileLocks:
    """Per-file asyncio locks shared by every agent of a session tree: no two write one file at once."""

    def __init__(self) -> None:
        self._locks: dict[Path, asyncio.Lock] = {}

    def lock(self, path: Path) -> asyncio.Lock:
        """The lock of one resolved path."""
        lock = self._locks.get(path)
        if lock is None:
            lock = self._locks[path] = asyncio.Lock()
        return lock


class PermissionVerdict(Protocol):
    """The answer about one call: whether it may run, and if not, why (told to the model)."""

    @property
    def allowed(self) -> bool: ...

    @property
    def reason(self) -> str: ...

    @property
    def updated_input(self) -> dict[str, Any] | None:
        """The arguments the approver changed the call to, or None."""
        ...


class StartedCommand(Protocol):
    """A command started in the background (`tools/shell/background.BackgroundCommand`)."""

    id: str
    pgid: int


class BackgroundStarter(Protocol):
    """What Bash asks of the session's background commands (`tools/shell/background.BackgroundShells`), declared
    here so the tool base never imports them."""

    async def start(self, command: str, ctx: ToolContext, sandbox: Any, description: str = "",
                    hand_over: bool = False) -> StartedCommand:
        """Start `command` for the agent of `ctx` (`description`: the call's words for it; `hand_over`: it goes on
        for the parent when a subagent's task ends); ToolError when it cannot."""
        ...

    def attend(self, command: str, ctx: ToolContext, description: str = "") -> asyncio.Future[None]:
        """A foreground Bash call is running: the future resolves when the person moves it to the background."""
        ...

    def leave(self, moved: asyncio.Future[None]) -> None:
        """That call has ended (or has been moved)."""
        ...

    def adopt(self, moved: asyncio.Future[None], transport: Any, protocol: Any, needle: bytes, output: str
              ) -> StartedCommand:
        """Take over a moved call's running process (its output so far: `output`) as a background command."""
        ...


class PermissionChecker(Protocol):
    """What tools and the agent loop ask of the permission policy (`tools.permissions.PermissionPolicy`).

    Declared here, below the policy, so the tool base never imports it.
    """

    async def check(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext) -> PermissionVerdict:
        """Whether this call may run; may wait for the person's answer."""
        ...

    @property
    def denies_reads(self) -> bool:
        """Whether any deny rule is about Read (Grep then hides the files those rules cover)."""
        ...

    def read_denied(self, rel: str) -> bool:
        """Whether a Read deny rule covers the workspace-relative path `rel`."""
        ...

    async def approve_outside_sandbox(self, tool: Tool[Any], args: ToolArgs, ctx: ToolContext, why: str) -> bool:
        """Whether the person lets one command the sandbox refused run again outside it (ask mode only)."""
        ...


class FileAccess(Protocol):
    """Where Read, Edit and MultiEdit get a text file's text, and Write, Edit and MultiEdit put it, when not the disk:
    an editor's buffers (`acp_agent.files`: the client's `fs/read_text_file` / `fs/write_text_file`).

    Only the text goes through it: the tools' own checks (the workspace, write_paths, guarded files, permission,
    the file's lock, whether it is a binary file) are made on the disk first, as without it. Paths are absolute.
    Both methods raise `ToolError` with one line when the editor fails.
    """

    @property
    def reads(self) -> bool:
        """Whether `read_text` is the text's source (else the tools read the disk)."""
        ...

    @property
    def writes(self) -> bool:
        """Whether `write_text` is where text goes (else the tools write the disk)."""
        ...

    async def read_text(self, path: Path) -> str:
        """The file's whole text as the editor has it (unsaved changes included)."""
        ...

    async def write_text(self, path: Path, content: str) -> None:
        """Replace the file's text (or create it) in the editor."""
        ...


@dataclass(slots=True)
class ToolContext:
    """Everything a tool may use; one per agent (siblings never share a context)."""

    workspace: Path  # resolved absolute path; file tools stay inside it
    agent: str  # label shown in approvals: main, explore#2
    session_id: str
    permissions: PermissionChecker
    file_locks: FileLocks
    bash_timeout_seconds: int = 120
    bash_max_timeout_seconds: int = 600  # the longest a call may ask for (a longer default raises it)
    bash_output_limit_bytes: int = 30_000
    read_max_chars: int = 100_000  # [agent] read_max_chars: the text one Read returns; the rest is paged with `offset`
    write_paths: list[str] | None = None  # globs a subagent may write to; None = anywhere in the workspace
    # Its ancestors' confinement down the delegation tree: a write must match one glob of EVERY list
    # (and of write_paths); an empty list confines to no writes at all (below a read-only type).
    write_scopes: tuple[tuple[str, ...], ...] = ()
    todos: list[TodoItem] = field(default_factory=list)
    tool_call_id: str = ""  # set per call by the loop (on a copy of the agent's context)
    progress: Callable[[], None] = lambda: None  # call while working, so idle timeouts see progress
    output: Callable[[bytes], None] = lambda data: None  # a running tool's output as it arrives (shown live)
    bash_env: Mapping[str, str] | None = None  # Bash's environment, without provider keys; None = os.environ
    tool_timeout_seconds: float = 300  # deadline of one tool call (Bash and the Task tools have their own)
    web_fetch: WebFetchLimits = field(default_factory=WebFetchLimits)  # [web_fetch]: reach, caps, time limit
    web_search: WebSearcher | None = None  # [web_search]: this agent's backend; None: WebSearch says how to set one
    sandbox: Sandbox | None = None  # the session's Bash sandbox ([sandbox]); None: Bash runs unconfined
    shells: BackgroundStarter | None = None  # the session tree's background commands; None: none may start
    files: FileAccess | None = None  # an editor's buffers for the file tools' text (ACP); None: the disk
    worktree: bool = False  # `workspace` is the git worktree of an isolated task (approvals mark it `[worktree]`)
    # Resolved folders outside the workspace that Read and LS may read (never write): the skills this agent loaded.
    # A list shared by the per-call copies of the context, so a folder the Skill tool adds stays readable.
    read_roots: list[Path] = field(default_factory=list)
    # Resolved folders beside the workspace the file tools may read AND write (`additional_dirs`: the person's
    # `additional_directories`); empty for an agent in a worktree (it keeps to its worktree).
    extra_roots: list[Path] = field(default_factory=list)
    code_intel: CodeIntel | None = None  # the language servers of this agent's root ([lsp]); None: no diagnostics
    questions: QuestionAsker | None = None  # who answers AskUserQuestion (the front end's person); None: no one


A = TypeVar("A", bound=ToolArgs)
_SCHEMAS: dict[type[ToolArgs], dict[str, Any]] = {}


class Tool(ABC, Generic[A]):
    """A tool the model can call. Subclasses set `name`, `args_model` and their traits.

    The traits are the one definition of what a tool is; every set of tool names elsewhere derives from them.
    """

    name: ClassVar[str]
    args_model: ClassVar[type[ToolArgs]]
    mutating: ClassVar[bool] = False  # needs permission: writes files or runs commands
    read_only: ClassVar[bool] = False  # only reads the workspace (what read-only agent types are given)
    edits_files: ClassVar[bool] = False  # writes files (write_paths confinement and edit rules apply)
    concurrency_safe: ClassVar[bool] = False  # may run at the same time as other safe calls of one turn
    own_time_limit: ClassVar[bool] = False  # keeps its own deadline instead of [agent] tool_timeout_seconds
    path_target: ClassVar[bool] = False  # its permission target is a workspace path (rules match it as a path glob)
    shows_file: ClassVar[bool] = False  # its result shows the file's text (a Read deny rule stops it too)
    network_only: ClassVar[bool] = False  # mutating only as it reaches the network (WebFetch): writes no file, runs
    # no command, so a type that has it can still be read-only (its subagents get read-only tools all the same)
    external: ClassVar[bool] = False  # offered by an outside server (MCP): listed after agentcli's own tools
    every_agent: ClassVar[bool] = False  # every agent of a delegation tree has it, whatever its type (SendMessage)
    on_demand: ClassVar[bool] = False  # rarely needed: deferred (defer = "auto", lean prompts), loaded by ToolSearch

    def description(self) -> str:
        """The markdown description in `prompts/tools/<name>.md`."""
        from agentcli.prompts import load_prompt

        return load_prompt(f"tools/{self.name.lower()}.md").strip()

    def lean_description(self) -> str:
        """The short description a lean prompt sends: `prompts/tools/lean/<name>.md`, else the description's first
        paragraph (the schema's property descriptions say the rest)."""
        from agentcli.prompts import load_prompt

        try:
            return load_prompt(f"tools/lean/{self.name.lower()}.md").strip()
        except FileNotFoundError:
            return first_paragraph(self.description())

    def input_schema(self) -> dict[str, Any]:
        """JSON schema of the arguments, as sent to the model (built once per argument model; do not mutate)."""
        cached = _SCHEMAS.get(self.args_model)
        if cached is None:
            cached = _SCHEMAS[self.args_model] = model_schema(self.args_model)  # no titles, docstrings, null noise
        return cached

    def lean_input_schema(self) -> dict[str, Any]:
        """The schema a lean prompt sends: `input_schema` unless the tool leaves rarely used optional arguments out
        (they are still accepted when sent)."""
        return self.input_schema()

    def parse(self, raw: dict[str, Any]) -> A:
        """Validate raw arguments; raises `ToolError` listing every problem."""
        try:
            return self.args_model.model_validate(raw)  # type: ignore[return-value]
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc']) or 'arguments'}: {err['msg']}" for err in exc.errors()
            )
            raise ToolError(f"Invalid arguments for {self.name}: {problems}") from None

    def summary(self, args: A) -> str:
        """One line for the UI and approvals: what this call does."""
        first = next(iter(args.model_dump(exclude_defaults=True).values()), "")
        return str(first).splitlines()[0][:120] if first else ""

    def permission_target(self, args: A) -> str:
        """The string permission rules match against: a path for file tools, the command for Bash."""
        return self.summary(args)

    async def preview(self, args: A, ctx: ToolContext) -> FileDiff | None:
        """What the call would change, computed without changing anything (shown when the person is asked): every
        line of it, so nothing approved is out of sight.

        None: nothing to show (the default). Raises `ToolError` with the reason the call would fail, or why
        its change cannot be shown.
        """
        return None

    @abstractmethod
    async def run(self, args: A, ctx: ToolContext) -> ToolResult:
        """Do the work. Raise `ToolError` for failures the model should see."""


T = TypeVar("T", bound="Tool[Any] | type[Tool[Any]]")


def listing_rank(tool: Tool[Any] | type[Tool[Any]]) -> int:
    """Where a tool is listed to the model, from its traits: 0 the read-only tools, 1 the tools every agent of
    the tree has (`every_agent`), 2 the mutating ones, 3 the rest of agentcli's own (Task and its kin: only
    agents that may delegate have them; Skill: only sessions with skills), 4 an outside server's (MCP). Groups 0
    and 1 are the head that a read-only subagent's list consists of."""
    if tool.external:
        return 4
    if tool.read_only:
        return 0
    if tool.every_agent:
        return 1
    return 2 if tool.mutating else 3


def in_listing_order(tools: Iterable[T]) -> list[T]:
    """`tools` in the one order every agent lists them in (`listing_rank`; each group as given).

    Every agent's list is then a prefix of the main agent's as far as they have the same tools: a read-only
    subagent's (the read-only tools and the ones every agent has) and a subagent with every tool (all of it),
    so the provider's prompt cache serves what the main agent's requests already wrote.
    """
    return sorted(tools, key=listing_rank)


def tool_specs(tools: Iterable[Tool[Any]], *, lean: bool = False) -> list[ToolSpec]:
    """The tools as offered to the model, in listing order; `cache_break` marks the end of the head a read-only
    subagent's list shares (the read-only tools and those every agent has). `lean`: their short descriptions."""
    ordered = in_listing_order(tools)
    shared = sum(1 for tool in ordered if listing_rank(tool) <= 1)
    return [
        ToolSpec(tool.name, tool.lean_description() if lean else tool.description(),
                 tool.lean_input_schema() if lean else tool.input_schema(), cache_break=i == shared - 1)
        for i, tool in enumerate(ordered)
    ]


def first_paragraph(text: str, limit: int = 400) -> str:
    """`text` up to its first blank line, at most `limit` characters."""
    head = text.strip().split("\n\n", 1)[0].strip()
    return head if len(head) <= limit else head[: limit - 1].rstrip() + "…"
