"""TUI figures: keystroke echo and screen lag while agents stream, and launch to first paint in a real terminal.

Run: python bench/tui_stream.py [--scenarios markdown,twenty,five] [--type-every-ms 25] [--runs 5] [--skip-launch]
     (see --help for each scenario's sizes and rates)

1. Headless streaming, three scenarios. A real `Conversation` (real SDK, runner and store) drives `AgentApp`
   under `run_test(headless=True, size=(160, 50))`; the fake server runs in its own process.
   (a) markdown: the main agent streams a ~20 KB Markdown answer (headings, prose with inline code and links,
       bullet and numbered lists, Python fences, tables) in 12-char deltas, one every 3 ms.
   (b) twenty: the main agent's turn makes 20 Task calls; each subagent streams 600 chunks of 4-8 chars,
       one every 5 ms, all at once ([task_tool] max_concurrent = 20).
   (c) five: five Task calls; subagent i streams 2000 chunks of 4+i chars, one every 1 ms (SPEC §7's case).
   The streaming window runs from the first text delta to the last. For each:
   - keystroke echo: while the turn runs a thread types one printable key every --type-every-ms into the
     prompt through the app's driver (`Driver.process_message`, what Textual's Linux driver does from its
     input thread), so keys arrive on schedule however busy the event loop is and queueing counts. A key is
     echoed when a frame whose compositor drew the prompt holding it reaches the driver (`app._display`).
     p50/p99/max over the keys that arrived in the window; at the end the prompt must hold exactly what was
     typed (no key lost or reordered). Issue 12's target: p99 <= 50 ms in every streaming case.
   - events/s: a counter subscribed to `conversation.bus` after the router sees each event right after
     the router has handled it (same synchronous dispatch); events in the window / window length.
   - arrival -> paint lag of every text delta. The counter notes (text item, cumulative length, time) per
     delta. Subagent text (`StreamText`): `_render_text` is wrapped to note how much of its item's text the
     widget holds (the router's 20 Hz flush calls it: "flushed"); `render_lines` to note which widgets the
     compositor draws in a frame. Main-agent Markdown (`AssistantText`): `push` notes what it was handed
     ("flushed"), and a frame shows its `source` once no append is in flight. `app._display` (where the
     compositor hands a frame to the driver) stamps the frame: each delta a drawn widget holds is painted
     then. Headless, `_display` skips turning the frame into terminal bytes; the wrapper does that work
     (`render_segments`, output discarded) so the app pays what a terminal would cost (--no-encode: skip).
     Deltas never drawn (an off-screen block, or one collapsed to its result first) are counted apart.
   - event-loop stall: a 10 ms repeating asyncio sleep; its lateness over the window (and over the whole
     turn, which adds the Task dispatch, the blocks collapsing and the main agent's answer).
   The wrappers only observe (unittest.mock.patch on the widgets and on the app; undone afterwards).
   Where the process may use two processors or more, the app keeps the first and the fake server runs on the
   others (in real use the model server is another machine; on one shared core its work for twenty streams
   counted as the app's lag): --shared-cpu puts both on the same ones. --diagnose prints where slow echoes came
   from (bench/tui_diagnose.py): gaps between frames and the messages that filled them, slow callbacks, paints
   and collections.
2. Launch in tmux (150x45), median of --runs: the venv's `agentcli` against the fake server (isolated XDG
   dirs); `capture-pane` is polled every ~5 ms for the first frame (title and status bar). Right after that
   frame, keys are typed: "input echoed" is when they show. "SDK ready" is when the status bar leaves
   "loading the model SDK…" for "ready" (the bar refreshes at 20 Hz). Beside them: the same harness
   showing an `echo` (tmux + polling floor) and bare `python -c "import anthropic"`.
SPEC §7: five subagents streaming at once never lag the screen more than 100 ms; the TUI paints and takes
input before the SDK import finishes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from unittest.mock import patch

from fake_server import server_process
from rich.console import RenderableType
from textual import events
from textual._compositor import CompositorUpdate
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip
from tui_diagnose import Diagnosis

from agentcli.config.load import load_config
from agentcli.conversation import Conversation
from agentcli.events import Event, SubagentEvent, TextDeltaEvent
from agentcli.store.db import Store
from agentcli.testing.fake_llm import Match, Reply, Script, Step, ToolCall
from agentcli.ui.app import AgentApp
from agentcli.ui.model import TextItem
from agentcli.ui.widgets.approval import Approvals
from agentcli.ui.widgets.message_list import AssistantText, StreamText
from agentcli.ui.widgets.prompt_input import PromptInput

MAIN = "You are agentcli"  # the main agent's system prompt starts with this
SUBAGENTS = 5
WORDS = ("stream", "parser", "module", "token", "render", "widget", "frame", "delta", "agent", "block",
         "config", "lorem", "ipsum", "queue", "buffer", "flush")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (0 for no values)."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q / 100 * len(ordered)) - 1))]


def stream_text(n_chars: int, seed: int) -> str:
    """Prose-like text of exactly n_chars characters, a newline every dozen words."""
    out: list[str] = []
    size, i = 0, seed
    while size < n_chars:
        word = WORDS[(i * 7 + seed) % len(WORDS)] + ("\n" if i % 12 == 11 else " ")
        out.append(word)
        size += len(word)
        i += 1
    return "".join(out)[:n_chars]


# --- part 1: headless streaming ---------------------------------------------------------------------


@dataclass
class Deltas:
    """One text item's deltas: cumulative length and arrival time of each, and how far each stage got."""

    ends: list[int] = field(default_factory=list)
    arrived: list[float] = field(default_factory=list)
    staged_at: list[float] = field(default_factory=list)
    total: int = 0
    flushed: int = 0  # index of the first delta not yet handed to the widget
    painted: int = 0  # index of the first delta not yet in a painted frame


