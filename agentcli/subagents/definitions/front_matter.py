"""The YAML front matter of an agent file, read safely: no tags beyond plain data, no anchors or aliases
(an alias bomb is refused while composing, before anything is built), at most 64 KiB, and only scalars
ever turned into text. Front matter that is not strict YAML (Claude Code tolerates an unquoted `: ` in
a long description) is read again leniently, key by key, still with the safe loader.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agentcli.text import one_line

MAX_FRONT_MATTER_BYTES = 64 * 1024
_KEY_LINE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):(?:[ \t](.*))?$")
_YAML_SYNTAX = frozenset("[{\"'|>&*%@`")
#: One tool name of a comma- or space-separated list, with its `(pattern)` if any: `Bash(git:*)`.
TOOL_TOKEN = re.compile(r"[^,\s()]+(?:\([^)]*\))?")
# Keys of agentcli, Claude Code and opencode agent files; any other key is ignored with a warning.
KNOWN_KEYS = frozenset(
    {
        "name", "description", "tools", "disallowed_tools", "disallowedTools", "disallowed-tools", "model",
        "max_turns", "maxTurns", "maxSteps", "steps", "timeout_seconds", "timeoutSeconds", "fork_context",
        # Claude Code
        "color", "permissionMode", "skills", "hooks", "memory", "mcpServers", "effort", "isolation",
        "background", "initialPrompt", "argument-hint", "version", "author", "tags",
        # opencode
        "mode", "temperature", "top_p", "permission", "disable", "prompt", "options", "hidden",
    }
)  # fmt: skip


class AgentFileError(ValueError):
    """The file cannot be used as an agent definition; the message is the one-line reason."""


def split_front_matter(text: str) -> tuple[str, str]:
    """(front matter, body) of a Markdown file; BOM and CRLF tolerated."""
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    lines = text.split("\n")
    start = 0
    while start < len(lines) and not lines[start].strip():
        start += 1
    if start >= len(lines) or lines[start].rstrip() != "---":
        raise AgentFileError("no YAML front matter: the file must start with a '---' line")
    for end in range(start + 1, len(lines)):
        if lines[end].rstrip() in ("---", "..."):
            return "\n".join(lines[start + 1 : end]), "\n".join(lines[end + 1 :])
    raise AgentFileError("the front matter is not closed by a '---' line")


def read_front_matter(
    text: str, *, raw_keys: frozenset[str] = frozenset(), optional: bool = False
) -> tuple[dict[str, Any], str, list[str]]:
    """(front matter, body, warnings) of a definition file: the front matter split off, bounded, read safely.

    `raw_keys`: one-line values kept as written (`quote_raw_values`); `optional`: a file that does not start
    with `---` is all body (else AgentFileError)."""
    if optional and not text.removeprefix("\ufeff").lstrip().startswith("---"):
        return {}, text.removeprefix("\ufeff").replace("\r\n", "\n"), []
    raw, body = split_front_matter(text)
    if len(raw.encode("utf-8", "surrogatepass")) > MAX_FRONT_MATTER_BYTES:
        raise AgentFileError(f"the front matter is larger than {MAX_FRONT_MATTER_BYTES // 1024} KiB")
    data, warnings = parse_front_matter(quote_raw_values(raw, raw_keys) if raw_keys else raw)
    return data, body, warnings


@functools.cache
def _plain_loader() -> type[Any]:
    """The safe loader, refusing anchors and aliases while composing (before anything is constructed).

    Built on first use: PyYAML is imported only when there is an agent file to read."""
    import yaml
    from yaml.events import AliasEvent, NodeEvent

    class PlainLoader(yaml.SafeLoader):
        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()  # type: ignore[no-untyped-call]
            if isinstance(event, AliasEvent):
                raise AgentFileError(f"refused YAML: aliases (*{event.anchor}) are not allowed in agent files")
            if isinstance(event, NodeEvent) and event.anchor is not None:
                raise AgentFileError(f"refused YAML: anchors (&{event.anchor}) are not allowed in agent files")
            return super().compose_node(parent, index)

    return PlainLoader


def safe_load(text: str) -> Any:
    """Plain YAML data only: no tags beyond the safe ones, no anchors or aliases, bounded size."""
    from yaml.constructor import ConstructorError

    if len(text.encode("utf-8", "surrogatepass")) > MAX_FRONT_MATTER_BYTES:
        raise AgentFileError(f"the front matter is larger than {MAX_FRONT_MATTER_BYTES // 1024} KiB")
    loader = _plain_loader()(text)
    try:
        return loader.get_single_data()
    except ConstructorError as exc:
        raise AgentFileError(f"refused YAML (only plain data is allowed): {one_line(exc.problem)}") from exc
    except RecursionError as exc:
        raise AgentFileError("the front matter is nested too deeply") from exc
    finally:
        loader.dispose()


def parse_front_matter(raw: str) -> tuple[dict[str, Any], list[str]]:
    """The front matter as a mapping with string keys, plus warnings (lenient reading)."""
    import yaml

    warnings: list[str] = []
    try:
        data = safe_load(raw)
    except yaml.YAMLError as exc:
        data = lenient_front_matter(raw)
        if data is None:
            mark = getattr(exc, "problem_mark", None)
            where = f" (line {mark.line + 2})" if mark is not None else ""
            problem = getattr(exc, "problem", None) or exc
            raise AgentFileError(f"bad YAML front matter{where}: {one_line(problem)}") from exc
        warnings.append("front matter is not valid YAML (an unquoted ': ' in a value?); read leniently")
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise AgentFileError(f"the front matter is not a mapping of keys to values (got {type(data).__name__})")
    return {str(k): v for k, v in data.items() if is_scalar(k)}, warnings


def lenient_front_matter(raw: str) -> dict[str, Any] | None:
    """Key-by-key reading of front matter that is not strict YAML, as Claude Code tolerates it.

    A line `key: ...` at column 0 starts an entry when the key is a known front-matter key (or is the
    first one); every other line continues the previous entry. An entry that parses as YAML on its
    own is taken as parsed (safe loader), otherwise as plain text unless it starts with YAML syntax
    (a quote, bracket, block scalar, anchor or tag). None when this reading fails too.
    """
    import yaml

    entries: list[tuple[str, list[str]]] = []
    for line in raw.split("\n"):
        match = _KEY_LINE.match(line)
        if match and (match.group(1) in KNOWN_KEYS or not entries):
            entries.append((match.group(1), [match.group(2) or ""]))
        elif entries:
            entries[-1][1].append(line)
        elif line.strip() and not line.lstrip().startswith("#"):
            return None
    data: dict[str, Any] = {}
    for key, parts in entries:
        if parts[0].lstrip().startswith("!"):
            return None  # a tag: never guess around one
        chunk = f"{key}: " + "\n".join(parts)
        try:
            parsed = safe_load(chunk)  # AgentFileError (a tag, an anchor, an alias) ends the reading too
        except yaml.YAMLError:
            parsed = None
        if isinstance(parsed, dict) and set(parsed) == {key}:
            data[key] = parsed[key]
        elif parts[0].lstrip()[:1] in _YAML_SYNTAX:
            return None  # a broken quoted string, flow collection or block scalar: really bad YAML
        else:
            data[key] = "\n".join(p.rstrip() for p in parts).strip()
    return data


def is_scalar(value: object) -> bool:
    """Whether YAML produced a scalar (never turn a list or mapping into text)."""
    return not isinstance(value, (dict, list, tuple, set, bytes, bytearray))


def show_value(value: object) -> str:
    """A value for a warning: the scalar itself (cut), or just the kind of a collection."""
    if not is_scalar(value):
        return f"a {type(value).__name__}"
    text = one_line(value)
    return text if len(text) <= 60 else text[:57] + "..."


def text_value(data: Mapping[str, Any], key: str, warnings: list[str] | None = None) -> str | None:
    """The text of a scalar entry, stripped; None when absent, empty or not a scalar (with a warning)."""
    value = data.get(key)
    if value is None:
        return None
    if not is_scalar(value):
        if warnings is not None:
            warnings.append(f"'{key}' ignored: expected text, got {show_value(value)}")
        return None
    text = str(value).strip()
    return text or None


def flag_value(data: Mapping[str, Any], key: str, default: bool, warnings: list[str]) -> bool:
    """A true/false entry (YAML's booleans or the words); `default` when absent or unusable (with a warning)."""
    value = data.get(key)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in ("true", "false"):
        return value.strip().lower() == "true"
    warnings.append(f"'{key}: {show_value(value)}' ignored: expected true or false")
    return default


def quote_raw_values(raw: str, keys: frozenset[str]) -> str:
    """Front matter with the one-line values of `keys` made YAML strings, as written: Claude Code reads
    `argument-hint: [file] [line]` as the text it shows, which YAML would read as a list or refuse."""
    import json

    lines = raw.split("\n")
    for i, line in enumerate(lines):
        match = _KEY_LINE.match(line)
        value = (match.group(2) or "").strip() if match else ""
        if match and match.group(1) in keys and value and value[0] not in "\"'|>":
            lines[i] = f"{match.group(1)}: {json.dumps(value)}"
    return "\n".join(lines)


def read_bounded(path: Path, limit: int) -> str:
    """A file's UTF-8 text, read bounded (at most `limit` bytes: never trust a size taken before the read);
    AgentFileError with the reason otherwise."""
    try:
        with path.open("rb") as handle:
            content = handle.read(limit + 1)
        if len(content) > limit:
            raise AgentFileError(f"file is larger than {limit} bytes")
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise AgentFileError("not UTF-8 text") from exc
    except OSError as exc:
        raise AgentFileError(f"cannot read: {exc.strerror or exc}") from exc
