"""Untrusted text made safe to show or to frame. Bottom layer: standard library only, cheap to import.

`terminal_safe` neutralises what a terminal would act on instead of showing: escape sequences
(ESC, C1 controls such as CSI U+009B), other control characters, carriage returns (which overwrite
a line), lone surrogates, and bidi overrides (which reorder what is shown). Each is replaced by a
visible stand-in, so the text still says that something was there. `json_safe` does the same for
JSON text, losslessly (as `\\uXXXX` escapes). `defang_tags` keeps text that agentcli frames
(`<subagent_result>`, `<system-notice>`, a file the person attached with `@path`, the output of a `!command`)
from closing the frame or forging one.
"""

from __future__ import annotations

import functools
import re

# Control pictures (U+2400 + code) stand in for C0 controls: ESC shows as ␛, CR as ␍, BEL as ␇.
_C0 = [c for c in range(0x20) if c not in (0x09, 0x0A)]
_BIDI = [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]
_TABLE: dict[int, str] = {c: chr(0x2400 + c) for c in _C0}
_TABLE[0x7F] = "\u2421"  # ␡
_TABLE.update(dict.fromkeys(range(0x80, 0xA0), "\ufffd"))  # C1: CSI, OSC, ST... in one code point
_TABLE.update(dict.fromkeys(_BIDI, "\ufffd"))
_TABLE.update(dict.fromkeys(range(0xD800, 0xE000), "\ufffd"))  # lone surrogates cannot be encoded

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_JSON_UNSAFE = re.compile("[\x7f-\x9f\u202a-\u202e\u2066-\u2069\u2028\u2029]")


def terminal_safe(text: str) -> str:
    """`text` with every character a terminal would act on replaced by a visible stand-in; \\n and \\t kept.

    A CR LF line end is an ordinary line end (it overwrites nothing) and becomes LF. One regex search when the
    text is clean (the common case), one `str.translate` otherwise.
    """
    if _UNSAFE.search(text) is None:
        return text
    if "\r\n" in text:
        text = text.replace("\r\n", "\n")
    return text.translate(_TABLE)


def json_safe(text: str) -> str:
    """JSON text (as `json.dumps(..., ensure_ascii=False)` writes it) with DEL, C1 controls, bidi overrides
    and line separators escaped as `\\uXXXX`. JSON escapes C0 controls itself; these characters can only
    occur inside JSON strings, so the result decodes to the same value."""
    if _JSON_UNSAFE.search(text) is None:
        return text
    return _JSON_UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


# --- frames ---------------------------------------------------------------------------------------

# Characters a model may read past (zero-width, joiners, soft hyphen, bidi marks, variation selectors).
_INVISIBLE = (
    "\u00ad\u034f\u061c\u115f\u1160\u17b4\u17b5\u180b-\u180f\u200b-\u200f\u202a-\u202e\u2060-\u206f"
    "\ufe00-\ufe0f\ufeff"
)
_GAP = f"[{_INVISIBLE}]*"
# Things that read as "<": the ASCII one, full-width and small forms, angle brackets, and escaped forms a
# model may decode when it reads text (`\u003c`, `\x3c`, `&#60;`); `&lt;` is the escape used here.
_OPEN = r"(?:[<\uff1c\ufe64\u2329\u3008\u27e8\u2039\u00ab\u02c2\u1438\u276e]|\\u003c|\\x3c|&#0*60;|&#x0*3c;)"
_SEP = rf"(?:[\s/\\\uff0f\u2044\u2215{_INVISIBLE}]|&#0*47;|&#x0*2f;|\\u002f)*"
# Look-alikes of the letters in frame names (full-width forms and common Cyrillic/Greek homoglyphs).
_LOOKALIKE = {
    "a": "аɑα", "b": "Ьв", "c": "сϲ", "e": "еε", "g": "ɡ", "i": "іιı", "l": "ӏ1|ι", "m": "м",
    "n": "пη", "o": "оο0", "r": "г", "s": "ѕ", "t": "т", "u": "υ", "y": "уγ",
}
_WORD_SEP = rf"[\s_\\\-\u2010-\u2015\u2212\ufe63\uff0d\uff3f.:{_INVISIBLE}]*"


def _letter(ch: str) -> str:
    if ch == "_":
        return _WORD_SEP
    fullwidth = chr(ord(ch) - 0x61 + 0xFF41) + chr(ord(ch) - 0x61 + 0xFF21)
    return f"[{re.escape(ch + ch.upper() + fullwidth + _LOOKALIKE.get(ch, ''))}]{_GAP}"


def _tag_pattern(names: tuple[str, ...]) -> re.Pattern[str]:
    words = "|".join("".join(_letter(ch) for ch in name) for name in names)
    return re.compile(rf"{_OPEN}(?P<rest>{_SEP})(?={words})", re.IGNORECASE)


FRAME_NAMES = (
    "subagent_result", "system_notice", "compacted_context", "attached_file", "person_command", "web_page",
    "mcp_result", "agent_message", "web_search",
)


@functools.cache
def _frame_tag() -> re.Pattern[str]:
    """The frame-tag pattern, compiled on first use (~10 ms: a start-up that frames nothing skips it)."""
    return _tag_pattern(FRAME_NAMES)


@functools.cache
def _opening() -> re.Pattern[str]:
    return re.compile(_OPEN, re.IGNORECASE)


def defang_tags(text: str) -> str:
    """`text` safe to put inside an agentcli frame: the `<` of anything that reads as an opening or closing
    `subagent_result` / `system-notice` tag (any case, spacing, slashes, zero-width characters, look-alike
    letters or brackets) becomes `&lt;`, so only the frame's own tags are tags."""
    if _opening().search(text) is None:  # nothing reads as "<": the full pattern (~10 ms to compile) can wait
        return text
    pattern = _frame_tag()
    if pattern.search(text) is None:
        return text
    return pattern.sub(r"&lt;\g<rest>", text)


def one_line(text: object, limit: int | None = None) -> str:
    """`text` on one line (runs of whitespace folded), cut to `limit` characters with `…` when given."""
    line = " ".join(str(text).split())
    return line if limit is None or len(line) <= limit else line[: limit - 1] + "…"
