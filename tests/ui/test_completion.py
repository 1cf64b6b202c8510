"""What the prompt completes: the word at the cursor, commands, ranked workspace paths from the walker."""

from __future__ import annotations

from pathlib import Path

from agentcli.ui.completion import PathIndex, command_candidates, path_candidates, rank_paths, token_at


def test_the_token_at_the_cursor() -> None:
    assert token_at("/he", 3) is not None and token_at("/he", 3).kind == "command"  # type: ignore[union-attr]
    assert token_at("/model light", 12) is None  # past the command word: its argument is not completed
    token = token_at("explain @src/au now", 15)
    assert token is not None and (token.kind, token.start, token.end, token.query) == ("path", 8, 15, "src/au")
    assert token_at("user@host", 9) is None
    paren = token_at("(@sr", 4)
    assert paren is not None and paren.query == "sr"
    quoted = token_at('@"my no', 7)
    assert quoted is not None and quoted.query == "my no"
    assert token_at("plain words", 5) is None
    assert token_at("@", 1) is not None and token_at("@", 1).query == ""  # type: ignore[union-attr]


def test_commands_complete_by_prefix_with_their_help() -> None:
    commands = {"help": "this help", "model": "the model", "compact": "compact now", "copy": "copy"}
    assert [c.label for c in command_candidates("co", commands)] == ["/compact", "/copy"]
    (help_,) = command_candidates("HE", commands)
    assert help_.insert == "/help " and help_.detail == "this help"


ENTRIES = sorted([
    "README.md", "src/", "src/auth.py", "src/config.py", "src/deep/", "src/deep/auth_test.py",
    "tests/", "tests/test_auth.py", "docs/my notes.md", "docs/",
])


def test_paths_rank_prefix_then_name_then_substring_then_fuzzy() -> None:
    assert rank_paths("", ENTRIES) == ["README.md", "docs/", "src/", "tests/"]  # the top level
    assert rank_paths("src/", ENTRIES) == ["src/auth.py", "src/config.py", "src/deep/", "src/deep/auth_test.py"]
    assert rank_paths("auth", ENTRIES)[:2] == ["src/auth.py", "src/deep/auth_test.py"]  # names starting with it
    assert "tests/test_auth.py" in rank_paths("auth", ENTRIES)  # containing it
    assert rank_paths("sccfg", ENTRIES) == ["src/config.py"]  # fuzzy: its letters in order
    assert rank_paths("zzz", ENTRIES) == []
    assert len(rank_paths("", [f"f{i}" for i in range(50)], limit=8)) == 8


def test_path_candidates_quote_spaces_and_keep_completing_into_folders() -> None:
    by_label = {c.label: c for c in path_candidates("doc", ENTRIES)}
    assert by_label["docs/"].insert == "@docs/" and not by_label["docs/"].final
    notes = path_candidates("docs/my", ENTRIES)[0]
    assert notes.insert == '@"docs/my notes.md" ' and notes.final


def test_the_index_honours_gitignore_and_hides_what_read_may_not_see(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "a.py").write_text("a")
    (ws / "build").mkdir()
    (ws / "build" / "out.js").write_text("x")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("x")
    (ws / ".gitignore").write_text("build/\n")
    (ws / ".env").write_text("SECRET=1")
    index = PathIndex(ws, hidden=lambda rel: rel == ".env")
    assert index.stale
    entries = index.build()
    assert entries == [".gitignore", "src/", "src/a.py"]
    assert not index.stale
