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


@pytest.fixture
def read_statements(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every statement run on a store's read connections opened after this fixture (sqlite3's trace callback)."""
    import sqlite3

    from agentcli.store import db

    statements: list[str] = []
    real_connect = db.connect

    def traced(path: Path, *, readonly: bool = False) -> sqlite3.Connection:
        conn = real_connect(path, readonly=readonly)
        if readonly:
            conn.set_trace_callback(statements.append)
        return conn

    monkeypatch.setattr(db, "connect", traced)
    return statements
