"""A marketplace given as its marketplace.json file (`Source.document`): read from a path, or downloaded from an
http(s) URL (redirects followed to http(s) only, never from https to http, TLS verified, one time limit for the
whole download), at most the size of a config file. Imported only when one is added or updated."""

from __future__ import annotations

import http.client
import os
import stat
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from agentcli.plugins.manifest import PluginError
from agentcli.plugins.marketplace import Source
from agentcli.text import one_line

MAX_DOCUMENT = 1 << 20  # a marketplace.json, as any config file
FETCH_SECONDS = 30.0
_CHUNK = 65536


class _HttpRedirectsOnly(urllib.request.HTTPRedirectHandler):
    """Redirects followed to http(s) addresses only (never ftp://), and never from https down to http."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if not newurl.startswith(("https://", "http://")) or (
                req.full_url.startswith("https://") and not newurl.startswith("https://")):
            raise urllib.error.URLError(f"redirected to {newurl[:100]}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def document_bytes(source: Source) -> bytes:
    """The marketplace.json `source` names, at most MAX_DOCUMENT bytes; PluginError in one line."""
    where = str(source.path) if source.path is not None else source.url
    try:
        data = _read_file(source.path) if source.path is not None else _download(source.url)
    except urllib.error.HTTPError as exc:
        raise PluginError(f"marketplace {where}: HTTP {exc.code} {one_line(str(exc.reason), 100)}") from None
    except urllib.error.URLError as exc:
        raise PluginError(f"marketplace {where}: cannot fetch it: {one_line(str(exc.reason), 200)}") from None
    except (OSError, ValueError, http.client.HTTPException) as exc:
        why = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
        raise PluginError(f"marketplace {where}: cannot read it: {one_line(str(why), 200)}") from None
    if len(data) > MAX_DOCUMENT:
        raise PluginError(f"marketplace {where}: larger than {MAX_DOCUMENT >> 20} MiB; not read")
    return data


def _read_file(path: Path) -> bytes:
    """A regular file's first bytes (opened without blocking, then checked: never a pipe or a device)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ValueError("not a file")
        return handle.read(MAX_DOCUMENT + 1)


def _download(url: str) -> bytes:
    """The body at `url`, read until MAX_DOCUMENT + 1 bytes or FETCH_SECONDS in all."""
    deadline = time.monotonic() + FETCH_SECONDS
    request = urllib.request.Request(url, headers={"Accept": "application/json", "User-Agent": "agentcli"})
    opener = urllib.request.build_opener(_HttpRedirectsOnly)
    data = bytearray()
    with opener.open(request, timeout=FETCH_SECONDS) as response:
        while len(data) <= MAX_DOCUMENT:
            if time.monotonic() > deadline:
                raise TimeoutError(f"took more than {FETCH_SECONDS:g} s")
            chunk = response.read1(_CHUNK)
            if not chunk:
                break
            data += chunk
    return bytes(data)
