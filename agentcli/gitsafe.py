"""Every git command agentcli runs, through one runner that runs nothing a repository configured.

A repository's `.git/config` is as untrusted as its files, and git (2.39 here) cannot be told to skip it: no
variable turns the repository's own config off, and a conditional include (`includeIf "onbranch:…"`,
`"gitdir:…"`, `"hasconfig:…"`) makes what it says depend on the process reading it, so no list of its filter
names, read beforehand, holds for the command that follows. The runner therefore never asks git to do, against
the repository, anything such config could turn into a program:

- `Repo.plumbing`: the commands that run against the repository's own git dir are refs and worktree bookkeeping
  only (`PLUMBING`: rev-parse, symbolic-ref, for-each-ref, update-ref, branch -D, worktree add --no-checkout /
  list / remove --force / prune, var, config --get). None reads a work tree or applies `.gitattributes`, so no
  filter, diff or merge driver of any name is looked up. What of the config could still start a program in
  them has a fixed name, and each is overridden on the command line (`OVERRIDES`), which git reads after every
  file and every include, whatever its condition; every transport is refused by `GIT_ALLOW_PROTOCOL` (a partial
  clone's lazy fetch included).
- `Private`: whatever reads a work tree or applies attributes (add, read-tree -u, status, diff-tree, cat-file,
  merge-file, commit-tree) runs in a git dir agentcli writes for the occasion: its own config (none of a
  filter, driver, hook or fsmonitor), system and global config off, no `info/attributes`, sharing only the
  repository's object store (`GIT_OBJECT_DIRECTORY`). A `.gitattributes` may name any driver there: no config
  git reads defines one, so nothing runs. The work tree, the index and the git dir are always given by
  absolute path, never found from a folder's `.git`.
- The environment is rebuilt from a short list (`_KEPT`): no provider key, no agentcli variable, no `GIT_*` of
  the caller's but the person's identity.
- `clone` is the one command that fetches (a plugin or marketplace): a shallow clone into a new folder, https or
  file transport only, no submodule, with the `OVERRIDES`; nothing of the remote's config comes with a clone.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path

TIMEOUT = 120.0
#: The person's variables a git command keeps; everything else (provider keys, agentcli's own, GIT_DIR, …) goes.
_KEPT = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "XDG_CONFIG_HOME",
         "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME", "GIT_COMMITTER_EMAIL", "EMAIL",
         "GIT_CONFIG_GLOBAL", "GIT_CONFIG_NOSYSTEM")
_FIXED_ENV = {
    "GIT_ALLOW_PROTOCOL": "",  # no transport at all: nothing is fetched, no ssh or helper started
    "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "PAGER": "cat", "GIT_EDITOR": ":", "GIT_SEQUENCE_EDITOR": ":",
    "GIT_NO_REPLACE_OBJECTS": "1", "GIT_OPTIONAL_LOCKS": "0", "GIT_LFS_SKIP_SMUDGE": "1", "GIT_ATTR_NOSYSTEM": "1",
}
#: Settings with a fixed name that could start a program in the commands agentcli runs, switched off.
OVERRIDES = (
    ("core.hooksPath", "/dev/null"), ("core.fsmonitor", ""), ("core.pager", "cat"), ("core.editor", ":"),
    ("core.sshCommand", "false"), ("credential.helper", ""), ("commit.gpgSign", "false"), ("tag.gpgSign", "false"),
    ("gc.auto", "0"), ("maintenance.auto", "false"), ("submodule.recurse", "false"),
    ("submodule.propagateBranches", "false"), ("protocol.allow", "never"), ("core.untrackedCache", "false"),
)
#: The commands that may run against a repository's own git dir (and what each must or must not be given).
PLUMBING = frozenset({"rev-parse", "symbolic-ref", "for-each-ref", "update-ref", "branch", "worktree", "var",
                      "config"})
_COPY_LIMIT = 1 << 20  # bytes of `info/exclude` copied into a private git dir


class GitError(Exception):
    """A git command failed or cannot run; the message is one line."""


class NoRepository(GitError):
    """The folder is in no git repository."""


def git_executable() -> str | None:
    """The `git` on an absolute PATH entry (an empty or relative one would run a repository's own), or None."""
    path = os.pathsep.join(p for p in os.environ.get("PATH", os.defpath).split(os.pathsep) if os.path.isabs(p))
    return shutil.which("git", path=path)


def clean_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment of a git command: the person's locale, home and identity, agentcli's fixed settings."""
    env = {k: v for k, v in os.environ.items() if k in _KEPT or k.startswith("LC_")}
    env.update(_FIXED_ENV)
    env.update(extra or {})
    return env


def _overrides() -> list[str]:
    return [arg for key, value in OVERRIDES for arg in ("-c", f"{key}={value}")]


def _run(argv: list[str], *, cwd: Path, env: Mapping[str, str], check: bool, stdin: bytes | None,
         timeout: float) -> subprocess.CompletedProcess[bytes]:
    name = command_of(argv[1:])
    try:
        proc = subprocess.run(argv, cwd=cwd, env=dict(env), input=stdin, capture_output=True, timeout=timeout)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise GitError(f"git {name} failed: {exc}") from None
    if check and proc.returncode != 0:
        why = " ".join(proc.stderr.decode("utf-8", "replace").split())[:300]
        raise GitError(f"git {name} failed: {why or f'exit code {proc.returncode}'}")
    return proc


def command_of(args: list[str] | tuple[str, ...]) -> str:
    """The git command of a command line's arguments (`-C x -c k=v status …` → status)."""
    rest = iter(args)
    for arg in rest:
        if arg in ("-C", "-c"):
            next(rest, None)
        elif not arg.startswith("-"):
            return arg
    return "git"


def _check_plumbing(args: tuple[str, ...]) -> None:
    """Refuse (a programming error) a command that could read a work tree or apply attributes."""
    if not args or args[0] not in PLUMBING:
        raise ValueError(f"git {args[:1]} may not run against a repository's own git dir")
    rest = set(args[1:])
    if args[0] == "worktree" and not (
            (args[1:2] == ("add",) and "--no-checkout" in rest) or args[1:2] in (("list",), ("prune",))
            or (args[1:2] == ("remove",) and "--force" in rest)):
        raise ValueError(f"git worktree {args[1:2]}: only add --no-checkout, list, remove --force and prune")
    if args[0] == "branch" and not rest & {"-D", "--delete"}:
        raise ValueError("git branch: only -D")
    if args[0] == "config" and not rest & {"--get", "--get-all", "--get-regexp"}:
        raise ValueError("git config: only reading")


def read_regular(path: Path, limit: int | None = None) -> bytes | None:
    """A regular file's bytes (at most `limit`), not through a symlink; None when it is anything else."""
    fd = _open_regular(path)
    if fd is None:
        return None
    with os.fdopen(fd, "rb") as handle:
        return handle.read() if limit is None else handle.read(limit)


def _open_regular(path: Path) -> int | None:
    """A descriptor of `path` when it is a regular file (never through a symlink, never blocking on a pipe)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def copy_index(source: Path, dest: Path) -> bool:
    """Copy a git index that is a regular file (not a symlink, a pipe or a device); whether there was one."""
    fd = _open_regular(source)
    if fd is None:
        return False
    with os.fdopen(fd, "rb") as handle, open(dest, "wb") as out:
        shutil.copyfileobj(handle, out)
    return True


@dataclass(frozen=True, slots=True)
class Repo:
    """A repository found once from a folder, then always named by absolute paths."""

    exe: str
    git_dir: Path  # the folder's own git dir (a linked worktree's is `<common>/worktrees/<name>`)
    common_dir: Path  # objects, refs, config, worktrees/
    top: Path | None  # the work tree (None: a bare repository)
    object_format: str

    @classmethod
    def discover(cls, folder: Path) -> Repo:
        """The repository `folder` is in (the one discovery agentcli makes). Raises `GitError` / `NoRepository`."""
        exe = git_executable()
        if exe is None:
            raise GitError("git is not installed (no git on PATH)")
        proc = _run([exe, "-C", str(folder), *_overrides(), "rev-parse", "--path-format=absolute",
                     "--is-bare-repository", "--absolute-git-dir", "--git-common-dir", "--show-object-format",
                     "--show-toplevel"], cwd=folder, env=clean_env(), check=False, stdin=None, timeout=TIMEOUT)
        lines = proc.stdout.decode("utf-8", "surrogateescape").splitlines()
        if len(lines) < 4:
            raise NoRepository(f"{folder} is not a git repository")
        bare = lines[0] == "true"
        top = Path(lines[4]) if not bare and proc.returncode == 0 and len(lines) > 4 else None
        if not bare and top is None:
            raise GitError(f"git cannot read the repository of {folder}")
        return cls(exe, Path(lines[1]), Path(lines[2]), top, lines[3])

    def plumbing(self, *args: str, check: bool = True, stdin: bytes | None = None,
                 extra_env: Mapping[str, str] | None = None,
                 timeout: float = TIMEOUT) -> subprocess.CompletedProcess[bytes]:
        """Run one of `PLUMBING` against the repository's own git dir (its config read, nothing of it run)."""
        _check_plumbing(args)
        return _run([self.exe, f"--git-dir={self.git_dir}", *_overrides(), *args], cwd=self.git_dir,
                    env=clean_env(extra_env), check=check, stdin=stdin, timeout=timeout)

    def text(self, *args: str) -> str:
        """The stripped output of `plumbing(*args)`."""
        return self.plumbing(*args).stdout.decode("utf-8", "surrogateescape").strip()

    def excludes_file(self) -> str | None:
        """`core.excludesFile` as the person set it (a regular file only), for a private git dir's ignores."""
        proc = self.plumbing("config", "--type=path", "--get", "core.excludesFile", check=False)
        value = proc.stdout.decode("utf-8", "surrogateescape").strip()
        return value if proc.returncode == 0 and value and os.path.isfile(value) else None

    @contextlib.contextmanager
    def private(self, head: str | None = None, *, excludes: bool = False) -> Iterator[Private]:
        """A private git dir sharing this repository's objects (removed after); `head`: its HEAD commit (else
        unborn); `excludes`: ignore what the person ignores here (`info/exclude`, `core.excludesFile`)."""
        folder = Path(tempfile.mkdtemp(prefix="agentcli-git-"))
        try:
            (folder / "refs").mkdir()
            (folder / "HEAD").write_text(f"{head}\n" if head else "ref: refs/heads/agentcli-private\n")
            version, extension = (1, "[extensions]\n\tobjectFormat = sha256\n") if self.object_format == "sha256" \
                else (0, "")
            (folder / "config").write_text(f"[core]\n\trepositoryformatversion = {version}\n\tbare = false\n"
                                           f"\tlogAllRefUpdates = false\n{extension}")
            extra: list[str] = []
            if excludes:
                patterns = read_regular(self.common_dir / "info" / "exclude", _COPY_LIMIT)
                if patterns:
                    (folder / "info").mkdir()
                    (folder / "info" / "exclude").write_bytes(patterns)
                if (person := self.excludes_file()) is not None:
                    extra += ["-c", f"core.excludesFile={person}"]
            yield Private(self, folder, tuple(extra))
        finally:
            shutil.rmtree(folder, ignore_errors=True)


@dataclass(frozen=True, slots=True)
class Private:
    """A git dir of agentcli's own over a repository's objects: work trees and indexes are given explicitly."""

    repo: Repo
    git_dir: Path
    extra: tuple[str, ...] = ()

    def run(self, *args: str, work_tree: Path | None = None, index: Path | None = None, cwd: Path | None = None,
            check: bool = True, stdin: bytes | None = None, extra_env: Mapping[str, str] | None = None,
            timeout: float = TIMEOUT) -> subprocess.CompletedProcess[bytes]:
        """Run `git ARGS` here (over `work_tree` with `index`, when given)."""
        env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
               "GIT_OBJECT_DIRECTORY": str(self.repo.common_dir / "objects"), **(extra_env or {})}
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        argv = [self.repo.exe, f"--git-dir={self.git_dir}"]
        if work_tree is not None:
            argv.append(f"--work-tree={work_tree}")
        return _run([*argv, *_overrides(), *self.extra, *args], cwd=cwd or work_tree or self.git_dir,
                    env=clean_env(env), check=check, stdin=stdin, timeout=timeout)

    def text(self, *args: str, work_tree: Path | None = None, index: Path | None = None,
             extra_env: Mapping[str, str] | None = None) -> str:
        """The stripped output of `run(*args)`."""
        proc = self.run(*args, work_tree=work_tree, index=index, extra_env=extra_env)
        return proc.stdout.decode("utf-8", "surrogateescape").strip()


