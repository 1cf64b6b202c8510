"""Fixtures for the store tests: a fresh database per test."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.store.db import Store


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    """Where the test's database lives."""
    return tmp_path / "data" / "agentcli.db"


@pytest.fixture
def store(db_path: Path) -> Iterator[Store]:
    """An open store, closed after the test."""
    s = Store.open(db_path)
    yield s
    s.close()
