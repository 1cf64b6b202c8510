"""Reused results: a Task identical to a finished read-only one is answered from its result (`cache`) when
nothing it looked at has changed (`fingerprints`).

Its modules are its face; other packages import their names from `agentcli.subagents`.
"""

__all__ = [
    "cache",
    "fingerprints",
]
