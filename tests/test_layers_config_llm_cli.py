"""The layering of configuration, `llm/`, the cli commands and the fake server holds today.

tests/test_layers.py checks the whole package (held xfail while other areas are being fixed);
these check the units already fixed, so a new cycle or upward import there fails at once.
"""

from __future__ import annotations

from tests.test_layers import cycles, graph, unit, violations

AREAS = ("config", "config_layers", "config_schema", "config_trust", "llm", "testing", "cli",
         "cli_common", "cli_sessions", "cli_tasks", "cli_agents")  # fmt: skip


def _in_areas(module: str) -> bool:
    return unit(module) in AREAS


def test_no_import_cycle_touches_these_areas() -> None:
    found = [c for c in cycles(graph()) if any(_in_areas(m) for m in c)]
    assert found == [], "; ".join(" ⇄ ".join(c) for c in found)


def test_these_areas_import_only_down() -> None:
    found = [v for v in violations(graph()) if _in_areas(v.split(" -> ")[0])]
    assert found == []


def test_the_cli_commands_share_helpers_only_through_cli_common() -> None:
    edges = graph()
    commands = ("agentcli.cli_sessions", "agentcli.cli_tasks", "agentcli.cli_agents")
    for command in commands:
        assert not edges[command] & {"agentcli.cli", *commands}, command
    assert edges["agentcli.cli"] >= {"agentcli.cli_common", *commands}
