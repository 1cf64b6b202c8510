"""Tool argument schemas as the model reads them: no null alternatives, titles, docstrings or references."""

from __future__ import annotations

import json
from typing import Any

import pytest
from pydantic import BaseModel, Field

from agentcli.subagents.messaging.tools import ListAgentsTool, SendMessageTool
from agentcli.subagents.task_tool import TASK_TOOL_CLASSES, TaskArgs
from agentcli.tools.arg_schema import model_schema
from agentcli.tools.base import ToolArgs
from agentcli.tools.on_demand import ToolSearchTool
from agentcli.tools.registry import ALL_TOOLS

BUILTIN = [*ALL_TOOLS.values(), *TASK_TOOL_CLASSES.values(), SendMessageTool, ListAgentsTool, ToolSearchTool]


def _walk(node: Any, path: str = "") -> list[tuple[str, Any]]:
    """Every (path, schema object) of a schema, nested ones included."""
    found: list[tuple[str, Any]] = []
    if isinstance(node, dict):
        found.append((path, node))
        for key, value in node.items():
            found += _walk(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            found += _walk(value, f"{path}/{i}")
    return found


@pytest.mark.parametrize("cls", BUILTIN, ids=lambda c: c.name)
def test_every_builtin_schema_is_free_of_pydantic_noise(cls: type[Any]) -> None:
    schema = model_schema(cls.args_model)
    raw = cls.args_model.model_json_schema()
    assert "description" not in schema  # the argument model's docstring is for this code's readers
    for path, node in _walk(schema):
        assert "title" not in node or path.endswith("/properties"), path
        assert "$ref" not in node and "$defs" not in node, path
        assert {"type": "null"} not in node.get("anyOf", []), path
        assert node.get("default", 0) is not None, path
    assert schema["type"] == "object" and schema.get("additionalProperties") is False
    assert schema.get("required") == raw.get("required")
    for name, prop in raw["properties"].items():  # each field keeps what it says to the model
        assert schema["properties"][name]["description"] == prop["description"], name
    assert len(json.dumps(schema)) < len(json.dumps(raw))


def test_optional_fields_keep_their_type_and_still_accept_null() -> None:
    schema = model_schema(TaskArgs)
    assert schema["properties"]["timeout_seconds"] == {
        "type": "integer", "description": "Wall-clock limit for this task"}
    assert schema["properties"]["effort"]["enum"] == ["low", "medium", "high"]
    assert schema["properties"]["write_paths"]["items"] == {"type": "string"}
    assert schema["properties"]["run_in_background"]["default"] is False  # a real default stays
    args = TaskArgs.model_validate({"description": "Do the work", "prompt": "p", "subagent_type": "x",
                                    "timeout_seconds": None})
    assert args.timeout_seconds is None  # validation is pydantic's, unchanged


class _Inner(BaseModel):
    """Internal notes about the inner model."""

    title: str = Field(description="A field that happens to be called title")


class _Outer(ToolArgs):
    """Internal notes about the outer model."""

    inner: _Inner = Field(description="What the field is for")
    maybe: _Inner | None = None


def test_nested_models_are_inlined_with_the_fields_own_description() -> None:
    schema = model_schema(_Outer)
    inner = schema["properties"]["inner"]
    assert inner["description"] == "What the field is for"
    assert inner["properties"] == {"title": {"description": "A field that happens to be called title",
                                             "type": "string"}}  # a property named title is data
    assert "Internal notes" not in json.dumps(schema)
    assert schema["properties"]["maybe"]["properties"] == inner["properties"]


class _Node(BaseModel):
    children: list[_Node] = []


class _Tree(ToolArgs):
    root: _Node


def test_a_recursive_model_is_refused_rather_than_inlined_forever() -> None:
    with pytest.raises(ValueError, match="recursive"):
        model_schema(_Tree)
