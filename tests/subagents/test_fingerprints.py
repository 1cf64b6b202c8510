"""Fingerprints of what a subagent looked at: what changes them, what does not, and what they prove."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from agentcli.subagents.result_cache import fingerprints
from agentcli.subagents.result_cache.fingerprints import Target, Unprovable, covers, fingerprint, window_ns


def _settle(path: Path) -> int:
    """Wait past the timestamp granularity of `path`'s filesystem; the time after which it counts as unchanged."""
    time.sleep(window_ns(os.stat(path)) / 1e9 + 0.02)
    return time.time_ns()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "a.py").write_text("alpha = 1\n")
    (root / "src" / "b.py").write_text("beta = 2\n")
    (root / ".git").mkdir()
    (root / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    return root


def tree(raw: str = "") -> Target:
    return Target("tree", raw, time.time_ns())


def test_a_tree_digest_is_stable_and_ignores_what_searches_never_enter(ws: Path) -> None:
    before = fingerprint(ws, tree())
    assert fingerprint(ws, tree()) == before
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/other\n")  # .git is never searched
    (ws / ".git" / "index").write_text("x")
    assert fingerprint(ws, tree()) == before


@pytest.mark.parametrize("change", ["same size, same mtime", "new file deep down", "deleted", "renamed folder"])
def test_a_tree_digest_changes_with_any_file_under_it(ws: Path, change: str) -> None:
    before = fingerprint(ws, tree())
    path = ws / "src" / "pkg" / "a.py"
    if change == "same size, same mtime":  # only the ctime (which nothing can set back) tells
        st = os.stat(path)
        path.write_text("alpha = 9\n")
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        assert os.stat(path).st_size == st.st_size
    elif change == "new file deep down":
        (ws / "src" / "pkg" / "c.py").write_text("")
    elif change == "deleted":
        path.unlink()
    else:
        (ws / "src" / "pkg").rename(ws / "src" / "pkg2")
    assert fingerprint(ws, tree()) != before
    assert fingerprint(ws, tree("src/pkg/a.py")) != fingerprint(ws, tree("src/b.py"))


def test_a_subtree_does_not_see_its_siblings(ws: Path) -> None:
    before = fingerprint(ws, tree("src/pkg"))
    (ws / "src" / "b.py").write_text("beta = 3\n")
    assert fingerprint(ws, tree("src/pkg")) == before
    (ws / "src" / ".gitignore").write_text("*.tmp\n")  # an ignore file above it can change what it shows
    assert fingerprint(ws, tree("src/pkg")) != before


def test_a_listing_changes_with_its_entries_not_their_contents(ws: Path) -> None:
    listing = Target("listing", "src", time.time_ns())
    before = fingerprint(ws, listing)
    (ws / "src" / "pkg" / "a.py").write_text("alpha = 100\n")
    assert fingerprint(ws, listing) == before
    (ws / "src" / "new.py").write_text("")
    assert fingerprint(ws, listing) != before


def test_a_retargeted_symlink_changes_a_read(ws: Path) -> None:
    (ws / "link.py").symlink_to("src/b.py")
    read = Target("file", "link.py", time.time_ns())
    before = fingerprint(ws, read)
    (ws / "link.py").unlink()
    (ws / "link.py").symlink_to("src/pkg/a.py")
    assert fingerprint(ws, read) != before


def test_the_proof_refuses_what_changed_at_or_after_the_call(ws: Path) -> None:
    since = _settle(ws / "src" / "b.py")
    read = Target("file", "src/b.py", since)
    assert fingerprint(ws, read, since_ns=since) == fingerprint(ws, read)
    fingerprint(ws, tree(), since_ns=since)  # the whole tree is older than the call
    (ws / "src" / "b.py").write_text("beta = 5\n")  # after the call started: what it saw is unknown
    with pytest.raises(Unprovable, match="changed while it was looked at"):
        fingerprint(ws, read, since_ns=since)
    with pytest.raises(Unprovable):
        fingerprint(ws, tree("src"), since_ns=since)


def test_a_missing_file_is_proven_missing_by_its_folder(ws: Path) -> None:
    since = _settle(ws / "src" / "b.py")
    missing = Target("file", "src/none.py", since)
    fingerprint(ws, missing, since_ns=since)
    (ws / "src" / "other.py").write_text("")  # its folder changed: it may have existed when the call ran
    with pytest.raises(Unprovable):
        fingerprint(ws, missing, since_ns=since)


def test_a_tree_too_large_to_check_is_unprovable(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fingerprints, "MAX_TREE_ENTRIES", 3)
    with pytest.raises(Unprovable, match="more than 3 entries"):
        fingerprint(ws, tree())
    fingerprint(ws, tree("src/pkg"))  # a smaller one still is


def test_paths_outside_the_workspace_are_fingerprinted_too(ws: Path, tmp_path: Path) -> None:
    """An additional directory's file (or a skill's) is read by the tools: its change is seen like any other, by
    its path or through a workspace symlink to it; and a write there covers it."""
    elsewhere = tmp_path / "elsewhere.txt"
    (ws / "link.txt").symlink_to(elsewhere)
    direct, linked = Target("file", str(elsewhere), time.time_ns()), Target("file", "link.txt", time.time_ns())
    before = fingerprint(ws, direct), fingerprint(ws, linked)
    elsewhere.write_text("x")
    assert fingerprint(ws, direct) != before[0] and fingerprint(ws, linked) != before[1]
    assert covers(direct, ws, elsewhere.resolve()) and covers(linked, ws, elsewhere.resolve())


def test_which_writes_cover_which_looks(ws: Path) -> None:
    now = time.time_ns()
    written = (ws / "src" / "pkg" / "a.py").resolve()
    assert covers(Target("file", "src/pkg/a.py", now), ws, written)
    assert not covers(Target("file", "src/b.py", now), ws, written)
    assert covers(Target("listing", "src/pkg", now), ws, written)
    assert not covers(Target("listing", "src", now), ws, written)
    assert covers(Target("tree", "", now), ws, written)
    assert covers(Target("tree", "src", now), ws, written)
    assert not covers(Target("tree", "docs", now), ws, written)
    assert covers(Target("tree", "src/pkg", now), ws, (ws / ".gitignore").resolve())
