"""`agentcli config show`: the effective configuration as TOML-like text or JSON, each value with its layer.

Secrets are redacted (`config.values.redact`). Importing this module is cheap, as `config.load` is.
"""

from __future__ import annotations

import json as jsonlib
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from agentcli.config.layers import KeyPath, Source, dotted
from agentcli.config.values import MAX_VALUE_REPR, leaves, redact

if TYPE_CHECKING:
    from agentcli.config.claude_settings import ClaudePermissions
    from agentcli.config.load import LoadedConfig

Row = tuple[KeyPath, object, Source]


def render_config(loaded: LoadedConfig, *, json: bool = False) -> str:
    """The effective configuration for `agentcli config show`, secrets redacted.

    Text: `[section]` blocks of `key = value  # layer (location)`, sorted. JSON: an object of
    dotted keys to `{"value", "layer", "location"}` (unset values are null).
    """
    rows = sorted(
        ((path, redact(path, value), loaded.provenance[dotted(path)]) for path, value in leaves(loaded.settings)),
        key=lambda row: (dotted(row[0][:-1]), row[0][-1]),
    )
    return _json(loaded, rows) if json else _text(loaded, rows)


def _json(loaded: LoadedConfig, rows: list[Row]) -> str:
    doc: dict[str, Any] = {
        dotted(path): {"value": None if value == "" else value, "layer": src.layer, "location": src.location}
        for path, value, src in rows
    }
    if loaded.claude is not None and loaded.claude.rules:
        rules = loaded.claude.rules
        doc["claude.permissions"] = {
            "value": [{"kind": r.kind, "rule": r.rule, "written": r.written, "location": r.source} for r in rules],
            "layer": "claude",
            "location": ", ".join(dict.fromkeys(r.source for r in rules)),
        }
    dirs, _ = loaded.additional_dirs
    if dirs:
        doc["permissions.additional_directories.resolved"] = {
            "value": [{"path": str(d.path), "written": d.written, "location": d.source} for d in dirs],
            "layer": "resolved",
            "location": ", ".join(dict.fromkeys(d.source for d in dirs)),
        }
    return jsonlib.dumps(doc, indent=2, ensure_ascii=False)


def _text(loaded: LoadedConfig, rows: list[Row]) -> str:
    sections: dict[KeyPath, list[tuple[str, str]]] = {}
    for path, value, src in rows:
        unset = "unset; " if value in (None, "") else ""
        assignment = f"{dotted(path[-1:])} = {_toml_literal(value)}"
        sections.setdefault(path[:-1], []).append((assignment, f"# {unset}{src.layer} ({src.location})"))
    blocks = [_header(loaded)]
    for section, entries in sections.items():
        width = min(max(len(a) for a, _ in entries), MAX_VALUE_REPR)
        body = "\n".join(f"{a.ljust(width)}  {comment}" for a, comment in entries)
        blocks.append(f"[{dotted(section)}]\n{body}\n")
    if loaded.claude is not None and (loaded.claude.rules or loaded.claude.notes):
        blocks.append(_claude_block(loaded.claude))
    dirs, skipped = loaded.additional_dirs
    if dirs or skipped:
        lines = ["# Additional directories (the file tools and Bash also work there):"]
        lines += [f"#   {d.path}" + (f"  (written {d.written})" if d.written != str(d.path) else "") + f"  # {d.source}"
                  for d in dirs]
        lines += [f"#   skipped: {note}" for note in skipped]
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _header(loaded: LoadedConfig) -> str:
    """The layers read, later wins, and the untrusted-workspace warning if any."""
    width = max(len(src.layer) for src in loaded.layers)
    header = ["# Effective agentcli configuration; layers read, later wins:"]
    header += [f"#   {src.layer.ljust(width)}  {src.location}" for src in loaded.layers]
    warning = loaded.untrusted_warning()
    if warning:
        header.append(f"# {warning}")
    return "\n".join(header) + "\n"


def _toml_literal(value: object) -> str:
    if value is None:
        return '""'
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_toml_literal(item) for item in value) + "]"
    if isinstance(value, Mapping):
        return "{ " + ", ".join(f"{key} = {_toml_literal(item)}" for key, item in value.items()) + " }"
    return jsonlib.dumps(str(value), ensure_ascii=False)


def _claude_block(claude: ClaudePermissions) -> str:
    """The rules of Claude Code's settings files, each with its file (united with [permissions]; deny wins)."""
    lines = ["# Permission rules from Claude Code settings (united with [permissions]; deny wins):"]
    lines += [f"#   {rule.kind:<5}  {rule.written}" + (f"  (read as {rule.rule})" if rule.rule != rule.written else "")
              + f"  # {rule.source}" for rule in claude.rules]
    lines += [f"#   not used: {note}" for note in claude.notes]
    return "\n".join(lines) + "\n"
