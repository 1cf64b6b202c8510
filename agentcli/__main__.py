"""`python -m agentcli` entry point."""

from __future__ import annotations

from agentcli.cli import app

if __name__ == "__main__":
    app(prog_name="agentcli")  # usage lines and shell completion (_AGENTCLI_COMPLETE) name the command
