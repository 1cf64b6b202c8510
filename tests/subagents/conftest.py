"""Fixtures of the subagent runtime tests: a scripted model (in-process) and harnesses over it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.scripted import ScriptedLLM
from tests.subagents.harness import Harness, Make, build_harness


@pytest.fixture
def server() -> ScriptedLLM:
    """The model every harness of the test talks to: an empty, strict script the test fills in.

    In-process (no SDK, no HTTP); a test about request bodies builds its harness on a FakeLLMServer.
    """
    return ScriptedLLM()


@pytest.fixture
async def make(server: ScriptedLLM, ws: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Make]:
    """Build harnesses in the test's workspace (`ws`, defined by each test module); closes them after."""
    made: list[Harness] = []

    def factory(overrides: dict[str, object] | None = None, **kwargs: Any) -> Harness:
        harness = build_harness(server, ws, monkeypatch, overrides, **kwargs)
        made.append(harness)
        return harness

    yield factory
    for harness in made:
        await harness.aclose()
