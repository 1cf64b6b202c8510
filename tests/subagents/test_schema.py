"""output_schema compilation and checking: local references only, no fetching, bounded patterns."""

from __future__ import annotations

import urllib.request
from typing import Any

import pytest
from pydantic import ValidationError

from agentcli.subagents import schema as schema_mod
from agentcli.subagents.schema import SchemaCheckError, compile_schema, errors
from agentcli.subagents.supervisor import schema_problem
from agentcli.subagents.task_tool import TaskArgs, invalid_parameters


@pytest.fixture(autouse=True)
def no_urlopen(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Any attempt to open a URL fails the test (jsonschema's own fallback would call urlopen)."""
    calls: list[str] = []

    def refuse(*args: Any, **kwargs: Any) -> Any:
        calls.append(str(args[0]))
        raise AssertionError(f"urlopen called: {args[0]!r}")

    monkeypatch.setattr(urllib.request, "urlopen", refuse)
    return calls


def problem(schema: dict[str, Any]) -> str:
    with pytest.raises(ValueError) as info:
        compile_schema(schema)
    return str(info.value)


@pytest.mark.parametrize(
    ("schema", "expected"),
    [
        ({"$ref": "https://example.com/s.json"}, "$ref 'https://example.com/s.json' is not a local reference"),
        ({"$ref": "file:///etc/passwd"}, "$ref 'file:///etc/passwd' is not a local reference"),
        ({"$ref": "../other.json"}, "$ref '../other.json' is not a local reference"),
        ({"items": {"$ref": "s.json#/x"}}, "$ref 's.json#/x' is not a local reference"),
        ({"$id": "https://evil.example/", "$ref": "x.json"}, "$ref 'x.json' is not a local reference"),
        ({"$dynamicRef": "https://x/y#m"}, "$dynamicRef 'https://x/y#m' is not a local reference"),
        ({"$recursiveRef": "x.json"}, "$recursiveRef 'x.json' is not a local reference"),
        ({"$ref": 7}, "$ref must be a string"),
        ({"properties": {"a": {"$schema": "http://json-schema.org/draft-07/schema#"}}}, "$schema is only allowed"),
        ({"$schema": "https://evil.example/dialect"}, "unknown $schema"),
        ({"$ref": "#/$defs/nope"}, "$ref '#/$defs/nope' does not resolve"),
        ({"properties": {"a": {"$id": "https://evil.example/a", "$ref": "#/nope"}}}, "$ref '#/nope' does not resolve"),
        ({"pattern": "(a"}, "invalid regular expression '(a'"),
        ({"patternProperties": {"(": {}}}, "invalid regular expression '('"),
        ({"$ref": "#"}, "references loop forever"),
        ({"anyOf": [{"$ref": "#/$defs/a"}], "$defs": {"a": {"not": {"$ref": "#"}}}}, "references loop forever"),
        ({"properties": {"a": {"$ref": "#/properties/a"}}}, "references loop forever"),  # found before validating
        ({"dependentSchemas": {"x": {"allOf": [{"$ref": "#"}]}}}, "references loop forever"),
        ({"type": 12}, "is not a valid JSON schema"),
    ],
)
def test_unusable_schemas_are_refused(schema: dict[str, Any], expected: str, no_urlopen: list[str]) -> None:
    assert expected in problem(schema)
    assert no_urlopen == []


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "object", "properties": {"a": {"$ref": "#/$defs/s"}}, "$defs": {"s": {"type": "string"}}},
        {"$schema": "http://json-schema.org/draft-07/schema#", "definitions": {"s": {}},
         "items": {"$ref": "#/definitions/s"}},
        {"$id": "https://example.com/root.json", "$ref": "#/$defs/a", "$defs": {"a": {"type": "integer"}}},
        {"type": "object", "properties": {"child": {"$ref": "#"}}},  # recursion bounded by the instance
        {"$defs": {"n": {"$anchor": "num", "type": "number"}}, "$ref": "#num"},
        {"type": "array", "items": {"type": "string", "pattern": "^[a-z]+$"}},
    ],
)
def test_local_schemas_compile(schema: dict[str, Any]) -> None:
    compile_schema(schema)


def test_recursion_through_properties_checks_deep_documents() -> None:
    schema = {"type": "object", "properties": {"n": {"$ref": "#"}}, "required": ["n"]}
    assert schema_problem('{"n": {"n": {}}}', schema) == "n/n: 'n' is a required property"


def test_task_args_report_the_parameter() -> None:
    with pytest.raises(ValidationError) as info:
        TaskArgs.model_validate(
            {"description": "Get it", "prompt": "p", "subagent_type": "explore",
             "output_schema": {"$ref": "http://127.0.0.1:9/x"}}
        )
    assert invalid_parameters(info.value) == (
        "Invalid parameters: output_schema: $ref 'http://127.0.0.1:9/x' is not a local reference "
        "(only '#...' references are allowed)"
    )


def test_deeply_nested_schema_is_a_parameter_error() -> None:
    nested: dict[str, Any] = {}
    for _ in range(3000):
        nested = {"items": nested}
    assert problem(nested) == "cannot be used: it is nested too deeply or its references loop forever"


def test_catastrophic_pattern_times_out_instead_of_freezing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_mod, "PATTERN_TIMEOUT_SECONDS", 0.05)
    validator = compile_schema({"type": "string", "pattern": "^(a|a)+$"})
    with pytest.raises(SchemaCheckError, match=r"took too long on a value"):
        errors(validator, "a" * 40 + "!")
    assert errors(validator, "aaaa") == []


def test_catastrophic_pattern_property_times_out_too(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(schema_mod, "PATTERN_TIMEOUT_SECONDS", 0.05)
    validator = compile_schema({"type": "object", "patternProperties": {"^(a|a)+$": {"type": "string"}}})
    with pytest.raises(SchemaCheckError):
        errors(validator, {"a" * 40 + "!": 1})


def test_total_pattern_budget_bounds_many_slow_values(monkeypatch: pytest.MonkeyPatch) -> None:
    validator = compile_schema({"type": "array", "items": {"type": "string", "pattern": "a"}})
    monkeypatch.setattr(schema_mod, "CHECK_BUDGET_SECONDS", 0.0)  # spent before the first search
    with pytest.raises(SchemaCheckError, match=r"took longer than 0s"):
        errors(validator, ["a"] * 1000)


def test_nested_plus_pattern_is_answered_by_the_regex_engine() -> None:
    validator = compile_schema({"type": "string", "pattern": "(a+)+$"})
    (error,) = errors(validator, "a" * 40 + "!")
    assert "does not match '(a+)+$'" in error.message


def test_registry_never_retrieves() -> None:
    from referencing.exceptions import NoSuchResource

    with pytest.raises(NoSuchResource):
        schema_mod._no_retrieve("https://example.com/schema.json")
