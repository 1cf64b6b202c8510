"""`diff_view`: a FileDiff as coloured, numbered, highlighted Content, safe for the terminal (no Textual app needed)."""

from __future__ import annotations

from agentcli.diffs import diff_text
from agentcli.ui.widgets.diff_view import diff_content, diff_title, language_of


def _rows(old: str, new: str, path: str = "f.py", **kw: int) -> list[str]:
    return diff_content(diff_text(path, old, new), **kw).plain.split("\n")


def test_each_file_line_stays_one_row() -> None:
    """Line separators, form feeds, CRs and tabs inside a line never make or break rows."""
    old = "a = 1\nb = 'x\u2028y'\nc = '\x0c'\r\nd\t= 4\n"
    new = old.replace("a = 1", "a = 2")
    rows = _rows(old, new, "f.txt")
    assert rows == [
        "    @@ -1,4 +1,4 @@",
        "1   - a = 1",
        "  1 + a = 2",
        "2 2   b = 'x\ufffdy'",
        "3 3   c = '\u240c'",  # the form feed made visible, the CR of CRLF dropped
        "4 4   d   = 4",  # the tab expanded
    ]


def test_code_is_highlighted_by_its_extension_and_unknown_files_are_plain() -> None:
    old = 'def f():\n    """doc\n    more"""\n    return 1\n'
    new = old.replace("return 1", "return 2")
    python = diff_content(diff_text("m.py", old, new))
    styles = {str(span.style) for span in python.spans}
    assert "$text-accent" in styles  # `def` / `return`: keywords
    assert any("italic" in style for style in styles)  # the docstring, across its lines
    plain = diff_content(diff_text("notes.txt", old, new))
    assert not {str(span.style) for span in plain.spans} & {"$text-accent"}
    assert (language_of("a/b.PY"), language_of("README"), language_of("x.txt")) == ("python", None, None)


def test_max_lines_counts_what_is_not_drawn() -> None:
    old = "".join(f"{n}\n" for n in range(100))
    new = "".join(f"{n}\n" if n % 20 else f"x{n}\n" for n in range(100))
    full = _rows(old, new)
    cut = _rows(old, new, max_lines=10)
    assert cut[:10] == full[:10]
    assert cut[10] == f"… {len(full) - 10} more lines"


def test_the_title_names_the_file_and_counts() -> None:
    assert diff_title(diff_text("src/[red]x.py", "", "a\nb\n", created=True)).plain == (
        "src/[red]x.py  +2 \u22120  new file")
    assert diff_content(diff_text("a", "same\n", "same\n")).plain == "(no changes)"
