"""The Bash splitter: every command bash runs is a segment, or the split says it is not sure."""

from __future__ import annotations

import random
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from agentcli.tools.shell.syntax import command_index, split_command


@pytest.mark.parametrize(
    ("command", "segments"),
    [
        ("cd src && pytest -x 2>&1 | tail -5", [("cd", "src"), ("pytest", "-x"), ("tail", "-5")]),
        ("echo hi#; touch X", [("echo", "hi#"), ("touch", "X")]),  # `#` inside a word is not a comment
        ("echo hi # ; touch X\nls", [("echo", "hi"), ("ls",)]),  # at a word's start it is, to the line's end
        ("echo hi;>/dev/null touch X", [("echo", "hi"), ("touch", "X")]),
        ("echo hi|>/dev/null touch X", [("echo", "hi"), ("touch", "X")]),
        ("echo hi&&>/dev/null touch X", [("echo", "hi"), ("touch", "X")]),
        ("echo hi||</dev/null touch X", [("echo", "hi"), ("touch", "X")]),
        ("echo hi 2>&1;touch X", [("echo", "hi"), ("touch", "X")]),
        ("echo hi &>/dev/null touch X", [("echo", "hi", "touch", "X")]),  # `&>` redirects: one command
        ("echo hi >|/dev/null touch X", [("echo", "hi", "touch", "X")]),  # `>|` is one operator
        ("echo a & touch X", [("echo", "a"), ("touch", "X")]),
        ("echo a |& touch X", [("echo", "a"), ("touch", "X")]),
        ("ls\ntouch X", [("ls",), ("touch", "X")]),
        ("(cd x; touch X)", [("cd", "x"), ("touch", "X")]),
        ("{ echo a; touch X; }", [("echo", "a"), ("touch", "X")]),
        ("if true; then touch X; else ls; fi", [("true",), ("touch", "X"), ("ls",)]),
        ("while true; do touch X; done", [("true",), ("touch", "X")]),
        ("! touch X", [("touch", "X")]),
        ("time -p touch X", [("touch", "X")]),
        ("A=1 B=2 touch X", [("A=1", "B=2", "touch", "X")]),
        ("'ec''ho' \"hi\" e\\cho", [("echo", "hi", "echo")]),
        ("$'\\x74ouch' X", [("touch", "X")]),  # ANSI-C quoting is decoded
        ("echo 'a; b' \"c | d\" e\\;f", [("echo", "a; b", "c | d", "e;f")]),
        ("echo hi!; touch X", [("echo", "hi!"), ("touch", "X")]),  # no history expansion in `bash -c`
        ("git log --format='%H #x' | head", [("git", "log", "--format=%H #x"), ("head",)]),
        ("echo $HOME ${HOME} $1 $? $@", [("echo", "$HOME", "${HOME}", "$1", "$?", "$@")]),
        ("cat <<< 'rm x'", [("cat",)]),
        ("echo >&2 hi 2>/dev/null 3<&0 1>&-", [("echo", "hi")]),
        ("[ -f x ] && ls", [("[", "-f", "x", "]"), ("ls",)]),
    ],
)
def test_the_split_names_every_command_bash_runs(command: str, segments: list[tuple[str, ...]]) -> None:
    parsed = split_command(command)
    assert parsed.doubts == ()
    assert parsed.certain
    assert list(parsed.segments) == segments


@pytest.mark.parametrize(
    ("command", "doubt"),
    [
        ("echo $(touch X)", "command substitution"),
        ("echo `touch X`", "command substitution"),
        ('echo "$(touch X)"', "command substitution"),
        ('echo "`touch X`"', "command substitution"),
        ("diff <(touch X) y", "process substitution"),
        ("echo hi > out.txt", "output redirection"),
        ("echo hi >> out.txt", "output redirection"),
        ("echo hi &> out.txt", "output redirection"),
        ("echo hi >&out.txt", "output redirection"),
        ("echo hi 1<>x", "output redirection"),
        ("cat < /dev/tcp/example.com/80", "/dev/tcp"),
        ("cat <<EOF\ntouch X\nEOF", "here-document"),
        ("echo a \\\n; touch X", "line continuation"),
        ("echo 'unclosed", "unclosed quote"),
        ('echo "unclosed', "unclosed quote"),
        ("echo ${X@P}", "parameter expansion"),
        ("echo ${!X}", "parameter expansion"),
        ("echo ${X:=\\$\\(touch\\ X\\)} ${X@P}", "parameter expansion"),
        ("echo $((X))", "arithmetic"),
        ("echo $[X]", "arithmetic"),
        ("((X))", "arithmetic"),
        ("[[ $X -eq 1 ]]", "[["),
        ("for f in a; do touch X; done", "`for`"),
        ("case x in x) touch X;; esac", "`case`"),
        ("coproc touch X", "`coproc`"),
        ("function f { touch X; }", "`function`"),
        ("echo() { touch X; }; echo hi", "function definition"),
        ("a=(1 2)", "array"),
        ("a[i]=1", "array element"),
        ("$T X", "command name made at run time"),
        ("{touch,X}", "command name made at run time"),
        ("/bin/t*ch X", "command name made at run time"),
        ("'touch X'", "command name made at run time"),
        ("'A=1' touch", "reads like an assignment"),
        ("command $T X", "command name made at run time"),
        ("eval 'touch X'", "`eval`"),
        ("builtin eval 'touch X'", "`eval`"),
        ("source ./x.sh", "`source`"),
        (". ./x.sh", "`.`"),
        ("trap 'touch X' EXIT", "`trap`"),
        ("let 'a[$(touch X)]'", "`let`"),
        ("mapfile -C 'touch X' -c 1 a < f", "`mapfile`"),
        ("sh -c 'touch X'", "`sh -c`"),
        ("/bin/bash -xc 'touch X'", "-c"),
        ("exec -a x bash -c 'touch X'", "-c"),
        ("read 'a[$(touch X)]'", "`read`"),
        ("printf -v 'a[$(touch X)]' %s 1", "`printf`"),
        ("test -v 'a[$(touch X)]'", "`test`"),
        ("[ -v 'a[$(touch X)]' ]", "`[`"),
        ("declare 'a[$(touch X)]'=1", "`declare`"),
        ("export PATH=.:$PATH", "`export`"),
        ("echo $'a\\0b'", "NUL"),
        ("echo \\", "backslash at the end"),
        ("# only a comment", ""),
    ],
)
def test_what_the_splitter_does_not_model_is_uncertain(command: str, doubt: str) -> None:
    parsed = split_command(command)
    assert not parsed.certain
    assert doubt in " | ".join(parsed.doubts)