_IDENT = re.compile(r"^(?P<name>.*) <(?P<email>[^<>]*)> \d+ [+-]\d{4}$")


def identity(repo: Repo) -> dict[str, str] | None:
    """The author and committer git would record in `repo` (the person's identity), as variables; None when git
    does not know who commits there."""
    found: dict[str, str] = {}
    for role in ("AUTHOR", "COMMITTER"):
        proc = repo.plumbing("var", f"GIT_{role}_IDENT", check=False)
        match = _IDENT.match(proc.stdout.decode("utf-8", "surrogateescape").strip())
        if proc.returncode != 0 or match is None:
            return None
        found[f"GIT_{role}_NAME"], found[f"GIT_{role}_EMAIL"] = match["name"], match["email"]
    return found


@dataclass(frozen=True, slots=True)
class Shadow:
    """A repository agentcli owns outright (checkpoints): its git dir, config and objects are agentcli's, it runs
    over a work tree given by absolute path with an index given by absolute path, and no config but its own is
    read (system and global off, the `OVERRIDES` on top)."""

    exe: str
    git_dir: Path

    @classmethod
    def at(cls, git_dir: Path) -> Shadow:
        """The shadow repository in `git_dir` (made by the caller). Raises `GitError` without a git."""
        exe = git_executable()
        if exe is None:
            raise GitError("git is not installed (no git on PATH)")
        return cls(exe, git_dir)

    def run(self, *args: str, work_tree: Path | None = None, index: Path | None = None, check: bool = True,
            stdin: bytes | None = None, timeout: float = TIMEOUT) -> subprocess.CompletedProcess[bytes]:
        """Run `git ARGS` in the shadow repository (over `work_tree` with `index`, when given)."""
        env = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
        if index is not None:
            env["GIT_INDEX_FILE"] = str(index)
        argv = [self.exe, f"--git-dir={self.git_dir}"]
        if work_tree is not None:
            argv.append(f"--work-tree={work_tree}")
        return _run([*argv, *_overrides(), *args], cwd=work_tree or self.git_dir, env=clean_env(env), check=check,
                    stdin=stdin, timeout=timeout)


