"""Shared test setup: isolate every test from the machine's config, keys and the network."""

from __future__ import annotations

import ipaddress
import signal
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:  # imported where used: most tests need neither the server nor the SDK pool
    from agentcli.llm.base import RetryPolicy
    from agentcli.llm.models import ProviderPool
    from agentcli.testing.fake_llm import FakeLLMServer
    from agentcli.testing.scripted import ScriptedLLM

_REAL_CONNECT = socket.socket.connect
_REAL_CONNECT_EX = socket.socket.connect_ex

# Variables that could point a test at a real provider or a real profile.
_SCRUBBED = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "OPENAI_ORG_ID",
    "OPENAI_PROJECT_ID",
    "LLM_MODEL_ID",
    "LLM_API_KEY",
    "LLM_BASE_URL",
    "LLM_PROVIDER",
    "LIGHT_LLM_MODEL_ID",
    "LIGHT_LLM_API_KEY",
    "LIGHT_LLM_BASE_URL",
    "LIGHT_LLM_PROVIDER",
    "CLAUDE_CONFIG_DIR",  # the person's Claude Code settings: a test reads only the ones it writes
    "CODEX_HOME",
)


def pytest_configure(config: pytest.Config) -> None:
    """Tests that press Ctrl-C (SIGINT to an `agentcli` child) stand for a person at a terminal, where SIGINT has its
    default action. A suite started as a background job of a shell without job control (`pytest ... &` in a script)
    inherits SIGINT ignored, every child it starts inherits that across exec, and agentcli, like every program, keeps
    a signal its parent chose to ignore: those tests then wait for an exit that never comes. Undo it here, once."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """`e2e`: every test under tests/e2e/, and every test of a module that starts agentcli as a process (it imports
    the e2e helpers' `cli_env`); a module may also mark itself with `pytestmark`."""
    from tests.e2e.helpers import cli_env

    e2e = Path(__file__).parent / "e2e"
    for item in items:
        module = getattr(item, "module", None)
        if item.path.is_relative_to(e2e) or getattr(module, "cli_env", None) is cli_env:
            item.add_marker(pytest.mark.e2e)


def _is_local(address: Any) -> bool:
    if isinstance(address, (str, bytes)):
        return True  # AF_UNIX path
    host = address[0]
    if host in ("localhost", ""):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _guarded_connect(self: socket.socket, address: Any) -> None:
    if not _is_local(address):
        raise RuntimeError(f"test tried to reach {address!r}: only 127.0.0.1 is allowed in tests")
    _REAL_CONNECT(self, address)


def _guarded_connect_ex(self: socket.socket, address: Any) -> int:
    if not _is_local(address):
        raise RuntimeError(f"test tried to reach {address!r}: only 127.0.0.1 is allowed in tests")
    return _REAL_CONNECT_EX(self, address)


@pytest.fixture(autouse=True)
def isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Fresh HOME and XDG dirs, no provider variables, no outbound network."""
    home = tmp_path_factory.mktemp("home")
    for name in _SCRUBBED:
        monkeypatch.delenv(name, raising=False)
    for name in list(__import__("os").environ):
        if name.startswith("AGENTCLI_"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local/share"))
    monkeypatch.setenv("XDG_STATE_HOME", str(home / ".local/state"))
    monkeypatch.setenv("ANTHROPIC_CONFIG_DIR", str(home / ".anthropic"))
    # Anything that slips through to the SDK defaults lands on a closed local port.
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setattr(socket.socket, "connect", _guarded_connect)
    monkeypatch.setattr(socket.socket, "connect_ex", _guarded_connect_ex)
    yield home


# --- model fixtures: the scripted model in-process, or the fake server over HTTP ---------------------


@pytest.fixture
def llm() -> ScriptedLLM:
    """An empty, strict scripted model (in-process, no SDK); the test adds steps and calls assert_done()."""
    from agentcli.testing.scripted import ScriptedLLM

    return ScriptedLLM()


@pytest.fixture
def server() -> Iterator[FakeLLMServer]:
    """An empty, strict fake LLM server on 127.0.0.1, for tests about the wire (the real SDKs over HTTP)."""
    from agentcli.testing.fake_llm import FakeLLMServer, Script

    with FakeLLMServer(Script(steps=[])) as srv:
        yield srv


@pytest.fixture
def retry_policy() -> RetryPolicy:
    """The `pool` fixture's retries: none; a module that tests retrying overrides this fixture."""
    from agentcli.llm.base import RetryPolicy

    return RetryPolicy(max_retries=0)


@pytest.fixture
async def pool(retry_policy: RetryPolicy) -> AsyncIterator[ProviderPool]:
    """A real provider pool (SDK clients, created on first use), closed after the test."""
    from agentcli.llm.models import ProviderPool

    p = ProviderPool(retry_policy)
    yield p
    await p.aclose()
