"""The TLS setting of the SDK clients: a plain-http endpoint loads no CA certificates before a handshake."""

from __future__ import annotations

import socket
import ssl

import pytest

from agentcli.llm.tls import DeferredTrustContext, verify_for


def test_https_and_default_endpoints_keep_the_sdk_default() -> None:
    assert verify_for(None) is True
    assert verify_for("https://api.anthropic.com") is True


def test_an_http_endpoint_gets_a_verifying_context_that_loads_its_certificates_on_first_use() -> None:
    context = verify_for("HTTP://127.0.0.1:8080")
    assert isinstance(context, DeferredTrustContext)
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    assert context.cert_store_stats()["x509_ca"] == 0
    left, right = socket.socketpair()
    with left, right, pytest.raises(OSError):  # a redirect to https would still be verified: no server here
        right.close()
        context.wrap_socket(left, server_hostname="example.com")
    assert context.cert_store_stats() == ssl.create_default_context().cert_store_stats()