#: The transports a clone may use: a remote over https, or a local repository (a path or file://).
CLONE_PROTOCOLS = ("https", "file")
_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


def clone_url(source: str) -> str:
    """`source` as git should fetch it: an https URL, a file:// URL or an absolute local path (made file://);
    GitError for anything else (ssh, ext::, a leading dash, a relative path)."""
    text = source.strip()
    if text.startswith("/"):
        return Path(text).resolve().as_uri()
    scheme, sep, _ = text.partition("://")
    if sep and scheme in CLONE_PROTOCOLS and not any(ch.isspace() for ch in text):
        return text
    raise GitError(f"cannot clone {text[:120]!r}: only https:// and file:// URLs or an absolute path")


def clone(source: str, dest: Path, *, ref: str = "", sha: str = "", timeout: float = 300.0) -> str:
    """A shallow clone of `source` (`clone_url`) at `ref` (a branch or tag; default: its HEAD) into `dest`, which
    must not exist; its commit. With `sha` (a full commit id), that commit is fetched and checked out, and GitError
    unless the work tree is at it. No submodule, hook or helper runs; only the https and file transports."""
    exe = git_executable()
    if exe is None:
        raise GitError("git is not installed")
    url = clone_url(source)
    if ref and (ref.startswith("-") or any(ch.isspace() for ch in ref)):
        raise GitError(f"cannot clone at {ref[:60]!r}: not a branch or tag name")
    if sha and _SHA.fullmatch(sha) is None:
        raise GitError(f"cannot clone at {sha[:80]!r}: not a full commit id")
    allow = [arg for name in CLONE_PROTOCOLS for arg in ("-c", f"protocol.{name}.allow=always")]
    argv = [exe, *_overrides(), *allow, "clone", "--quiet", "--depth", "1", "--no-tags", "--single-branch",
            "--no-recurse-submodules", *(["--branch", ref] if ref else []), "--", url, str(dest)]
    env = clean_env({"GIT_ALLOW_PROTOCOL": ":".join(CLONE_PROTOCOLS)})
    _run(argv, cwd=dest.parent, env=env, check=True, stdin=None, timeout=timeout)
    in_clone = [exe, f"--git-dir={dest / '.git'}", f"--work-tree={dest}", *_overrides()]
    head = _head(in_clone, dest)
    if sha and head != sha:
        _run([*in_clone, *allow, "fetch", "--quiet", "--depth", "1", "--no-tags", "--no-recurse-submodules",
              "origin", sha], cwd=dest, env=env, check=True, stdin=None, timeout=timeout)
        _run([*in_clone, "checkout", "--quiet", "--detach", sha], cwd=dest, env=clean_env(), check=True, stdin=None,
             timeout=TIMEOUT)
        head = _head(in_clone, dest)
        if head != sha:
            raise GitError(f"cannot clone at {sha}: the checkout is at {head}")
    return head


def _head(in_clone: list[str], dest: Path) -> str:
    proc = _run([*in_clone, "rev-parse", "HEAD"], cwd=dest, env=clean_env(), check=True, stdin=None, timeout=TIMEOUT)
    return proc.stdout.decode("ascii", "replace").strip()
