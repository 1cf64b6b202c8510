"""What the `agentcli` commands share: output, options, finding a record, the store, a transcript.

The command modules of this package import from here (and from `frontend.common`: exit codes, failing with one
line, loading the config) and never from each other, but for `run`, which records `--trust` as `trust` does
(`trust.record_trust`). Only typer and the standard library at import time: the config, store and llm modules are
imported inside the functions that use them.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from agentcli.frontend import fail
from agentcli.text import json_safe, terminal_safe

if TYPE_CHECKING:
    from agentcli.config import Settings
    from agentcli.llm import Message, ToolUseBlock
    from agentcli.store import Store, ToolCallRecord

T = TypeVar("T")

EXCERPT_LINES = 4
EXCERPT_CHARS = 300

CwdOption = Annotated[
    Path | None, typer.Option("--cwd", help="Workspace directory (default: the current directory).")
]
ConfigOption = Annotated[Path | None, typer.Option("--config", help="Extra config file, above project config.")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON.")]
ModelOption = Annotated[str | None, typer.Option("--model", help="main, light, an alias or provider:model.")]
# The options `agentcli` (the TUI) and `agentcli run` share.
TrustOption = Annotated[
    bool, typer.Option("--trust", help="Trust this workspace (recorded): apply its .agentcli/config.toml in full.")
]
ContinueOption = Annotated[
    bool, typer.Option("--continue", "-c", help="Continue the latest session of this workspace.")
]
ResumeOption = Annotated[
    str | None,
    typer.Option(
        "--resume", metavar="[ID]",
        help="Resume a stored session by id (or unique prefix); without an ID, pick one of this workspace's.",
    ),
]


def echo(text: str = "") -> None:
    """Print text that may hold model, file or agent-file text, with terminal escapes neutralised."""
    print(terminal_safe(text))


def print_json(value: object) -> None:
    """Print a JSON document (C0 controls escaped by JSON; C1 controls and bidi overrides by `json_safe`)."""
    print(json_safe(json.dumps(value, indent=2, ensure_ascii=False)))


def short_path(path: Path | str, workspace: Path) -> str:
    """A path relative to the workspace, or to `~`, when it is below one of them (`built-in` stays as it is)."""
    if path == "built-in":  # a built-in agent type's source
        return path
    p = Path(path)
    for base, prefix in ((workspace, ""), (Path.home(), "~/")):
        try:
            return prefix + str(p.relative_to(base))
        except ValueError:
            continue
    return str(p)


def find_or_fail(get: Callable[[str], T | None], ident: str, kind: str) -> T:
    """`get(ident)` (an id or a unique prefix), or exit 1 with one line when none or several match."""
    from agentcli.store import AmbiguousIdError

    try:
        found = get(ident)
    except AmbiguousIdError as exc:
        fail(str(exc))
    if found is None:
        fail(f"no {kind} matches '{ident}'")
    return found


def open_store() -> Store:
    import sqlite3

    from agentcli.store import Store, StoreError

    try:
        store = Store.open()
    except StoreError as exc:
        fail(str(exc))
    try:
        store.mark_running_cancelled().result()  # rows left running by a process that is gone
    except sqlite3.Error as exc:
        store.close()
        fail(f"cannot use the database {store.path}: {exc}")
    return store


def table(headers: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    lines = []
    for cells in [headers, *rows]:
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths[:-1], strict=True)]
        lines.append("  ".join([*padded, cells[-1]]).rstrip())
    return "\n".join(lines)


def _excerpt(text: str, indent: str = "    ") -> str:
    lines = text.rstrip().splitlines() or [""]
    shown = "\n".join(lines[:EXCERPT_LINES])
    cut = len(lines) > EXCERPT_LINES or len(shown) > EXCERPT_CHARS
    shown = shown[:EXCERPT_CHARS]
    out = "\n".join((indent + line).rstrip() for line in shown.splitlines())
    if cut:
        out += f"\n{indent}… ({len(lines)} lines, {len(text)} characters)"
    return out


def _tool_use(block: ToolUseBlock, call: ToolCallRecord | None) -> list[str]:
    what = call.summary if call and call.summary else json.dumps(block.input, ensure_ascii=False)[:120]
    if call is None:
        return [f"  → {block.name}: {what}"]
    ms = f", {call.duration_ms:.0f} ms" if call.duration_ms is not None else ""
    lines = [f"  → {block.name}: {what}  [{call.status}{ms}]"]
    if call.output:
        lines.append(_excerpt(call.output))
    return lines


def transcript(messages: list[Message], calls: list[ToolCallRecord]) -> str:
    """User and assistant text, each tool call with its summary and an output excerpt, tool results."""
    from agentcli.llm import TextBlock, ToolResultBlock, ToolUseBlock

    by_id = {c.id: c for c in calls}
    out: list[str] = []
    for message in messages:
        texts = [b.text for b in message.content if isinstance(b, TextBlock)]
        if texts:
            out += [f"[{message.role}]", "\n".join(texts).strip()]
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                out += _tool_use(block, by_id.get(block.id))
            elif isinstance(block, ToolResultBlock):
                out.append(f"  ← result {block.tool_use_id}" + (" (error)" if block.is_error else ""))
                call = by_id.get(block.tool_use_id)
                if call is None or not call.output:  # else its excerpt is shown with the call
                    out.append(_excerpt(block.content))
        out.append("")
    return "\n".join(out).rstrip() if out else "(no messages)"


def context_windows(settings: Settings) -> list[str]:
    """One line per configured model (main, light): its context window and where it came from, an OpenAI-compatible
    server asked as a session would (`[context] server_window_timeout_seconds`)."""
    import asyncio

    from agentcli.agent import window_and_source
    from agentcli.llm import ProviderError, discover, resolve_model, verify_for

    cfg = settings.context
    lines = []
    for label in ("main", "light"):
        try:
            model = resolve_model(label, settings)
        except (ProviderError, ValueError) as exc:
            lines.append(f"models.{label} context window: unknown ({exc})")
            continue
        tokens, source = window_and_source(model, cfg.default_window)
        if (model.provider == "openai-compatible" and not model.context_window and model.base_url
                and cfg.server_window_timeout_seconds > 0):
            found = asyncio.run(discover(model.base_url, model.model, model.api_key,
                                         timeout=cfg.server_window_timeout_seconds, default=cfg.default_window,
                                         verify=verify_for(model.base_url)))
            if found is not None:
                tokens, source = found.tokens, f"server: {found.source}"
            else:
                source += f"; {model.base_url} did not say"
        lines.append(f"models.{label} context window: {tokens} tokens ({source})")
    return lines