class Probe:
    """Bus subscriber and render hooks: counts events, stamps each subagent text delta's arrival,
    flush and paint."""

    def __init__(self, app: AgentApp) -> None:
        self.app = app
        self.events: list[float] = []
        self.delta_times: list[float] = []
        self.items: dict[TextItem, Deltas] = {}
        self.drawn: dict[StreamText, int] = {}  # widget -> text length it held when drawn in this frame
        self.flush_lags: list[float] = []
        self.paint_lags: list[tuple[float, float, float]] = []  # (arrival, lag, of which before the flush)
        self.frames: list[float] = []
        self.typist: Typist | None = None
        self.markdown: set[AssistantText] = set()  # main-view Markdown widgets that were pushed text

    def __call__(self, event: Event) -> None:
        now = time.perf_counter()
        self.events.append(now)
        item: TextItem | None = None
        if isinstance(event, SubagentEvent) and isinstance(event.event, TextDeltaEvent):
            block = self.app.router.blocks.get(event.task_id)
            item = block.current_text if block is not None else None
            text = event.event.text
        elif isinstance(event, TextDeltaEvent):
            item = self.app.router.main.current_text
            text = event.text
        if item is None:
            return
        self.delta_times.append(now)
        deltas = self.items.setdefault(item, Deltas())
        deltas.total += len(text)
        deltas.ends.append(deltas.total)
        deltas.arrived.append(now)

    def staged(self, widget: StreamText | AssistantText, held: int) -> None:
        """The widget was handed `held` characters of its item's text (router flush, mount or finish)."""
        deltas = self.items.get(widget.item)
        if deltas is None:
            return
        now = time.perf_counter()
        while deltas.flushed < len(deltas.ends) and deltas.ends[deltas.flushed] <= held:
            self.flush_lags.append(now - deltas.arrived[deltas.flushed])
            deltas.staged_at.append(now)
            deltas.flushed += 1

    def drawing(self, widget: StreamText | AssistantText, held: int) -> None:
        """The compositor draws the widget, holding `held` characters of its item, into the frame being built."""
        self.drawn[widget] = held

    def painted(self) -> None:
        """A frame went to the driver: everything the drawn widgets held is on screen now."""
        now = time.perf_counter()
        self.frames.append(now)
        if self.typist is not None:
            self.typist.painted(now)
        for widget in self.markdown:  # drawn through its blocks: it shows its source once no append is in flight
            if not widget.busy:
                self.drawn[widget] = len(widget.source)
        for widget, held in self.drawn.items():
            deltas = self.items.get(widget.item)
            if deltas is None:
                continue
            while deltas.painted < len(deltas.ends) and deltas.ends[deltas.painted] <= held:
                arrived = deltas.arrived[deltas.painted]
                staged = deltas.staged_at[deltas.painted] if deltas.painted < len(deltas.staged_at) else now
                self.paint_lags.append((arrived, now - arrived, staged - arrived))
                deltas.painted += 1
        self.drawn.clear()


