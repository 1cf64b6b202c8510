"""A tool's argument schema as the model reads it: pydantic's JSON schema without what only pydantic needs.

pydantic writes an optional field (`x: int | None = None`) as `anyOf: [{type: integer}, {type: null}]` with
`default: null`, gives every property and model a `title`, puts an argument model's docstring (written for
this code's readers) in as its `description`, and a nested model as `$defs` + `$ref`. None of it tells a
model anything: an optional field is one that is not `required`, a property's own description says what it
is for, and a nested model reads best where it is used. Every agent's request carries these schemas, so
what is left out is left out of every request. Validation still goes through the pydantic model, which
accepts an explicit null for an optional field as before.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel

_NULL = {"type": "null"}
#: Keywords whose value is a map of names to schemas (the names are data, never keywords).
_SCHEMA_MAPS = frozenset({"properties", "patternProperties", "dependentSchemas"})
#: Keywords whose value is a schema, or a list of schemas.
_SCHEMAS = frozenset({"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else",
                      "unevaluatedItems", "unevaluatedProperties"})
_SCHEMA_LISTS = frozenset({"anyOf", "allOf", "oneOf", "prefixItems"})
#: What pydantic adds that is not for the model: titles, and (on a model's own schema) its docstring.
_DROPPED = frozenset({"title"})


def model_schema(model: type[BaseModel]) -> dict[str, Any]:
    """The JSON schema of `model`'s fields for a model to read: nested models inlined, optional fields
    without the null alternative, no titles, no docstrings (see the module docstring)."""
    raw = model.model_json_schema()
    schema: dict[str, Any] = _Tidy(raw, docstrings=False, null_needs_default=False).node(_without_docstring(raw), ())
    return schema


def self_contained(schema: dict[str, Any]) -> dict[str, Any]:
    """An outside schema (an MCP server's) made self-contained for servers that constrain output by it: its local
    references (`#/$defs/…`, `#/definitions/…`, any `#/` pointer) inlined, titles dropped, and `anyOf [T, null]`
    with `default: null` read as T. A recursive or unresolvable reference leaves the schema as it came (it is
    still valid JSON Schema; only a grammar cannot be built from it)."""
    try:
        tidy: dict[str, Any] = _Tidy(schema, docstrings=True, null_needs_default=True).node(schema, ())
    except ValueError:
        return schema
    return tidy


def _without_docstring(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's own schema without its docstring (a field's description stays with the field)."""
    return {k: v for k, v in schema.items() if k != "description"}


_DEF_TABLES = frozenset({"$defs", "definitions"})


class _Tidy:
    """One schema's tidying: `root` is where its `#/` references point."""

    def __init__(self, root: Mapping[str, Any], *, docstrings: bool, null_needs_default: bool) -> None:
        self.root = root
        self.docstrings = docstrings  # keep an inlined definition's own description
        self.null_needs_default = null_needs_default  # drop a null alternative only where `default: null` says so

    def resolve(self, ref: str) -> Any:
        """The schema a local reference points at; ValueError when it points nowhere."""
        node: Any = self.root
        for part in ref.removeprefix("#/").split("/"):
            key = part.replace("~1", "/").replace("~0", "~")
            if isinstance(node, Mapping) and key in node:
                node = node[key]
            elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
                node = node[int(key)]
            else:
                raise ValueError(f"schema: $ref {ref!r} points nowhere")
        return node

    def node(self, node: Any, seen: tuple[str, ...]) -> Any:
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            if ref in seen:
                raise ValueError(f"schema: $ref {ref!r} is recursive; it cannot be inlined")
            target = self.resolve(ref)
            if not isinstance(target, dict):
                raise ValueError(f"schema: $ref {ref!r} is not a schema")
            inlined = self.node(target if self.docstrings else _without_docstring(target), (*seen, ref))
            rest = self.node({k: v for k, v in node.items() if k != "$ref"}, seen)
            return {**inlined, **rest}  # the field's own description and default win over the nested model's
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in _DROPPED or key in _DEF_TABLES:
                continue  # titles; the definitions, every reference to them inlined
            if key in _SCHEMA_MAPS and isinstance(value, dict):
                out[key] = {name: self.node(sub, seen) for name, sub in value.items()}
            elif key in _SCHEMAS:
                out[key] = self.node(value, seen)
            elif key in _SCHEMA_LISTS and isinstance(value, list):
                out[key] = [self.node(sub, seen) for sub in value]
            else:
                out[key] = value  # data (default, enum, const, required) or a plain keyword
        if self.null_needs_default and not ("default" in out and out["default"] is None):
            return out
        return _without_null(out)


def _without_null(node: dict[str, Any]) -> dict[str, Any]:
    """`anyOf: [T, {type: null}]` (with `default: null`) as T: the field is optional by not being required."""
    alternatives = node.get("anyOf")
    if not isinstance(alternatives, list) or _NULL not in alternatives:
        return node
    others = [alt for alt in alternatives if alt != _NULL]
    rest = {k: v for k, v in node.items() if k != "anyOf" and not (k == "default" and v is None)}
    if len(others) != 1 or not isinstance(others[0], dict):
        return {**rest, "anyOf": others} if others else rest
    return {**others[0], **rest}
