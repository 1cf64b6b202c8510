"""Bash rules and "allow always" answers against commands taken apart by the splitter."""

from __future__ import annotations

import pytest

from agentcli.tools.shell.rules import BashAnswers, command_prefix, deny_candidates, every_part_allowed, wild_match
from agentcli.tools.shell.syntax import split_command


def _denied(rule: str, command: str) -> bool:
    return any(wild_match(rule, " ".join(c.split())) for c in deny_candidates(command))


def _allowed(patterns: list[str], command: str, answers: BashAnswers | None = None) -> bool:
    return every_part_allowed(split_command(command), patterns, answers or BashAnswers())


@pytest.mark.parametrize(
    "command",
    ["echo hi#; touch X", "echo hi;>/dev/null touch X", "echo hi|>/dev/null touch X", "echo hi&&>/dev/null touch X",
     "echo hi\ntouch X", "(echo hi; touch X)", "{ echo hi; touch X; }", "echo hi; A=1 touch X", "echo hi; ! touch X",
     "echo $(touch X)", "echo `touch X`", "echo hi > f; touch X", "eval echo hi\\; touch X", "echo ${X@P}",
     "echo hi \\\n; touch X", "cat <<EOF\nhi\nEOF"],
)
def test_an_echo_rule_allows_no_other_command(command: str) -> None:
    assert not _allowed(["echo *"], command)


def test_an_echo_rule_still_allows_echo() -> None:
    for command in ("echo hi", "echo 'a; b' | echo c", "echo hi >/dev/null 2>&1", "echo a\necho b", "(echo a)"):
        assert _allowed(["echo *"], command), command


def test_allow_always_of_echo_never_covers_a_hidden_command() -> None:
    answers = BashAnswers()
    answers.remember(split_command("echo hi"))
    assert answers.covers(split_command("echo hi there"))
    for command in ("echo hi;>/dev/null touch X", "echo hi|>/dev/null touch X", "echo hi#; touch X",
                    "echo hi; touch X", "echo hi $(touch X)"):
        assert not answers.covers(split_command(command)), command


@pytest.mark.parametrize(
    ("answered", "later"),
    [
        ("X=1", "X=1 touch pwned"),  # an assignment alone is remembered exactly
        ("time -p ls", "time touch pwned"),  # `time` is not the program
        ("sudo -u bob ls", "sudo -u bob touch pwned"),  # wrappers are remembered exactly
        ("env FOO=1 ls", "env FOO=1 touch pwned"),
        ("xargs -0 echo", "xargs -0 touch"),
        ("bash script.sh", "bash -c 'touch pwned'"),
        ("eval echo hi", "eval echo hi\\; touch pwned"),  # uncertain: exactly this text
        ("hash -r", "hash -p ./evil ls"),
    ],
)
def test_allow_always_covers_only_what_the_dialog_says(answered: str, later: str) -> None:
    answers = BashAnswers()
    answers.remember(split_command(answered))
    assert answers.covers(split_command(answered))
    assert not answers.covers(split_command(later))


def test_prefixes_and_the_dialogs_words() -> None:
    assert command_prefix(("git", "status", "-s")) == ("git", "status")
    assert command_prefix(("A=1", "npm", "run", "x")) == ("A=1", "npm", "run")
    assert command_prefix(("ls", "-la")) == ("ls",)
    assert command_prefix(("X=1",)) is None
    assert command_prefix(("/usr/bin/sudo", "ls")) is None
    scope = BashAnswers.scope(split_command("git status && env A=1 make"))
    assert scope == "Bash commands starting with `git status` and exactly `env A=1 make` for the rest of this session"
    assert BashAnswers.scope(split_command("echo $(date)")) == "this exact command for the rest of this session"


@pytest.mark.parametrize(
    "command",
    ["rm -rf x", "sudo rm -rf x", "/bin/rm -rf x", "FOO=1 rm x", "ls && rm x", "echo hi#; rm x",
     "echo hi;>/dev/null rm x", "echo $(rm x)", 'echo "$(r"m" x)"', "echo `rm x`", "r\\m x", "'rm' x",
     "$'\\x72m' x", "r\\\nm x",
     "sh -c 'ls; rm x'", "bash -c \"r'm' x\"", "eval 'ls;rm x'", "bash <<< 'rm x'", "find . -exec rm {} ;",
     "time rm x", "! rm x", "{ rm x; }", "ls\nrm x", "diff <(rm x) y", "cat <<EOF\nrm x\nEOF"],
)
def test_a_deny_rule_finds_the_command_wherever_it_is(command: str) -> None:
    assert _denied("rm *", command)


def test_deny_rules_keep_what_the_old_reading_matched() -> None:
    # agentcli used to read `hi#` as `hi` and `;>` as one token; a deny rule that matched then still does.
    assert _denied("echo hi", "echo hi#; ls")
    assert _denied("rm -rf x", "echo rm ;> | -rf x")
    assert not _denied("rm *", "echo 'hello world'")