@contextlib.contextmanager
def hooks(probe: Probe, encode: bool) -> Iterator[None]:
    """Wrap StreamText's and the prompt's render methods and the app's `_display` to feed `probe`; undone
    on exit."""
    render_text = StreamText._render_text
    render_lines = StreamText.render_lines
    prompt_lines = PromptInput.render_lines
    push = AssistantText.push
    display = probe.app._display

    def _render_text(self: StreamText) -> None:
        render_text(self)
        probe.staged(self, len(self.item.text))

    def _render_lines(self: StreamText, crop: Region) -> list[Strip]:
        probe.drawing(self, len(self.item.text))
        return render_lines(self, crop)

    def _prompt_lines(self: PromptInput, crop: Region) -> list[Strip]:
        if probe.typist is not None:
            probe.typist.drawing(self.text)
        return prompt_lines(self, crop)

    def _push(self: AssistantText, chunk: str) -> None:
        push(self, chunk)
        probe.markdown.add(self)
        probe.staged(self, len(self.source))

    def _display(screen: Screen[Any], renderable: RenderableType | None) -> None:
        display(screen, renderable)
        if renderable is None:
            return
        if encode and isinstance(renderable, CompositorUpdate):
            renderable.render_segments(probe.app.console)  # what a terminal driver would encode and write
        probe.painted()

    with (patch.object(StreamText, "_render_text", _render_text),
          patch.object(StreamText, "render_lines", _render_lines),
          patch.object(PromptInput, "render_lines", _prompt_lines),
          patch.object(AssistantText, "push", _push),
          patch.object(probe.app, "_display", _display)):
        yield


TYPED_TEXT = "the quick brown fox jumps over the lazy dog "


