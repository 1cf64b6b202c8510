"""Claude Code's headless command line read as its parser reads it, and mapped onto agentcli's settings."""

from __future__ import annotations

import pytest

from agentcli.headless.flags import FlagError, is_headless, parse, split_rules
from agentcli.headless.settings_map import map_flags

COMMANDS = frozenset({"run", "config"})


def test_what_the_agent_sdk_passes_is_read_whole() -> None:
    argv = ["--output-format", "stream-json", "--verbose", "--system-prompt", "", "--permission-prompt-tool", "stdio",
            "--allowedTools", "Read,Bash(git log:*)", "--max-turns", "7", "--resume=ses_1", "--setting-sources=",
            "--input-format", "stream-json"]
    assert is_headless(argv, COMMANDS)
    args = parse(argv)
    assert (args.output_format, args.input_format, args.verbose, args.system_prompt) == (
        "stream-json", "stream-json", True, "")
    assert (args.permission_prompt_tool, args.max_turns, args.resume) == ("stdio", "7", "ses_1")
    assert split_rules(args.allowed_tools) == ["Read", "Bash(git log:*)"]
    assert args.prompt is None and args.warnings == []


def test_a_flag_agentcli_does_not_honour_is_a_warning_and_keeps_its_value_off_the_prompt() -> None:
    args = parse(["-p", "--thinking", "adaptive", "--add-dir", "../a", "../b", "--betas=x", "--frobnicate",
                  "fix it"])
    assert args.print and args.prompt == "fix it"
    assert [w.split(" ")[0] for w in args.warnings] == ["--thinking", "--betas", "--frobnicate"]
    assert args.add_dir == ["../a", "../b"]  # honoured: additional directories


def test_the_typescript_sdks_launch_flags_are_read_and_an_unknown_flag_with_a_value_is_a_warning() -> None:
    args = parse(["--output-format", "stream-json", "--verbose", "--input-format", "stream-json",
                  "--allowedTools=mcp__calc__add", "--await-initialize", "--initialize-fields=settings,disallowedTools",
                  "--managed-settings-in-initialize", "--agent=reviewer", "--some-future-flag=on"])
    assert args.await_initialize and args.managed_in_initialize
    assert args.initialize_fields == "settings,disallowedTools"
    assert [w.split(" ")[0] for w in args.warnings] == ["--agent", "--some-future-flag"]
    assert args.prompt is None  # no flag's value became the prompt


def test_managed_settings_win_over_the_flags_mode_and_model() -> None:
    mapped = map_flags(parse(["-p", "x", "--permission-mode", "plan", "--model", "sonnet", "--managed-settings",
                              '{"permissions": {"defaultMode": "default", "deny": ["WebFetch"]}, "model": "opus"}']))
    assert mapped.overrides["permissions.mode"] == "ask" and mapped.origins["permissions.mode"] == "--managed-settings"
    assert mapped.model == "opus" and mapped.deny == ["WebFetch"]


@pytest.mark.parametrize(("argv", "message"), [
    (["-p", "--model"], "--model needs a value"),
    (["-p", "--permission-mode", "yolo", "x"], "--permission-mode 'yolo' is not one of"),
    (["-p", "--verbose=yes", "x"], "--verbose takes no value"),
    (["-p", "--allowedTools", "--verbose", "x"], "--allowedTools needs at least one value"),
])
def test_a_command_line_agentcli_cannot_run_is_one_line(argv: list[str], message: str) -> None:
    with pytest.raises(FlagError, match=message.replace("(", r"\(")):
        parse(argv)


def test_headless_only_without_a_command_and_with_a_print_or_format_flag() -> None:
    assert not is_headless(["run", "--output-format", "json", "x"], COMMANDS)
    assert not is_headless(["--cwd", "x"], COMMANDS)
    assert not is_headless(["--", "-p"], COMMANDS)
    assert is_headless(["-p", "hello"], COMMANDS)
    assert is_headless(["--output-format=json", "hello"], COMMANDS)


def test_the_flags_become_settings_named_by_their_flag() -> None:
    mapped = map_flags(parse([  # a list flag takes every word up to the next flag: the prompt comes first
        "-p", "x", "--permission-mode", "acceptEdits", "--max-budget-usd", "0.5", "--tools", "Read,Grep",
        "--disallowedTools", "Grep Bash(rm:*)", "--allowedTools", "Read(./src/**)"]))
    assert mapped.overrides == {"permissions.mode": "accept_edits", "budget.session_max_usd": 0.5}
    assert mapped.origins["permissions.mode"] == "--permission-mode"
    assert mapped.allow == ["Read(src/**)"] and mapped.deny == ["Grep", "Bash(rm:*)"]
    offers = mapped.offers()
    assert offers("Read") and not offers("Grep") and not offers("Bash") and offers("mcp__time__now")


def test_an_empty_system_prompt_is_the_sdks_default_role_and_a_custom_one_is_taken_as_written() -> None:
    assert map_flags(parse(["-p", "--system-prompt", "", "x"])).system_prompt.startswith("You are agentcli")  # type: ignore[union-attr]
    assert map_flags(parse(["-p", "--system-prompt", "Be $terse.", "x"])).system_prompt == "Be $terse."
    with pytest.raises(FlagError, match="--max-turns 'many' is not a number"):
        map_flags(parse(["-p", "--max-turns", "many", "x"]))


def test_effort_maps_onto_agentclis_scale_and_setting_sources_are_checked() -> None:
    assert map_flags(parse(["-p", "x", "--effort", "max"])).effort == "high"
    assert map_flags(parse(["-p", "x", "--effort", "low"])).effort == "low"
    assert map_flags(parse(["-p", "x", "--setting-sources", "user,local"])).sources == {"user", "local"}
    with pytest.raises(FlagError, match="--setting-sources: team is not one of user, project, local"):
        map_flags(parse(["-p", "x", "--setting-sources", "user,team"]))


def test_settings_permissions_map_like_the_settings_files_rules() -> None:
    settings = '{"permissions": {"allow": ["Read(./src/**)"], "deny": ["mcp__github__*"], "ask": ["Bash(git push:*)"]}}'
    mapped = map_flags(parse(["-p", "x", "--settings", settings]))
    assert mapped.allow == ["Read(src/**)"] and mapped.deny == ["mcp__github"] and mapped.ask == ["Bash(git push:*)"]


def test_add_dir_and_settings_additional_directories_are_named_with_their_flag() -> None:
    mapped = map_flags(parse(["-p", "x", "--add-dir", "../a", "/b", "--settings",
                              '{"permissions": {"additionalDirectories": ["~/c", 3]}}']))
    assert mapped.dirs == [("../a", "--add-dir"), ("/b", "--add-dir"), ("~/c", "--settings")]
