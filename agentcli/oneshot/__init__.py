"""`agentcli run`: one prompt run to its end (`run`), and its printers, one per `--output-format`."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.oneshot.printer_base import Printer
    from agentcli.oneshot.printers import make_printer
    from agentcli.oneshot.run import (
        EXIT_INTERRUPTED,
        EXIT_OK,
        OneShotOptions,
        SignalStop,
        error_result,
        pause_gc,
        run_oneshot,
        settle_gc,
        stdin_lines,
        summarize,
    )
    from agentcli.oneshot.stream_json_printer import StreamJsonPrinter

__all__ = [
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "OneShotOptions",
    "Printer",
    "SignalStop",
    "StreamJsonPrinter",
    "error_result",
    "make_printer",
    "pause_gc",
    "run_oneshot",
    "settle_gc",
    "stdin_lines",
    "summarize",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.oneshot.printer_base": ["Printer"],
    "agentcli.oneshot.printers": ["make_printer"],
    "agentcli.oneshot.run": [
        "EXIT_INTERRUPTED",
        "EXIT_OK",
        "OneShotOptions",
        "SignalStop",
        "error_result",
        "pause_gc",
        "run_oneshot",
        "settle_gc",
        "stdin_lines",
        "summarize",
    ],
    "agentcli.oneshot.stream_json_printer": ["StreamJsonPrinter"],
})
