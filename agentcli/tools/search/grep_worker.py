"""Grep's fallback search, run as a child process: `python -m agentcli.tools.search.grep_worker SPEC_JSON`.

Used where no `rg` binary exists. It walks like ripgrep (`tools.walk`), skips binary and big
files, reads each file line by line (never whole), matches with Python `re` and prints JSON
lines (`{"p","n","m","t","c"}` per content line, `{"p","k"}` per file count). Python `re` can
backtrack for a very long time on some patterns; that is why this runs in its own process,
which the parent kills at the tool's deadline.
"""

from __future__ import annotations

import json
import re
import sys
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agentcli.tools.files.sniff import is_binary_file
from agentcli.tools.search.walk import Walk


def _lines(path: Path) -> Iterator[str]:
    try:
        with path.open("r", encoding="utf-8", errors="replace", newline=None) as fh:
            for line in fh:
                yield line.rstrip("\n")
    except OSError:
        return


def _content(path: Path, rel: str, regex: re.Pattern[str], context: int, cap: int) -> Iterator[dict[str, Any]]:
    """Matching lines with `context` lines around them, each line once, streaming."""
    before: deque[tuple[int, str]] = deque(maxlen=context)
    after = 0
    for number, line in enumerate(_lines(path), start=1):
        if regex.search(line):
            for n, text in before:
                yield _line(rel, n, False, text, cap)
            before.clear()
            yield _line(rel, number, True, line, cap)
            after = context
        elif after:
            yield _line(rel, number, False, line, cap)
            after -= 1
        elif context:
            before.append((number, line))


def _line(rel: str, number: int, is_match: bool, text: str, cap: int) -> dict[str, Any]:
    cut = len(text) > cap
    return {"p": rel, "n": number, "m": is_match, "t": text[:cap] if cut else text, "c": cut}


def main(argv: list[str]) -> int:
    """Search as `argv[0]` (JSON) says; exit 0 with matches, 1 without, 2 on a bad pattern."""
    spec = json.loads(argv[0])
    try:
        regex = re.compile(spec["pattern"], re.IGNORECASE if spec["case_insensitive"] else 0)
    except re.error as exc:
        print(f"Invalid regular expression {spec['pattern']!r}: {exc}", file=sys.stderr)
        return 2
    workspace, root = Path(spec["workspace"]), Path(spec["root"])
    folder = root if root.is_dir() else root.parent
    out = sys.stdout
    found = False
    for path, _ in Walk(workspace, root, max_file_bytes=spec["max_file_bytes"]).files():
        if is_binary_file(path):  # an unreadable file yields no lines below
            continue
        rel = path.relative_to(folder).as_posix()
        if spec["content"]:
            for item in _content(path, rel, regex, spec["context"], spec["max_line_chars"]):
                out.write(json.dumps(item) + "\n")
                found = True
        else:
            count = sum(1 for line in _lines(path) if regex.search(line))
            if count:
                out.write(json.dumps({"p": rel, "k": count}) + "\n")
                found = True
        out.flush()
    return 0 if found else 1


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (BrokenPipeError, KeyboardInterrupt):
        sys.exit(1)
