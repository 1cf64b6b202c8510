"""`agentcli demo`: the TUI against the bundled fake model server with a scripted session.

The model's words are canned, but the work is real: the scripted main agent delegates to three
explore subagents in parallel, and their Glob, Grep and LS calls run on the current directory;
their answers quote what those tools found. No API key is needed and nothing leaves the machine.
Only typer and the standard library at import time (`agentcli --help` lists the command): the fake
server, its script models and the TUI load inside.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from agentcli.cli.common import CwdOption
from agentcli.frontend import load, workspace_dir

if TYPE_CHECKING:
    from agentcli.conversation import Conversation
    from agentcli.testing import FakeLLMServer, Script

DEMO_TITLE = "agentcli demo — scripted model, real tools on this folder (no API key used)"
MAIN_MARK = "You are agentcli"
#: Each explorer's task: description, prompt, its one tool call (name, input) and its report's first line.
_SUBTASKS: tuple[tuple[str, str, tuple[str, dict[str, object]], str], ...] = (
    ("Map the project layout", "List the files of this workspace with Glob and describe its layout.",
     ("Glob", {"pattern": "**/*"}), "Files in this workspace (newest first):\n"),
    ("Find TODO markers", "Search the code for TODO, FIXME and XXX markers with Grep and say where they are.",
     ("Grep", {"pattern": "TODO|FIXME|XXX", "output_mode": "content", "head_limit": 15}),
     "Markers found:\n"),
    ("Survey the top level", "List the top-level folder with LS and say what stands out.",
     ("LS", {"path": "."}), "The top level holds:\n"),
)
DEMO_WELCOME = (
    "This is the demo. Type any prompt (for example: look around) and press Enter: a scripted model "
    "delegates three explore subagents that run real Glob, Grep and LS on this folder. /help lists the keys."
)


def start_command() -> str:
    """How this machine starts agentcli: `agentcli` when it is on PATH, else through this interpreter."""
    import shutil

    return "agentcli" if shutil.which("agentcli") else f"{sys.executable} -m agentcli"


def final_text(command: str) -> str:
    """The demo's closing answer, naming the command that works here."""
    return (
        "All three explore subagents reported back; their answers are in the blocks above, and each "
        "block expands to show the tool calls it made.\n\n"
        "This is a **demo**: the model's words are scripted, but every Glob, Grep and LS ran for real "
        f"on this folder. Set `ANTHROPIC_API_KEY` (or `OPENAI_API_KEY`) and run `{command}` to work "
        "with a real model."
    )


def demo_script(*, latency_ms: int = 350, chunk_delay_ms: int = 25, command: str = "agentcli") -> Script:
    """The scripted session: every plain prompt starts the same three-way delegation."""
    from agentcli.testing import Match, Reply, Script, Step, ToolCall

    steps = [
        Step(
            name="main-delegates",
            match=Match(system_contains=MAIN_MARK, last_user_is_tool_result=False),
            reply=Reply(
                text="I'll look at this workspace with three explore subagents working in parallel.",
                chunk_size=6,
                tool_calls=[
                    ToolCall(name="Task", input={"description": d, "prompt": p, "subagent_type": "explore",
                                                 "model": "light"})
                    for d, p, _, _ in _SUBTASKS
                ],
            ),
            latency_ms=latency_ms,
            chunk_delay_ms=chunk_delay_ms,
            times=None,
            optional=True,
        ),
        Step(
            name="main-summarizes",
            match=Match(system_contains=MAIN_MARK, last_user_is_tool_result=True),
            reply=Reply(text=final_text(command), chunk_size=8),
            latency_ms=latency_ms,
            chunk_delay_ms=chunk_delay_ms,
            times=None,
            optional=True,
        ),
    ]
    for description, _, (tool, tool_input), lead in _SUBTASKS:
        mark = f"# Task\n{description}"
        steps.append(Step(
            name=f"{description}: tool", match=Match(system_contains=mark, last_user_is_tool_result=False),
            reply=Reply(text="Looking.", chunk_size=4, tool_calls=[ToolCall(name=tool, input=tool_input)]),
            latency_ms=latency_ms, chunk_delay_ms=chunk_delay_ms, times=None, optional=True,
        ))
        steps.append(Step(
            name=f"{description}: report", match=Match(system_contains=mark, last_user_is_tool_result=True),
            reply=Reply(text=lead, chunk_size=12, echo_last_user=1200),
            latency_ms=latency_ms, chunk_delay_ms=chunk_delay_ms, times=None, optional=True,
        ))
    return Script(steps=steps)


def demo_conversation(workspace: Path, server: FakeLLMServer, store_dir: Path) -> Conversation:
    """A Conversation whose main and light models are the fake server's, with a throwaway store.

    Opened like every conversation (`Conversation.open`); raises `OpenError` with the line to print.
    """
    from agentcli.config import load_config
    from agentcli.conversation import Conversation

    overrides: dict[str, object] = {}
    for slot, model in (("main", "demo-main"), ("light", "demo-light")):
        overrides |= {
            f"models.{slot}.provider": "anthropic",
            f"models.{slot}.model": model,
            f"models.{slot}.base_url": server.base_url,
            f"models.{slot}.api_key": "demo-key-not-secret",
        }
    # The person's model settings are replaced on purpose; the rest of their config still applies.
    settings = load_config(workspace=workspace, env={}, overrides=overrides).settings
    return Conversation.open(settings, workspace, store_path=store_dir / "demo.db")


def run_demo(workspace: Path) -> int:
    """Start the fake server and open the TUI on the scripted session; returns the exit code."""
    import asyncio
    import tempfile

    from agentcli.conversation import OpenError
    from agentcli.testing import FakeLLMServer
    from agentcli.ui import AgentApp

    with tempfile.TemporaryDirectory(prefix="agentcli-demo-") as tmp, FakeLLMServer(
        demo_script(command=start_command())
    ) as server:
        try:
            conversation = demo_conversation(workspace, server, Path(tmp))
        except OpenError as exc:
            print(f"agentcli: {exc}", file=sys.stderr)
            return 1

        async def main() -> int:
            app = AgentApp(conversation, title=DEMO_TITLE, welcome=DEMO_WELCOME)
            try:
                await app.run_async()
            finally:
                await conversation.aclose()  # cancels background subagents, closes SDK clients and the store
            return app.return_code or 0

        try:
            return asyncio.run(main())
        finally:
            conversation.close()  # a no-op unless the loop ended before aclose() could run


def demo_command(cwd: CwdOption = None) -> None:
    """Open the TUI on a scripted demo: a fake model delegates real read-only work on this folder (no key)."""
    workspace = workspace_dir(cwd)
    load(workspace, None)  # an invalid config is one line and exit 2 before the demo starts
    raise typer.Exit(run_demo(workspace))
