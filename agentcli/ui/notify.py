"""Telling the person, when they look elsewhere, that agentcli waits for them: an approval is asked, or a long
turn ended (`[ui] notify`, `[ui] notify_after_seconds`).

- `bell`: the terminal bell (BEL), which terminals turn into a sound, a flash or an urgent window;
- `osc`: a desktop notification where the terminal is known to show one — OSC 9 (iTerm2, WezTerm, Ghostty),
  OSC 777 (VTE terminals such as GNOME Terminal and Tilix, foot, urxvt), OSC 99 (kitty) — else the bell;
  inside tmux or screen, which drop these sequences unless configured to pass them through, the bell;
- `off`: nothing.

The text of a notification names an agent and a tool call, which come from the model: every control
character is dropped from it (and `;`, OSC 777's separator), so it cannot end the sequence early.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal, cast

if TYPE_CHECKING:
    from textual.driver import Driver

NotifyMode = Literal["bell", "osc", "off"]
Flavour = Literal["9", "777", "99"]
BEL = "\x07"
MAX_TEXT = 160
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]+")


def osc_flavour(env: Mapping[str, str]) -> Flavour | None:
    """The notification sequence this terminal shows, from its environment; None when unknown."""
    if env.get("TMUX") or env.get("STY"):
        return None
    program = env.get("TERM_PROGRAM", "")
    term = env.get("TERM", "")
    if program in ("iTerm.app", "WezTerm", "ghostty"):
        return "9"
    if env.get("KITTY_WINDOW_ID") or term == "xterm-kitty":
        return "99"
    if env.get("VTE_VERSION") or term.startswith(("foot", "rxvt")):
        return "777"
    return None


def clean(text: str, limit: int = MAX_TEXT) -> str:
    """One line without control characters or `;`, clipped."""
    line = " ".join(_CONTROL.sub(" ", text).replace(";", ",").split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def sequence(flavour: Flavour, title: str, body: str) -> str:
    """The escape sequence of one notification."""
    title, body = clean(title, 60), clean(body)
    if flavour == "777":
        return f"\x1b]777;notify;{title};{body}\x1b\\"
    if flavour == "99":
        return f"\x1b]99;;{title}: {body}\x1b\\"
    return f"\x1b]9;{title}: {body}{BEL}"


class Notifier:
    """Rings or notifies per `[ui] notify`. `write` is the terminal's (set once the app runs in one), `bell` the
    app's bell; `sent` keeps what was sent, newest last (the tests read it)."""

    def __init__(self, mode: NotifyMode, after_seconds: float, env: Mapping[str, str] | None = None) -> None:
        self.mode: NotifyMode = mode
        self.after_seconds = after_seconds
        self.env = dict(os.environ if env is None else env)
        self.write: Callable[[str], None] | None = None
        self.bell: Callable[[], None] = lambda: None
        self.sent: list[str] = []

    def approval_waiting(self, agent: str, what: str) -> None:
        """An approval dialog opened."""
        self.send("agentcli: approval needed", f"[{agent}] wants to run {what}")

    def question_waiting(self, agent: str, what: str) -> None:
        """A question dialog opened (`what`: the questions' chips)."""
        self.send("agentcli: question for you", f"[{agent}] asks: {what}")

    def turn_ended(self, seconds: float, outcome: str) -> None:
        """A turn ended; only one that took at least `after_seconds` is worth a notification."""
        if seconds >= self.after_seconds:
            self.send("agentcli", f"turn {outcome} after {seconds:.0f}s")

    def send(self, title: str, body: str) -> None:
        """One notification (or the bell)."""
        if self.mode == "off":
            return
        flavour = osc_flavour(self.env) if self.mode == "osc" else None
        if flavour is not None and self.write is not None:
            text = sequence(flavour, title, body)
            self.write(text)
        else:
            text = BEL
            self.bell()
        self.sent.append(text)


def with_terminal_writes(base: type[Driver]) -> type[Driver]:
    """`base` (the app's terminal driver class) made to hand its `write` to the app's `notifier` when it starts:
    Textual has no public way to send an escape sequence of one's own, and the driver's writer keeps it from
    interleaving with a frame. (Under the test pilot the headless driver is used and nothing is handed over.)"""

    def init(self: Driver, app: object, *args: Any, **kwargs: Any) -> None:
        base.__init__(self, app, *args, **kwargs)  # type: ignore[arg-type]
        notifier = getattr(app, "notifier", None)
        if isinstance(notifier, Notifier):
            notifier.write = self.write

    return cast("type[Driver]", type(f"Notifying{base.__name__}", (base,), {"__init__": init}))