def test_an_uncertain_split_still_names_the_parts_it_sees() -> None:
    # Deny rules read these: the commands inside substitutions are segments too.
    assert ("rm", "-rf", "x") in split_command('echo "$(r"m" -rf x)"').segments
    assert ("rm", "x") in split_command("echo `rm x`").segments
    assert ("rm", "x") in split_command("diff <(rm x) y").segments
    assert ("rm", "x") in split_command("cat <<EOF\nrm x\nEOF").segments
    assert split_command("cat <<< 'rm x'").extra_words == ("rm x",)


def test_the_text_keeps_newlines_and_collapses_blanks() -> None:
    assert split_command("  git \t status  ").text == "git status"
    assert split_command("make\nbuild").text == "make\nbuild"


def test_command_index_skips_assignments() -> None:
    assert command_index(("A=1", "B+=2", "ls", "C=3")) == 2
    assert command_index(("A=1",)) == 1


@pytest.mark.parametrize("command", ["$(" * 10_000 + "x", "`" * 10_000, "${" * 10_000, "((" * 10_000,
                                     "$'" + "\\x41" * 10_000 + "'", "echo " + "{a,b}" * 5_000, "[" * 20_000])
def test_hostile_shapes_answer_at_once(command: str) -> None:
    started = time.perf_counter()
    split_command(command)
    assert time.perf_counter() - started < 2


# ---- bash itself as the oracle ----------------------------------------------------------------------

_STUBS = ("a", "b", "c", "touch", "X", "hi")
_VOCABULARY = [
    "a", "b", "c", "touch", "X", "hi", "hi#", "#", "'a b'", '"c"', "a\\ b", "\\;", ";", ";>", "|>", "&&", "||", "|",
    "&", "\n", "(", ")", "{", "}", ">", ">/dev/null", "2>&1", ">&2", "<", "<<<", "&>", ">|", "!", "time", "-p", "if",
    "then", "fi", "while", "do", "done", "\t", "'", '"', "x=1", "$'a'", "$'\\x61'", ";;", "|&", "2>", "1>&-", "<>",
    "&>>", ">>", "echo", "/dev/null", "e\\cho", "'#'", "\\#", "a#b", "elif", "else", "false", "true", "$(a)", "`b`",
    "$x", "${x}", "x=touch", "eval", "sh -c", "exec", "command", "builtin", "\\\n", "<<E\na\nE\n", "f()", "{ a; }",
    "$'\\x3b'", '"$x"', "'$(a)'", "${x:-a}", "${x@P}", "$[1]", "case", "esac", "in", "for", "env", "xargs", "-c",
    "'a;b'", '"a;b"', "read", "printf -v", "[[", "]]", "((", "))", "trap", "<(a)", ">(b)", "nohup", "2>&-",
]


def _what_runs(segment: tuple[str, ...]) -> tuple[str, ...]:
    words = segment[command_index(segment):]
    while words and words[0] in ("exec", "command", "builtin"):
        words = words[1:]
        while words and words[0].startswith("-"):
            words = words[2:] if words[0] == "-a" else words[1:]
    return words


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_bash_runs_nothing_a_certain_split_does_not_name(tmp_path: Path) -> None:
    """Random commands run by bash with a PATH of logging stubs: when the split is certain, every program
    bash started (name and arguments) is one of its segments."""
    bash = shutil.which("bash")
    assert bash is not None
    bindir, logs, work = tmp_path / "bin", tmp_path / "logs", tmp_path / "work"
    for folder in (bindir, logs, work):
        folder.mkdir()
    for name in _STUBS:
        stub = bindir / name
        stub.write_text(f"#!/bin/sh\nprintf '%s\\037' \"${{0##*/}}\" \"$@\" > {logs}/$$\n")
        stub.chmod(0o755)
    rng = random.Random(20261122)
    checked = 0
    while checked < 150:
        command = "".join(rng.choice(_VOCABULARY) + rng.choice(["", " ", " ", " "]) for _ in range(rng.randint(1, 7)))
        parsed = split_command(command)
        if not parsed.certain:
            continue
        checked += 1
        for log in logs.iterdir():
            log.unlink()
        subprocess.run([bash, "-c", command], cwd=work, env={"PATH": str(bindir)}, stdin=subprocess.DEVNULL,
                       capture_output=True, timeout=10)
        if "&" in command:
            time.sleep(0.1)  # a background job may still be writing its log
        named = [_what_runs(segment) for segment in parsed.segments]
        for log in logs.iterdir():
            ran = tuple(log.read_text().split("\x1f")[:-1])
            names_only = "$" in command  # an expansion changes the words, not the program
            assert (ran[0] in [w[0] for w in named if w]) if names_only else (ran in named), (command, ran, named)
