"""The glob matcher: exact semantics, and no pattern or path can make it backtrack."""

from __future__ import annotations

import pytest

from agentcli.tools.globmatch import MAX_ALTERNATIVES, compile_glob
from agentcli.tools.paths import match_glob


@pytest.mark.parametrize(
    ("pattern", "rel", "expected"),
    [
        ("src/**", "src", False),
        ("src/**", "src/", True),
        ("**", "", True),
        ("**/x", "x", True),
        ("**/x", "a/b/x", True),
        ("**//x", "a//x", True),
        ("a/**/", "a/b/", True),
        ("a**b", "a/x/y/b", True),
        ("a**b", "ab", True),
        ("**.py", "a/b/c.py", True),
        ("x{**/a,b}", "xq/a", True),
        ("x{**/a,b}", "xb", True),
        ("x{**/a,b}", "xq/b", False),
        ("*a*b*c", "xaybzc", True),
        ("*a*b*c", "xaybz/c", False),
        ("{a,b}/*.{py,md}", "b/x.md", True),
        ("[ab]?", "bz", True),
        ("[", "[", True),
        ("{a", "{a", True),
    ],
)
def test_semantics(pattern: str, rel: str, expected: bool) -> None:
    assert compile_glob(pattern).fullmatch(rel) is expected


@pytest.mark.parametrize(
    ("pattern", "rel"),
    [
        ("*a*a*a*a*a*a*a*a*a*a*b", "a" * 5000),
        ("**/**/**/**/**/**/**/**/x", "a/" * 3000 + "y"),
        ("a**a**a**a**a**a**a**a**a**b", "a" * 3000),  # past the alternatives cap: the NFA
        ("{a,b}" * 12 + "*a*a*a*c", "a" * 3000),
    ],
)
def test_bombs_do_not_match_and_stay_bounded(pattern: str, rel: str) -> None:
    """Each of these backtracks for hours on a regex translation; here they are a few thousand steps."""
    assert match_glob(pattern, rel) is False
    assert match_glob(pattern, rel[:-1] + pattern[-1]) is True


def test_many_alternatives_fall_back_to_the_nfa_with_same_answers() -> None:
    pattern = "{a,b}" * 8  # 256 alternatives
    assert compile_glob(pattern).forms is None and MAX_ALTERNATIVES < 2**8
    assert compile_glob(pattern).fullmatch("abababab") and not compile_glob(pattern).fullmatch("abababac")


def test_bash_rule_wildcards_do_not_backtrack() -> None:
    from agentcli.tools.shell.rules import wild_match

    assert wild_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 20_000) is False
    assert wild_match("*a*a*a*a*a*a*a*a*a*a*a*a*b", "a" * 20_000 + "b") is True
    assert wild_match("git *", "git status") and not wild_match("git *", "gitx status")
