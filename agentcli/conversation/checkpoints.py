"""The session's checkpoints: the workspace's files before and after every prompt (whatever changed them: the file
tools, Bash, subagents, worktree merges), kept in the shadow repository (`agentcli.checkpoints`) with one store
row each; and rewinds to them (`/rewind`, `/undo`, `/redo`, `rewind_files`, `agentcli sessions rewind`).

Every rewind is itself a checkpoint: its "before" is the present it leaves, so `/redo` can go back to it. The
conversation half of a rewind is the composition root's (`Rewinds`): this module only does the files and the rows.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agentcli.checkpoints import (
    CheckpointError,
    FileChange,
    RewindPlan,
    ShadowRepo,
    Skipped,
    Snapshot,
    Span,
    apply_plan,
    plan_rewind,
)
from agentcli.events import EventBus, NoticeEvent
from agentcli.text import one_line

if TYPE_CHECKING:
    from agentcli.agent import Session
    from agentcli.config.schema import CheckpointsSettings
    from agentcli.llm import Message
    from agentcli.store import CheckpointRecord, Store

log = logging.getLogger("agentcli.checkpoints")
Mode = Literal["both", "conversation", "code"]
MODES: tuple[Mode, ...] = ("both", "conversation", "code")
MODE_TEXT: dict[Mode, str] = {"both": "code and conversation", "conversation": "conversation only",
                              "code": "code only"}



class RewindError(Exception):
    """A rewind cannot be made (no such checkpoint, checkpoints off, nothing to redo); `str()` is one line."""


def as_mode(text: str | None) -> Mode:
    """A stored or typed mode as a `Mode` (anything else: `RewindError`)."""
    for mode in MODES:
        if text == mode:
            return mode
    raise RewindError(f"no rewind mode {text!r}: use one of {', '.join(MODES)}")



@dataclass(slots=True)
class RewindPreview:
    """What a rewind to one checkpoint will do, before it does it."""

    point: CheckpointRecord
    mode: Mode
    plan: RewindPlan | None  # None: conversation only
    spans: list[Span] = field(default_factory=list)

    @property
    def files(self) -> list[FileChange]:
        return self.plan.files if self.plan is not None else []

    def lines(self) -> list[str]:
        """The preview as text: one line per file (what happens to it), then what is left alone."""
        out = [f"{_ACTION_MARK[f.action]} {f.path}" + ("  (changed by you since)" if f.by_person else "")
               for f in self.files]
        if self.plan is not None:
            out += [f"  {s.path}: left alone, {s.reason}" for s in self.plan.left_out]
        return out


_ACTION_MARK = {"restore": "M", "recreate": "A", "delete": "D"}


@dataclass(slots=True)
class RewindDone:
    """What a rewind did."""

    mode: Mode
    prompt: str  # the prompt rewound to (the TUI puts it back in the input)
    changed: list[FileChange] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)  # files kept or not changed, one line each
    messages: int = 0  # messages taken out of (or, a redo, put back into) the conversation
    redo: bool = False

    def line(self) -> str:
        """One line for the person."""
        what = "redone" if self.redo else f"rewound ({MODE_TEXT[self.mode]}) to “{one_line(self.prompt, 60)}”"
        parts = []
        if self.mode != "conversation":
            parts.append(f"{len(self.changed)} file{'' if len(self.changed) == 1 else 's'} changed")
        if self.mode != "code":
            verb = "put back" if self.redo else "taken back"
            parts.append(f"{self.messages} message{'' if self.messages == 1 else 's'} {verb}")
        if self.problems:
            count = len(self.problems)
            parts.append("1 file left as it is" if count == 1 else f"{count} files left as they are")
        return f"{what}: " + ", ".join(parts) if parts else what


@dataclass(slots=True)
class _Open:
    """The checkpoint of the prompt or rewind under way."""

    row: int
    before: Snapshot


class PromptCheckpoints:
    """One session tree's checkpoints (the main agent's session id names them)."""

    def __init__(self, settings: CheckpointsSettings, workspace: Path, store: Store | None, bus: EventBus,
                 root: Path | None = None) -> None:
        self.enabled = settings.enabled and store is not None
        self.store = store
        self.bus = bus
        self.repo = ShadowRepo(workspace, root, max_file_bytes=settings.max_file_bytes,
                               max_files=settings.max_files)
        self._open: _Open | None = None
        self._said: set[str] = set()  # the lines already told (a failing checkpoint is said once)

    def _say(self, session: Session, line: str) -> None:
        if line not in self._said:
            self._said.add(line)
            self.bus(NoticeEvent(session_id=session.id, agent=session.agent, message=line))

    async def before(self, session: Session, seq: int, prompt: str, message_id: str | None = None) -> None:
        """The checkpoint of a prompt about to run (its first message will be stored as `seq`). Run as the gate
        of the turn's mutating calls, alongside the model's first request: it never raises."""
        if not self.enabled:
            return
        try:
            self._open = await self._take(session, "prompt", seq, prompt=prompt, message_id=message_id)
        except Exception as exc:  # the store failed: the turn goes on without a checkpoint, and says so
            log.warning("checkpoint not recorded: %s", exc)
            self._say(session, f"checkpoint: not recorded ({one_line(str(exc), 200)})")

    async def after(self, session: Session, gate: asyncio.Future[None] | None = None,
                    rewound_at: str | None = None) -> None:
        """The prompt (or rewind) ended: keep the files as they are now, which changed during it, and the mark a
        rewind of the conversation left on its messages (once the prompt's own checkpoint, `gate`, is done)."""
        if gate is not None:
            await asyncio.gather(gate, return_exceptions=True)
        opened, self._open = self._open, None
        if opened is None or self.store is None:
            return
        try:
            after = await asyncio.to_thread(self.repo.snapshot)
            self.repo.keep(f"{session.id}/{opened.row}-after", after.tree)
            files = [c.path for c in await asyncio.to_thread(self.repo.changes, opened.before.tree, after.tree)]
        except CheckpointError as exc:
            self._say(session, f"checkpoint: {exc}")
            return
        from agentcli.store import finish_checkpoint

        await self.store.write(finish_checkpoint(opened.row, after.tree, files, rewound_at=rewound_at))

    async def _take(self, session: Session, kind: str, seq: int, *, prompt: str = "", message_id: str | None = None,
                    target_id: int | None = None, mode: str | None = None) -> _Open | None:
        assert self.store is not None
        try:
            before = await asyncio.to_thread(self.repo.snapshot)
        except CheckpointError as exc:
            self._say(session, f"checkpoint: {exc}")
            return None
        from agentcli.store import add_checkpoint

        if before.skipped:
            self._say(session, _skipped_line(before.skipped))
        row = await self.store.write(add_checkpoint(
            session.id, seq=seq, kind=kind, workspace=str(self.repo.workspace),
            before_tree=before.tree, prompt=prompt, message_id=message_id, target_id=target_id, mode=mode,
            skipped=[f"{s.path}: {s.reason}" for s in before.skipped]))
        self.repo.keep(f"{session.id}/{row}", before.tree)
        return _Open(row, before)

    # --- reading ------------------------------------------------------------------------------------

    def rows(self, session_id: str) -> list[CheckpointRecord]:
        """Every checkpoint row of the session, oldest first."""
        return self.store.checkpoints(session_id) if self.store is not None else []

    def prompts(self, session_id: str) -> list[CheckpointRecord]:
        """The checkpoints of the session's prompts, oldest first (what a rewind may go back to)."""
        return [row for row in self.rows(session_id) if row.kind == "prompt"]

    def find(self, session_id: str, ref: str) -> CheckpointRecord:
        """A prompt's checkpoint by its message's uuid, by its number among the prompts (1 the first, -1 the last),
        or `last`: the latest prompt still in the conversation (a rewind took the later ones back)."""
        rows = self.rows(session_id)
        prompts = [row for row in rows if row.kind == "prompt"]
        if ref == "last":
            gone = taken_back(rows)
            kept = [row for row in prompts if row.id not in gone]
            if not kept:
                raise RewindError("nothing to rewind: no prompt of this session is left in the conversation")
            return kept[-1]
        for row in prompts:
            if row.message_id is not None and row.message_id == ref:
                return row
        try:
            number = int(ref.removeprefix("#"))
        except ValueError:
            raise RewindError(f"no checkpoint {ref!r} in session {session_id}") from None
        if prompts and (1 <= number <= len(prompts) or -len(prompts) <= number <= -1):
            return prompts[number - 1 if number > 0 else number]
        raise RewindError(f"no prompt {number} in session {session_id} ({len(prompts)} with a checkpoint)")

    async def preview(self, session_id: str, point: CheckpointRecord, mode: Mode) -> RewindPreview:
        """What rewinding to `point` in `mode` will change (the files: a snapshot of the present first)."""
        if mode == "conversation":
            return RewindPreview(point, mode, None)
        if not self.enabled:
            raise RewindError("checkpoints are off ([checkpoints] enabled = false): no code to rewind")
        rows = [row for row in self.rows(session_id) if row.id >= point.id]
        spans = [Span(row.before_tree, row.after_tree) for row in rows]
        target_skipped = tuple(Skipped(*entry.split(": ", 1)) for entry in point.skipped if ": " in entry)
        try:
            present = await asyncio.to_thread(self.repo.snapshot)
            plan = await asyncio.to_thread(plan_rewind, self.repo, spans, present, target_skipped)
        except CheckpointError as exc:
            raise RewindError(str(exc)) from None
        return RewindPreview(point, mode, plan, spans)

    # --- rewinding ----------------------------------------------------------------------------------

    async def rewind_files(self, session: Session, preview: RewindPreview, overwrite: bool | set[str],
                           *, target_id: int | None = None, redo: bool = False) -> RewindDone:
        """Carry out the files of a previewed rewind, as a checkpoint of its own (what was done). The caller takes
        the conversation back, then closes the checkpoint with `after`."""
        done = RewindDone(preview.mode, preview.point.prompt, redo=redo)
        opened = await self._take(session, "rewind", session.next_seq, prompt=preview.point.prompt,
                                  target_id=target_id or preview.point.id, mode="redo" if redo else preview.mode)
        if preview.plan is not None:
            try:
                done.changed, done.problems = await asyncio.to_thread(apply_plan, self.repo, preview.plan,
                                                                      overwrite=overwrite)
            except CheckpointError as exc:
                raise RewindError(str(exc)) from None
        self._open = opened
        return done

    def last_rewind(self, session_id: str) -> CheckpointRecord:
        """The latest rewind not redone yet, when no prompt was sent since it (what `/redo` undoes)."""
        rows = self.rows(session_id)
        redone = {row.target_id for row in rows if row.kind == "rewind" and row.mode == "redo"}
        for row in reversed(rows):
            if row.kind == "prompt":
                break
            if row.mode != "redo" and row.id not in redone:
                return row
        raise RewindError("nothing to redo: no rewind since the last prompt")

    def adopt(self, session_id: str) -> None:
        """Hold the trees of a session's copied rows under its own name (a fork outlives its original)."""
        try:
            for row in self.rows(session_id):
                self.repo.keep(f"{session_id}/{row.id}", row.before_tree)
                if row.after_tree:
                    self.repo.keep(f"{session_id}/{row.id}-after", row.after_tree)
        except CheckpointError as exc:
            log.warning("checkpoints of session %s not kept: %s", session_id, exc)


def taken_back(rows: list[CheckpointRecord]) -> set[int]:
    """The ids of the prompts whose messages a rewind took out of the conversation (and no redo gave back): a
    rewind of the conversation to prompt P takes back P and every prompt before the rewind from P's message on."""
    redone = {row.target_id for row in rows if row.kind == "rewind" and row.mode == "redo"}
    by_id = {row.id: row for row in rows}
    out: set[int] = set()
    for rewind in rows:
        if rewind.kind != "rewind" or rewind.mode not in ("both", "conversation") or rewind.id in redone:
            continue
        target = by_id.get(rewind.target_id or 0)
        if target is None:
            continue
        out |= {row.id for row in rows if row.kind == "prompt" and row.id < rewind.id and row.seq >= target.seq}
    return out


def _skipped_line(skipped: tuple[Skipped, ...]) -> str:
    first = ", ".join(f"{s.path} ({s.reason})" for s in skipped[:3])
    more = f" and {len(skipped) - 3} more" if len(skipped) > 3 else ""
    return f"checkpoint: left out {first}{more}"


def prompt_text(prompt: str | Message) -> str:
    """The person's words of a prompt (a `Message`'s first text block)."""
    if isinstance(prompt, str):
        return prompt
    from agentcli.llm import TextBlock

    return next((block.text for block in prompt.content if isinstance(block, TextBlock)), "")
