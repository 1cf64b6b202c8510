"""`python -m agentcli` entry point."""

from __future__ import annotations

from agentcli.cli import entry

if __name__ == "__main__":
    entry()
