"""Undecodable text at the boundaries: argv, stdin, printing."""

from __future__ import annotations

import io

from agentcli.safe_text import ERROR_HANDLER, from_argv, from_bytes, scrub, scrub_deep


def test_scrub_replaces_lone_surrogates_only() -> None:
    assert scrub("plain") == "plain"
    assert scrub("a\ud800b\udcffc 😀") == "a\ufffdb\ufffdc 😀"
    assert scrub_deep({"k\ud800": ["x\udc80", ("y", 1)]}) == {"k\ufffd": ["x\ufffd", ("y", 1)]}


def test_argv_and_stdin_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    assert from_argv("\udcff\udcfe bad") == "\ufffd\ufffd bad"  # how Python hands over b"\xff\xfe bad"
    assert from_argv("déjà") == "déjà"
    assert from_bytes(b"ok \xff \xc3\xa9") == "ok \ufffd é"


def test_streams_print_replacement_characters_instead_of_raising() -> None:
    raw = io.BytesIO()
    utf8 = io.TextIOWrapper(raw, encoding="utf-8", errors=ERROR_HANDLER)
    utf8.write("a\ud800b")
    utf8.flush()
    assert raw.getvalue().decode("utf-8") == "a\ufffdb"
    assert "x\ud800→".encode("ascii", ERROR_HANDLER) == b"x??"


def test_scrub_model_copies_only_a_model_that_cannot_be_serialized() -> None:
    from agentcli.llm.base import Message
    from agentcli.safe_text import scrub_model

    fine = Message.user("fine")
    assert scrub_model(fine) is fine
    bad = Message.user("half \ud800 pair")
    assert scrub_model(bad).text() == "half \ufffd pair"
