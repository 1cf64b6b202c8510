"""The one binary-file test (tools.sniff), and the Grep worker process that uses it staying light."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from agentcli.tools.files.sniff import SNIFF_BYTES, is_binary_file, looks_binary


def test_a_nul_byte_in_the_first_8_kib_makes_a_file_binary(tmp_path: Path) -> None:
    assert SNIFF_BYTES == 8192
    assert looks_binary(b"text\x00more") and not looks_binary(b"plain text\n")
    assert looks_binary(b"a" * (SNIFF_BYTES - 1) + b"\x00")
    assert not looks_binary(b"a" * SNIFF_BYTES + b"\x00")  # past the sniffed start: text
    late = tmp_path / "late.txt"
    late.write_bytes(b"a" * SNIFF_BYTES + b"\x00")
    early = tmp_path / "early.bin"
    early.write_bytes(b"\x89PNG\x00\x00")
    assert is_binary_file(early) and not is_binary_file(late)
    assert not is_binary_file(tmp_path / "missing")  # unreadable: its reader reports the error


def test_the_grep_worker_imports_neither_pydantic_nor_the_tool_base() -> None:
    probe = (
        "import sys, agentcli.tools.search.grep_worker\n"
        "print([m for m in ('pydantic', 'agentcli.tools.base', 'agentcli.tools.files.read') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.strip() == "[]"
