"""How Bash rules and "allow always" answers meet a command (the policy in `permissions` asks these).

Allow: a command runs without asking only when `bash_syntax` split it with certainty and every simple
command in it matches an allow rule's pattern or a remembered answer; otherwise only a plain `Bash`
rule, a rule equal to the whole command, or an "allow always" answer to that exact command allow it.

Deny: a rule is tried against many readings of the command, so that it matches at least what a person
would call "that command" (see `deny_candidates`); uncertainty never loosens a deny rule.

"Allow always" answers remember, for each simple command, its prefix: the assignments before it, the
program and a sub-command word (`git status`, `npm run`, `pytest`). A segment whose prefix would not say
what runs is remembered exactly instead: assignments alone (`X=1` must not cover `X=1 rm -rf ~`), wrappers
that run another program from their arguments (`sudo`, `env`, `xargs`, `timeout`, `exec`, a shell, …) and
builtins that change how later commands are found or run (`hash`, `set`, `shopt`). An uncertain command is
remembered as its whole text.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from agentcli.tools.shell.syntax import SHELLS, ParsedCommand, command_index, program_name, split_command

_SUBCOMMAND = re.compile(r"^[A-Za-z][A-Za-z0-9._:-]*$")
_LOOSE_SPLIT = re.compile(r"\$\(|`|<\(|>\(|&&|\|\||[;&|()\n]")
_NESTED_MAX = 2  # how deep deny rules look into quoted words that hold commands (`sh -c '…'`)
_LEGACY_CONTROL = frozenset({"&&", "||", ";", "|", "&", "|&", ";;", "\n"})

#: Programs whose "allow always" is remembered for the exact simple command, never as a prefix: their
#: first words do not say what runs (wrappers that run their arguments, shells) or they change how later
#: commands are found.
EXACT_ONLY = SHELLS | frozenset({
    "sudo", "doas", "su", "runuser", "env", "xargs", "nohup", "nice", "ionice", "timeout", "stdbuf", "setsid",
    "chroot", "flock", "watch", "strace", "ltrace", "taskset", "chrt", "unbuffer", "busybox", "parallel",
    "unshare", "nsenter", "exec", "command", "builtin", "hash", "set", "shopt", "ulimit", "umask",
})


def normalize_ws(text: str) -> str:
    """Every run of whitespace as one space (rule patterns and deny candidates)."""
    return " ".join(text.split())


def wild_match(pattern: str, text: str) -> bool:
    """`*` matches anything; everything else literally; whitespace-insensitive. (Also how the patterns of
    tools that are not file tools match their target: a WebFetch URL, an MCP tool's summary.)"""
    pattern = normalize_ws(pattern)
    if pattern.endswith(":*"):  # Claude Code's prefix form: `npm run test:*`
        stem = re.escape(pattern[:-2])
        return re.fullmatch(stem + r"(?: .*)?", text, re.DOTALL) is not None
    parts = [re.escape(part) for part in pattern.split("*")]  # fnmatch-style atomic groups: never backtracks
    middle = "".join(f"(?>.*?{part})" for part in parts[1:-1] if part)
    regex = parts[0] + (middle + ".*" + parts[-1] if len(parts) > 1 else "")
    return re.fullmatch(regex, text, re.DOTALL) is not None


def deny_candidates(command: str, depth: int = 0) -> set[str]:
    """Every string a Bash deny rule is tried against: the whole command; each simple command and each
    word onward, a program named by its path also by its base name (`Bash(rm *)` stops `sudo rm x`,
    `/bin/rm x`, `find . -exec rm {} ;`); the same for the commands inside substitutions, for a crude
    split on every operator character (quotes or not), for the command with its line continuations
    joined, and, two levels down, for quoted words and here-strings that hold commands (`sh -c 'ls; rm x'`)."""
    parsed = split_command(command)
    out = {normalize_ws(command)}
    word_lists = [list(segment) for segment in parsed.segments]
    word_lists += [[w.strip("'\"") for w in frag.split()] for frag in _LOOSE_SPLIT.split(command)]
    word_lists += _legacy_segments(command)
    for words in word_lists:
        for start in range(len(words)):
            out.add(" ".join(words[start:]))
            head = words[start]
            if "/" in head.rstrip("/"):  # `/usr/bin/rm -rf x` is tried as `rm -rf x` too
                out.add(" ".join([program_name(head), *words[start + 1 :]]))
    if depth < _NESTED_MAX:
        if "\\\n" in command:
            out |= deny_candidates(command.replace("\\\n", ""), depth + 1)
        nested = [w for segment in parsed.segments for w in segment[1:]] + list(parsed.extra_words)
        for word in nested:
            if any(c in word for c in " \t\n;&|()<>`$"):
                out |= deny_candidates(word, depth + 1)
    out.discard("")
    return out


def _legacy_segments(command: str) -> list[list[str]]:
    """The parts as agentcli read them before `bash_syntax` (shlex: `#` inside a word starts a comment,
    `;>` is one token). Wrong for allow rules; kept for deny rules only, so that a deny rule still matches
    everything it matched then."""
    try:
        lexer = shlex.shlex(command.strip(), posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes
        return []
    segments: list[list[str]] = [[]]
    skip = False
    for token in tokens:
        if skip:
            skip = False
        elif token in _LEGACY_CONTROL:
            segments.append([])
        elif set(token) <= set("<>&|;()"):  # read as a redirection: its target is skipped
            skip = token not in ("(", ")")
            if segments[-1] and segments[-1][-1].isdigit():
                segments[-1].pop()
        elif token not in ("{", "}"):
            segments[-1].append(token)
    return [words for words in segments if words]


def command_prefix(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """What "allow always" remembers of one simple command: its assignments, the program and a
    sub-command word (`git status`, `pytest`, `npm run`); None when only the exact command may be."""
    k = command_index(words)
    if k == len(words) or program_name(words[k]) in EXACT_ONLY:
        return None
    if k + 1 < len(words) and _SUBCOMMAND.match(words[k + 1]):
        return words[: k + 2]
    return words[: k + 1]


def rule_stem(words: tuple[str, ...]) -> str:
    """The start of a rule to suggest for this simple command (`git status` of `git status -s`)."""
    prefix = command_prefix(words)
    return " ".join(prefix if prefix is not None else words[: command_index(words) + 1])


class BashAnswers:
    """The Bash commands the person answered "allow always" to, for one session tree."""

    def __init__(self) -> None:
        self._prefixes: set[tuple[str, ...]] = set()  # of simple commands
        self._segments: set[tuple[str, ...]] = set()  # simple commands remembered exactly
        self._commands: set[str] = set()  # whole commands remembered exactly (blanks collapsed)

    def remember(self, parsed: ParsedCommand) -> None:
        if not parsed.certain:
            self._commands.add(parsed.text)
            return
        for words in parsed.segments:
            prefix = command_prefix(words)
            if prefix is None:
                self._segments.add(words)
            else:
                self._prefixes.add(prefix)

    def covers_segment(self, words: tuple[str, ...]) -> bool:
        """Whether an answer covers this simple command (a prefix always reaches past the assignments)."""
        return words in self._segments or any(words[: len(prefix)] == prefix for prefix in self._prefixes)

    def covers(self, parsed: ParsedCommand) -> bool:
        """Whether an answer covers the whole command: the same text, or every part of a certain split."""
        return parsed.text in self._commands or every_part_allowed(parsed, (), self)

    @staticmethod
    def scope(parsed: ParsedCommand) -> str:
        """Words for the dialog: what "allow always" would allow from then on."""
        if not parsed.certain:
            return "this exact command for the rest of this session"
        prefixes = sorted({" ".join(p) for words in parsed.segments if (p := command_prefix(words)) is not None})
        exact = sorted({" ".join(words) for words in parsed.segments if command_prefix(words) is None})
        parts = []
        if prefixes:
            parts.append("Bash commands starting with " + ", ".join(f"`{p}`" for p in prefixes))
        if exact:
            parts.append("exactly " + ", ".join(f"`{e}`" for e in exact))
        return " and ".join(parts) + " for the rest of this session"


def every_part_allowed(parsed: ParsedCommand, patterns: Iterable[str], answers: BashAnswers) -> bool:
    """A command split with certainty whose every simple command matches a pattern or an answer."""
    if not parsed.certain:
        return False
    patterns = list(patterns)
    return all(
        answers.covers_segment(words) or any(wild_match(pattern, " ".join(words)) for pattern in patterns)
        for words in parsed.segments
    )
