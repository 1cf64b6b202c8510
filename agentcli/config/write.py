"""Saving a setting the person changed in the TUI (the theme, notifications) to their own config file.

Only the user layer (`$XDG_CONFIG_HOME/agentcli/config.toml`) is ever written, never a project's. The file is
edited with tomlkit, so the person's comments, order and formatting stay as they were, and replaced atomically
(a temporary file beside it, then a rename): a crash never leaves half a config.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from agentcli.config.layers import ConfigError, dotted, read_config_text
from agentcli.paths import ensure_private_dir, user_config_file


class SaveError(Exception):
    """A setting could not be saved; the message is one line naming the file."""


def save_user_setting(key: tuple[str, ...], value: str | int | float | bool,
                      env: Mapping[str, str] | None = None) -> Path:
    """Set `key` (e.g. `("ui", "theme")`) to `value` in the user's config file (created if missing); returns
    the file. Raises `SaveError` when the file cannot be read as TOML or written."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    path = user_config_file(env)
    try:
        text = read_config_text(path) if path.exists() else ""
        document = tomlkit.parse(text)
        table = document
        for part in key[:-1]:
            if part not in table:
                table[part] = tomlkit.table()
            table = table[part]
            if not isinstance(table, dict):
                raise SaveError(f"cannot save {dotted(key)}: {dotted(key[:-1])} in {path} is not a table")
        table[key[-1]] = value
    except TOMLKitError as exc:
        raise SaveError(f"cannot save {dotted(key)}: {path} is not valid TOML ({exc})") from None
    except (OSError, ValueError, ConfigError) as exc:
        raise SaveError(f"cannot save {dotted(key)}: {path}: {exc}") from None
    try:
        ensure_private_dir(path.parent)
        fd, tmp = tempfile.mkstemp(prefix=".config.", suffix=".toml", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as out:
                out.write(tomlkit.dumps(document))
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise
    except OSError as exc:
        raise SaveError(f"cannot save {dotted(key)} to {path}: {exc.strerror or exc}") from None
    return path
