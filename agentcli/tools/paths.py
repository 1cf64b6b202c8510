"""Workspace confinement for file tools, and the glob matcher every tool and rule shares.

Glob syntax (one matcher for `write_paths`, permission rules, Glob and Grep's `include`):
`*` matches within one path segment, `**` across segments (`src/**`, `**/*.py`), `?` one
character, `[abc]` / `[!abc]` a class, `{a,b}` alternatives. Anchored patterns match the
whole workspace-relative path; unanchored ones (`anchored=False`) without a `/` match the
file name at any depth, like `.gitignore` (`*.md` matches `docs/x.md`). Matching never
backtracks (`tools.globmatch`): no pattern or path can make it slow.
"""

from __future__ import annotations

import os
from pathlib import Path

from agentcli.tools.base import ToolContext, ToolError
from agentcli.tools.globmatch import compile_glob


def resolve_in_workspace(ctx: ToolContext, raw: str, *, for_write: bool = False) -> Path:
    """The resolved absolute path of `raw`, refusing anything that lands outside the workspace and the
    additional directories (`ctx.extra_roots`).

    Relative paths are taken from the workspace; an additional directory is reached by an absolute or `~/` path.
    Symlinks (of the file or any parent) are followed, so one pointing outside is refused; a file that does not
    exist yet resolves through its nearest existing parent. With `for_write`, the path must also match one glob of
    `ctx.write_paths` (when set) and of every list in `ctx.write_scopes` (the ancestors' confinement). Those globs
    are workspace-relative: an agent confined by them never writes in an additional directory.
    """
    text = raw.strip()
    if not text:
        raise ToolError("Path is empty: give a file path relative to the workspace")
    if "\x00" in text:
        raise ToolError(f"Path {text!r} contains a NUL byte")
    workspace = ctx.workspace.resolve()
    candidate = Path(os.path.expanduser(text))
    if not candidate.is_absolute():
        candidate = workspace / candidate
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # symlink loops, permission problems
        raise ToolError(f"Cannot resolve path {text}: {exc}") from None
    inside = resolved == workspace or resolved.is_relative_to(workspace)
    if not inside and not within_extra_root(ctx, resolved):
        roots = [workspace, *ctx.extra_roots]
        lexical = any(_lexically_inside(candidate, root) for root in roots)
        where = (f"the workspace ({workspace})" if not ctx.extra_roots else
                 f"the workspace ({workspace}) and the additional directories ({', '.join(map(str, ctx.extra_roots))})")
        raise ToolError(
            f"Path {text} is outside {where}; file tools only work inside "
            + ("it" if not ctx.extra_roots else "them")
            + (" (it is a symlink that points outside)" if lexical else "")
        )
    if for_write:
        scopes = (*([tuple(ctx.write_paths)] if ctx.write_paths is not None else []), *ctx.write_scopes)
        rel = display_path(ctx, resolved) if scopes else ""
        if scopes and not inside:
            raise ToolError(
                f"Subagent lacks permission for required tools: write to {rel} is outside write_paths "
                "(its globs are workspace-relative; an additional directory is not written by a confined subagent)"
            )
        for scope in scopes:
            if not any(match_glob(glob, rel) for glob in scope):
                globs = ", ".join(scope) or "none"
                raise ToolError(
                    f"Subagent lacks permission for required tools: write to {rel} is outside write_paths ({globs})"
                )
    return resolved


def resolve_for_read(ctx: ToolContext, raw: str) -> Path:
    """`resolve_in_workspace`, or a path inside one of `ctx.read_roots` (a loaded skill's folder, read-only).

    Only Read and LS use it: every writing tool keeps `resolve_in_workspace(for_write=True)`, so a skill's folder
    outside the workspace can be read but never written. Symlinks are followed before the check, as there.
    """
    try:
        return resolve_in_workspace(ctx, raw)
    except ToolError:
        text = os.path.expanduser(raw.strip())
        if ctx.read_roots and text and "\x00" not in text and Path(text).is_absolute():
            try:
                resolved = Path(text).resolve(strict=False)
            except (OSError, RuntimeError):
                resolved = None
            if resolved is not None and any(resolved == root or resolved.is_relative_to(root)
                                             for root in ctx.read_roots):
                return resolved
        raise


def within_extra_root(ctx: ToolContext, resolved: Path) -> bool:
    """Whether the resolved path is in one of the agent's additional directories (`ctx.extra_roots`)."""
    return any(resolved == root or resolved.is_relative_to(root) for root in ctx.extra_roots)


def _lexically_inside(candidate: Path, workspace: Path) -> bool:
    """Whether the path, before following symlinks, names something inside the workspace."""
    normal = Path(os.path.normpath(candidate))
    return normal == workspace or normal.is_relative_to(workspace)


def display_path(ctx: ToolContext, path: Path) -> str:
    """`path` relative to the workspace, with `/` separators (`.` for the workspace itself)."""
    workspace = ctx.workspace.resolve()
    try:
        rel = path.relative_to(workspace)
    except ValueError:
        return str(path)
    text = rel.as_posix()
    return text if text and text != "." else "."


def normalize_rel(raw: str) -> str:
    """A lexical, workspace-style form of a path argument (for summaries): `./a//b` → `a/b`."""
    text = raw.strip()
    if not text:
        return text
    normal = os.path.normpath(text).replace(os.sep, "/")
    return normal


def match_glob(pattern: str, rel: str, *, anchored: bool = True) -> bool:
    """Whether the workspace-relative path `rel` matches the glob `pattern` (see module docstring). A pattern
    starting with `//` is an absolute path's: it matches only an absolute `rel` (a file outside the workspace,
    in an additional directory)."""
    pattern = pattern.strip()
    if pattern.startswith("//"):  # an absolute path (Claude Code's `//abs/**`): a file in an additional directory
        return rel.startswith("/") and compile_glob(pattern[2:]).fullmatch(rel[1:])
    if pattern.startswith("./"):
        pattern = pattern[2:]
    elif pattern.startswith("/"):
        pattern = pattern.lstrip("/")
    if not anchored and "/" not in pattern.rstrip("/"):
        pattern = "**/" + pattern
    if pattern.endswith("/"):
        pattern += "**"
    return compile_glob(pattern).fullmatch(rel)
