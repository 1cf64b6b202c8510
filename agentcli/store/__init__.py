"""SQLite storage: the schema and the one writer thread (`db`), typed records (`records`), the write jobs (`jobs`,
`writes`, `task_writes`), queries, which process holds a row and cancelling what a dead one left (`processes`,
`cancellation`), the `StoreRecorder` that turns events into rows, a session copied for a fork or deleted, checkpoint
rows and rewinds of a conversation, and the JSONL transcript hooks read.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.store.cancellation import INTERRUPTED
    from agentcli.store.checkpoint_rows import (
        CheckpointRecord,
        add_checkpoint,
        finish_checkpoint,
        rewind_messages,
        unrewind_messages,
    )
    from agentcli.store.db import AmbiguousIdError, Store, StoreError
    from agentcli.store.processes import claim_session, own_identity, process_alive, release_session
    from agentcli.store.queries import usage_rollup
    from agentcli.store.recorder import StoreRecorder
    from agentcli.store.records import (
        SessionRecord,
        SpendSums,
        StoredContext,
        TaskRecord,
        ToolCallRecord,
        ToolCount,
        TreeSpend,
    )
    from agentcli.store.session_copy import copy_session
    from agentcli.store.session_delete import delete_session_tree
    from agentcli.store.task_writes import save_task
    from agentcli.store.transcript import TranscriptWriter
    from agentcli.store.writes import add_inherited_messages, add_message

__all__ = [
    "INTERRUPTED",
    "AmbiguousIdError",
    "CheckpointRecord",
    "SessionRecord",
    "SpendSums",
    "Store",
    "StoreError",
    "StoreRecorder",
    "StoredContext",
    "TaskRecord",
    "ToolCallRecord",
    "ToolCount",
    "TranscriptWriter",
    "TreeSpend",
    "add_checkpoint",
    "add_inherited_messages",
    "add_message",
    "claim_session",
    "copy_session",
    "delete_session_tree",
    "finish_checkpoint",
    "own_identity",
    "process_alive",
    "release_session",
    "rewind_messages",
    "save_task",
    "unrewind_messages",
    "usage_rollup",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.store.cancellation": ["INTERRUPTED"],
    "agentcli.store.checkpoint_rows": [
        "CheckpointRecord", "add_checkpoint", "finish_checkpoint", "rewind_messages", "unrewind_messages",
    ],
    "agentcli.store.db": ["AmbiguousIdError", "Store", "StoreError"],
    "agentcli.store.processes": ["claim_session", "own_identity", "process_alive", "release_session"],
    "agentcli.store.queries": ["usage_rollup"],
    "agentcli.store.recorder": ["StoreRecorder"],
    "agentcli.store.records": [
        "SessionRecord",
        "SpendSums",
        "StoredContext",
        "TaskRecord",
        "ToolCallRecord",
        "ToolCount",
        "TreeSpend",
    ],
    "agentcli.store.session_copy": ["copy_session"],
    "agentcli.store.session_delete": ["delete_session_tree"],
    "agentcli.store.task_writes": ["save_task"],
    "agentcli.store.transcript": ["TranscriptWriter"],
    "agentcli.store.writes": ["add_inherited_messages", "add_message"],
})
