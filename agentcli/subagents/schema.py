"""A Task call's `output_schema`: compiled once at parse time, applied to model output safely.

The schema comes from a model and is applied to another model's answer, so:
- it never reaches the network or the disk: only local `#...` references (`$ref`, `$dynamicRef`,
  `$recursiveRef`) are accepted, and validation runs on a `referencing` Registry whose retrieve
  never fetches (jsonschema would otherwise fall back to `urlopen` for a remote reference);
- a schema that cannot be compiled (a bad regex, a reference that does not resolve, a reference
  cycle that never ends, nesting too deep) is a parameter error, never an exception later;
- `pattern` / `patternProperties` run on the `regex` engine with a per-match timeout and a total
  budget per check, so `(a|a)+$` against a long model answer cannot freeze the process.
"""

from __future__ import annotations

import contextvars
import json
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

from agentcli.text import one_line

if TYPE_CHECKING:
    from jsonschema.protocols import Validator
    from referencing import Registry

REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef")
PATTERN_TIMEOUT_SECONDS = 0.5  # one regex search
CHECK_BUDGET_SECONDS = 5.0  # every regex search of one check together
_IN_PLACE = ("allOf", "anyOf", "oneOf", "not", "if", "then", "else", "dependentSchemas")
MAX_DEPTH = 64  # nested dicts and lists: deeper schemas are refused before jsonschema recurses into them
_SAMPLES: tuple[Any, ...] = (None, True, 0, 1.5, "", "a", [], [None], {}, {"a": None})

_TOO_DEEP = "cannot be used: it is nested too deeply or its references loop forever"

_deadline: contextvars.ContextVar[float] = contextvars.ContextVar("schema_deadline", default=0.0)


class SchemaCheckError(Exception):
    """The answer could not be checked against the schema (a pattern ran out of time)."""


def _nodes(schema: Any) -> Iterator[tuple[Any, int]]:
    """Every dict and list of the schema, iteratively (no recursion limit), with its depth (the root's is 0)."""
    stack: list[tuple[Any, int]] = [(schema, 0)]
    while stack:
        node, depth = stack.pop()
        yield node, depth
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, (dict, list)))


def _static_problem(schema: dict[str, Any]) -> str | None:
    """References that are not local, `$schema` below the root, regexes that do not compile."""
    import regex

    for node, depth in _nodes(schema):
        if depth > MAX_DEPTH:
            return _TOO_DEEP
        if not isinstance(node, dict):
            continue
        for key in REF_KEYWORDS:
            if key not in node:
                continue
            ref = node[key]
            if not isinstance(ref, str):
                return f"{key} must be a string"
            if not ref.startswith("#"):
                return f"{key} {ref[:200]!r} is not a local reference (only '#...' references are allowed)"
        if "$schema" in node and depth:
            return "$schema is only allowed at the top of the schema"
        patterns = [node["pattern"]] if isinstance(node.get("pattern"), str) else []
        if isinstance(node.get("patternProperties"), dict):
            patterns += [p for p in node["patternProperties"] if isinstance(p, str)]
        for pattern in patterns:
            try:
                regex.compile(pattern)
            except (regex.error, ValueError, OverflowError) as exc:
                return f"invalid regular expression {pattern[:200]!r}: {one_line(exc)}"
    return None


def _no_retrieve(uri: str) -> Any:
    """The Registry's retrieve: nothing outside the schema is ever fetched or read."""
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


def _search(pattern: str, text: str) -> bool:
    import regex

    left = _deadline.get() - time.monotonic()
    if left <= 0:
        raise SchemaCheckError(f"checking the schema's patterns took longer than {CHECK_BUDGET_SECONDS:g}s")
    try:
        return regex.search(pattern, text, timeout=min(PATTERN_TIMEOUT_SECONDS, left)) is not None
    except TimeoutError:
        raise SchemaCheckError(
            f"the schema's pattern {pattern[:100]!r} took too long on a value (over {PATTERN_TIMEOUT_SECONDS:g}s)"
        ) from None


def _pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and not _search(pattern, instance):
        yield ValidationError(f"{one_line(instance)[:200]!r} does not match {pattern!r}")


def _pattern_properties(validator: Any, patterns: dict[str, Any], instance: Any, schema: Any) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in patterns.items():
        for key, value in instance.items():
            if _search(pattern, key):
                yield from validator.descend(value, subschema, path=key, schema_path=pattern)


def _safe_class(schema: dict[str, Any]) -> type[Validator]:
    import jsonschema

    base = jsonschema.validators.validator_for(schema, default=jsonschema.Draft202012Validator)
    keywords = {"pattern": _pattern, "patternProperties": _pattern_properties}
    extended = jsonschema.validators.extend(  # type: ignore[no-untyped-call]
        base, {k: v for k, v in keywords.items() if k in base.VALIDATORS}
    )
    return cast("type[Validator]", extended)


def _dialect_problem(schema: dict[str, Any]) -> str | None:
    from referencing.jsonschema import UnknownDialect, specification_with

    dialect = schema.get("$schema")
    if dialect is None:
        return None
    if not isinstance(dialect, str):
        return "$schema must be a string"
    try:
        specification_with(dialect)
    except UnknownDialect:
        return f"unknown $schema {dialect[:200]!r} (use a JSON Schema draft's URI, or leave it out)"
    return None


