"""An agent's TodoWrite list as a live checklist, updated in place on each TodoWrite call."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from agentcli.ui.model import TodoListItem

MARKS = {
    "completed": ("☒", "$success", "strike $text-muted"),
    "in_progress": ("◐", "$accent", "bold"),
    "pending": ("☐", "$text-muted", ""),
}


def checklist_content(item: TodoListItem) -> Content:
    """`Todos 1/3` and one line per todo: done ones struck through, the one in progress bold."""
    parts: list[tuple[str, str] | str] = [("Todos ", "bold"), (f"{item.done()}/{len(item.todos)}", "$text-muted")]
    if not item.todos:
        parts.append(("  (cleared)", "$text-muted"))
    for content, status in item.todos:
        mark, mark_style, style = MARKS.get(status, MARKS["pending"])
        parts += ["\n  ", (mark, mark_style), " ", (content, style)]
    return Content.assemble(*parts)


class TodoChecklist(Static):
    """The checklist of one turn (or one subagent's block); `refresh_state` re-renders it from its item."""

    DEFAULT_CSS = """
    TodoChecklist {
        width: 1fr;
        height: auto;
        margin: 1 0 0 0;
        padding: 0 1;
    }
    """

    def __init__(self, item: TodoListItem) -> None:
        super().__init__(classes="todo-list")
        self.item = item
        self.refresh_state()

    def refresh_state(self) -> None:
        """Re-render from the item (the list was replaced)."""
        self.update(checklist_content(self.item))