class Typist:
    """Types into the prompt like a person at a terminal, and stamps when each character shows.

    A thread posts one `events.Key` every `period` seconds through the app's driver (`process_message`,
    exactly what Textual's Linux driver does from its input thread), so a key arrives on time however
    busy the event loop is, and the time it waits in the app's queue counts. (`pilot.press` would wait for
    the app to finish each key before sending the next: a stalled app would type slower, hiding its lag.)
    A key is echoed when a frame that drew the prompt holding it reaches the driver (`_display`).
    """

    def __init__(self, app: AgentApp, period: float) -> None:
        self.app = app
        self.period = period
        self.sent: list[float] = []  # when key i arrived
        self.echoed: list[float] = []  # when key i was first on screen
        self.held = 0  # typed characters the prompt held when last drawn
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def text(self) -> str:
        """Everything typed so far."""
        return "".join(TYPED_TEXT[i % len(TYPED_TEXT)] for i in range(len(self.sent)))

    def press(self, key: str, character: str | None = None) -> None:
        """Deliver one key as the terminal driver does."""
        driver = self.app._driver
        assert driver is not None
        driver.process_message(events.Key(key, character))

    def _run(self) -> None:
        start = time.perf_counter()
        i = 0
        while not self._stop.is_set():
            char = TYPED_TEXT[i % len(TYPED_TEXT)]
            self.sent.append(time.perf_counter())
            self.press("space" if char == " " else char, char)
            i += 1
            self._stop.wait(max(0.0, start + i * self.period - time.perf_counter()))

    def start(self) -> None:
        """Start typing."""
        self._thread = threading.Thread(target=self._run, name="typist", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Stop typing (keys already sent are still delivered)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    def drawing(self, text: str) -> None:
        """The compositor draws the prompt holding `text`."""
        self.held = len(text)

    def painted(self, now: float) -> None:
        """A frame went to the driver: the characters the prompt held when drawn are on screen."""
        while len(self.echoed) < min(self.held, len(self.sent)):
            self.echoed.append(now)

    def lags(self, start: float, end: float) -> list[float]:
        """Key -> echo of the keys that arrived between `start` and `end`."""
        return [shown - sent for sent, shown in zip(self.sent, self.echoed, strict=False) if start <= sent <= end]


class StallMeter:
    """A 10 ms repeating asyncio sleep; records (wake time, lateness)."""

    def __init__(self, period: float = 0.010) -> None:
        self.period = period
        self.samples: list[tuple[float, float]] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        while True:
            start = time.perf_counter()
            await asyncio.sleep(self.period)
            now = time.perf_counter()
            self.samples.append((now, now - start - self.period))

    def start(self) -> None:
        """Start ticking."""
        self._task = asyncio.create_task(self._run())

    async def stop(self) -> None:
        """Stop ticking."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task


@dataclass
class StreamFigures:
    """What one headless run measured (times in seconds)."""

    window: float
    events: int
    deltas: int
    cpu: float  # process CPU time (all threads) over the turn
    turn: float  # wall time of the turn
    frames: int
    flush_lags: list[float]
    paint_lags: list[float]
    peak_at: float  # arrival of the worst-lagged delta, from the window start
    peak_flush: float  # how much of the worst lag was spent before the router's flush
    unpainted: int
    stalls: list[float]
    turn_stalls: list[tuple[float, float]]  # (time from the window start, lateness) over the whole turn
    echo_lags: list[float]  # key -> echo, keys that arrived in the window
    keys: int  # keys typed over the whole turn
    keys_lost: bool  # the prompt did not end holding exactly what was typed


def stream_script(subagents: int, chunks: int, chunk_delay_ms: int) -> Script:
    """Main turn 0: `subagents` Task calls; subagent i streams `chunks` chunks of 4+i%5 chars; main turn 1: done."""
    calls = [ToolCall(name="Task", input={"description": f"Stream {i:02d}", "prompt": f"stream bench {i}",
                                          "subagent_type": "explore"}) for i in range(subagents)]
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(text=f"Starting {subagents} streams.",
                                                                        tool_calls=calls))]
    for i in range(subagents):
        size = 4 + i % 5
        steps.append(Step(match=Match(system_contains=f"# Task\nStream {i:02d}"),
                          reply=Reply(text=stream_text(chunks * size, i), chunk_size=size),
                          chunk_delay_ms=chunk_delay_ms))
    steps.append(Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="All streams are done.")))
    return Script(steps=steps)


def markdown_doc(n_chars: int) -> str:
    """A long Markdown answer of about `n_chars`: headings, prose with inline code and links, bullet and
    numbered lists, Python code fences and tables, repeated with varying numbers."""
    sections: list[str] = []
    size, i = 0, 0
    while size < n_chars:
        words = " ".join(WORDS[(i * 5 + k) % len(WORDS)] for k in range(40))
        section = (
            f"## {i + 1}. The {WORDS[i % len(WORDS)]} stage\n\n"
            f"The `{WORDS[(i + 3) % len(WORDS)]}` step reads {words[:160]}, see "
            f"[the docs](https://example.com/{i}) and **{WORDS[(i + 5) % len(WORDS)]}** [bold]not markup[/bold].\n\n"
            + "".join(f"- {WORDS[(i + k) % len(WORDS)]}: {words[k * 7:k * 7 + 50]}\n" for k in range(5))
            + "\n```python\n"
            + "".join(f"def {WORDS[(i + k) % len(WORDS)]}_{k}(value: int) -> int:\n"
                      f"    \"\"\"Step {k}.\"\"\"\n"
                      f"    return value * {k + i} + len('{WORDS[k]}')\n\n" for k in range(4))
            + "```\n\n"
            "| stage | input | output | ms |\n| --- | --- | --- | ---: |\n"
            + "".join(f"| {WORDS[(i + k) % len(WORDS)]} | {k * 3} | {WORDS[(k + 2) % len(WORDS)]} | {k * i + 7} |\n"
                      for k in range(6))
            + "\n"
            + "".join(f"{k + 1}. {words[k * 9:k * 9 + 60]}\n" for k in range(4))
            + "\n"
        )
        sections.append(section)
        size += len(section)
        i += 1
    return "".join(sections)


def markdown_script(n_chars: int, chunk_size: int, chunk_delay_ms: int) -> Script:
    """One main-agent turn that streams a long Markdown answer (no subagents)."""
    return Script(steps=[Step(match=Match(system_contains=MAIN, turn=0),
                              reply=Reply(text=markdown_doc(n_chars), chunk_size=chunk_size),
                              chunk_delay_ms=chunk_delay_ms)])


def split_cpus() -> set[int] | None:
    """Where the fake server runs when the app gets a processor of its own: the model server is another machine
    in real use, and on one shared core its work for twenty streams would be counted as the app's lag. The
    app keeps the first processor it may use; None if it may use only one."""
    if not hasattr(os, "sched_getaffinity"):
        return None
    mine = sorted(os.sched_getaffinity(0))
    if len(mine) < 2:
        return None
    os.sched_setaffinity(0, {mine[0]})
    return set(mine[1:])


async def stream_run(home: Path, script: Script, encode: bool, type_period: float,
                     max_concurrent: int, server_cpus: set[int] | None,
                     diagnosis: Diagnosis | None = None) -> StreamFigures:
    """One headless run of a streaming turn, typing into the prompt every `type_period` s while it runs."""
    workspace = home / "ws"
    workspace.mkdir(parents=True, exist_ok=True)
    with server_process(script, home, cpus=server_cpus) as (base_url, _requests):
        os.environ.update(ANTHROPIC_API_KEY="sk-ant-bench", ANTHROPIC_BASE_URL=base_url)
        env = {**os.environ, "AGENTCLI_LLM__MAX_RETRIES": "0", "AGENTCLI_PERMISSIONS__MODE": "auto",
               "AGENTCLI_TASK_TOOL__MAX_CONCURRENT": str(max_concurrent)}
        settings = load_config(workspace=workspace, env=env).settings
        store = Store.open(home / "bench.db")
        conversation = Conversation(settings, workspace, store=store, approver=Approvals())
        app = AgentApp(conversation, title="agentcli tui bench")
        probe = Probe(app)
        conversation.bus.subscribe(probe)
        stall = StallMeter()
        typist = probe.typist = Typist(app, type_period)
        try:
            with hooks(probe, encode), diagnosis.installed() if diagnosis else contextlib.nullcontext():
                async with app.run_test(headless=True, size=(160, 50)) as pilot:
                    async with asyncio.timeout(30):
                        while not app.turns.sdk_ready.is_set():
                            await pilot.pause(0.02)
                    stall.start()
                    cpu0, wall0 = time.process_time(), time.perf_counter()
                    app.prompt.load_text("stream these things")
                    app.prompt.focus()
                    await pilot.pause()
                    # Not `pilot.press`: it waits until the screen is idle, long after the turn starts.
                    typist.press("enter")
                    while app.prompt.text:
                        await asyncio.sleep(0.005)
                    typist.start()
                    try:
                        # asyncio.sleep, not pilot.pause: that walks every widget and forces a screen update.
                        async with asyncio.timeout(120):
                            while app.turn_running or not probe.delta_times:
                                await asyncio.sleep(0.05)
                    finally:
                        typist.stop()
                    cpu, turn = time.process_time() - cpu0, time.perf_counter() - wall0
                    async with asyncio.timeout(30):  # the last keys and frames
                        while len(typist.echoed) < len(typist.sent):
                            await asyncio.sleep(0.05)
                    await pilot.pause(0.3)
                    await stall.stop()
                    keys_lost = app.prompt.text != typist.text
        finally:
            await conversation.aclose()  # flushes and closes the store
    if len(probe.delta_times) < 2:
        raise RuntimeError("no text streamed")
    first, last = probe.delta_times[0], probe.delta_times[-1]
    lags = [lag for _, lag, _ in probe.paint_lags]
    if diagnosis is not None:
        diagnosis.report(first, last, typist.sent, typist.echoed, probe.frames)
    peak = max(probe.paint_lags, key=lambda p: p[1], default=(first, 0.0, 0.0))
    return StreamFigures(
        window=last - first,
        events=sum(1 for t in probe.events if first <= t <= last),
        deltas=len(probe.delta_times),
        cpu=cpu,
        turn=turn,
        frames=sum(1 for t in probe.frames if first <= t <= last),
        flush_lags=probe.flush_lags,
        paint_lags=lags,
        peak_at=peak[0] - first,
        peak_flush=peak[2],
        unpainted=len(probe.delta_times) - len(lags),
        stalls=[late for t, late in stall.samples if first <= t <= last],
        turn_stalls=[(t - first, late) for t, late in stall.samples],
        echo_lags=typist.lags(first, last),
        keys=len(typist.sent),
        keys_lost=keys_lost,
    )


def ms_stats(values: list[float]) -> str:
    """`p50 x  p99 y  max z` in ms."""
    return (f"p50 {percentile(values, 50) * 1000:6.1f}  p99 {percentile(values, 99) * 1000:6.1f}  "
            f"max {max(values, default=0.0) * 1000:6.1f} ms")


def report_stream(f: StreamFigures) -> None:
    """Print one headless run's figures."""
    print(f"  window {f.window * 1000:7.0f} ms  (first -> last text delta)")
    print(f"  bus events handled     {f.events:6d}  = {f.events / f.window:8.0f} events/s"
          f"  ({f.deltas} text deltas = {f.deltas / f.window:.0f}/s)")
    print(f"  app process CPU        {f.cpu / f.turn * 100:5.0f} % of one core over the {f.turn:.1f} s turn"
          f"  ({f.frames} frames painted in the window = {f.frames / f.window:.0f} fps)")
    print(f"  arrival -> flushed to widget   {ms_stats(f.flush_lags)}")
    print(f"  arrival -> painted frame       {ms_stats(f.paint_lags)}"
          f"  (peak: arrived at +{f.peak_at * 1000:.0f} ms, "
          f"{f.peak_flush * 1000:.0f} ms of it before the flush)")
    print(f"  deltas never painted (their block was off screen, or collapsed to its result first): {f.unpainted}")
    print(f"  event-loop stall (10 ms timer lateness, {len(f.stalls)} ticks)  {ms_stats(f.stalls)}")
    at, worst_stall = max(f.turn_stalls, key=lambda s: s[1], default=(0.0, 0.0))
    print(f"  same over the whole turn ({len(f.turn_stalls)} ticks, incl. dispatch, collapse, answer)"
          f"  max {worst_stall * 1000:.1f} ms at {at * 1000:+.0f} ms")
    print(f"  keystroke -> echo in the prompt ({len(f.echo_lags)} keys typed while streaming)  {ms_stats(f.echo_lags)}"
          f"  -> {'OK' if percentile(f.echo_lags, 99) <= 0.050 else 'OVER'} (issue 12: p99 <= 50 ms)")
    print(f"  every key landed in the prompt, in order ({f.keys} typed over the turn): "
          + ("no — KEYS LOST OR REORDERED" if f.keys_lost else "yes"))


# --- part 2: launch in tmux ------------------------------------------------------------------------


class Tmux:
    """A private tmux server (own socket) for this bench; killed at the end."""

    def __init__(self) -> None:
        self.socket = f"agentcli-bench-{os.getpid()}"
        self.run("new-session", "-d", "-s", "hold", "-x", "80", "-y", "24", "sleep 600")

    def run(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
        """`tmux -L <socket> ARGS`."""
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=check)

    def screen(self, name: str) -> str:
        """The pane's text."""
        return self.run("capture-pane", "-p", "-t", name, check=False).stdout

    def alive(self, name: str) -> bool:
        """Whether the session still exists."""
        return self.run("has-session", "-t", name, check=False).returncode == 0

    def close(self) -> None:
        """Kill this bench's tmux server and remove its socket file."""
        path = self.run("display-message", "-p", "-t", "hold", "#{socket_path}", check=False).stdout.strip()
        self.run("kill-server", check=False)
        if path:
            Path(path).unlink(missing_ok=True)


READY = re.compile(r"·\s+ready\s*$", re.MULTILINE)
STATUS = re.compile(r"model \S+\s+·")  # the status bar, at the bottom of the first frame
TYPED = "hello while loading"


@dataclass
class Launch:
    """One launch, ms from `tmux new-session`."""

    paint: float
    echo: float
    ready: float
    loading_at_paint: bool
    loading_at_echo: bool
    quit: float  # ms from sending Ctrl+Q until the session (the process) is gone


def wait_gone(tmux: Tmux, name: str, timeout: float = 10) -> float:
    """Poll until the session has ended (its process exited); ms waited."""
    start = time.perf_counter()
    while tmux.alive(name) and time.perf_counter() - start < timeout:
        time.sleep(0.002)
    return (time.perf_counter() - start) * 1000


def poll_until(tmux: Tmux, name: str, done: Callable[[str], bool], start: float, timeout: float = 20) -> tuple[
        float, str]:
    """Poll the pane every ~5 ms until `done(screen)`; (ms since start, screen)."""
    deadline = time.perf_counter() + timeout
    while True:
        screen = tmux.screen(name)
        now = time.perf_counter()
        if done(screen):
            return (now - start) * 1000, screen
        if now > deadline:
            raise RuntimeError(f"timed out; the screen was:\n{screen}")
        time.sleep(0.005)


def start_session(tmux: Tmux, name: str, command: str, env: dict[str, str], cwd: Path) -> float:
    """Start `command` in a 150x45 session under a clean env; returns the start time."""
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in env.items() if k.isidentifier())
    start = time.perf_counter()
    tmux.run("new-session", "-d", "-s", name, "-x", "150", "-y", "45", "-c", str(cwd), f"env -i {exports} {command}")
    return start


