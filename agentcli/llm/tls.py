"""The TLS setting of an SDK client: none built up front for a plain-http endpoint.

Building a verifying context loads the system's CA certificates (and, through httpx2, imports httpcore2):
some 40 ms of start-up before the first request. A local or proxied `http://` endpoint never uses it; only
a redirect to an `https://` address could. For such an endpoint the client gets a context that verifies as
the default one does but loads the certificates on its first handshake.
"""

from __future__ import annotations

import ssl
import threading
from typing import Any


class DeferredTrustContext(ssl.SSLContext):
    """A client context (hostname checked, certificate required) whose default CA certificates load on the
    first handshake instead of at construction."""

    _lock = threading.Lock()
    _trusted = False

    def __new__(cls, *args: Any, **kwargs: Any) -> DeferredTrustContext:
        return super().__new__(cls, ssl.PROTOCOL_TLS_CLIENT)

    def _trust(self) -> None:
        with self._lock:
            if not self._trusted:
                self.load_default_certs(ssl.Purpose.SERVER_AUTH)
                self._trusted = True

    def wrap_bio(self, *args: Any, **kwargs: Any) -> ssl.SSLObject:  # asyncio's and aiohttp's TLS
        self._trust()
        return super().wrap_bio(*args, **kwargs)

    def wrap_socket(self, *args: Any, **kwargs: Any) -> ssl.SSLSocket:
        self._trust()
        return super().wrap_socket(*args, **kwargs)


def verify_for(base_url: str | None) -> ssl.SSLContext | bool:
    """The `verify=` for an SDK http client: the SDK's default (True) unless the endpoint is plain http."""
    if base_url is not None and base_url.lower().startswith("http://"):
        return DeferredTrustContext()
    return True
