"""`--output-format json`: nothing until the end, then one JSON result object."""

from __future__ import annotations

import json

from agentcli.oneshot.printer_base import Printer, RunSummary
from agentcli.text import json_safe


class JsonPrinter(Printer):
    """Prints nothing until the end, then one JSON object (the result line of stream-json too)."""

    def finish(self, summary: RunSummary) -> None:
        data = self.timed(summary).as_dict()
        data["tool_calls"] = list(self.tool_calls.values())
        self.write_line(json.dumps(data, ensure_ascii=False))

    def write_line(self, line: str) -> None:
        """One JSON line on stdout, C1 controls and bidi overrides escaped."""
        self.out.write(json_safe(line) + "\n")
        self.out.flush()