def launch_once(tmux: Tmux, name: str, command: str, env: dict[str, str], cwd: Path, title: str) -> Launch:
    """Start the TUI, type as soon as it paints, wait for the SDK to be ready, quit."""
    try:
        start = start_session(tmux, name, command, env, cwd)
        paint, first = poll_until(tmux, name, lambda s: title in s and STATUS.search(s) is not None, start)
        tmux.run("send-keys", "-t", name, "-l", TYPED)
        echo, echoed = poll_until(tmux, name, lambda s: TYPED in s, start)
        ready, _ = poll_until(tmux, name, lambda s: READY.search(s) is not None, start)
        tmux.run("send-keys", "-t", name, "C-q")
        gone = wait_gone(tmux, name)
        return Launch(paint, echo, ready, "loading the model SDK" in first, "loading the model SDK" in echoed, gone)
    finally:
        tmux.run("kill-session", "-t", name, check=False)


BARE_TEXTUAL = """
from textual.app import App
from textual.widgets import Static
class Bare(App):
    def compose(self):
        yield Static("BARE-TEXTUAL")
Bare().run()
"""  # Ctrl+Q quits it


def textual_quit_floor(tmux: Tmux, env: dict[str, str], cwd: Path, runs: int) -> float:
    """Median ms from Ctrl+Q to the end of a bare Textual app (its driver's own shutdown) in the same tmux."""
    samples = []
    for i in range(runs):
        name = f"bare{i}"
        start = start_session(tmux, name, f"{shlex.quote(sys.executable)} -c {shlex.quote(BARE_TEXTUAL)}", env, cwd)
        poll_until(tmux, name, lambda s: "BARE-TEXTUAL" in s, start)
        time.sleep(0.3)  # past the first frame
        tmux.run("send-keys", "-t", name, "C-q")
        samples.append(wait_gone(tmux, name))
        tmux.run("kill-session", "-t", name, check=False)
    return statistics.median(samples)


