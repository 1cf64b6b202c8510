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
    defs: Mapping[str, Any] = raw.pop("$defs", {})
    schema: dict[str, Any] = _tidy(_without_docstring(raw), defs, ())
    return schema


def _without_docstring(schema: dict[str, Any]) -> dict[str, Any]:
    """A model's own schema without its docstring (a field's description stays with the field)."""
    return {k: v for k, v in schema.items() if k != "description"}


def _tidy(node: Any, defs: Mapping[str, Any], seen: tuple[str, ...]) -> Any:
    if not isinstance(node, dict):
        return node
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        name = ref.removeprefix("#/$defs/")
        if name in seen or name not in defs:
            raise ValueError(f"argument schema: $ref {ref!r} is recursive or missing; it cannot be inlined")
        inlined = _tidy(_without_docstring(defs[name]), defs, (*seen, name))
        rest = _tidy({k: v for k, v in node.items() if k != "$ref"}, defs, seen)
        return {**inlined, **rest}  # the field's own description and default win over the nested model's
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _DROPPED:
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {name: _tidy(sub, defs, seen) for name, sub in value.items()}
        elif key in _SCHEMAS:
            out[key] = _tidy(value, defs, seen)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [_tidy(sub, defs, seen) for sub in value]
        else:
            out[key] = value  # data (default, enum, const, required) or a plain keyword
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
