"""The session's background commands (`/bg`, Ctrl+G): a list, and one command's output followed live.

`BackgroundListScreen` lists every background command of the session tree (`Bash(run_in_background=true)`, any
agent's), the running ones and those that ended: its id, command, runtime, status and last line, refreshed twice a
second. Enter follows the highlighted command's output (`BackgroundOutputScreen`: the output file tailed as it
grows, Esc back to the list); x stops it (its whole process group, as TaskCancel does); Esc closes.

The output is the command's, so untrusted: it is decoded leniently and made terminal-safe, and shown as plain text
(table cells are `Text`, the output a `Log`), never parsed as markup. Following reads the output file itself, from
its own position: what the agent has read with TaskOutput is left as it was.
"""

from __future__ import annotations

import codecs
import time
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DataTable, Log, Static

from agentcli.text import terminal_safe
from agentcli.ui.model import format_seconds
from agentcli.ui.router_state import clip

if TYPE_CHECKING:
    from agentcli.tools import BackgroundCommand, BackgroundShells

REFRESH_SECONDS = 0.5  # the list's runtimes, statuses and last lines
FOLLOW_SECONDS = 0.2  # how often the followed output is looked at
READ_CHUNK = 256 * 1024  # bytes one look reads at most (the rest at the next)
MAX_LOG_LINES = 5000
COMMAND_CHARS = 60
LAST_LINE_CHARS = 80

_SCREEN_CSS = """
{name} {{
    align: center middle;
    background: $background 60%;
}}
{name} > Vertical {{
    width: 130;
    max-width: 95%;
    height: auto;
    max-height: 90%;
    padding: 1 2;
    border: heavy $accent;
    background: $surface;
}}
{name} .bg-title {{
    text-style: bold;
}}
{name} .bg-hint {{
    color: $text-muted;
    margin-top: 1;
}}
"""


def runtime(job: BackgroundCommand) -> str:
    """How long it ran, or has run so far."""
    return format_seconds(max((job.ended or time.time()) - job.started, 0.0))


def status_text(job: BackgroundCommand) -> str:
    """`running`, `exited 0`, `killed (signal 9)`, `stopped`."""
    if job.status != "exited":
        return job.status
    code = job.exit_code
    return f"killed (signal {-code})" if code is not None and code < 0 else f"exited {code}"


def safe_output(text: str) -> str:
    """Output as the screen shows it: a lone CR (a progress bar redrawing its line) starts a new line; whatever else
    a terminal would act on becomes a visible stand-in."""
    return terminal_safe(text.replace("\r\n", "\n").replace("\r", "\n"))


class BackgroundListScreen(ModalScreen[None]):
    """The session's background commands: Enter follows one's output, x stops it, Esc closes."""

    DEFAULT_CSS = _SCREEN_CSS.format(name="BackgroundListScreen") + """
    BackgroundListScreen DataTable {
        height: auto;
        max-height: 30;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("x", "stop", "Stop it"),
    ]
    COLUMNS = ("id", "command", "time", "status", "last line")

    def __init__(self, shells: BackgroundShells) -> None:
        super().__init__()
        self.shells = shells
        self.table: DataTable[Text] = DataTable(cursor_type="row", zebra_stripes=True)

    def compose(self) -> Any:
        """The title, the table, the keys."""
        with Vertical():
            yield Static("Background commands", classes="bg-title", markup=False)
            yield self.table
            yield Static("Enter follows its output · x stops it · Esc closes", classes="bg-hint", markup=False)

    def on_mount(self) -> None:
        """Fill the table, then keep it current."""
        for name in self.COLUMNS:
            self.table.add_column(name, key=name)
        self.refresh_rows()
        self.set_interval(REFRESH_SECONDS, self.refresh_rows)
        self.table.focus()

    def cells(self, job: BackgroundCommand) -> dict[str, Text]:
        """One row: every cell plain text, terminal-safe."""
        last = job.last_lines(1)
        values = {"id": job.id, "command": clip(job.command, COMMAND_CHARS), "time": runtime(job),
                  "status": status_text(job), "last line": clip(safe_output(last), LAST_LINE_CHARS)}
        style = {"running": "bold", "stopped": "dim"}.get(job.status, "")
        return {key: Text(terminal_safe(value), style=style if key == "status" else "")
                for key, value in values.items()}

    def refresh_rows(self) -> None:
        """Add the commands started since, update the others' cells."""
        table = self.table
        for job in list(self.shells.commands.values()):
            cells = self.cells(job)
            if job.id not in table.rows:
                table.add_row(*(cells[name] for name in self.COLUMNS), key=job.id)
                continue
            for name in self.COLUMNS:
                table.update_cell(job.id, name, cells[name])

    def highlighted(self) -> BackgroundCommand | None:
        """The command of the highlighted row."""
        if not self.table.row_count:
            return None
        key = self.table.coordinate_to_cell_key(self.table.cursor_coordinate).row_key.value
        return self.shells.find(key) if key is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Enter: follow that command's output."""
        job = self.shells.find(event.row_key.value or "")
        if job is not None:
            self.app.push_screen(BackgroundOutputScreen(job, self.shells))

    def action_stop(self) -> None:
        """x: stop the highlighted command."""
        job = self.highlighted()
        if job is not None:
            stop_command(self, self.shells, job)

    def action_close(self) -> None:
        """Back to the conversation."""
        self.dismiss(None)


