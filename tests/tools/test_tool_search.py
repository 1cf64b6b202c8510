"""Deferred tools: named in the system prompt, loaded through ToolSearch by name or keywords, appended at the end of
the list (the prefix sent before is kept), and `[tools] defer` choosing which."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.tool_offer import Offered, ToolOffer
from agentcli.config import load_config
from agentcli.subagents import deferred_line
from agentcli.tools import ALL_TOOLS, FileLocks, PermissionPolicy, Tool, ToolContext, ToolError, defer_rule


def _tools() -> dict[str, Tool[Any]]:
    return {name: cls() for name, cls in ALL_TOOLS.items()}


def _ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(workspace=tmp_path, agent="main", session_id="s", permissions=PermissionPolicy("auto"),
                       file_locks=FileLocks())


def test_the_default_defers_the_rare_tools_and_names_them_in_the_note() -> None:
    offer = ToolOffer(_tools(), None, 0, defer_rule("auto"))
    names = [spec.name for spec in offer.specs]
    assert "ToolSearch" in names and not {"MultiEdit", "WebFetch", "NotebookEdit", "WebSearch"} & set(names)
    assert offer.note.startswith("\n\n# Deferred tools\n")
    for name in ("MultiEdit", "WebFetch", "NotebookEdit", "WebSearch"):
        assert f"\n- {name}: " in offer.note
    search = next(spec for spec in offer.specs if spec.name == "ToolSearch")
    assert "MultiEdit" not in search.description  # the same for every agent: it sits in the shared head
    assert names.index("ToolSearch") < names.index("Write")  # read-only group, before the mutating tools


def test_none_defers_nothing_and_names_defer_exactly_those() -> None:
    everything = ToolOffer(_tools(), None, 0, defer_rule("none"))
    assert "ToolSearch" not in [s.name for s in everything.specs] and everything.note == ""
    some = ToolOffer(_tools(), None, 0, defer_rule(["Bash", "Web*"]))
    names = [s.name for s in some.specs]
    assert {"MultiEdit", "Read"} <= set(names) and not {"Bash", "WebFetch", "WebSearch"} & set(names)


async def test_select_loads_by_name_at_the_end_of_the_list(tmp_path: Path) -> None:
    offer = ToolOffer(_tools(), None, 0, defer_rule("auto"))
    before = list(offer.specs)
    result = await offer.tools["ToolSearch"].run(offer.tools["ToolSearch"].parse({"query": "select:multiedit"}),
                                                 _ctx(tmp_path))
    assert result.content.startswith("Loaded: MultiEdit.")
    assert offer.specs[: len(before)] == before and offer.specs[-1].name == "MultiEdit"
    assert not offer.specs[-1].cache_break  # the head's breakpoint stays where it was
    note = offer.note
    assert offer.offered == Offered(tuple(offer.specs), note, tuple(n for n in offer.offered.deferred))
    assert "MultiEdit" not in offer.offered.deferred and "\n- MultiEdit: " in note  # the note never changes


async def test_keywords_find_the_best_matches_and_nothing_found_lists_the_deferred(tmp_path: Path) -> None:
    offer = ToolOffer(_tools(), None, 0, defer_rule("auto"))
    search = offer.tools["ToolSearch"]
    found = await search.run(search.parse({"query": "fetch a web page", "max_results": 1}), _ctx(tmp_path))
    assert found.content.startswith("Loaded: WebFetch.")
    with pytest.raises(ToolError, match=r"No deferred tool matches 'quantum'\. Deferred tools: MultiEdit, "):
        await search.run(search.parse({"query": "quantum"}), _ctx(tmp_path))
    with pytest.raises(ToolError, match="No deferred tool matches Nope"):
        await search.run(search.parse({"query": "select:Nope"}), _ctx(tmp_path))


async def test_a_fork_keeps_the_parents_list_and_note_and_loads_the_parents_deferred_tools(tmp_path: Path) -> None:
    parent = ToolOffer(_tools(), None, 0, defer_rule("auto"))
    fork = ToolOffer(_tools(), parent.offered, 0, defer_rule("auto"))
    assert fork.specs == parent.specs and fork.note == parent.note
    search = fork.tools["ToolSearch"]
    await search.run(search.parse({"query": "select:NotebookEdit"}), _ctx(tmp_path))
    assert fork.specs[:-1] == parent.specs and fork.specs[-1].name == "NotebookEdit"


def test_a_lean_prompt_defers_the_on_demand_tools_even_when_defer_is_none() -> None:
    offer = ToolOffer(_tools(), None, 32_000, defer_rule("none"))
    assert offer.note == ""
    offer.choose(16_000)
    assert "\n- MultiEdit: " in offer.note and "MultiEdit" not in [s.name for s in offer.specs]


def test_config_show_names_the_deferred_tools(tmp_path: Path) -> None:
    settings = load_config(tmp_path, env={}).settings
    assert deferred_line(settings.tools.defer) == (
        "[tools] deferred (loaded through ToolSearch): MultiEdit, WebFetch, NotebookEdit, WebSearch, LSP, "
        "AskUserQuestion, TaskOutput, TaskCancel, SendMessage, ListAgents, MCP tools")
    assert deferred_line("none").endswith(": none")
    assert deferred_line(["Bash", "mcp__github__*"]).endswith(": Bash, mcp__github__*")
