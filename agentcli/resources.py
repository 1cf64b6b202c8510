"""Locate files shipped with agentcli: the bundled copy in a wheel, else the source checkout."""

from __future__ import annotations

from functools import cache
from pathlib import Path

_PACKAGE_DIR = Path(__file__).resolve().parent
_BUNDLED = _PACKAGE_DIR / "_bundled"
_CHECKOUT = _PACKAGE_DIR.parent


@cache
def resource_path(name: str) -> Path:
    """Path of a top-level shipped resource (`prompts`, `default_config.toml`)."""
    for base in (_BUNDLED, _CHECKOUT):
        candidate = base / name
        if candidate.exists():
            return candidate
    raise FileNotFoundError(f"agentcli resource {name!r} is missing from {_BUNDLED} and {_CHECKOUT}")


def default_config_path() -> Path:
    """The lowest configuration layer."""
    return resource_path("default_config.toml")


def prompts_dir() -> Path:
    """Folder of bundled prompt files."""
    return resource_path("prompts")
