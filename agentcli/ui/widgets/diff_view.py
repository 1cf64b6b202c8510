"""A unified diff (`agentcli.diffs.FileDiff`) as coloured Textual `Content`, for the approval dialog and the transcript.

Each line shows its old and new line numbers, then `-` / `+` / ` ` and the text: removed lines on red,
added lines on green, hunk headers dim. The code is highlighted with Textual's Pygments highlighter
(`textual.highlight`, MIT over Pygments, BSD), by the file's name; a file Pygments does not know is shown
plain. The file's text is untrusted: every line goes through `terminal_safe`, and everything is built as
`Content` from plain strings, so `[bold]` in a file is shown as written, never read as markup.
"""

from __future__ import annotations

import posixpath
from functools import lru_cache

from textual.content import Content
from textual.highlight import guess_language, highlight

from agentcli.diffs import DiffLine, FileDiff
from agentcli.text import terminal_safe

TAB_SIZE = 4
MAX_HIGHLIGHT_CHARS = 200_000  # past this much text a side of a diff is shown plain (highlighting costs time)

SIGNS = {"removed": "-", "added": "+", "context": " "}
SIGN_STYLES = {"removed": "bold $text-error", "added": "bold $text-success", "context": "$text-muted"}
BACKGROUNDS = {"removed": "on $error-muted", "added": "on $success-muted"}
GUTTER_STYLE = "$text-muted"
HUNK_STYLE = "dim"


def stat_content(diff: FileDiff) -> Content:
    """`+12 −3` in green and red."""
    return Content.assemble((f"+{diff.added}", "$text-success"), " ", (f"\u2212{diff.removed}", "$text-error"))


def diff_title(diff: FileDiff) -> Content:
    """`src/app.py  +12 −3` (`new file` when it creates the file)."""
    parts: list[Content | str | tuple[str, str]] = [(terminal_safe(diff.path), "bold"), "  ", stat_content(diff)]
    if diff.created:
        parts += ["  ", ("new file", "$text-muted")]
    return Content.assemble(*parts)


def safe_line(text: str) -> str:
    """A line of a file as it may be shown: no CR of a CRLF ending, controls and line separators made
    visible, tabs expanded (so each line stays one line, and highlighting keeps its length)."""
    text = terminal_safe(text.removesuffix("\r")).replace("\u2028", "\ufffd").replace("\u2029", "\ufffd")
    return text.expandtabs(TAB_SIZE)


def language_of(path: str) -> str | None:
    """The Pygments language for a file, by its extension (None: unknown, shown plain)."""
    return _language(posixpath.splitext(path)[1].lower())


@lru_cache(maxsize=256)
def _language(extension: str) -> str | None:
    # By the name alone (no code: guessing from the text runs every lexer and is slow and often wrong).
    try:
        language = guess_language("", "file" + extension) if extension else "default"
    except Exception:  # a broken lexer plugin must not stop the dialog
        return None
    return None if language == "default" else language


def highlight_line(text: str, language: str | None) -> Content:
    """One safe line (`safe_line`) highlighted on its own (a long diff drawn line by line as it scrolls)."""
    return _highlighted([text], language)[0]


def _highlighted(lines: list[str], language: str | None) -> list[Content]:
    """Each line highlighted as part of its side of the hunk (so a multi-line string keeps its colour)."""
    code = "\n".join(lines)
    if language is None or not lines or len(code) > MAX_HIGHLIGHT_CHARS:
        return [Content(line) for line in lines]
    content = highlight(code, language=language, tab_size=TAB_SIZE)
    plain = content.plain
    if not code.startswith(plain) or code[len(plain):].strip("\n"):  # not the text given: show it plain
        return [Content(line) for line in lines]
    # Cut at each line's end and after its newline in one pass (slicing line by line costs the spans each time).
    offsets: list[int] = []
    end = -1
    for line in lines:
        end += 1 + len(line)
        offsets += [min(end, len(plain)), min(end + 1, len(plain))]
    pieces = content.divide(offsets)
    return [pieces[2 * k] if 2 * k < len(pieces) else Content() for k in range(len(lines))]


def _hunks(diff: FileDiff) -> list[list[DiffLine]]:
    hunks: list[list[DiffLine]] = []
    for line in diff.lines():
        if line.kind == "hunk":
            hunks.append([])
        hunks[-1].append(line)
    return hunks


@lru_cache(maxsize=32)  # a diff and Content are immutable: a block rebuilt or a line toggled again costs nothing
def diff_content(diff: FileDiff, *, max_lines: int | None = None) -> Content:
    """The diff's lines, numbered and coloured; with `max_lines`, the first of them and `… N more lines`."""
    if not diff.hunks:
        return Content.styled("(no changes)", GUTTER_STYLE)
    language = language_of(diff.path)
    numbers = [n for line in diff.lines() for n in (line.old, line.new) if n is not None]
    width = len(str(max(numbers, default=0)))
    rows: list[Content] = []
    more = diff.omitted
    for hunk in _hunks(diff):
        if max_lines is not None and len(rows) >= max_lines:
            more += len(hunk)  # past the limit: counted, not drawn
            continue
        old_side = [i for i, line in enumerate(hunk) if line.kind in ("context", "removed")]
        new_side = [i for i, line in enumerate(hunk) if line.kind in ("context", "added")]
        texts = {i: safe_line(line.text) for i, line in enumerate(hunk)}
        shown = dict(zip(old_side, _highlighted([texts[i] for i in old_side], language), strict=True))
        shown.update(zip(new_side, _highlighted([texts[i] for i in new_side], language), strict=True))
        for i, line in enumerate(hunk):
            rows.append(diff_row(line, shown.get(i, Content(texts[i])), width))
    if max_lines is not None and len(rows) > max_lines:
        more += len(rows) - max_lines
        rows = rows[:max_lines]
    if more:
        rows.append(Content.styled(f"… {more} more line{'s' if more != 1 else ''}", GUTTER_STYLE))
    return Content("\n").join(rows)


def line_number_width(diff: FileDiff) -> int:
    """How many digits the gutter's line numbers take (the last line a hunk names, on either side)."""
    last = 1
    for hunk in diff.hunks:
        last = max(last, hunk.old_start + hunk.old_count - 1, hunk.new_start + hunk.new_count - 1)
    return len(str(last))


def diff_row(line: DiffLine, text: Content, width: int) -> Content:
    """One row: the old and new line numbers (`width` digits), the sign and `text` (the line, safe and maybe
    highlighted), on the line's colour."""
    if line.kind == "hunk":
        return Content.styled(" " * (2 * width + 2) + line.text, HUNK_STYLE)
    if line.kind == "no_newline":
        return Content.styled(" " * (2 * width + 4) + line.text, f"italic {GUTTER_STYLE}")
    old = str(line.old) if line.old is not None else ""
    new = str(line.new) if line.new is not None else ""
    gutter = Content.styled(f"{old:>{width}} {new:>{width}} ", GUTTER_STYLE)
    row = Content.assemble(gutter, (SIGNS[line.kind] + " ", SIGN_STYLES[line.kind]), text)
    background = BACKGROUNDS.get(line.kind)
    return row.stylize_before(background) if background else row
