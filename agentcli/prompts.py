"""Find and render prompt files (bundled copy first, the repository's prompts/ in a checkout)."""

from __future__ import annotations

import datetime as _dt
import platform
import subprocess
from functools import cache
from pathlib import Path
from string import Template

from agentcli.resources import prompts_dir

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
INSTRUCTIONS_LIMIT = 20_000  # characters of project instructions put in a system prompt
GIT_STATUS_LINES = 30


@cache
def load_prompt(relative: str) -> str:
    """Text of `prompts/<relative>`."""
    return (prompts_dir() / relative).read_text(encoding="utf-8")


def git_summary(workspace: Path) -> str:
    """`git status --short --branch`, trimmed; a note when the workspace is not a git repository."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(workspace), "status", "--short", "--branch"],
            capture_output=True,
            text=True,
            timeout=3,
        )
    except (OSError, subprocess.TimeoutExpired):
        return "(git status unavailable)"
    if proc.returncode != 0:
        return "(not a git repository)"
    lines = proc.stdout.splitlines()
    if len(lines) > GIT_STATUS_LINES:
        lines = [*lines[:GIT_STATUS_LINES], f"... and {len(lines) - GIT_STATUS_LINES} more changed files"]
    return "\n".join(lines) or "(clean)"


def project_instructions(workspace: Path) -> str:
    """AGENTS.md / CLAUDE.md of the workspace, each under a heading, capped."""
    parts: list[str] = []
    for name in INSTRUCTION_FILES:
        path = workspace / name
        if path.is_file():
            text = path.read_text(encoding="utf-8", errors="replace").strip()
            if len(text) > INSTRUCTIONS_LIMIT:
                text = text[:INSTRUCTIONS_LIMIT] + f"\n[... {name} cut at {INSTRUCTIONS_LIMIT} characters]"
            parts.append(f"## {name}\n\n{text}")
    if not parts:
        return ""
    return "# Project instructions\n\nThe project's own instructions; follow them.\n\n" + "\n\n".join(parts)


def render_system_prompt(
    workspace: Path,
    *,
    instructions: bool | str = True,
    today: _dt.date | None = None,
    template: str = "system.md",
) -> str:
    """The main agent's system prompt with workspace facts and project instructions filled in.

    `instructions`: True reads AGENTS.md / CLAUDE.md, False leaves them out, a string is their text already read.
    """
    text = Template(load_prompt(template)).safe_substitute(
        workspace=str(workspace),
        date=(today or _dt.date.today()).isoformat(),
        platform=f"{platform.system()} {platform.release()}",
        git_status=git_summary(workspace),
    )
    extra = instructions if isinstance(instructions, str) else ""
    if instructions is True:
        extra = project_instructions(workspace)
    return f"{text.rstrip()}\n\n{extra}".rstrip() + "\n" if extra else text
