"""The log file: an unusable state dir or a failing disk is one warning line, never a traceback."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.logs import LogFileHandler, setup_logging


@pytest.fixture
def restore_logging() -> Iterator[None]:
    root = logging.getLogger("agentcli")
    saved = (list(root.handlers), root.level, root.propagate)
    yield
    for handler in list(root.handlers):
        root.removeHandler(handler)
        handler.close()
    for handler in saved[0]:
        root.addHandler(handler)
    root.setLevel(saved[1])
    root.propagate = saved[2]


def test_state_dir_that_is_a_file_is_one_warning_and_no_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], restore_logging: None
) -> None:
    (tmp_path / "state").write_text("a file\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert setup_logging("INFO", verbose=False) is None
    logging.getLogger("agentcli.test").error("goes nowhere")
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("agentcli: warning: cannot write the log file")


def test_a_failing_write_is_one_warning_then_silence(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    handler = LogFileHandler(tmp_path / "agentcli.log")
    record = logging.LogRecord("agentcli", logging.ERROR, __file__, 1, "text \ud800 here", None, None)
    handler.emit(record)  # a lone surrogate is escaped, not an error
    assert "text \\ud800 here" in (tmp_path / "agentcli.log").read_text()
    assert handler.stream is not None
    handler.stream.close()  # every later write fails, as on a full disk
    handler.emit(record)
    handler.emit(record)
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "cannot write the log file" in err and "Traceback" not in err
