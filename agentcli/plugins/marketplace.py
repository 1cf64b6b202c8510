"""Marketplaces: a folder or git repository with `.claude-plugin/marketplace.json` listing plugins and where each
one is fetched from, and the sources a marketplace itself is added from (`extraKnownMarketplaces`, the CLI).

A plugin's `source` is a `./path` inside the marketplace, `{"source": "github", "repo": "owner/repo"}`,
`{"source": "url", "url": "https://….git"}` or `{"source": "git-subdir", "url": …, "path": …}` (each with an
optional `ref`, a `sha` it is pinned to, and `path` for a folder inside that repository). A marketplace's is
`{"source": "github", "repo": …}`, `{"source": "git", "url": …}`, `{"source": "directory", "path": …}`, or, as
Claude Code has them, the marketplace.json file itself: `{"source": "url", "url": "https://…/marketplace.json"}`
or `{"source": "file", "path": …}` (`Source.document`; its plugins must come from repositories, as a `./path`
has no folder to be in). npm and pip sources are not fetched (one line says so).

An entry may also name the plugin's parts (`skills`, `hooks`, ...): they fill in what its manifest leaves out,
and with `"strict": false` they are its whole definition (`Entry.record`, kept in the store's state, never in the
plugin's folder; `manifest.with_entry` applies it).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agentcli.plugins.manifest import COMPONENTS, PluginError, inside, plugin_name_problem, read_json
from agentcli.text import one_line

MARKETPLACE = ".claude-plugin/marketplace.json"
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9_.-]+$")


@dataclass(frozen=True, slots=True)
class Source:
    """Where a plugin or a marketplace comes from: a local folder, or a git repository (a folder inside it)."""

    path: Path | None = None  # a local folder
    url: str = ""  # a git repository
    ref: str = ""
    subdir: str = ""  # a './path' inside the repository
    sha: str = ""  # the commit it is pinned to
    document: bool = False  # a marketplace given as its marketplace.json file: at `url` (http) or `path`

    def as_json(self) -> dict[str, str]:
        """How the store records it."""
        if self.document:
            return {"source": "file", "path": str(self.path)} if self.path is not None else {
                "source": "url", "url": self.url}
        if self.path is not None:
            return {"source": "directory", "path": str(self.path)}
        return {"source": "git", "url": self.url, **({"ref": self.ref} if self.ref else {}),
                **({"path": self.subdir} if self.subdir else {}), **({"sha": self.sha} if self.sha else {})}

    def describe(self) -> str:
        """One line for listings and prompts."""
        if self.path is not None:
            return str(self.path)
        return (self.url + (f"#{self.ref}" if self.ref else "") + (f"@{self.sha[:12]}" if self.sha else "")
                + (f" ({self.subdir})" if self.subdir else ""))


@dataclass(frozen=True, slots=True)
class Entry:
    """One plugin a marketplace lists."""

    name: str
    source: Source
    description: str = ""
    version: str = ""
    strict: bool = True  # false: the entry is the plugin's whole definition (only its listed parts load)
    parts: Mapping[str, Any] = field(default_factory=dict)  # its `commands`, `skills`, `hooks`, ... as written

    def record(self) -> dict[str, Any]:
        """What every later read of the plugin needs of this entry (`manifest.with_entry`): its `strict` and parts,
        when it names any; else nothing."""
        return {"strict": self.strict, **self.parts} if self.parts or not self.strict else {}


@dataclass(frozen=True, slots=True)
class Marketplace:
    """A marketplace read from its folder."""

    name: str
    root: Path
    entries: dict[str, Entry]
    problems: tuple[str, ...] = ()


def _github(repo: object, what: str) -> str:
    if not isinstance(repo, str) or _REPO.fullmatch(repo.strip()) is None or ".." in repo:
        raise PluginError(f"{what}: 'repo' must be owner/name")
    return f"https://github.com/{repo.strip()}.git"


def _text(raw: dict[str, Any], key: str, what: str) -> str:
    value = raw.get(key, "")
    if not isinstance(value, str):
        raise PluginError(f"{what}: '{key}' must be a string")
    return value.strip()


def parse_source(raw: object, what: str, *, root: Path | None = None, market: bool = False) -> Source:
    """A plugin's or marketplace's `source`. A `./path` (or `directory`) is inside `root` when one is given
    (a marketplace's plugins), else an absolute folder of the person's (a marketplace they add). With `market`
    (a marketplace's own source), `url` and `file` name its marketplace.json file."""
    if isinstance(raw, str):
        if root is not None:
            return Source(path=inside(root, raw, what, "the marketplace"))
        raw = {"source": "directory", "path": raw}
    if not isinstance(raw, dict):
        raise PluginError(f"{what}: 'source' must be a path or an object")
    kind = raw.get("source")
    if market and (kind == "file" or (kind == "url" and is_document_url(str(raw.get("url", ""))))):
        return _document(raw, kind, what)  # (any other `url`, a repository, is cloned as before)
    if kind == "github":
        url = _github(raw.get("repo"), what)
    elif kind in ("url", "git", "git-subdir"):
        url = _text(raw, "url", what)
        if not url:
            raise PluginError(f"{what}: a {kind} source needs a 'url'")
        if kind == "git-subdir" and not _text(raw, "path", what):
            raise PluginError(f"{what}: a git-subdir source needs a 'path'")
    elif kind == "directory" and root is None:
        path = Path(_text(raw, "path", what)).expanduser()
        if not path.is_absolute():
            raise PluginError(f"{what}: a directory source needs an absolute path")
        return Source(path=path)
    else:
        raise PluginError(f"{what}: source {one_line(str(kind), 40)!r} is not fetched by agentcli "
                          "(a './path', github, url, git or git-subdir)")
    if root is not None and not url.startswith("https://"):  # a marketplace may not send agentcli to local files
        raise PluginError(f"{what}: a marketplace's git source must be an https:// URL")
    subdir = _text(raw, "path", what)
    if subdir:
        inside(Path("/x"), subdir if subdir.startswith("./") else "./" + subdir, what)  # shape only
    sha = _text(raw, "sha", what)
    if sha and re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", sha) is None:
        raise PluginError(f"{what}: 'sha' must be a full commit id")
    return Source(url=url, ref=_text(raw, "ref", what), subdir=subdir, sha=sha)


def is_document_url(url: str) -> bool:
    """Whether a marketplace's `url` names its marketplace.json (http or https, not a `.git` repository), as
    Claude Code reads `{"source": "url"}`; an ssh:// or .git address is a repository."""
    text = url.strip()
    return text.startswith(("https://", "http://")) and not urlsplit(text).path.rstrip("/").endswith(".git")


def _document(raw: dict[str, Any], kind: str, what: str) -> Source:
    """A marketplace given as its marketplace.json: an http(s) URL (`is_document_url`), or an absolute path."""
    if kind == "url":
        return Source(url=_text(raw, "url", what), document=True)
    path = Path(_text(raw, "path", what)).expanduser()
    if not path.is_absolute():
        raise PluginError(f"{what}: a file source needs an absolute path")
    return Source(path=path, document=True)


def read_marketplace(folder: Path) -> Marketplace:
    """The marketplace in `folder`; PluginError when it cannot be read. An entry that cannot be used is a
    problem line, the others are kept."""
    root = folder.resolve()
    doc = read_json(inside(root, "./" + MARKETPLACE, "marketplace.json"), f"marketplace {folder}")
    if not isinstance(doc, dict) or not isinstance(doc.get("plugins"), list):
        raise PluginError(f"marketplace {folder}: {MARKETPLACE} needs a \"plugins\" list")
    name = doc.get("name")
    if problem := plugin_name_problem(name):
        raise PluginError(f"marketplace {folder}: {problem}")
    entries: dict[str, Entry] = {}
    problems: list[str] = []
    for number, raw in enumerate(doc["plugins"]):
        what = f"marketplace {name}: plugins[{number}]"
        try:
            if not isinstance(raw, dict):
                raise PluginError(f"{what}: not an object")
            plugin = raw.get("name")
            if problem := plugin_name_problem(plugin):
                raise PluginError(f"{what}: {problem}")
            entry = Entry(str(plugin), parse_source(raw.get("source"), f"{what} ({plugin})", root=root),
                          one_line(str(raw.get("description") or ""), 300), one_line(str(raw.get("version") or ""), 40),
                          raw.get("strict") is not False, {k: raw[k] for k in COMPONENTS if k in raw})
        except PluginError as exc:
            problems.append(str(exc))
            continue
        entries.setdefault(entry.name, entry)
    return Marketplace(str(name), root, entries, tuple(problems))


def marketplace_source(text: str) -> Source:
    """What `agentcli plugins marketplace add` is given: a folder, `owner/repo` (GitHub), a git URL, or a
    marketplace.json file (a path, or an http(s) URL ending in `.json`)."""
    value = text.strip()
    candidate = Path(value).expanduser()
    if candidate.is_file() and candidate.suffix == ".json":
        return Source(path=candidate.resolve(), document=True)
    if is_document_url(value) and urlsplit(value).path.endswith(".json"):
        return Source(url=value, document=True)
    if value.startswith(("/", "./", "../", "~")) or candidate.is_dir():
        return Source(path=candidate.resolve())
    if _REPO.fullmatch(value) and ".." not in value:
        return Source(url=f"https://github.com/{value}.git")
    if "://" in value:
        return Source(url=value)
    raise PluginError(f"{one_line(value, 80)!r}: not a folder, owner/repo, git URL or marketplace.json")
