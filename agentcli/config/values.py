"""The effective settings' leaves, and a value as messages and `config show` print it: secrets redacted, cut.

Importing this module is cheap: pydantic is imported inside the functions that use it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from agentcli.config.layers import KeyPath, is_secret_key

MAX_VALUE_REPR = 80
_URL_PASSWORD = re.compile(r"(://[^/@:\s]*:)[^/@\s]+@")


def leaves(value: object, path: KeyPath = ()) -> list[tuple[KeyPath, object]]:
    """Every effective leaf of the validated settings (tables recurse, lists are leaves)."""
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        return [leaf for name in type(value).model_fields for leaf in leaves(getattr(value, name), (*path, name))]
    if isinstance(value, dict):
        return [leaf for key, item in value.items() for leaf in leaves(item, (*path, str(key)))]
    if isinstance(value, list) and any(isinstance(item, BaseModel) for item in value):  # [[hooks.Stop]] tables
        return [(path, [item.model_dump(exclude_none=True) if isinstance(item, BaseModel) else item for item in value])]
    return [(path, value)]


def redact(path: KeyPath, value: object) -> object:
    """A copy of `value` with every secret (by key name or type) replaced by `***`."""
    from pydantic import SecretStr

    if (path and is_secret_key(path[-1])) or isinstance(value, SecretStr):
        return "***" if value not in (None, "") else value
    if isinstance(value, Mapping):
        return {k: redact((*path, str(k)), v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact(path, v) for v in value]
    if isinstance(value, str):
        return _URL_PASSWORD.sub(r"\1***@", value)
    return value


def show_value(path: KeyPath, value: object) -> str:
    """`repr` of the redacted value, cut to `MAX_VALUE_REPR` characters."""
    text = repr(redact(path, value))
    return text if len(text) <= MAX_VALUE_REPR else text[: MAX_VALUE_REPR - 3] + "..."
