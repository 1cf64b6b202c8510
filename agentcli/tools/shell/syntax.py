"""Bash's syntax, as far as permission rules need it: the simple commands one `bash -c` string runs.

`split_command` reads the command with `bash_lexer` (bash's own rules for words, quotes, operators and
comments), then cuts it at every control operator (`;` `&` `&&` `|` `||` `|&` `;;` newline `(` `)`), so
`echo hi;>/dev/null touch X` is two commands and `echo hi#; touch X` too. Leading reserved words (`!`,
`time -p`, `if`, `then`, `{`, …) are dropped, so each segment starts with what bash runs (after its
`NAME=value` assignments); redirections are taken out of the segments (`_check_redirection` says which
ones make a command uncertain).

It is conservative by construction: `ParsedCommand.certain` holds only when every command bash would
run is one of `segments`, with its name known before it runs. Anything this module does not model
adds a doubt and makes the command uncertain: command and process substitution, parameter expansions
other than `$NAME` / `${NAME}`, arithmetic, here-documents, line continuations, unclosed quotes,
function definitions and arrays, `case`/`for`/`select`/`[[`/`coproc`, a command name that is expanded
at run time (`$T x`, `{touch,X}`, `/bin/t*ch`), builtins that run text as code (`eval`, `source`, `trap`,
`sh -c`, …) or assign variables by a name given as an argument (`read`, `printf -v`, `declare`, …: bash
evaluates array subscripts in such names, and so runs `$(…)` hidden in a variable), redirections that
write files or reach the network. The split still goes on past a doubt, as well as it can, so deny
rules see every part.

Hand-written rather than a library: `bashlex` (the port of bash's grammar) has not had a release since
2023, and tree-sitter-bash is an error-tolerant grammar for editors with open mis-parses of here-docs
and redirections; neither says "not sure". This module only needs to split and to know when it cannot.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from agentcli.tools.shell.lexer import Lexer, Operator, Token, Word

_REDIRECTIONS = frozenset({"<", ">", ">>", ">|", "<>", "<<", "<<-", "<<<", "<&", ">&", "&>", "&>>"})
_WRITES = frozenset({">", ">>", ">|", "<>", "&>", "&>>"})
_HARMLESS_TARGETS = frozenset({"/dev/null"})
_NET_TARGET = re.compile(r"^/dev/(?:tcp|udp)/")
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
#: Reserved words at the start of a command that only group or negate what follows: dropped.
_GROUPING_WORDS = frozenset({"!", "{", "}", "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "time"})
#: Reserved words whose syntax this module does not model (their words are not commands).
_UNMODELLED_WORDS = frozenset({"case", "esac", "for", "select", "in", "function", "coproc", "[[", "]]"})
#: Builtins that run text as shell code (now or later), or load code.
_EVALUATORS = frozenset({"eval", "source", ".", "trap", "alias", "let", "enable", "bind", "complete", "compgen",
                        "fc", "mapfile", "readarray"})
#: Builtins that assign shell variables named by an argument: bash evaluates array subscripts in such
#: names (and in an integer variable's value), which runs a `$(…)` hidden in a variable.
_NAME_TAKING = frozenset({"read", "declare", "typeset", "local", "export", "readonly", "unset", "getopts", "wait"})
#: Builtins that run their arguments as a command (looked through to find what runs).
_BUILTIN_WRAPPERS = frozenset({"command", "builtin", "exec"})
SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "yash", "ash", "fish", "csh", "tcsh"})


@dataclass(frozen=True)
class ParsedCommand:
    """A Bash command taken apart for rule matching."""

    text: str  # blanks collapsed, newlines kept: the key of rules and answers that name the whole command
    segments: tuple[tuple[str, ...], ...]  # the words of each simple command, quotes removed
    doubts: tuple[str, ...] = ()  # what this module does not model, if anything: then the split is best effort
    extra_words: tuple[str, ...] = ()  # words outside the segments (redirection targets, here-strings)

    @property
    def certain(self) -> bool:
        """Whether `segments` is surely every command bash will run (and there is one)."""
        return not self.doubts and bool(self.segments)


def collapse_blanks(text: str) -> str:
    """Runs of spaces and tabs as one space, ends stripped; newlines (which separate commands) kept."""
    return re.sub(r"[ \t]+", " ", text).strip()


def split_command(command: str) -> ParsedCommand:
    """Split a Bash command into the simple commands bash runs (see the module's docstring)."""
    lexer = Lexer(command)
    token_lists = [lexer.tokens()]
    token_lists += lexer.inner
    segments: list[tuple[str, ...]] = []
    extra: list[str] = []
    for tokens in token_lists:
        found, targets = _segments(tokens, lexer)
        segments += found
        extra += targets
    return ParsedCommand(collapse_blanks(command), tuple(segments), tuple(lexer.doubts), tuple(extra))


def command_index(words: tuple[str, ...]) -> int:
    """Where the command name is in a segment: after its `NAME=value` assignments (len(words) if none)."""
    k = 0
    while k < len(words) and _ASSIGNMENT.match(words[k]):
        k += 1
    return k


def program_name(word: str) -> str:
    """`/usr/bin/rm` → `rm`."""
    return word.rstrip("/").rsplit("/", 1)[-1] if "/" in word.rstrip("/") else word


# ---- from tokens to simple commands ------------------------------------------------------------


def _segments(tokens: list[Token], lexer: Lexer) -> tuple[list[tuple[str, ...]], list[str]]:
    """The simple commands of one token list, and the words outside them (redirection targets)."""
    segments: list[tuple[str, ...]] = []
    targets: list[str] = []
    words: list[Word] = []
    after_time = False

    def close() -> None:
        if words:
            segments.append(_checked(words, lexer))
            words.clear()

    k = 0
    while k < len(tokens):
        token = tokens[k]
        k += 1
        if isinstance(token, Operator):
            after_time = False
            if token.op in _REDIRECTIONS:
                target = tokens[k] if k < len(tokens) else None
                if isinstance(target, Word):
                    k += 1
                    targets.append(target.value)
                _check_redirection(token.op, target if isinstance(target, Word) else None, lexer)
                continue
            if token.op == "(":
                if words:
                    lexer.doubt("`(` after a word (a function definition or an array)")
                nxt = tokens[k] if k < len(tokens) else None
                if isinstance(nxt, Operator) and nxt.op == "(" and nxt.start == token.start + 1:
                    lexer.doubt("an arithmetic command ((…))")
            close()
            continue
        if token.io:
            continue
        if not words and not token.quoted:
            if token.value in _GROUPING_WORDS or (after_time and token.value == "-p"):
                after_time = token.value == "time"
                continue
            if token.value in _UNMODELLED_WORDS:
                lexer.doubt(f"`{token.value}` (a compound command this matcher does not model)")
                continue
        after_time = False
        words.append(token)
    close()
    return segments, targets


def _check_redirection(op: str, target: Word | None, lexer: Lexer) -> None:
    """Doubt a redirection that writes a file, reaches the network, or is a here-document."""
    if target is None:
        lexer.doubt("a redirection without a target")
        return
    if op in ("<<", "<<-"):
        lexer.doubt("a here-document")
        return
    if _NET_TARGET.match(target.value):
        lexer.doubt("a redirection to /dev/tcp or /dev/udp")
        return
    plain = not target.expands and not target.globs
    if op in ("<&", ">&") and plain and (target.value.isdigit() or target.value == "-"):
        return  # duplicating or closing a file descriptor
    if op in _WRITES or op == ">&":
        if not (plain and target.value in _HARMLESS_TARGETS):
            lexer.doubt("output redirection to a file")
    elif op == "<&":
        lexer.doubt("an input redirection from a descriptor bash cannot name")


def _checked(words: list[Word], lexer: Lexer) -> tuple[str, ...]:
    """One simple command's words, doubting what makes its program or effect unknown before it runs."""
    values = tuple(w.value for w in words)
    k = 0
    while k < len(words) and (assignment := _ASSIGNMENT.match(words[k].raw)):
        if assignment.group(1):
            lexer.doubt("an array element assignment")
        k += 1
    if k == len(words):
        return values  # assignments only
    if _ASSIGNMENT.match(words[k].value):  # `"A=1" x` runs a program named A=1; rules would read an assignment
        lexer.doubt("a quoted command name that reads like an assignment")
    while True:  # the program, looking through `command`, `builtin` and `exec` (`exec -a x sh -c …`)
        name = words[k]
        if name.expands or name.globs or not name.value or any(c in name.value for c in " \t\n"):
            lexer.doubt("a command name made at run time (an expansion, a pattern or a quoted blank)")
        if name.value not in _BUILTIN_WRAPPERS:
            break
        k += 1
        while k < len(words) and (words[k].value.startswith("-") or words[k].expands):
            if words[k].expands:
                lexer.doubt("a command name made at run time (an expansion, a pattern or a quoted blank)")
            k += 2 if words[k].value == "-a" else 1
        if k >= len(words):
            return values
    program, rest = values[k], values[k + 1 :]
    if program in _EVALUATORS:
        lexer.doubt(f"`{program}` runs text as shell code")
    elif program in _NAME_TAKING or (program == "printf" and any(w.startswith("-v") for w in rest)) or (
        program in ("test", "[") and any(w in ("-v", "-R") for w in rest)
    ):
        lexer.doubt(f"`{program}` assigns or reads variables by name")
    elif program_name(program) in SHELLS and any(
        w.startswith(("-", "+")) and not w.startswith("--") and "c" in w for w in rest
    ):
        lexer.doubt(f"`{program} -c` runs text as shell code")
    return values