def harness_floor(tmux: Tmux, env: dict[str, str], cwd: Path, runs: int) -> tuple[float, float]:
    """Medians: ms until an `echo` in a new session shows (tmux start-up plus polling), and ms from a key to
    the end of a session whose shell exits on it (tmux's key delivery plus polling for the exit)."""
    shown, gone = [], []
    for i in range(runs):
        name = f"floor{i}"
        start = start_session(tmux, name, "sh -c 'echo HARNESS-FLOOR; read x'", env, cwd)
        shown.append(poll_until(tmux, name, lambda s: "HARNESS-FLOOR" in s, start)[0])
        tmux.run("send-keys", "-t", name, "Enter")
        gone.append(wait_gone(tmux, name))
        tmux.run("kill-session", "-t", name, check=False)
    return statistics.median(shown), statistics.median(gone)


def median_wall(cmd: list[str], runs: int) -> float:
    """Median wall ms of a command (after one warm-up run)."""
    subprocess.run(cmd, capture_output=True, check=True)
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1000


def launch_bench(runs: int) -> None:
    """Part 2: launch to first paint / input / SDK ready in tmux, beside a bare SDK import."""
    print(f"Launch in a real terminal (tmux 150x45), median of {runs} runs, ms from tmux new-session")
    if shutil.which("tmux") is None:
        print("  skipped: tmux is not installed")
        return
    py = sys.executable
    script = shutil.which("agentcli", path=str(Path(py).parent))
    command = shlex.quote(script) if script else f"{shlex.quote(py)} -m agentcli"
    with tempfile.TemporaryDirectory(prefix="tuib") as tmp:
        home = Path(tmp)
        ws = home / "ws"
        ws.mkdir()
        with server_process(Script(steps=[]), home) as (base_url, _requests):
            env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
            env.update(XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"),
                       XDG_CONFIG_HOME=str(home / "config"), XDG_CACHE_HOME=str(home / "cache"),
                       ANTHROPIC_API_KEY="sk-ant-bench", ANTHROPIC_BASE_URL=base_url,
                       TERM="xterm-256color", COLORTERM="truecolor")
            tmux = Tmux()
            try:
                floor, quit_floor = harness_floor(tmux, env, ws, runs)
                textual_quit = textual_quit_floor(tmux, env, ws, runs)
                launches = [launch_once(tmux, f"tui{i}", f"{command} --cwd {shlex.quote(str(ws))}", env, ws,
                                        f"agentcli — {ws}") for i in range(runs + 1)][1:]  # first run warms caches
            finally:
                tmux.close()
    bare = median_wall([py, "-c", "import anthropic"], runs)
    interp = median_wall([py, "-c", "pass"], runs)

    def med(values: list[float]) -> float:
        return statistics.median(values)

    print(f"  harness floor (tmux + polling, `echo` in a new session)  {floor:7.1f}")
    print(f"  first paint (title and status bar on screen)             {med([x.paint for x in launches]):7.1f}")
    print(f"  typed input echoed in the prompt                         {med([x.echo for x in launches]):7.1f}")
    print(f"  SDK import done (status bar: ready)                      {med([x.ready for x in launches]):7.1f}")
    print(f"  bare python -c 'import anthropic' (wall)                 {bare:7.1f}   (python -c pass {interp:.1f})")
    print(f"  quit: Ctrl+Q -> process gone                             {med([x.quit for x in launches]):7.1f}   "
          f"(a shell ending on a key {quit_floor:.1f}; a bare Textual app {textual_quit:.1f}; target <= 100)")
    painted_early = sum(x.loading_at_paint for x in launches)
    echoed_early = sum(x.loading_at_echo for x in launches)
    print(f"  first frame showed 'loading the model SDK…': {painted_early}/{len(launches)} runs; "
          f"input echoed while still loading: {echoed_early}/{len(launches)} runs")
    print("  per run (paint / echo / ready / quit): "
          + ", ".join(f"{x.paint:.0f}/{x.echo:.0f}/{x.ready:.0f}/{x.quit:.0f}" for x in launches))


