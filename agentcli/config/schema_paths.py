"""Where a key lies in the settings' schema: its type, whether it wants text, the keys a table may hold."""

from __future__ import annotations

import functools
import types
import typing
from typing import Annotated, Any, Literal, Union

from pydantic import BaseModel, SecretStr

from agentcli.config.schema import Settings


def _field_type(model: type[BaseModel], name: str) -> Any:
    field = model.model_fields.get(name)
    return None if field is None else field.annotation


def _is_string_type(annotation: Any) -> bool:
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    origin = typing.get_origin(annotation)
    if origin in (Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return bool(args) and all(_is_string_type(a) for a in args)
    if origin is Literal:
        return all(isinstance(a, str) for a in typing.get_args(annotation))
    return annotation in (str, SecretStr)


def _annotation_at(path: tuple[str, ...]) -> Any:
    """The schema type at `path`, or None where the schema has no such key."""
    annotation: Any = Settings
    for part in path:
        while typing.get_origin(annotation) is Annotated:
            annotation = typing.get_args(annotation)[0]
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            annotation = _field_type(annotation, part)
        elif typing.get_origin(annotation) is dict:
            annotation = typing.get_args(annotation)[1]
        else:
            return None
    return annotation


def expects_string(path: tuple[str, ...]) -> bool:
    """Whether the schema wants a string at `path` (so an env value like `123` stays a string)."""
    return _is_string_type(_annotation_at(path))


@functools.cache
def table_keys(path: tuple[str, ...]) -> frozenset[str] | None:
    """The keys the table at `path` may hold when the schema names them (a section), else None (a free-form
    table such as `[models.aliases]`, a value, or no key of the schema)."""
    annotation = _annotation_at(path)
    while typing.get_origin(annotation) is Annotated:
        annotation = typing.get_args(annotation)[0]
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return frozenset(annotation.model_fields)
    return None


def known_keys(path: tuple[str, ...]) -> list[str]:
    """Names the schema allows inside the table at `path` (for "did you mean" hints)."""
    annotation = _annotation_at(path)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return list(annotation.model_fields)
    return []


def top_level_sections() -> frozenset[str]:
    """The table names at the top of the config."""
    return frozenset(Settings.model_fields)
