"""`/rewind` (and Esc Esc in an empty prompt): the three modal steps of going back to an earlier prompt.

`RewindPicker` lists the session's prompts that have a checkpoint (when, the first line, how many files the prompt
changed), newest at the bottom and chosen; `ModePicker` asks what to take back (code and conversation, the
conversation only, the code only); `RewindPreviewScreen` names every file the rewind will put back (`M`), make
again (`A`) or remove (`D`), marks the ones the person changed since (those are kept unless they say otherwise),
and shows the highlighted file's whole diff on `d` (`full_diff`). Its answer is the rewind's `overwrite`:
Enter rewinds and keeps the person's files as they are, `o` overwrites them too, Esc goes back a step.

Every prompt, path and line comes from the store or the workspace: terminal-safe here.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, ClassVar

from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agentcli.conversation import MODE_TEXT
from agentcli.text import one_line, terminal_safe
from agentcli.ui.widgets.full_diff import FullDiffScreen

if TYPE_CHECKING:
    from agentcli.checkpoints import FileChange
    from agentcli.conversation import Mode, RewindPreview
    from agentcli.diffs import FileDiff
    from agentcli.store import CheckpointRecord

PROMPT_CHARS = 70
ACTION_MARK = {"restore": "M", "recreate": "A", "delete": "D"}
ACTION_TEXT = {"restore": "put back as it was", "recreate": "made again", "delete": "removed"}
PERSON_MARK = "changed by you since: kept unless you press o"
DiffOf = Callable[["FileChange"], Awaitable["FileDiff"]]

_DIALOG_CSS = """
    align: center middle;
    background: $background 60%;
    & > Vertical {
        width: 90%;
        max-width: 140;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    & .rewind-title {
        text-style: bold;
    }
    & .rewind-hint {
        color: $text-muted;
    }
    & OptionList {
        height: auto;
        max-height: 20;
    }
"""


def when(stamp: str, today: datetime | None = None) -> str:
    """A stored UTC time as the person's local `14:05` (today) or `2026-11-24 14:05`."""
    try:
        moment = datetime.fromisoformat(stamp)
    except ValueError:
        return "?"
    local = (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).astimezone()
    now = today or datetime.now().astimezone()
    return local.strftime("%H:%M" if local.date() == now.date() else "%Y-%m-%d %H:%M")


def point_label(number: int, point: CheckpointRecord, taken_back: bool = False) -> str:
    """`#3  14:05  fix the login bug  · 2 files changed` (terminal-safe)."""
    if point.after_tree is None:
        files = "did not finish"
    else:
        files = f"{len(point.files)} file{'' if len(point.files) == 1 else 's'} changed"
    back = "  (taken back)" if taken_back else ""
    text = f"#{number}  {when(point.created_at)}  {one_line(point.prompt, PROMPT_CHARS) or '(empty)'}  · {files}{back}"
    return terminal_safe(text)


class RewindPicker(ModalScreen[int | None]):
    """Which prompt to go back to: dismisses with its index in `points` (oldest first), None when cancelled."""

    DEFAULT_CSS = "RewindPicker {" + _DIALOG_CSS + "}"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "Cancel")]

    def __init__(self, points: list[CheckpointRecord], taken_back: set[int] | None = None,
                 chosen: int | None = None) -> None:
        super().__init__(classes="rewind-screen")
        self.points = points
        self.taken_back = taken_back or set()
        self.chosen = len(points) - 1 if chosen is None else chosen

    def compose(self) -> Any:
        """The question and the prompts, newest at the bottom."""
        with Vertical(id="rewind-picker"):
            yield Static("Rewind to which prompt? The files and the conversation go back to just before it.",
                         classes="rewind-title", markup=False)
            yield OptionList(*(Option(Content(point_label(i + 1, p, p.id in self.taken_back)), id=str(i))
                               for i, p in enumerate(self.points)), id="rewind-points")
            yield Static("Enter picks · Esc cancels", classes="rewind-hint", markup=False)

    def on_mount(self) -> None:
        """The list takes the keys, the newest prompt (or the one chosen before) highlighted."""
        options = self.query_one(OptionList)
        options.highlighted = self.chosen
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A prompt was picked."""
        event.stop()
        self.dismiss(int(event.option.id or 0))

    def action_cancel(self) -> None:
        """Esc: rewind nothing."""
        self.dismiss(None)


class ModePicker(ModalScreen["Mode | None"]):
    """What to take back: dismisses with the mode, None to go back to the prompts."""

    DEFAULT_CSS = "ModePicker {" + _DIALOG_CSS + "}"
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "back", "Back")]
    MODES: ClassVar[tuple[Mode, ...]] = ("both", "conversation", "code")

    def __init__(self, point: CheckpointRecord) -> None:
        super().__init__(classes="rewind-screen")
        self.point = point

    def compose(self) -> Any:
        """The prompt and the three choices."""
        with Vertical(id="rewind-modes"):
            yield Static(terminal_safe(f"Rewind to “{one_line(self.point.prompt, PROMPT_CHARS)}”: what goes back?"),
                         classes="rewind-title", markup=False)
            yield OptionList(*(Option(Content(MODE_TEXT[mode]), id=mode) for mode in self.MODES), id="rewind-mode")
            yield Static("the conversation: this prompt and everything after it leave the context (the prompt comes "
                         "back into the input)\nthe code: the files as they were before it\nEnter picks · Esc back",
                         classes="rewind-hint", markup=False)

    def on_mount(self) -> None:
        """The list takes the keys."""
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        """A mode was picked."""
        event.stop()
        self.dismiss(next((m for m in self.MODES if m == event.option.id), None))

    def action_back(self) -> None:
        """Esc: back to the prompts."""
        self.dismiss(None)


def file_label(change: FileChange) -> str:
    """`M src/app.py  put back as it was` (and the person's mark); terminal-safe."""
    text = f"{ACTION_MARK[change.action]} {change.path}  {ACTION_TEXT[change.action]}"
    return terminal_safe(text + (f"  ✎ {PERSON_MARK}" if change.by_person else ""))


class RewindPreviewScreen(ModalScreen[bool | None]):
    """What the rewind will do, before it does it. Dismisses with the rewind's `overwrite` (False: keep the files the
    person changed since, True: overwrite them too) or None (Esc: back to the modes)."""

    DEFAULT_CSS = "RewindPreviewScreen {" + _DIALOG_CSS + """
        & #rewind-person { color: $warning; }
    }"""
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "confirm(False)", "Rewind", priority=True),
        Binding("o", "confirm(True)", "Overwrite yours too"),
        Binding("d", "diff", "Diff of the file"),
        Binding("escape", "back", "Back"),
    ]

    def __init__(self, preview: RewindPreview, diff_of: DiffOf, *, title: str = "") -> None:
        super().__init__(classes="rewind-screen")
        self.preview = preview
        self.diff_of = diff_of
        self.title_text = title or f"Rewind ({MODE_TEXT[preview.mode]}) to “{one_line(preview.point.prompt, 60)}”"

    @property
    def person_files(self) -> list[FileChange]:
        """The files the person changed since the checkpoint that the rewind would change again."""
        return [f for f in self.preview.files if f.by_person]

    def compose(self) -> Any:
        """The title, what happens to the conversation, each file, what is left alone, and the keys."""
        preview = self.preview
        with Vertical(id="rewind-preview"):
            yield Static(terminal_safe(self.title_text), classes="rewind-title", markup=False)
            if preview.mode != "code":
                yield Static("The conversation from this prompt on leaves the context (kept in the store; /redo "
                             "brings it back).", markup=False)
            if preview.plan is not None:
                count = len(preview.files)
                yield Static(f"{count} file{'' if count == 1 else 's'} will change:" if count
                             else "No file changes: the files are as they were then.", markup=False)
                if count:
                    yield OptionList(*(Option(Content(file_label(f)), id=str(i))
                                       for i, f in enumerate(preview.files)), id="rewind-files")
                left = [f"  {s.path}: left alone, {s.reason}" for s in preview.plan.left_out]
                if left:
                    yield Static(terminal_safe("\n".join(left)), id="rewind-left-out", markup=False)
            yield from self._keys()

    def _keys(self) -> Any:
        person = self.person_files
        if person:
            many = len(person) != 1
            yield Static(f"{len(person)} of them {'were' if many else 'was'} changed by you since that prompt: Enter "
                         f"keeps {'them' if many else 'it'} as {'they are' if many else 'it is'}, o overwrites "
                         f"{'them' if many else 'it'} too.", id="rewind-person", markup=False)
        keys = ["Enter rewinds" + (" (keeping your files)" if person else "")]
        if person:
            keys.append("o rewinds and overwrites your files")
        if self.preview.files:
            keys.append("d diff of the highlighted file")
        keys.append("Esc back")
        yield Static(" · ".join(keys), id="rewind-keys", classes="rewind-hint", markup=False)

    def on_mount(self) -> None:
        """The file list (if any) takes the arrows."""
        for options in self.query("#rewind-files").results(OptionList):
            options.highlighted = 0
            options.focus()

    def highlighted(self) -> FileChange | None:
        """The file under the cursor."""
        for options in self.query("#rewind-files").results(OptionList):
            if options.highlighted is not None:
                return self.preview.files[options.highlighted]
        return None

    def action_confirm(self, overwrite: bool) -> None:
        """Enter: rewind, keeping the person's files; `o`: overwrite those too (only when there are some)."""
        if overwrite and not self.person_files:
            return
        self.dismiss(overwrite)

    def action_diff(self) -> None:
        """`d`: the highlighted file's whole diff (what the rewind does to it), in a screen of its own."""
        change = self.highlighted()
        if change is not None:
            self.run_worker(self._show_diff(change), group="rewind-diff", exclusive=True, exit_on_error=False)

    async def _show_diff(self, change: FileChange) -> None:
        try:
            diff = await self.diff_of(change)
        except Exception as exc:
            self.notify(terminal_safe(one_line(f"{change.path}: no diff: {exc}", 200)), severity="error")
            return
        if not diff.hunks:
            self.notify(terminal_safe(f"{change.path}: no lines to show (a binary file, or no change in its text)"))
            return
        self.app.push_screen(FullDiffScreen(diff, back="the rewind"))

    def action_back(self) -> None:
        """Esc: back to the modes, nothing changed."""
        self.dismiss(None)


class BusyScreen(ModalScreen[None]):
    """Shown while a rewind is carried out: the keys wait, so no prompt starts a turn (and a checkpoint of its own)
    halfway through. Dismisses itself when `work` is done; its `result` or `error` is then set."""

    DEFAULT_CSS = "BusyScreen {" + _DIALOG_CSS + "}"

    def __init__(self, text: str, work: Awaitable[object]) -> None:
        super().__init__(classes="rewind-screen")
        self.text = text
        self.work = work
        self.result: object = None
        self.error: Exception | None = None

    def compose(self) -> Any:
        """One line saying what is under way."""
        with Vertical(id="rewind-busy"):
            yield Static(self.text, classes="rewind-title", markup=False)

    def on_mount(self) -> None:
        """Start the work."""
        self.run_worker(self._run(), group="rewind-busy", exit_on_error=False)

    async def _run(self) -> None:
        try:
            self.result = await self.work
        except Exception as exc:
            self.error = exc
        self.dismiss(None)
