"""The per-workspace prompt history file: where it lives, its permissions, its bound, damaged files."""

from __future__ import annotations

import json
import stat
from pathlib import Path

from agentcli.ui.prompt_history import MAX_PROMPT_CHARS, PromptHistory, history_file, search_back


def _env(tmp_path: Path) -> dict[str, str]:
    return {"XDG_STATE_HOME": str(tmp_path / "state")}


def test_the_file_is_per_workspace_under_the_state_dir_and_private(tmp_path: Path) -> None:
    env = _env(tmp_path)
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    path_a, path_b = history_file(tmp_path / "a", env), history_file(tmp_path / "b", env)
    assert path_a != path_b and path_a.parent == tmp_path / "state" / "agentcli" / "history"
    history = PromptHistory.for_workspace(tmp_path / "a", env)
    history.add("fix the tests")
    assert stat.S_IMODE(path_a.stat().st_mode) == 0o600
    assert stat.S_IMODE(path_a.parent.stat().st_mode) == 0o700
    assert PromptHistory.for_workspace(tmp_path / "a", env).entries == ["fix the tests"]
    assert PromptHistory.for_workspace(tmp_path / "b", env).entries == []


def test_a_looser_existing_file_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text(json.dumps({"text": "old"}) + "\n")
    path.chmod(0o644)
    history = PromptHistory(path)
    history.load()
    history.add("new")
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert history.entries == ["old", "new"]


def test_blank_repeated_and_huge_prompts_are_not_recorded(tmp_path: Path) -> None:
    history = PromptHistory(tmp_path / "h.jsonl")
    for text in ("one", "one", "  ", "x" * (MAX_PROMPT_CHARS + 1), "two\nlines", "one"):
        history.add(text)
    assert history.entries == ["one", "two\nlines", "one"]
    assert PromptHistory(history.path).load() == ["one", "two\nlines", "one"]


def test_the_file_stays_bounded(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    history = PromptHistory(path, max_entries=10)
    for i in range(45):
        history.add(f"prompt {i}")
    assert history.entries == [f"prompt {i}" for i in range(35, 45)]
    assert len(path.read_text().splitlines()) <= 20  # rewritten once it holds twice the bound
    assert PromptHistory(path, max_entries=10).load() == history.entries
    assert not list(tmp_path.glob(".*.tmp"))


def test_broken_lines_are_skipped_and_an_unreadable_file_is_an_empty_history(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    path.write_text('{"text": "good"}\nnot json\n{"text": 3}\n["x"]\n{"text": "also good"}\n')
    assert PromptHistory(path).load() == ["good", "also good"]
    folder = tmp_path / "dir.jsonl"
    folder.mkdir()
    history = PromptHistory(folder)
    assert history.load() == []
    history.add("still usable in memory")  # cannot be written: logged, never raised
    assert history.entries == ["still usable in memory"]


def test_other_processes_lines_survive_a_rewrite(tmp_path: Path) -> None:
    path = tmp_path / "h.jsonl"
    ours = PromptHistory(path, max_entries=3)
    theirs = PromptHistory(path, max_entries=3)
    ours.add("a")
    theirs.add("from the other process")
    for text in ("b", "c", "d", "e"):
        ours.add(text)
    assert PromptHistory(path, max_entries=3).load() == ["c", "d", "e"]


def test_search_back_finds_the_newest_match_older_than_a_position() -> None:
    entries = ["git status", "fix the Parser", "run tests", "parse args"]
    assert search_back(entries, "pars") == 3
    assert search_back(entries, "PARS", before=3) == 1
    assert search_back(entries, "pars", before=1) is None
    assert search_back(entries, "") == 3
    assert search_back([], "x") is None
