"""Find and render prompt files (bundled copy first, the repository's prompts/ in a checkout)."""

from __future__ import annotations

import datetime as _dt
import os
import platform
import threading
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from string import Template
from typing import NamedTuple

from agentcli.gitsafe import GitError, NoRepository, Repo, copy_index
from agentcli.resources import prompts_dir

INSTRUCTION_FILES = ("AGENTS.md", "CLAUDE.md")
INSTRUCTIONS_LIMIT = 20_000  # characters of project instructions put in a system prompt
GIT_STATUS_LINES = 30
_STATUS_TIMEOUT = 3.0  # seconds for each git command of the prompt's status


@cache
def load_prompt(relative: str) -> str:
    """Text of `prompts/<relative>`."""
    return (prompts_dir() / relative).read_text(encoding="utf-8")


_prefetched: dict[Path, Future[str]] = {}
_prefetch_lock = threading.Lock()


def prefetch_git_summary(workspace: Path) -> Future[str]:
    """Start `git_summary(workspace)` in a daemon thread; the next `git_summary` of that workspace takes its result.

    The one-shot calls it as soon as it knows the workspace, so git's own time (two processes; a large
    repository's status takes 0.1 s and more) overlaps the rest of start-up instead of adding to it.
    """
    future: Future[str] = Future()

    def work() -> None:
        try:
            future.set_result(_git_summary(workspace))
        except BaseException as exc:  # handed to the reader, as if it had run there
            future.set_exception(exc)

    with _prefetch_lock:
        _prefetched[workspace] = future
    threading.Thread(target=work, name="agentcli-git-status", daemon=True).start()
    return future


def git_summary(workspace: Path) -> str:
    """`git status --short --branch`, trimmed; a note when the workspace is not a git repository.

    Runs nothing the repository configured: the branch is read from its refs, the status in a private git dir
    over a copy of its index (`gitsafe`); submodules are left alone. A prefetched result (`prefetch_git_summary`)
    is used once.
    """
    with _prefetch_lock:
        future = _prefetched.pop(workspace, None)
    return future.result() if future is not None else _git_summary(workspace)


def _branch_line(repo: Repo) -> tuple[str, str | None]:
    """`git status --branch`'s first line (`## main...origin/main [ahead 1]`) and the HEAD commit (None: unborn)."""
    ref = repo.plumbing("symbolic-ref", "-q", "HEAD", check=False, timeout=_STATUS_TIMEOUT)
    name = ref.stdout.decode("utf-8", "surrogateescape").strip()
    if ref.returncode != 0 or not name.startswith("refs/heads/"):
        head = repo.plumbing("rev-parse", "--verify", "-q", "HEAD^{commit}", check=False, timeout=_STATUS_TIMEOUT)
        return "## HEAD (no branch)", head.stdout.decode().strip() or None
    out = repo.plumbing("for-each-ref", "--format=%(refname)%00%(objectname)%00%(upstream:short)%00%(upstream:track)",
                        name, timeout=_STATUS_TIMEOUT).stdout.decode("utf-8", "surrogateescape")
    short = name.removeprefix("refs/heads/")
    for line in out.splitlines():
        refname, commit, upstream, track = [*line.split("\0"), "", "", ""][:4]
        if refname == name:
            return f"## {short}" + (f"...{upstream}" if upstream else "") + (f" {track}" if track else ""), commit
    return f"## No commits yet on {short}", None


def _git_summary(workspace: Path) -> str:
    try:
        repo = Repo.discover(workspace)
    except NoRepository:
        return "(not a git repository)"
    except GitError:
        return "(git status unavailable)"
    if repo.top is None:
        return "(not a git repository)"
    where = workspace.resolve()
    if not where.is_relative_to(repo.top.resolve()) or not os.path.lexists(repo.top / ".git"):
        return "(git status unavailable)"  # a work tree the repository's config moved elsewhere
    try:
        branch, head = _branch_line(repo)
        with repo.private(head, excludes=True) as private:
            index = private.git_dir / "index"
            copy_index(repo.git_dir / "index", index)
            proc = private.run("status", "--short", "--ignore-submodules=all", work_tree=repo.top, index=index,
                               cwd=where, timeout=_STATUS_TIMEOUT)
    except GitError:
        return "(git status unavailable)"
    lines = [branch, *proc.stdout.decode("utf-8", "replace").splitlines()]
    if len(lines) > GIT_STATUS_LINES:
        lines = [*lines[:GIT_STATUS_LINES], f"... and {len(lines) - GIT_STATUS_LINES} more changed files"]
    return "\n".join(lines)


