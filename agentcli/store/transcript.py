"""A session's transcript as a JSONL file in Claude Code's line format, for the hooks that read one (their input's
`transcript_path`): one line per message of the main agent and, marked `isSidechain` with their `agentId`, of
its subagents, each with `uuid`, `parentUuid`, `sessionId`, `cwd`, `timestamp` and the Anthropic-shaped
`message`. agentcli's own record stays the database; this file is written beside it, private to the person
(`$XDG_DATA_HOME/agentcli/transcripts/<session id>.jsonl`, mode 0600), for the sessions that have hooks.
"""

from __future__ import annotations

import json
import logging
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from agentcli import paths
from agentcli.events import Event, MessageAddedEvent, unwrap
from agentcli.stream_json import content_blocks

log = logging.getLogger(__name__)


def transcripts_dir() -> Path:
    """Where the transcripts are written."""
    return paths.data_dir() / "transcripts"


class TranscriptWriter:
    """An event sink that appends each message to its main session's transcript file."""

    def __init__(self, workspace: Path, version: str) -> None:
        self.workspace = str(workspace)
        self.version = version
        self._last: dict[str, str] = {}  # agent session id -> the uuid of its last line (parentUuid)
        self._broken: set[str] = set()  # files that could not be written (said once in the log)

    def path(self, session_id: str) -> str:
        """The transcript file of a main session (the hooks' `transcript_path`)."""
        return str(transcripts_dir() / f"{session_id}.jsonl")

    def __call__(self, event: Event) -> None:
        wrappers, inner = unwrap(event)
        if not isinstance(inner, MessageAddedEvent):
            return
        main = event.session_id  # the outermost wrapper's: the main session's
        line_id = str(uuid.uuid4())
        line: dict[str, Any] = {
            "parentUuid": self._last.get(inner.session_id),
            "isSidechain": bool(wrappers),
            "userType": "external",
            "cwd": self.workspace,
            "sessionId": main,
            "version": self.version,
            "type": inner.message.role,
            "message": {"role": inner.message.role, "content": content_blocks(inner.message)},
            "uuid": line_id,
            "timestamp": datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
        }
        if wrappers:
            line["agentId"] = wrappers[-1].task_id
        self._last[inner.session_id] = line_id
        self._append(main, line)

    def _append(self, session_id: str, line: dict[str, Any]) -> None:
        path = Path(self.path(session_id))
        try:
            paths.ensure_private_dir(path.parent)
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            with os.fdopen(fd, "a", encoding="utf-8") as handle:
                handle.write(json.dumps(line, ensure_ascii=False) + "\n")
        except (OSError, ValueError) as exc:
            if session_id not in self._broken:
                self._broken.add(session_id)
                log.warning("transcript %s not written: %s", path, exc)
