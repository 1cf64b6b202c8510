"""`process_exit.finish`: Python's ordinary exit unless the work said it is closed, and no thread is left."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from agentcli import process_exit


@pytest.fixture(autouse=True)
def _not_ready(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(process_exit, "_ready", False)
    yield


def test_without_ready_it_is_the_ordinary_exit() -> None:
    assert not process_exit.fast_exit_allowed()
    with pytest.raises(SystemExit) as exc:
        process_exit.finish(3)
    assert exc.value.code == 3


def test_a_running_thread_keeps_the_ordinary_exit() -> None:
    process_exit.ready()
    release = threading.Event()
    worker = threading.Thread(target=release.wait, name="still-working")
    worker.start()
    try:
        assert not process_exit.fast_exit_allowed()
        with pytest.raises(SystemExit):
            process_exit.finish(0)
    finally:
        release.set()
        worker.join()


def test_a_message_code_is_printed_by_python_as_usual() -> None:
    process_exit.ready()
    with pytest.raises(SystemExit) as exc:
        process_exit.finish("agentcli: bad")
    assert exc.value.code == "agentcli: bad"
