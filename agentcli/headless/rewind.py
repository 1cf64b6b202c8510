"""The `rewind_files` control request (the SDKs' `rewind_files` / `rewindFiles`): the workspace's files put back as
they were before one user message's turn, from that prompt's checkpoint (the driver hands every user message's
uuid, the one the program sent or the one it replays, to `Conversation.send(message_id=…)`).

As Claude Code does it:

- enabled only when the program asked for file checkpointing: its `enable_file_checkpointing` /
  `enableFileCheckpointing` sets `CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING` for this process
  (`CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING` turns it off again); else "File rewinding is not enabled.";
- the answer is the TypeScript SDK's `RewindFilesResult`: `canRewind`, `error`, `filesChanged` (absolute paths),
  `insertions` and `deletions` (the line counts of what the rewind changes, read from present to checkpoint);
- `dry_run` changes nothing and answers `canRewind: false` with the error when the rewind could not be made;
  a rewind that cannot be made is an error answer (the Python SDK raises it), a uuid without a checkpoint
  "No file checkpoint found for this message.".

agentcli's own rules on top: only files are rewound (the conversation stays as it is); a file the person changed
since the checkpoint is left as it is, since the program cannot be asked, and named in `error` while `canRewind`
stays true (it is not in `filesChanged`); a file that could not be put back is named there too, and only when no
file could be changed is `canRewind` false; while a turn runs or waits to run the answer is an error, and a turn
starts only once a rewind under way has ended.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from agentcli.checkpoints import CheckpointError, file_diff
from agentcli.conversation import RewindError
from agentcli.headless.control import Line, RequestError

if TYPE_CHECKING:
    from agentcli.checkpoints import FileChange
    from agentcli.conversation import Conversation, RewindPreview
    from agentcli.diffs import FileDiff

ENABLE_ENV = "CLAUDE_CODE_ENABLE_SDK_FILE_CHECKPOINTING"
DISABLE_ENV = "CLAUDE_CODE_DISABLE_FILE_CHECKPOINTING"
NOT_ENABLED = "File rewinding is not enabled."  # Claude Code's texts
NOT_FOUND = "No file checkpoint found for this message."
BUSY = "A turn is running: files can be rewound once it has ended (or after an interrupt)."
_OFF = ("", "0", "false", "no", "off")
_KEPT = "left as they are (changed outside the agent's turns since that message)"


def rewinding_enabled(environ: Mapping[str, str]) -> bool:
    """Whether the program asked for file checkpointing, and nothing turned it off."""
    def on(name: str) -> bool:
        return environ.get(name, "").strip().lower() not in _OFF

    return on(ENABLE_ENV) and not on(DISABLE_ENV)


class FileRewinds:
    """The session's `rewind_files` handler; `busy` says whether a turn runs or waits to run."""

    def __init__(self, conversation: Conversation, busy: Callable[[], bool], enabled: bool) -> None:
        self.conversation = conversation
        self.busy = busy
        self.enabled = enabled
        self.lock = asyncio.Lock()  # one rewind at a time, and no turn starts during one

    async def idle(self) -> None:
        """Wait until no rewind is under way (the driver, before it starts a turn)."""
        async with self.lock:
            return

    async def rewind_files(self, request: Line) -> Line:
        """`{"user_message_id", "dry_run"?}`: the `RewindFilesResult`, or an error answer."""
        message_id = request.get("user_message_id")
        if not isinstance(message_id, str) or not message_id:
            raise RequestError("rewind_files needs a user_message_id (the uuid of a user message)")
        dry_run = request.get("dry_run")
        if dry_run is not None and not isinstance(dry_run, bool):
            raise RequestError("rewind_files: dry_run must be true or false")
        async with self.lock:
            work = asyncio.ensure_future(self._rewind(message_id, bool(dry_run)))
            try:
                result = await asyncio.shield(work)
            except asyncio.CancelledError:  # the program withdrew the request: a rewind under way still ends
                await asyncio.wait([work])
                raise
        if result["canRewind"] or dry_run:
            return result
        raise RequestError(str(result.get("error") or "Unexpected error"))

    async def _rewind(self, message_id: str, dry_run: bool) -> Line:
        conversation = self.conversation
        if not self.enabled:
            return _refused(NOT_ENABLED)
        if self.busy() or conversation.busy:
            return _refused(BUSY)
        if not any(row.message_id == message_id for row in conversation.rewind_points()):
            return _refused(NOT_FOUND)
        try:
            preview = await conversation.preview_rewind(message_id, "code")
            kept = [f.path for f in preview.files if f.by_person]
            chosen = [f for f in preview.files if not f.by_person]
            diffs = await asyncio.to_thread(self._diffs, preview, chosen)
            if dry_run:
                return self._result(chosen, diffs, kept, [])
            done = await conversation.rewind(preview, overwrite=False)
        except (RewindError, CheckpointError) as exc:
            return _refused(f"Failed to rewind: {exc}")
        failures = [line for line in done.problems if not any(line.startswith(f"{path}: kept") for path in kept)]
        return self._result(files_changed(chosen, failures), diffs, kept, failures)

    def _diffs(self, preview: RewindPreview, files: list[FileChange]) -> dict[str, FileDiff]:
        """What the rewind does to each file (in a worker thread: it reads blobs from the shadow repository)."""
        if preview.plan is None:
            return {}
        repo, plan = self.conversation.checkpoints.repo, preview.plan
        return {f.path: file_diff(repo, plan, f) for f in files}

    def _result(self, changed: list[FileChange], diffs: dict[str, FileDiff], kept: list[str],
                failures: list[str]) -> Line:
        workspace = self.conversation.workspace
        result: Line = {
            "canRewind": bool(changed) or not failures,
            "filesChanged": [str(workspace / f.path) for f in changed],
            "insertions": sum(diffs[f.path].added for f in changed if f.path in diffs),
            "deletions": sum(diffs[f.path].removed for f in changed if f.path in diffs),
        }
        problems = ([f"{_KEPT}: {', '.join(kept)}"] if kept else []) + (
            [f"not rewound: {'; '.join(failures)}"] if failures else [])
        if problems:
            result["error"] = "; ".join(problems)
        return result


def _refused(error: str) -> Line:
    return {"canRewind": False, "error": error}


def files_changed(chosen: list[FileChange], failures: list[str]) -> list[FileChange]:
    """The chosen files minus those a failure names: a removal names its path, a failed checkout every file it was
    to write."""
    if any(line.startswith("git checkout-index:") for line in failures):
        chosen = [f for f in chosen if f.action == "delete"]
    return [f for f in chosen if not any(line.startswith(f"{f.path}: ") for line in failures)]
