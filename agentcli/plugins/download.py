"""A marketplace given as its marketplace.json file (`Source.document`): read from a path, or downloaded from an
http(s) URL (redirects followed to http(s) only, TLS verified, a time limit), at most the size of a config file.
Imported only when one is added or updated."""

from __future__ import annotations

import urllib.error
import urllib.request
from typing import Any

from agentcli.plugins.manifest import PluginError
from agentcli.plugins.marketplace import Source

MAX_DOCUMENT = 1 << 20  # a marketplace.json, as any config file
FETCH_SECONDS = 30


class _HttpRedirectsOnly(urllib.request.HTTPRedirectHandler):
    """Redirects followed to http(s) addresses only (never ftp://)."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        if not newurl.startswith(("https://", "http://")):
            raise urllib.error.URLError(f"redirected to {newurl[:100]}")
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def document_bytes(source: Source) -> bytes:
    """A marketplace.json named by a path or an http(s) URL (redirects followed, TLS verified), at most
    MAX_DOCUMENT bytes; PluginError in one line."""
    where = str(source.path) if source.path is not None else source.url
    try:
        if source.path is not None:
            if not source.path.is_file():  # never a pipe or a device
                raise PluginError(f"marketplace {where}: not a file")
            with source.path.open("rb") as handle:
                data = handle.read(MAX_DOCUMENT + 1)
        else:
            request = urllib.request.Request(source.url, headers={"Accept": "application/json",
                                                                 "User-Agent": "agentcli"})
            opener = urllib.request.build_opener(_HttpRedirectsOnly)
            with opener.open(request, timeout=FETCH_SECONDS) as response:
                data = response.read(MAX_DOCUMENT + 1)
    except urllib.error.HTTPError as exc:
        raise PluginError(f"marketplace {where}: HTTP {exc.code} {exc.reason}") from None
    except urllib.error.URLError as exc:
        raise PluginError(f"marketplace {where}: cannot fetch it: {exc.reason}") from None
    except (OSError, ValueError) as exc:
        raise PluginError(f"marketplace {where}: cannot read it: {getattr(exc, 'strerror', None) or exc}") from None
    if len(data) > MAX_DOCUMENT:
        raise PluginError(f"marketplace {where}: larger than {MAX_DOCUMENT >> 20} MiB; not read")
    return data
