"""Fake model tables for the anthropic SDK, so no test depends on which real models its tables list today.

The SDK warns on requests for models in `DEPRECATED_MODELS` (model -> end-of-life date in words) and on
`thinking.type=enabled` for models in `MODELS_TO_WARN_WITH_THINKING_ENABLED`; agentcli reads the same two
tables. A test swaps both for these, in its own process (`use_fake_tables`) or in a CLI subprocess
(`fake_tables_env`: a `sitecustomize` on PYTHONPATH that swaps them at start-up).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

RETIRING = "claude-retiring-7"  # deprecated in the fake table, with a dated id beside it
RETIRING_DATED = "claude-retiring-7-20250101"
END_OF_LIFE = "November 30th, 2026"
ADAPTIVE_ONLY = "claude-adaptive-7"  # wants adaptive thinking in the fake table
DEPRECATED = {RETIRING: END_OF_LIFE, RETIRING_DATED: END_OF_LIFE}
THINKING = [ADAPTIVE_ONLY]


def use_fake_tables(monkeypatch: pytest.MonkeyPatch) -> None:
    """Swap the SDK's tables in this process (the SDK's own checks and agentcli's reading both see them)."""
    from anthropic.resources.messages import messages

    monkeypatch.setattr(messages, "DEPRECATED_MODELS", dict(DEPRECATED))
    monkeypatch.setattr(messages, "MODELS_TO_WARN_WITH_THINKING_ENABLED", list(THINKING))


def fake_tables_env(folder: Path) -> dict[str, str]:
    """PYTHONPATH for a subprocess whose SDK has the fake tables (a `sitecustomize` written into `folder`)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "sitecustomize.py").write_text(
        "from anthropic.resources.messages import messages\n"
        f"messages.DEPRECATED_MODELS = {DEPRECATED!r}\n"
        f"messages.MODELS_TO_WARN_WITH_THINKING_ENABLED = {THINKING!r}\n",
        encoding="utf-8",
    )
    inherited = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([str(folder), *([inherited] if inherited else [])])}
