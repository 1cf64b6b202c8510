"""Reused results: a Task identical to a finished read-only one is answered from its result (`cache`) when
nothing it looked at has changed (`fingerprints`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.subagents.result_cache.cache import ResultCache

__all__ = [
    "ResultCache",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.subagents.result_cache.cache": ["ResultCache"],
})
