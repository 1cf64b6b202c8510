"""`agentcli.diffs`: unified diffs as data, with line numbers, counts of the whole change, and a cap."""

from __future__ import annotations

import difflib
import random

import pytest

from agentcli import diffs
from agentcli.diffs import NO_NEWLINE, DiffLine, FileDiff, diff_text, split_lines


def apply(old: str, diff: FileDiff) -> str:
    """Apply a (complete) diff to `old`, checking every context and removed line against it."""
    src, out, pos = split_lines(old), [], 0
    for hunk in diff.hunks:
        start = hunk.old_start - 1
        assert start >= pos
        out += src[pos:start]
        pos = start
        for k, line in enumerate(hunk.lines):
            if line == NO_NEWLINE:
                continue
            ends = not (k + 1 < len(hunk.lines) and hunk.lines[k + 1] == NO_NEWLINE)
            body = line[1:] + ("\n" if ends else "")
            if line[0] in " -":
                assert src[pos] == body
                pos += 1
            if line[0] in " +":
                out.append(body)
    return "".join(out + src[pos:])


def test_one_changed_line_has_its_numbers_and_context() -> None:
    old = "".join(f"line {n}\n" for n in range(1, 21))
    new = old.replace("line 10\n", "line ten\n")
    diff = diff_text("src/a.py", old, new)
    assert (diff.added, diff.removed, diff.stat) == (1, 1, "+1 \u22121")
    (hunk,) = diff.hunks
    assert hunk.header() == "@@ -7,7 +7,7 @@"
    lines = list(diff.lines())
    assert lines[0] == DiffLine("hunk", "@@ -7,7 +7,7 @@", None, None)
    assert DiffLine("removed", "line 10", 10, None) in lines
    assert DiffLine("added", "line ten", None, 10) in lines
    assert lines[1] == DiffLine("context", "line 7", 7, 7)
    assert lines[-1] == DiffLine("context", "line 13", 13, 13)


def test_unified_text_matches_difflib() -> None:
    old = "".join(f"{n}\n" for n in range(40))
    new = old.replace("5\n", "five\n").replace("30\n", "").replace("35\n", "35\nafter 35\n")
    mine = diff_text("f.txt", old, new).unified()
    theirs = "".join(difflib.unified_diff(old.splitlines(True), new.splitlines(True), "a/f.txt", "b/f.txt"))
    assert mine == theirs


def test_numbers_after_an_insertion_shift_on_the_new_side() -> None:
    old = "a\nb\nc\nd\ne\nf\ng\nh\n"
    new = "a\nb\nNEW1\nNEW2\nc\nd\ne\nf\ng\nh\n"
    diff = diff_text("f", old, new)
    by_text = {line.text: line for line in diff.lines()}
    assert by_text["NEW1"] == DiffLine("added", "NEW1", None, 3)
    assert by_text["c"] == DiffLine("context", "c", 3, 5)
    assert diff.hunks[0].header() == "@@ -1,5 +1,7 @@"


def test_new_file_and_emptied_file() -> None:
    created = diff_text("new.md", "", "one\ntwo\n", created=True)
    assert (created.added, created.removed, created.created) == (2, 0, True)
    assert created.hunks[0].header() == "@@ -0,0 +1,2 @@"
    assert created.unified().startswith("--- /dev/null\n+++ b/new.md\n")
    emptied = diff_text("x", "one\n", "")
    assert (emptied.added, emptied.removed) == (0, 1)
    assert emptied.hunks[0].header() == "@@ -1 +0,0 @@"


def test_no_change_has_no_hunks() -> None:
    diff = diff_text("x", "same\n", "same\n")
    assert (diff.added, diff.removed, diff.hunks) == (0, 0, ())


def test_missing_final_newline_is_marked() -> None:
    diff = diff_text("x", "a\nb", "a\nb\n")
    assert diff.hunks[0].lines == (" a", "-b", NO_NEWLINE, "+b")
    assert [line.kind for line in diff.lines()] == ["hunk", "context", "removed", "no_newline", "added"]


def test_only_newline_ends_a_line() -> None:
    """Form feeds and U+2028 are text inside a line, as in the file (str.splitlines would split there)."""
    diff = diff_text("x", "a\x0cb\n", "a\u2028b\n")
    assert diff.hunks[0].lines == ("-a\x0cb", "+a\u2028b")


def test_far_apart_changes_make_separate_hunks() -> None:
    old = "".join(f"{n}\n" for n in range(100))
    new = old.replace("10\n", "ten\n").replace("90\n", "ninety\n")
    diff = diff_text("f", old, new)
    assert [h.header() for h in diff.hunks] == ["@@ -8,7 +8,7 @@", "@@ -88,7 +88,7 @@"]