def stop_command(screen: ModalScreen[None], shells: BackgroundShells, job: BackgroundCommand) -> None:
    """Stop `job` in a worker of `screen`; say it when it was no longer running."""
    if job.status != "running":
        screen.notify(f"{job.id} is not running ({status_text(job)}).")
        return

    async def stop() -> None:
        if await shells.stop(job):
            screen.notify(f"{job.id} stopped.")

    screen.run_worker(stop(), group="background-stop", exit_on_error=False)


class BackgroundOutputScreen(ModalScreen[None]):
    """One background command's output, followed as it grows: Esc back, x stops it."""

    DEFAULT_CSS = _SCREEN_CSS.format(name="BackgroundOutputScreen") + """
    BackgroundOutputScreen Log {
        height: 30;
        max-height: 70vh;
        background: $panel;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Back"),
        Binding("x", "stop", "Stop it"),
    ]

    def __init__(self, job: BackgroundCommand, shells: BackgroundShells) -> None:
        super().__init__()
        self.job = job
        self.shells = shells
        self.header = Static("", classes="bg-title", markup=False)
        self.log_view = Log(max_lines=MAX_LOG_LINES, auto_scroll=True)
        self.seen = 0  # bytes of its output shown (counted as the command's `written`)
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def compose(self) -> Any:
        """The command and its state, its output, the keys."""
        with Vertical():
            yield self.header
            yield self.log_view
            yield Static("Esc back to the list · x stops it", classes="bg-hint", markup=False)

    def on_mount(self) -> None:
        """Show what it printed so far, then follow it."""
        self.follow()
        self.set_interval(FOLLOW_SECONDS, self.follow)
        self.log_view.focus()

    @property
    def output(self) -> str:
        """What the screen shows of its output."""
        return "\n".join(self.log_view.lines)

    def follow(self) -> None:
        """Append what it wrote since the last look; say so when the cap cut output before it was shown."""
        job = self.job
        self.header.update(terminal_safe(f"{job.id} · {clip(job.command, 100)} · {job.state()}"))
        if job.written <= self.seen:
            return
        if job.dropped > self.seen:  # the cap cut the oldest output before it was shown
            self.log_view.write(f"[{job.dropped - self.seen} bytes of earlier output were cut]\n")
            self.seen = job.dropped
            self._decoder.reset()
        try:
            with open(job.path, "rb") as out:
                out.seek(self.seen - job.dropped)
                data = out.read(READ_CHUNK)
        except OSError:
            return  # the session ended: its output files are gone
        self.seen += len(data)
        self.log_view.write(safe_output(self._decoder.decode(data)))

    def action_stop(self) -> None:
        """x: stop the command."""
        stop_command(self, self.shells, self.job)

    def action_close(self) -> None:
        """Back to the list."""
        self.dismiss(None)
