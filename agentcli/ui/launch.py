"""Starting the TUI from the command line: the trust prompt first where it matters, the conversation opened
as `agentcli run` opens it, a stored session resumed, SIGTERM / SIGHUP handled, and the session's id printed on
the way out."""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli import process_exit
from agentcli.text import terminal_safe
from agentcli.ui.app import AgentApp
from agentcli.ui.widgets.approval import Approvals

if TYPE_CHECKING:
    from agentcli.config import LoadedConfig
    from agentcli.conversation import Conversation, Resumed, TrustReport

log = logging.getLogger(__name__)


def _trust_question(loaded: LoadedConfig, workspace: Path) -> TrustReport | None:
    """What trusting the workspace would apply, run and reach, when it is untrusted and that is anything."""
    from agentcli.conversation import may_arm, what_trust_arms

    if not loaded.ignored:  # the config needs no trust: is there a hook or server that does?
        if not may_arm(workspace):
            return None
        from agentcli.config import trust

        if trust.is_trusted(workspace):
            return None
    report = what_trust_arms(workspace, loaded)
    return report if report.changes else None


def run_tui(
    loaded: LoadedConfig,
    workspace: Path,
    model: str,
    *,
    verbose: bool = False,
    trust_reload: Callable[[], LoadedConfig] | None = None,
    resume: str | None = None,
    continue_latest: bool = False,
    keep_model: bool = False,
) -> int:
    """Open the conversation (`Conversation.open`: store, logging) like `agentcli run` does, run the TUI; the exit code.

    In an untrusted workspace where trusting would change something (a project config setting only trust
    applies, a hook or MCP server of the workspace: `_trust_question`), the trust prompt comes first and names
    it all; "trust" calls `trust_reload` (records trust, returns the full config). `continue_latest`
    or `resume` (an id) resume a stored session before the app starts (one that cannot be is one line
    and exit 1); `resume=""` opens the picker in the app. On the way out the session's id is printed
    (standard error), so it can be resumed.
    """
    question = _trust_question(loaded, workspace) if trust_reload is not None else None
    if question is not None and trust_reload is not None:
        from agentcli.ui.widgets.trust import ask_trust

        choice = ask_trust(workspace, question)
        if choice == "quit":
            return 0
        if choice == "trust":
            loaded = trust_reload()
    from agentcli.conversation import Conversation, OpenError

    try:
        conversation = Conversation.open(loaded.settings, workspace, model=model, approver=Approvals(), verbose=verbose)
    except OpenError as exc:
        print(f"agentcli: {exc}", file=sys.stderr)
        return 1

    async def main() -> int:
        resumed: Resumed | None = None
        if continue_latest or resume:
            from agentcli.conversation import ResumeError

            try:
                resumed = await conversation.resume(None if continue_latest else resume, keep_model=keep_model)
            except ResumeError as exc:
                print(f"agentcli: {terminal_safe(str(exc))}", file=sys.stderr)
                await conversation.aclose()
                return 1
        app = AgentApp(conversation, resumed=resumed, pick_session=resume == "")
        stopped = _stop_on_signals(app, conversation)
        try:
            await app.run_async()
        finally:
            await conversation.aclose()  # flushes and closes the store
        return stopped[0] if stopped else app.return_code or 0

    try:
        code = asyncio.run(main())
    finally:
        conversation.close()  # a no-op unless the loop ended before aclose() could run
    session = conversation.session
    if session.next_seq:  # it has a stored history: say how to come back to it
        print(f"agentcli: session {session.id} (agentcli --resume {session.id} continues it)", file=sys.stderr)
    process_exit.ready()  # the store and clients are closed, the terminal restored: no teardown needed
    if report := conversation.persistence_report("session"):
        print(report, file=sys.stderr)
        return code or 1
    return code


def _stop_on_signals(app: AgentApp, conversation: Conversation) -> list[int]:
    """SIGTERM / SIGHUP: stop the running turn and leave the app cleanly (terminal restored), exit 128+N.

    Returns a list that holds the exit code once a signal arrived.
    """
    import contextlib
    import signal

    stopped: list[int] = []

    def stop(sig: int) -> None:
        if stopped:
            return
        stopped.append(128 + sig)
        log.info("stopping on signal %d", sig)
        conversation.cancel_turn()
        app.exit(return_code=128 + sig)

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, stop, int(sig))
    return stopped