def _unresolvable(schema: dict[str, Any], registry: Registry[Any]) -> str | None:
    """A local reference that does not resolve, found by looking every one up (with `$id` scopes), or references
    that loop back to where they started without consuming any of the instance."""
    from referencing.exceptions import Unresolvable
    from referencing.jsonschema import DRAFT202012, specification_with

    spec = specification_with(schema.get("$schema", ""), default=DRAFT202012)
    root = registry.resolver_with_root(spec.create_resource(schema))  # what the validator resolves against
    in_place: dict[int, list[dict[str, Any]]] = {}  # a schema -> the schemas applied to the same instance
    stack: list[tuple[Any, Any]] = [(schema, root)]
    while stack:
        node, resolver = stack.pop()
        if isinstance(node, list):
            stack.extend((child, resolver) for child in node if isinstance(child, (dict, list)))
            continue
        if not isinstance(node, dict):
            continue
        if node is not schema and spec.id_of(node) is not None:
            resolver = resolver.in_subresource(spec.create_resource(node))
        edges = in_place.setdefault(id(node), _applied_in_place(node))
        for key in ("$ref", "$dynamicRef"):
            ref = node.get(key)
            if isinstance(ref, str):
                try:
                    target = resolver.lookup(ref).contents
                except Unresolvable:
                    return f"{key} {ref[:200]!r} does not resolve to a part of this schema"
                if isinstance(target, dict):
                    edges.append(target)
        stack.extend((child, resolver) for child in node.values() if isinstance(child, (dict, list)))
    return _loop_problem(schema, in_place)


def _applied_in_place(node: dict[str, Any]) -> list[dict[str, Any]]:
    """The subschemas `node` applies to the instance itself (not to a part of it)."""
    found: list[dict[str, Any]] = []
    for key in _IN_PLACE:
        value = node.get(key)
        if isinstance(value, list):  # allOf, anyOf, oneOf
            found.extend(v for v in value if isinstance(v, dict))
        elif key == "dependentSchemas" and isinstance(value, dict):  # a schema per property name
            found.extend(v for v in value.values() if isinstance(v, dict))
        elif isinstance(value, dict):  # not, if, then, else
            found.append(value)
    return found


def _loop_problem(schema: dict[str, Any], in_place: dict[int, list[dict[str, Any]]]) -> str | None:
    """A cycle of in-place applications (`{"$ref": "#"}`): validating any instance would never end."""
    done: set[int] = set()
    for start in in_place:
        if start in done:
            continue
        on_path: set[int] = {start}
        path: list[tuple[int, Iterator[dict[str, Any]]]] = [(start, iter(in_place[start]))]
        while path:
            current, children = path[-1]
            child = next(children, None)
            if child is None:
                path.pop()
                on_path.discard(current)
                done.add(current)
                continue
            key = id(child)
            if key in on_path:
                return "cannot be used: its references loop forever"
            if key not in done:
                on_path.add(key)
                path.append((key, iter(in_place.get(key, []))))
    return None


def compile_schema(schema: dict[str, Any]) -> Validator:
    """A validator for `schema`; ValueError (one line, for `Invalid parameters: output_schema: ...`) when unusable."""
    import jsonschema
    from referencing import Registry

    try:
        problem = _dialect_problem(schema) or _static_problem(schema)
        if problem:
            raise ValueError(problem)
        cls = _safe_class(schema)
        try:
            cls.check_schema(schema)
        except jsonschema.SchemaError as exc:
            raise ValueError(f"is not a valid JSON schema: {one_line(exc.message)}") from None
        registry: Registry[Any] = Registry(retrieve=_no_retrieve)  # type: ignore[call-arg]
        validator = cls(schema, registry=registry)
        problem = _unresolvable(schema, registry)
        if problem:
            raise ValueError(problem)
        for sample in _SAMPLES:  # a reference cycle that never ends shows on any instance
            errors(validator, sample)
    except ValueError:
        raise
    except RecursionError:
        raise ValueError(_TOO_DEEP) from None
    except SchemaCheckError as exc:
        raise ValueError(f"cannot be used: {exc}") from None
    except Exception as exc:
        raise ValueError(f"cannot be used: {one_line(exc)[:300]}") from None
    except BaseException as exc:  # a RecursionError met inside rpds' Rust code comes back as pyo3's PanicException
        if type(exc).__module__ != "pyo3_runtime":
            raise
        raise ValueError(_TOO_DEEP) from None
    return validator


def errors(validator: Validator, document: Any) -> list[Any]:
    """Every validation error of `document`, patterns bounded in time (SchemaCheckError past the budget)."""
    token = _deadline.set(time.monotonic() + CHECK_BUDGET_SECONDS)
    try:
        return sorted(validator.iter_errors(document), key=lambda e: [str(p) for p in e.path])
    finally:
        _deadline.reset(token)


def answer_format(schema: dict[str, Any]) -> str:
    """The instruction added to a prompt whose answer must be a JSON document satisfying `schema`."""
    return ("\n\n# Output format\nReply with only a JSON document (no prose, no code fence) that "
            f"satisfies this JSON schema:\n{json.dumps(schema, indent=2)}")


def document_text(text: str) -> str:
    """An answer's JSON document: its text without a code fence around it."""
    body = text.strip()
    if body.startswith("```"):
        body = body.strip("`").removeprefix("json").strip()
    return body