SCENARIOS = ("markdown", "twenty", "five")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--scenarios", default=",".join(SCENARIOS), help=f"comma-separated, of {', '.join(SCENARIOS)}")
    parser.add_argument("--chunks", type=int, default=2000, help="text chunks per subagent (five streams)")
    parser.add_argument("--chunk-delay-ms", type=int, default=1)
    parser.add_argument("--twenty-chunks", type=int, default=600, help="text chunks per subagent (20 streams)")
    parser.add_argument("--twenty-chunk-delay-ms", type=int, default=5)
    parser.add_argument("--markdown-kb", type=int, default=20, help="size of the main agent's Markdown answer")
    parser.add_argument("--markdown-chunk", type=int, default=12, help="characters per Markdown text delta")
    parser.add_argument("--markdown-chunk-delay-ms", type=int, default=3)
    parser.add_argument("--type-every-ms", type=float, default=25, help="one key typed every N ms while streaming")
    parser.add_argument("--stream-runs", type=int, default=1)
    parser.add_argument("--runs", type=int, default=5, help="launches in tmux")
    parser.add_argument("--no-encode", action="store_true", help="headless: skip encoding frames to terminal bytes")
    parser.add_argument("--skip-launch", action="store_true")
    parser.add_argument("--diagnose", action="store_true",
                        help="headless: print slow echoes, gaps between frames and what filled them (tui_diagnose)")
    parser.add_argument("--shared-cpu", action="store_true",
                        help="headless: let the fake server share the app's processor (default: another one)")
    args = parser.parse_args()
    chosen = [name for name in args.scenarios.split(",") if name]
    for name in chosen:
        if name not in SCENARIOS:
            parser.error(f"unknown scenario {name!r}")
    encoded = "" if args.no_encode else ", frames encoded as for a terminal"
    period = args.type_every_ms / 1000
    server_cpus = None if args.shared_cpu else split_cpus()
    if server_cpus:
        encoded += f"; app on CPU {sorted(os.sched_getaffinity(0))[0]}, fake server on CPU {min(server_cpus)}+"
    for name in chosen:
        if name == "markdown":
            size = args.markdown_kb * 1000
            script = markdown_script(size, args.markdown_chunk, args.markdown_chunk_delay_ms)
            title = (f"(a) the main agent streams {len(markdown_doc(size)) / 1000:.1f} KB of Markdown (headings, "
                     f"lists, code fences, tables) in {args.markdown_chunk}-char deltas, "
                     f"{args.markdown_chunk_delay_ms} ms apart")
            concurrent = 5
        elif name == "twenty":
            script = stream_script(20, args.twenty_chunks, args.twenty_chunk_delay_ms)
            title = (f"(b) 20 subagents stream at once, {args.twenty_chunks} chunks of 4-8 chars each, "
                     f"{args.twenty_chunk_delay_ms} ms apart")
            concurrent = 20
        else:
            script = stream_script(SUBAGENTS, args.chunks, args.chunk_delay_ms)
            title = (f"(c) {SUBAGENTS} subagents x {args.chunks} chunks of 4-8 chars, "
                     f"{args.chunk_delay_ms} ms between chunks")
            concurrent = SUBAGENTS
        print(f"Headless, app 160x50{encoded}; a key typed every {args.type_every_ms:g} ms: {title}")
        for run in range(args.stream_runs):
            with tempfile.TemporaryDirectory(prefix="tuis") as tmp:
                home = Path(tmp)
                for var in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
                    os.environ[var] = str(home / var.lower())
                figures = asyncio.run(stream_run(home, script, not args.no_encode, period, concurrent,
                                                server_cpus, Diagnosis() if args.diagnose else None))
            if args.stream_runs > 1:
                print(f" run {run + 1}")
            report_stream(figures)
            if name == "five":
                worst = max(max(figures.paint_lags, default=0.0), max(figures.stalls, default=0.0)) * 1000
                verdict = "OK" if worst <= 100 else "OVER"
                print(f"  SPEC: screen lag <= 100 ms with five streams: worst {worst:.1f} ms -> {verdict}")
    if not args.skip_launch:
        launch_bench(args.runs)


if __name__ == "__main__":
    main()
