"""Find and render prompt files (bundled copy first, the repository's prompts/ in a checkout)."""

from __future__ import annotations

import datetime as _dt
from functools import cache
from pathlib import Path

from agentcli.resources import prompts_dir


@cache
def load_prompt(relative: str) -> str:
    """Text of `prompts/<relative>`."""
    return (prompts_dir() / relative).read_text(encoding="utf-8")


def render_system_prompt(workspace: Path, *, today: _dt.date | None = None) -> str:
    """The main agent's system prompt with workspace facts filled in."""
    template = load_prompt("system.md")
    return template.format_map(
        {
            "workspace": str(workspace),
            "date": (today or _dt.date.today()).isoformat(),
        }
    )
