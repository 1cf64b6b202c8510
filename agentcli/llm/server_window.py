"""The context window an OpenAI-compatible server really runs a model with, asked once per server and model.

A local server knows its window; agentcli's model table does not know its model. The shapes asked, one after
another in this order (a llama-server has few HTTP threads), under one short timeout, until one gives the window
the server runs with (a server answers the ones it has, 404 to the rest):

- llama.cpp's `llama-server`: `GET /props` → `default_generation_settings.n_ctx` (a slot's window: what one
  request may fill); `GET /v1/models` → `data[].meta.n_ctx_train` (the training maximum only);
- vLLM: `GET /v1/models` → `data[].max_model_len` (what it was started with);
- LM Studio: `GET /api/v0/models` → `data[].loaded_context_length` (the loaded model's), `max_context_length`
  (the model's maximum);
- Ollama: `POST /api/show` → `parameters` `num_ctx` (what the model is loaded with when its Modelfile sets it),
  `model_info` `<arch>.context_length` (the training maximum); `GET /api/ps` → `models[].context_length` (a
  running model's, in recent versions).

A window the server runs with wins; a training maximum is only an upper bound (Ollama loads models with a much
smaller default): it is used only when it is below the default agentcli would assume. Nothing useful, an error
or the timeout: None, and the caller keeps its default.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import aiohttp

log = logging.getLogger(__name__)

_MAX_BODY = 4_000_000  # bytes of one answer read at most (an /api/show carries the chat template and more)


@dataclass(frozen=True, slots=True)
class ServerWindow:
    """A window a server reported: its size, which answer said so, and whether the model runs with it."""

    tokens: int
    source: str  # e.g. "llama.cpp /props"
    loaded: bool = True  # False: a training maximum (an upper bound, not what the server runs with)


def server_root(base_url: str) -> str:
    """The server's root: the base URL without its trailing `/v1` (where `/props` and `/api/...` live)."""
    root = base_url.rstrip("/")
    return root[:-3] if root.endswith("/v1") else root


