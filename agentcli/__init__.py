"""agentcli: a terminal coding assistant built around delegation to subagents."""

from __future__ import annotations

__all__ = ["__version__"]

__version__ = "0.1.0"