def _read_instructions(workspace: Path, name: str) -> str | None:
    """The text of one instruction file, cut at INSTRUCTIONS_LIMIT; None when there is none.

    A workspace's files are untrusted: a symlink that leaves the workspace (to `~/.ssh/id_rsa`,
    `/proc/self/environ`) is not followed, and at most a bounded prefix of the file is read.
    """
    path = workspace / name
    try:
        resolved = path.resolve()
        if not path.is_file():
            return None
        if not resolved.is_relative_to(workspace.resolve()):
            return f"[{name} not read: it is a symlink to a file outside the workspace]"
        with open(resolved, "rb") as handle:
            raw = handle.read(INSTRUCTIONS_LIMIT * 4 + 1)
    except (OSError, RuntimeError):
        return None
    text = raw.decode("utf-8", errors="replace").strip()
    if len(text) > INSTRUCTIONS_LIMIT or len(raw) > INSTRUCTIONS_LIMIT * 4:
        text = text[:INSTRUCTIONS_LIMIT] + f"\n[... {name} cut at {INSTRUCTIONS_LIMIT} characters]"
    return text


def project_instructions(workspace: Path) -> str:
    """AGENTS.md / CLAUDE.md of the workspace, each under a heading, capped."""
    parts: list[str] = []
    for name in INSTRUCTION_FILES:
        text = _read_instructions(workspace, name)
        if text is not None:
            parts.append(f"## {name}\n\n{text}")
    if not parts:
        return ""
    return "# Project instructions\n\nThe project's own instructions; follow them.\n\n" + "\n\n".join(parts)


@dataclass(frozen=True, slots=True)
class SystemPrompt:
    """A system prompt in two parts: `stable`, the same from day to day and commit to commit (the role, the
    workspace, the platform, the project's instructions), then `current` (the date, the git status; a
    subagent's task). What changes comes last, so the provider's prompt cache keeps serving the rest."""

    stable: str
    current: str = ""

    @property
    def text(self) -> str:
        """The whole prompt, as sent."""
        return self.stable + self.current


class Style(NamedTuple):
    """An output style as the prompt takes it (`subagents.definitions.output_styles`)."""

    name: str
    instructions: str
    keep_coding: bool  # agentcli's coding instructions ("# How to work" of system.md) stay


_CODING = "\n# How to work"  # where system.md's coding instructions start, after the identity


def styled_role(style: Style | None) -> str:
    """The main agent's role: `system.md`, or with an output style its identity line, its coding instructions only
    when the style keeps them, then the style's instructions."""
    head = load_prompt("system.md").strip()
    if style is None:
        return head
    identity, _, _coding = head.partition(_CODING)
    kept = head if style.keep_coding else identity.strip()
    return f"{kept}\n\n# Output style: {style.name}\n{style.instructions.strip()}"


def render_system_prompt(
    workspace: Path,
    *,
    instructions: bool | str = True,
    today: _dt.date | None = None,
    role: str | None = None,
    extra_dirs: Sequence[Path] = (),
    style: Style | None = None,
) -> SystemPrompt:
    """The main agent's system prompt: its role (`system.md`, shaped by an output `style`, or `role`: a program's own
    prompt, taken as written),
    the rules for untrusted data and the workspace facts (`system_facts.md`), the project instructions (all
    stable), then `system_now.md` with the date and the git status (current).

    `instructions`: True reads AGENTS.md / CLAUDE.md, False leaves them out, a string is their text already read.
    `extra_dirs`: the additional directories, one line in the facts (none: the prompt as without them).
    """
    facts = Template(load_prompt("system_facts.md")).safe_substitute(
        workspace=str(workspace), platform=f"{platform.system()} {platform.release()}"
    ).rstrip()
    if extra_dirs:
        facts += "\n" + Template(load_prompt("system_dirs.md")).safe_substitute(
            dirs=", ".join(str(d) for d in extra_dirs)).strip()
    head = (styled_role(style) if role is None else role).strip()
    stable = f"{head}\n\n{facts}" if head else facts
    extra = instructions if isinstance(instructions, str) else ""
    if instructions is True:
        extra = project_instructions(workspace)
    if extra.strip():
        stable = f"{stable}\n\n{extra.strip()}"
    current = Template(load_prompt("system_now.md")).safe_substitute(
        date=(today or _dt.date.today()).isoformat(), git_status=git_summary(workspace)
    )
    return SystemPrompt(stable, f"\n\n{current.strip()}\n")
