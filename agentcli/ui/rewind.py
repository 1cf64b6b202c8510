"""`/rewind`, `/undo` and `/redo` in the TUI, over the conversation's checkpoints (`Conversation.preview_rewind`,
`rewind`, `preview_redo`, `redo`).

`/rewind` (also Esc Esc in an empty prompt) walks the person through `widgets.rewind_screen`: which prompt, what
to take back, the preview (with each file's diff on `d`), then carries it out. `/undo` rewinds the latest prompt
still in the conversation (code and conversation); `/redo` undoes the latest rewind. A file the person changed since
the checkpoint is never overwritten without asking: `/undo` and `/redo` show the preview when there is such a file,
`/rewind` always does. While the rewind itself runs, a small screen holds the keys (no prompt starts a turn, and a
checkpoint of its own, halfway through). After a rewind that took back conversation, the transcript is drawn again
from the store (as `/resume` draws it) and the rewound prompt goes back into the input for editing; one note says
what was done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TYPE_CHECKING, Protocol, cast

from agentcli.conversation import RewindError, taken_back
from agentcli.ui.host import AppHost

if TYPE_CHECKING:
    from agentcli.checkpoints import FileChange
    from agentcli.conversation import Conversation, RewindDone, RewindPreview
    from agentcli.diffs import FileDiff
    from agentcli.ui.widgets.rewind_screen import DiffOf



class RewindHost(AppHost, Protocol):
    """What the rewind commands need from the app (`commands.CommandHost` has all of it)."""

    async def redraw_history(self) -> None: ...

    def edit_prompt(self, text: str) -> None: ...


def _busy(host: RewindHost, name: str) -> bool:
    if host.turn_running:
        host.say_error(f"/{name}: a turn is running; press Esc to stop it first")
        return True
    return False


def _diff_of(conversation: Conversation, preview: RewindPreview) -> DiffOf:
    """What the preview's `d` shows for one file: the diff the rewind makes to it (git runs in a thread)."""
    from agentcli.checkpoints import file_diff

    async def diff(change: FileChange) -> FileDiff:
        assert preview.plan is not None
        return await asyncio.to_thread(file_diff, conversation.checkpoints.repo, preview.plan, change)

    return diff


async def _confirm(host: RewindHost, preview: RewindPreview, title: str = "") -> bool | None:
    """The preview, answered: the rewind's `overwrite`, or None (the person went back)."""
    from agentcli.ui.widgets.rewind_screen import RewindPreviewScreen

    return await host.ask(RewindPreviewScreen(preview, _diff_of(host.conversation, preview), title=title))


async def _ask_if_yours(host: RewindHost, preview: RewindPreview, title: str) -> bool | None:
    """False (nothing of the person's in the way), or the preview's answer when the rewind would change again a file
    the person changed since."""
    if not any(f.by_person for f in preview.files):
        return False
    return await _confirm(host, preview, title)


async def _carry_out(host: RewindHost, text: str, work: Awaitable[RewindDone]) -> RewindDone:
    """Await `work` (the rewind itself) behind a screen that holds the keys meanwhile; its error raised here."""
    from agentcli.ui.widgets.rewind_screen import BusyScreen

    screen = BusyScreen(text, work)
    await host.ask(screen)
    if screen.error is not None:
        raise screen.error
    return cast("RewindDone", screen.result)


async def _finish(host: RewindHost, done: RewindDone, *, put_back: bool) -> None:
    """The transcript as the conversation now is, the rewound prompt in the input, and one note."""
    if done.mode != "code":
        await host.redraw_history()
        if put_back and done.prompt:
            host.edit_prompt(done.prompt)
    host.say("\n".join([done.line(), *(f"  {problem}" for problem in done.problems)]))


async def rewind_command(host: RewindHost, arg: str) -> None:
    """`/rewind`: pick a prompt, what to take back, look at the preview, rewind."""
    from agentcli.ui.widgets.rewind_screen import ModePicker, RewindPicker

    if _busy(host, "rewind"):
        return
    conversation = host.conversation
    points = conversation.rewind_points()
    if not points:
        host.say("Nothing to rewind yet: no prompt of this session has a checkpoint ([checkpoints] enabled = true "
                 "takes one before every prompt).")
        return
    gone = taken_back(conversation.checkpoints.rows(conversation.session.id))
    live = [i for i, p in enumerate(points) if p.id not in gone]
    chosen: int | None = live[-1] if live else None
    try:
        while (index := await host.ask(RewindPicker(points, gone, chosen))) is not None:
            chosen = index
            while (mode := await host.ask(ModePicker(points[index]))) is not None:
                preview = await conversation.preview_rewind(str(index + 1), mode)
                overwrite = await _confirm(host, preview)
                if overwrite is None:
                    continue
                done = await _carry_out(host, "Rewinding…", conversation.rewind(preview, overwrite=overwrite))
                await _finish(host, done, put_back=True)
                return
    except RewindError as exc:
        host.say_error(f"/rewind: {exc}")


async def undo_command(host: RewindHost, arg: str) -> None:
    """`/undo`: rewind the latest prompt still in the conversation, code and conversation."""
    if _busy(host, "undo"):
        return
    conversation = host.conversation
    try:
        preview = await conversation.preview_rewind("last", "both")  # the latest prompt still in the conversation
        overwrite = await _ask_if_yours(host, preview, "Undo: " + _short(preview.point.prompt))
        if overwrite is None:
            host.say("/undo: nothing changed.")
            return
        done = await _carry_out(host, "Undoing…", conversation.rewind(preview, overwrite=overwrite))
    except RewindError as exc:
        host.say_error(f"/undo: {exc}")
        return
    await _finish(host, done, put_back=True)


async def redo_command(host: RewindHost, arg: str) -> None:
    """`/redo`: undo the latest rewind (its files and the messages it took back), when no prompt came since."""
    if _busy(host, "redo"):
        return
    conversation = host.conversation
    try:
        preview = await conversation.preview_redo()
        overwrite = await _ask_if_yours(host, preview, "Redo: undo the rewind to " + _short(preview.point.prompt))
        if overwrite is None:
            host.say("/redo: nothing changed.")
            return
        done = await _carry_out(host, "Redoing…", conversation.redo(preview, overwrite=overwrite))
    except RewindError as exc:
        host.say_error(f"/redo: {exc}")
        return
    await _finish(host, done, put_back=False)


def _short(prompt: str) -> str:
    from agentcli.text import one_line

    return f"“{one_line(prompt, 60)}”"
