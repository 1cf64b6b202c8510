"""WebFetch's HTML-to-markdown conversion, run in a child process: `python -P -m agentcli.tools.web.html_worker
MAX_CHARS SECONDS`.

It reads the page (UTF-8) on standard input and writes the length of its markdown in characters, a newline,
and the first MAX_CHARS characters. BeautifulSoup with `html.parser` and markdownify are quadratic on some
markup (`<a <a <a …`) and recurse on deep nesting, so the conversion never runs in agentcli's own process: the
parent (`tools.page_text`) kills this child at its time limit, on cancellation and should agentcli die, and the
child limits its own CPU time to SECONDS besides (so an orphan stops too, where nothing else kills it).
Exit status: 0 done, 3 the markup nests too deep, anything else a failure. Imports only what converting
needs.
"""

from __future__ import annotations

import contextlib
import sys

NESTED_TOO_DEEP = 3
_ADDRESS_SPACE = 2 << 30  # bytes: a page of at most a million characters needs a few hundred MB at worst


def to_markdown(html: str) -> str:
    """An HTML page as markdown (scripts, styles and other non-content dropped)."""
    from bs4 import BeautifulSoup
    from markdownify import MarkdownConverter

    soup = BeautifulSoup(html, "html.parser")
    for element in soup(["script", "style", "noscript", "template", "iframe", "svg", "head"]):
        element.decompose()
    text: str = MarkdownConverter(heading_style="ATX").convert_soup(soup)
    lines = [line.rstrip() for line in text.splitlines()]
    out: list[str] = []
    for line in lines:  # runs of blank lines fold into one
        if line or (out and out[-1]):
            out.append(line)
    return "\n".join(out).strip()


def _limit_self(seconds: int) -> None:
    """CPU time (SIGXCPU, then SIGKILL a second later), memory and no core file (POSIX)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - Windows: the parent's kill is the only bound
        return
    for which, value in ((resource.RLIMIT_CPU, (seconds, seconds + 1)), (resource.RLIMIT_CORE, (0, 0)),
                         (resource.RLIMIT_AS, (_ADDRESS_SPACE, _ADDRESS_SPACE))):
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(which, value)


def main(argv: list[str]) -> int:
    """Convert standard input; the exit status."""
    max_chars, seconds = int(argv[1]), int(argv[2])
    _limit_self(seconds)
    html = sys.stdin.buffer.read().decode("utf-8", errors="replace")
    try:
        text = to_markdown(html)
    except RecursionError:
        return NESTED_TOO_DEEP
    sys.stdout.buffer.write(f"{len(text)}\n".encode() + text[:max_chars].encode("utf-8", errors="replace"))
    sys.stdout.buffer.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
