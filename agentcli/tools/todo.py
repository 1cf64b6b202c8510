"""TodoWrite: the agent's own task list (replaced whole on every call)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agentcli.tools.base import TodoItem, Tool, ToolArgs, ToolContext, ToolResult

_MARKS = {"pending": "[ ]", "in_progress": "[~]", "completed": "[x]"}


class TodoEntry(BaseModel):
    """One todo as the model sends it."""

    model_config = ConfigDict(extra="forbid")

    content: str = Field(min_length=1, description="What to do, in the imperative")
    status: Literal["pending", "in_progress", "completed"] = Field(description="pending | in_progress | completed")
    id: str = Field("", description="Optional stable identifier")


class TodoWriteArgs(ToolArgs):
    """Arguments of TodoWrite."""

    todos: list[TodoEntry] = Field(description="The complete, updated todo list (replaces the previous one)")


def render_todos(todos: list[TodoItem]) -> str:
    """Checklist text: `[x] done`, `[~] in progress`, `[ ] pending`."""
    return "\n".join(f"{_MARKS.get(item.status, '[ ]')} {item.content}" for item in todos)


class TodoWriteTool(Tool[TodoWriteArgs]):
    """Replace the agent's todo list."""

    name: ClassVar[str] = "TodoWrite"
    args_model: ClassVar[type[ToolArgs]] = TodoWriteArgs
    read_only: ClassVar[bool] = True

    def summary(self, args: TodoWriteArgs) -> str:
        done = sum(1 for t in args.todos if t.status == "completed")
        return f"{len(args.todos)} todos, {done} completed"

    def permission_target(self, args: TodoWriteArgs) -> str:
        return ""

    async def run(self, args: TodoWriteArgs, ctx: ToolContext) -> ToolResult:
        ctx.todos[:] = [
            TodoItem(content=t.content, status=t.status, id=t.id or str(n)) for n, t in enumerate(args.todos, start=1)
        ]
        if not ctx.todos:
            return ToolResult("Todo list cleared.", metadata={"todos": []})
        done = sum(1 for t in ctx.todos if t.status == "completed")
        text = f"Todo list updated ({done}/{len(ctx.todos)} completed):\n{render_todos(ctx.todos)}"
        todos = [{"id": t.id, "content": t.content, "status": t.status} for t in ctx.todos]
        return ToolResult(text, metadata={"todos": todos})
