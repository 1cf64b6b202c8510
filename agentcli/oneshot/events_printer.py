"""`--output-format events`: agentcli's own typed events, a JSON line each, then the result object."""

from __future__ import annotations

import json

from agentcli.events import Event
from agentcli.oneshot.json_printer import JsonPrinter
from agentcli.oneshot.printer_base import scrubbed


class EventsPrinter(JsonPrinter):
    """`--output-format events`: agentcli's own typed events, one JSON line each (`kind`; a subagent's
    wrapped in `subagent_event` with its task id), then the final result object."""

    def __call__(self, event: Event) -> None:
        super().__call__(event)
        try:
            line = event.model_dump_json()
        except ValueError:  # text that is not valid Unicode (a lone surrogate from the model): U+FFFD
            line = json.dumps(scrubbed(event.model_dump(mode="json")), ensure_ascii=False)
        self.write_line(line)