def test_the_cap_keeps_the_first_lines_and_counts_the_rest() -> None:
    old = "".join(f"old {n}\n" for n in range(1000))
    new = "".join(f"new {n}\n" for n in range(1000))
    diff = diff_text("big.txt", old, new, max_lines=50)
    assert (diff.added, diff.removed) == (1000, 1000)  # counts of the whole change
    assert sum(len(h.lines) for h in diff.hunks) == 50
    assert diff.omitted == 1950
    (hunk,) = diff.hunks
    assert (hunk.old_count, hunk.new_count) == (50, 0)  # the cut hunk's counts are what it keeps
    assert diff.unified().endswith("… 1950 more lines\n")
    later = diff_text("f", "".join(f"{n}\n" for n in range(300)),
                      "".join(f"{n}\n" if n % 50 else f"x{n}\n" for n in range(300)), max_lines=10)
    assert len(later.hunks) == 2 and later.omitted > 0  # whole hunks past the cap are counted, not kept


def test_a_huge_rewrite_is_still_a_correct_diff() -> None:
    old = "".join(f"{n % 7}\n" for n in range(6000))
    new = "".join(f"{n % 11}\n" for n in range(6000))
    diff = diff_text("f", old, new, max_lines=10**9)
    assert apply(old, diff) == new


def test_random_diffs_apply_back() -> None:
    rng = random.Random(12)
    for _ in range(500):
        a = [rng.choice("abcdefg") for _ in range(rng.randint(0, 30))]
        b = list(a)
        for _ in range(rng.randint(0, 6)):
            roll = rng.random()
            if roll < 0.3 and b:
                del b[rng.randrange(len(b))]
            elif roll < 0.6:
                b.insert(rng.randint(0, len(b)), rng.choice("abxyz"))
            elif b:
                b[rng.randrange(len(b))] = rng.choice("xyz")
        old = "\n".join(a) + ("\n" if a and rng.random() < 0.7 else "")
        new = "\n".join(b) + ("\n" if b and rng.random() < 0.7 else "")
        diff = diff_text("f", old, new, context=rng.choice([0, 1, 3]))
        assert apply(old, diff) == new
        signs = [line[0] for hunk in diff.hunks for line in hunk.lines]
        assert (signs.count("+"), signs.count("-")) == (diff.added, diff.removed)


def test_json_round_trip() -> None:
    diff = diff_text("a.py", "x = 1\n", "x = 2\n")
    assert FileDiff.model_validate_json(diff.model_dump_json()) == diff


def test_big_stretches_are_cut_at_unique_lines_and_still_apply(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past MATCH_LIMIT difflib is given only the stretches between lines unique to both sides (patience anchors);
    a stretch without any shows as one replacement. Either way the diff applies back."""
    monkeypatch.setattr(diffs, "MATCH_LIMIT", 16)
    rng = random.Random(7)
    for _ in range(300):
        a = [rng.choice(["x\n", "y\n", *(f"u{n}\n" for n in range(40))]) for _ in range(rng.randint(0, 60))]
        b = list(a)
        for _ in range(rng.randint(0, 8)):
            roll = rng.random()
            if roll < 0.3 and b:
                del b[rng.randrange(len(b))]
            elif roll < 0.6:
                b.insert(rng.randint(0, len(b)), rng.choice(["x\n", "z\n", "new\n"]))
            elif b:
                b[rng.randrange(len(b))] = rng.choice(["y\n", "w\n"])
        old, new = "".join(a), "".join(b)
        diff = diff_text("f", old, new, max_lines=10**6)
        assert apply(old, diff) == new
    unique = "".join(f"line {n}\n" for n in range(100))
    diff = diff_text("f", unique, unique.replace("line 10\n", "line ten\n").replace("line 90\n", "line ninety\n"))
    assert (diff.added, diff.removed, len(diff.hunks)) == (2, 2, 2)  # cut at anchors: still the smallest diff


def test_head_cuts_a_whole_diff_as_the_capped_diff_is_cut() -> None:
    """The approval's whole diff, cut to the transcript's cap, is the diff the run reports."""
    old = "".join(f"line {n}\n" for n in range(300))
    new = "".join(f"line {n}\n" if n % 7 else f"changed {n}\n" for n in range(300)) + "tail"
    whole = diff_text("f.txt", old, new, max_lines=None)
    assert whole.omitted == 0
    for cap in (0, 1, 5, 37, 100, 10_000):
        assert whole.head(cap) == diff_text("f.txt", old, new, max_lines=cap), cap
    assert whole.head(10_000) is whole
