"""The status bar: the prompt's vim mode (while vim keys are on), permission mode, model, session tokens and cost,
context, running subagents and background commands (`⚙ 2 bg`), and what the app is doing.

It degrades by priority when the terminal is narrow: what the person must act on or know about stays (the
state, such as "waiting for your approval", how many subagents run, the permission mode, the vim mode), while
the model, tokens, cost and context shrink, then go. `DEGRADE_STEPS` is the order; each step shortens one part
to its next form, until the line fits.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual import events
from textual.content import Content
from textual.widgets import Static

from agentcli.figures import compact_tokens, context_text, format_cost
from agentcli.text import terminal_safe

LOADING = "loading the model SDK…"
READY = "ready"
WORKING = "working… (Esc to stop)"
APPROVAL = "waiting for your approval"
QUESTION = "waiting for your answer"
QUIT_ARMED = "press Ctrl+Q again to quit"
REWIND_ARMED = "press Esc again to rewind"

#: Shorter forms of each state the app shows, longest first (an unknown state has no shorter form).
STATE_FORMS: dict[str, tuple[str, ...]] = {
    LOADING: (LOADING, "loading…"),
    READY: (READY,),
    WORKING: (WORKING, "working…"),
    APPROVAL: (APPROVAL, "approval waiting", "approval"),
    QUESTION: (QUESTION, "answer waiting", "answer"),
    QUIT_ARMED: (QUIT_ARMED, "Ctrl+Q again quits", "^Q again"),
    REWIND_ARMED: (REWIND_ARMED, "Esc again rewinds", "Esc again"),
}
#: How each permission mode reads: the full label, then the shortest that still says it.
MODE_FORMS: dict[str, tuple[str, str]] = {
    "ask": ("ask", "ask"),
    "accept_edits": ("accept edits", "edits"),
    "readonly": ("read-only (plan)", "read-only"),
    "auto": ("auto-approve", "auto"),
}
MODE_HINT = " (shift+tab)"
WIDE, NARROW = "  ·  ", " · "

Piece = tuple[str, str] | str
Form = tuple[Piece, ...]  # an empty form: the part is not shown

#: The order in which parts give way to a narrow terminal: (part, its next form). "sep" narrows separators.
DEGRADE_STEPS: tuple[str, ...] = (
    "sandbox", "model", "mode", "tokens", "sep", "context", "context", "agents", "sandbox", "cost", "tokens",
    "model", "context", "agents", "background", "state", "state", "vim", "mode",
)
#: Left to right.
ORDER = ("vim", "mode", "sandbox", "model", "tokens", "cost", "context", "agents", "background", "state")


@dataclass(frozen=True)
class Status:
    """What the bar shows."""

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    running: int = 0
    queued: int = 0
    state: str = READY  # LOADING | READY | WORKING | APPROVAL | QUESTION | QUIT_ARMED | REWIND_ARMED
    context: tuple[int, int] | None = None  # the main agent's context: (tokens used, window)
    window_source: str = ""  # where the window came from: configured, server: …, model table, default
    mode: str = "ask"  # the permission mode (tools.permissions.Mode)
    sandbox: str = ""  # Bash's sandbox in a few words (tools.sandbox.Sandbox.summary); "" shows nothing
    background: int = 0  # background commands running (`Bash(run_in_background=true)`; /bg lists them)
    vim: str = ""  # the prompt's vim mode, NORMAL or INSERT ("": vim keys are off)


def _agents_forms(running: int, queued: int) -> tuple[Form, ...]:
    """`3 subagents running, 2 queued` → `3 running, 2 queued` → `●3 ◌2` (the blocks' own icons)."""
    if not running and not queued:
        return ((),)
    forms = [f"{running} subagent{'s' if running != 1 else ''} running", f"{running} running", f"●{running}"]
    if queued:
        forms = [f"{forms[0]}, {queued} queued", f"{forms[1]}, {queued} queued", f"{forms[2]} ◌{queued}"]
    return tuple(((form, "$accent"),) for form in forms)


def _background_forms(running: int) -> tuple[Form, ...]:
    """`⚙ 2 bg` → `⚙2`; nothing while none runs."""
    if not running:
        return ((),)
    return (((f"⚙ {running} bg", "$accent"),), ((f"⚙{running}", "$accent"),))


def _mode_forms(mode: str) -> tuple[Form, ...]:
    """`⏵ accept edits (shift+tab)` → `⏵ accept edits` → `edits`; the looser modes in warning colour."""
    label, brief = MODE_FORMS.get(mode, (mode, mode))
    style = "$warning" if mode in ("accept_edits", "auto") else "$success" if mode == "readonly" else ""
    marker = ("⏵ ", "$text-muted")
    return (marker, (label, style), (MODE_HINT, "$text-muted")), (marker, (label, style)), ((brief, style),)


def _sandbox_forms(summary: str) -> tuple[Form, ...]:
    """`sandbox: landlock 7 + netns` → `sandboxed` → nothing; without one, `no sandbox` in warning colour."""
    if not summary:
        return ((),)
    if not summary.startswith("sandbox:"):
        return (((summary, "$warning"),), ((summary, "$warning"),), ())
    return (((summary, "$success"),), (("sandboxed", "$success"),), ())


def _vim_forms(mode: str) -> tuple[Form, ...]:
    """`-- NORMAL --` → `NORMAL`; nothing while vim keys are off."""
    if not mode:
        return ((),)
    style = "bold $accent" if mode == "NORMAL" else "bold"
    return (((f"-- {mode} --", style),), ((mode, style),))


def part_forms(status: Status) -> dict[str, tuple[Form, ...]]:
    """Every part of the line with its forms, longest first."""
    muted = "$text-muted"
    model = terminal_safe(status.model)
    in_out = f"{compact_tokens(status.input_tokens)} in / {compact_tokens(status.output_tokens)} out"
    parts: dict[str, tuple[Form, ...]] = {
        "vim": _vim_forms(status.vim),
        "mode": _mode_forms(status.mode),
        "sandbox": _sandbox_forms(status.sandbox),
        "model": ((("model ", muted), (model, "bold")), ((model, "bold"),), ()),
        "tokens": ((in_out,), (f"{compact_tokens(status.input_tokens + status.output_tokens)} tok",), ()),
        "cost": ((format_cost(status.cost_usd),), ()),
        "context": ((),),
        "agents": _agents_forms(status.running, status.queued),
        "background": _background_forms(status.background),
    }
    if status.context is not None and status.context[1] > 0:
        used, window = status.context
        style = "$error" if used >= 0.9 * window else "$warning" if used >= 0.7 * window else ""
        source = status.window_source.partition(":")[0]  # "server: llama.cpp /props" reads as server
        parts["context"] = (
            (("context ", muted), (context_text(used, window), style), (f" ({source})" if source else "", muted)),
            (("context ", muted), (context_text(used, window), style)),
            ((f"ctx {100 * used / window:.0f}%", style),),
            (),
        )
    state_style = "bold $warning" if status.state in (APPROVAL, QUESTION, QUIT_ARMED, REWIND_ARMED) else "italic"
    parts["state"] = tuple(((form, state_style),) for form in STATE_FORMS.get(status.state, (status.state,)))
    return parts


def fit(status: Status, width: int) -> Content:
    """The status line, shortened part by part (DEGRADE_STEPS) until it fits in `width` cells."""
    forms = part_forms(status)
    level = dict.fromkeys(forms, 0)
    sep = WIDE

    def line() -> Content:
        pieces: list[Piece] = []
        for name in ORDER:
            form = forms[name][level[name]]
            if form:
                if pieces:
                    pieces.append((sep, "$text-muted"))
                pieces.extend(form)
        return Content.assemble(*pieces)

    content = line()
    for step in DEGRADE_STEPS:
        if content.cell_length <= width:
            break
        if step == "sep":
            sep = NARROW
        elif level[step] + 1 < len(forms[step]):
            level[step] += 1
        content = line()
    return content


class StatusBar(Static):
    """One line under the input; re-rendered when something in it changed or its width did."""

    def __init__(self) -> None:
        super().__init__(id="status-bar")
        self._shown: Status | None = None

    def show(self, status: Status) -> None:
        """Render `status` if it differs from what is shown."""
        if status == self._shown:
            return
        self._shown = status
        self._paint()

    def on_resize(self, event: events.Resize) -> None:
        """Fit the line to the new width."""
        self._paint()

    def _paint(self) -> None:
        if self._shown is None:
            return
        width = self.content_size.width
        self.update(fit(self._shown, width if width > 0 else 10_000))

    @property
    def shown(self) -> Status | None:
        """What the bar shows now."""
        return self._shown
