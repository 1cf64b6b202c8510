"""The one-shot printer for each `--output-format`: text, json (one final result object), stream-json
(Claude Code's line shapes) and events (agentcli's own typed events, a line each)."""

from __future__ import annotations

from typing import TextIO

from agentcli.oneshot.events_printer import EventsPrinter
from agentcli.oneshot.json_printer import JsonPrinter
from agentcli.oneshot.printer_base import Printer
from agentcli.oneshot.stream_json_printer import StreamJsonPrinter
from agentcli.oneshot.text_printer import TextPrinter


def make_printer(fmt: str, out: TextIO, err: TextIO, *, verbose: bool = False, partial: bool = False,
                 permission_mode: str = "") -> Printer:
    """The printer for `--output-format` (`partial`: stream-json's `--include-partial-messages`)."""
    if fmt == "json":
        return JsonPrinter(out, err, verbose=verbose)
    if fmt == "stream-json":
        return StreamJsonPrinter(out, err, verbose=verbose, partial=partial, permission_mode=permission_mode)
    if fmt == "events":
        return EventsPrinter(out, err, verbose=verbose)
    return TextPrinter(out, err, verbose=verbose)
