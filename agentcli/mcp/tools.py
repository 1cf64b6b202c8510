"""A server's tools as agentcli `Tool` classes named `mcp__server__tool`.

Everything a server sends is untrusted: a tool whose name cannot be a provider tool name, or whose input
schema is not a JSON Schema object (or is too large), is left out; descriptions are made terminal-safe,
cut, and cannot forge agentcli's frames. Every MCP tool is `mutating` (it asks, like Bash, unless a rule,
an earlier answer or the mode allows it), whatever its annotations say: `readOnlyHint` may only narrow
(it marks the tool `read_only` and lets calls of one turn run together; it never skips an approval).
Results come back inside an `<mcp_result>` frame, cut to a size.
"""

from __future__ import annotations

import json
from typing import Any, ClassVar, Protocol

from pydantic import ConfigDict

from agentcli.safe_text import scrub, scrub_deep
from agentcli.text import defang_tags, one_line, terminal_safe
from agentcli.tools import Tool, ToolArgs, ToolContext, ToolError, ToolResult, full_name, self_contained

MAX_DESCRIPTION_CHARS = 2000
MAX_SCHEMA_BYTES = 32_000
MAX_RESULT_CHARS = 30_000
_TOOL_NAME_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-")
MAX_TOOL_NAME = 64  # the providers' limit on a tool name


class McpCaller(Protocol):
    """What a tool needs of the session's servers (`agentcli.mcp.manager.McpManager`)."""

    async def call(self, server: str, tool: str, arguments: dict[str, Any], agent: str) -> tuple[str, bool]:
        """Call `tool` of `server`: (the result as text, whether it is an error); raises ToolError when it fails."""
        ...


class McpArgs(ToolArgs):
    """Arguments of an MCP tool: whatever its input schema says (checked against it in `parse`)."""

    model_config = ConfigDict(extra="allow")


class McpTool(Tool[McpArgs]):
    """Base of the generated classes: one per tool of a running server (`tool_class`)."""

    args_model = McpArgs
    mutating = True
    external = True  # listed after agentcli's own tools, whose order (and the prompt cache) it never disturbs
    on_demand = True  # rarely needed: deferred, loaded through ToolSearch ([tools] defer)
    own_time_limit = True  # the manager's [mcp] call_timeout_seconds, not [agent] tool_timeout_seconds
    server: ClassVar[str]
    remote_name: ClassVar[str]
    remote_description: ClassVar[str]
    schema: ClassVar[dict[str, Any]]  # the server's, checked: what calls are validated against
    offered: ClassVar[dict[str, Any]]  # the same made self-contained (`arg_schema.self_contained`): what is sent
    caller: ClassVar[McpCaller]

    def description(self) -> str:
        """The server's description, made safe, with the server named."""
        return f"[MCP server {self.server}] {self.remote_description}".strip()

    def input_schema(self) -> dict[str, Any]:
        """The server's input schema, as checked by `tool_class`, its local references inlined (a server that
        constrains output by the schema cannot follow a `$ref`)."""
        return self.offered

    def parse(self, raw: dict[str, Any]) -> McpArgs:
        """Validate against the server's schema; ToolError listing the problems."""
        import jsonschema

        validator = jsonschema.Draft202012Validator(self.schema)
        problems = [
            f"{'.'.join(str(p) for p in err.absolute_path) or 'arguments'}: {one_line(err.message, 200)}"
            for err in validator.iter_errors(raw)
        ]
        if problems:
            raise ToolError(f"Invalid arguments for {self.name}: {'; '.join(problems[:10])}")
        return McpArgs.model_validate(raw)

    def summary(self, args: McpArgs) -> str:
        """`server: tool {arguments}` on one line (approvals and tool lines name the server)."""
        text = json.dumps(args.model_dump(), ensure_ascii=False, sort_keys=True)
        return terminal_safe(one_line(f"{self.server}: {self.remote_name} {text}", 200))

    def permission_target(self, args: McpArgs) -> str:
        """The arguments as JSON (rules name MCP tools without patterns: `mcp__server` or `mcp__server__tool`)."""
        return json.dumps(args.model_dump(), ensure_ascii=False, sort_keys=True)

    async def run(self, args: McpArgs, ctx: ToolContext) -> ToolResult:
        """Call the tool on its server; the result framed as untrusted data."""
        text, is_error = await self.caller.call(self.server, self.remote_name, args.model_dump(), ctx.agent)
        if len(text) > MAX_RESULT_CHARS:
            text = text[:MAX_RESULT_CHARS] + f"\n[… cut: the result was {len(text)} characters]"
        framed = (
            f'<mcp_result server="{self.server}" tool="{self.remote_name}">\n{defang_tags(text)}\n</mcp_result>'
        )
        return ToolResult(framed, is_error=is_error, metadata={"mcp_server": self.server})


def safe_description(text: object) -> str:
    """A server's description: text only, terminal-safe, no frame tags, cut."""
    clean = defang_tags(terminal_safe(scrub(str(text or ""))))
    return clean if len(clean) <= MAX_DESCRIPTION_CHARS else clean[: MAX_DESCRIPTION_CHARS - 1] + "…"


def _clean_schema(value: Any) -> Any:
    """Every string inside made safe (descriptions reach the model too)."""
    if isinstance(value, str):
        return defang_tags(terminal_safe(value))
    if isinstance(value, dict):
        return {str(k): _clean_schema(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_schema(v) for v in value]
    return value


def check_schema(raw: object) -> dict[str, Any]:
    """The tool's input schema made safe to send; ValueError when it is not a usable JSON Schema object."""
    import jsonschema

    if not isinstance(raw, dict):
        raise ValueError("its input schema is not an object")
    schema: dict[str, Any] = _clean_schema(scrub_deep(raw))
    if schema.get("type", "object") != "object":
        raise ValueError("its input schema does not describe an object")
    if len(json.dumps(schema, ensure_ascii=False)) > MAX_SCHEMA_BYTES:
        raise ValueError(f"its input schema is larger than {MAX_SCHEMA_BYTES} bytes")
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as exc:
        raise ValueError(f"its input schema is not valid JSON Schema ({one_line(exc.message, 120)})") from None
    schema.setdefault("type", "object")
    schema.pop("title", None)
    return schema


def tool_class(
    server: str, name: object, description: object, input_schema: object, read_only_hint: object, caller: McpCaller
) -> type[McpTool]:
    """The `Tool` class of one listed tool; ValueError saying why it is left out."""
    if not isinstance(name, str) or not name or not set(name) <= _TOOL_NAME_CHARS:
        raise ValueError("its name is not letters, digits, '_' and '-'")
    tool_name = full_name(server, name)
    if len(tool_name) > MAX_TOOL_NAME:
        raise ValueError(f"{tool_name} is longer than {MAX_TOOL_NAME} characters")
    schema = check_schema(input_schema)
    read_only = read_only_hint is True
    attrs: dict[str, Any] = {
        "name": tool_name,
        "server": server,
        "remote_name": name,
        "remote_description": safe_description(description),
        "schema": schema,
        "offered": self_contained(schema),
        "caller": caller,
        "read_only": read_only,
        "concurrency_safe": read_only,
    }
    return type(f"McpTool_{server}_{name}", (McpTool,), attrs)