def _positive(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _entries(data: object, key: str) -> list[Mapping[str, Any]]:
    items = data.get(key) if isinstance(data, Mapping) else None
    return [item for item in items if isinstance(item, Mapping)] if isinstance(items, list) else []


def _pick(entries: list[Mapping[str, Any]], model: str, *names: str) -> Mapping[str, Any] | None:
    """The entry naming `model` (by any of `names`, Ollama's `:latest` allowed), else the only entry."""
    for entry in entries:
        ids = {entry.get(name) for name in names}
        if model in ids or f"{model}:latest" in ids:
            return entry
    return entries[0] if len(entries) == 1 else None


def from_llamacpp_props(data: object) -> list[ServerWindow]:
    """llama.cpp `/props`: the slot's window."""
    settings = data.get("default_generation_settings") if isinstance(data, Mapping) else None
    n_ctx = _positive(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    return [ServerWindow(n_ctx, "llama.cpp /props")] if n_ctx else []


def from_models(data: object, model: str) -> list[ServerWindow]:
    """`/v1/models`: vLLM's `max_model_len` (loaded), llama.cpp's `meta.n_ctx_train` (training maximum)."""
    entry = _pick(_entries(data, "data"), model, "id")
    if entry is None:
        return []
    found: list[ServerWindow] = []
    if tokens := _positive(entry.get("max_model_len")):
        found.append(ServerWindow(tokens, "vLLM /v1/models max_model_len"))
    meta = entry.get("meta")
    if isinstance(meta, Mapping) and (tokens := _positive(meta.get("n_ctx_train"))):
        found.append(ServerWindow(tokens, "llama.cpp /v1/models n_ctx_train", loaded=False))
    return found


def from_lmstudio(data: object, model: str) -> list[ServerWindow]:
    """LM Studio `/api/v0/models`: the loaded context length, else the model's maximum."""
    entries = _entries(data, "data")
    loaded = [e for e in entries if e.get("state") == "loaded"]
    entry = _pick(entries, model, "id") or _pick(loaded, model, "id")
    if entry is None:
        return []
    found: list[ServerWindow] = []
    if tokens := _positive(entry.get("loaded_context_length")):
        found.append(ServerWindow(tokens, "LM Studio /api/v0/models loaded_context_length"))
    if tokens := _positive(entry.get("max_context_length")):
        found.append(ServerWindow(tokens, "LM Studio /api/v0/models max_context_length", loaded=False))
    return found


_NUM_CTX = re.compile(r"^\s*num_ctx\s+(\d+)\s*$", re.MULTILINE)


def from_ollama_show(data: object) -> list[ServerWindow]:
    """Ollama `/api/show`: `num_ctx` among the Modelfile's parameters (loaded), the architecture's
    `context_length` (training maximum)."""
    if not isinstance(data, Mapping):
        return []
    found: list[ServerWindow] = []
    parameters = data.get("parameters")
    if isinstance(parameters, str) and (match := _NUM_CTX.search(parameters)) and (tokens := int(match[1])) > 0:
        found.append(ServerWindow(tokens, "Ollama /api/show num_ctx"))
    info = data.get("model_info")
    if isinstance(info, Mapping):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length") and (trained := _positive(value)):
                found.append(ServerWindow(trained, f"Ollama /api/show {key}", loaded=False))
                break
    return found


def from_ollama_ps(data: object, model: str) -> list[ServerWindow]:
    """Ollama `/api/ps`: a running model's `context_length`."""
    entry = _pick(_entries(data, "models"), model, "name", "model")
    tokens = _positive(entry.get("context_length")) if entry is not None else None
    return [ServerWindow(tokens, "Ollama /api/ps context_length")] if tokens else []


def choose(found: list[ServerWindow], default: int) -> ServerWindow | None:
    """The window the server runs with (the first found, in the order asked), else the smallest training
    maximum when it is below `default`, else None."""
    for window in found:
        if window.loaded:
            return window
    bounds = [w for w in found if w.tokens < default]
    return min(bounds, key=lambda w: w.tokens) if bounds else None


async def _json(session: aiohttp.ClientSession, method: str, url: str, body: object, ssl: Any) -> object:
    async with session.request(method, url, json=body, allow_redirects=False, ssl=ssl) as response:
        if response.status != 200 or (response.content_length or 0) > _MAX_BODY:
            return None
        data = await response.content.read(_MAX_BODY + 1)
    if len(data) > _MAX_BODY:
        return None
    try:
        return json.loads(data)
    except ValueError:
        return None


async def discover(
    base_url: str, model: str, api_key: str, *, timeout: float, default: int, verify: Any = True
) -> ServerWindow | None:
    """Ask the server at `base_url` for `model`'s window (see the module docstring); None when nothing useful
    came back within `timeout` seconds."""
    import aiohttp

    root, base = server_root(base_url), base_url.rstrip("/")
    asks: list[tuple[Callable[[object], list[ServerWindow]], str, str, object]] = [
        (from_llamacpp_props, "GET", f"{root}/props", None),
        (lambda d: from_lmstudio(d, model), "GET", f"{root}/api/v0/models", None),
        (lambda d: from_models(d, model), "GET", f"{base}/models", None),
        (from_ollama_show, "POST", f"{root}/api/show", {"model": model, "name": model}),
        (lambda d: from_ollama_ps(d, model), "GET", f"{root}/api/ps", None),
    ]
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    found: list[ServerWindow] = []

    async def ask_all(session: aiohttp.ClientSession) -> None:
        for parse, method, url, body in asks:  # one at a time: a llama-server has a few HTTP threads
            try:
                answer = await _json(session, method, url, body, verify)
            except aiohttp.ClientError:
                continue
            found.extend(parse(answer) if answer is not None else [])
            if any(window.loaded for window in found):
                return  # the window the server runs with: the rest can only say less

    try:
        connector = aiohttp.TCPConnector(force_close=True)  # no idle connection holds a server thread
        async with aiohttp.ClientSession(headers=headers, connector=connector,
                                         timeout=aiohttp.ClientTimeout(total=timeout)) as session:
            await asyncio.wait_for(ask_all(session), timeout)
    except (TimeoutError, aiohttp.ClientError, OSError) as exc:
        log.info("context window of %s at %s: no full answer (%s)", model, base_url, type(exc).__name__)
    window = choose(found, default)
    log.info("context window of %s at %s: %s", model, base_url, window)
    return window
