"""A marketplace given as its marketplace.json file, as Claude Code takes one: an http(s) URL (`/plugin marketplace
add https://…/marketplace.json`, `{"source": "url"}` in extraKnownMarketplaces) or a path (`{"source": "file"}`),
served here by a real HTTP server on loopback."""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from agentcli.plugins import PluginError, PluginStore, known_marketplace, parse_source
from agentcli.plugins.download import MAX_DOCUMENT
from agentcli.plugins.marketplace import marketplace_source

GIT_PLUGIN = {"name": "formatter", "description": "Formats code",
              "source": {"source": "url", "url": "https://git.example.invalid/formatter.git"}}
LOCAL_PLUGIN = {"name": "local-one", "source": "./plugins/local-one"}


def _doc(*plugins: dict[str, Any]) -> bytes:
    return json.dumps({"name": "hosted", "owner": {"name": "t"}, "plugins": list(plugins)}).encode()


class Site:
    """What the server answers, by path: (status, headers, body)."""

    def __init__(self) -> None:
        self.pages: dict[str, tuple[int, dict[str, str], bytes]] = {}
        self.base = ""


@pytest.fixture
def site() -> Iterator[Site]:
    served = Site()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            if self.path == "/garbage.json":  # not HTTP at all
                self.wfile.write(b"garbage\r\n\r\n")
                return
            status, headers, body = served.pages.get(self.path, (404, {}, b"not here"))
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    served.base = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield served
    server.shutdown()
    server.server_close()


def test_a_hosted_marketplace_json_is_added_listed_and_updated(site: Site, tmp_path: Path) -> None:
    site.pages["/m/marketplace.json"] = (200, {"Content-Type": "application/json"}, _doc(GIT_PLUGIN, LOCAL_PLUGIN))
    source = marketplace_source(f"{site.base}/m/marketplace.json")
    assert source.document and source.as_json() == {"source": "url", "url": f"{site.base}/m/marketplace.json"}
    store = PluginStore(tmp_path / "store")
    market = store.add_marketplace(source)
    assert market.name == "hosted" and sorted(market.entries) == ["formatter"]  # a ./path is left out
    assert market.entries["formatter"].source.url == "https://git.example.invalid/formatter.git"
    assert market.problems == ("marketplace hosted: plugin local-one: a ./path source needs the marketplace's "
                               "folder or repository, and this marketplace is one file; left out",)
    stored = json.loads((store.marketplaces()["hosted"] / ".claude-plugin" / "marketplace.json").read_text())
    assert [p["name"] for p in stored["plugins"]] == ["formatter"]  # never installable from the copy either
    assert store.marketplaces()["hosted"] == tmp_path / "store" / "marketplaces" / "hosted"
    assert store.state()["marketplaces"]["hosted"]["source"] == {"source": "url", "url": source.url}
    newer = {**GIT_PLUGIN, "name": "linter", "description": "Lints"}
    site.pages["/m/marketplace.json"] = (200, {}, _doc(GIT_PLUGIN, newer))
    assert sorted(store.update_marketplace("hosted").entries) == ["formatter", "linter"]


def test_a_redirect_is_followed_to_http_only(site: Site, tmp_path: Path) -> None:
    site.pages["/old.json"] = (302, {"Location": "/new/marketplace.json"}, b"")
    site.pages["/new/marketplace.json"] = (200, {}, _doc(GIT_PLUGIN))
    store = PluginStore(tmp_path / "store")
    assert "formatter" in store.add_marketplace(marketplace_source(f"{site.base}/old.json")).entries
    site.pages["/ftp.json"] = (302, {"Location": "ftp://127.0.0.1/marketplace.json"}, b"")
    with pytest.raises(PluginError, match=r"cannot fetch it: redirected to ftp://127\.0\.0\.1/marketplace\.json"):
        store.add_marketplace(marketplace_source(f"{site.base}/ftp.json"))


@pytest.mark.parametrize(("path", "page", "why"), [
    ("/missing.json", None, r"HTTP 404"),
    ("/big.json", (200, {}, b" " * (MAX_DOCUMENT + 1)), r"larger than 1 MiB; not read"),
    ("/bad.json", (200, {}, b"{not json"), r"is not valid JSON"),
    ("/empty.json", (200, {}, b"{}"), r'needs a "plugins" list'),
    ("/garbage.json", None, r"cannot read it: "),
])
def test_a_hosted_marketplace_that_cannot_be_used_is_one_line_and_nothing_is_kept(
        site: Site, tmp_path: Path, path: str, page: tuple[int, dict[str, str], bytes] | None, why: str) -> None:
    if page is not None:
        site.pages[path] = page
    store = PluginStore(tmp_path / "store")
    with pytest.raises(PluginError, match=why) as caught:
        store.add_marketplace(marketplace_source(site.base + path))
    assert "\n" not in str(caught.value) and "staging" not in str(caught.value) and store.marketplaces() == {}
    assert not list((tmp_path / "store" / "staging").glob("fetch-*"))  # the download's folder is gone


def test_a_marketplace_json_on_disk_is_copied_and_read_again_on_update(tmp_path: Path) -> None:
    file = tmp_path / "team" / "marketplace.json"
    file.parent.mkdir()
    file.write_bytes(_doc(GIT_PLUGIN))
    source = marketplace_source(str(file))
    assert source.document and source.as_json() == {"source": "file", "path": str(file)}
    store = PluginStore(tmp_path / "store")
    assert list(store.add_marketplace(source).entries) == ["formatter"]
    file.write_bytes(_doc(GIT_PLUGIN, {**GIT_PLUGIN, "name": "linter"}))
    assert list(store.update_marketplace("hosted").entries) == ["formatter", "linter"]
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)
    with pytest.raises(PluginError, match="not a file"):
        store.add_marketplace(parse_source({"source": "file", "path": str(fifo)}, "m", market=True))


def test_claude_codes_settings_name_a_hosted_marketplace(site: Site, tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    site.pages["/marketplace.json"] = (200, {}, _doc(GIT_PLUGIN))
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"extraKnownMarketplaces": {
        "hosted": {"source": {"source": "url", "url": f"{site.base}/marketplace.json"}}}}))
    monkeypatch.setenv("HOME", str(home))
    said: list[str] = []
    market = known_marketplace("hosted", PluginStore(tmp_path / "store"), tmp_path, said.append)
    assert list(market.entries) == ["formatter"]
    assert said == [f"adding marketplace hosted ({site.base}/marketplace.json) from {home / '.claude/settings.json'}"]


@pytest.mark.parametrize(("raw", "document", "why"), [
    ({"source": "url", "url": "https://x.example/team/marketplace.json"}, True, ""),
    ({"source": "url", "url": "https://x.example/team/plugins.git"}, False, ""),  # a repository, cloned
    ({"source": "url", "url": "ssh://git.example/team/plugins"}, False, ""),  # not http(s): a repository
    ({"source": "url", "url": "https://x.example/m.json?v=a.git"}, True, ""),  # the path decides, not the query
    ({"source": "file", "path": "relative/marketplace.json"}, True, "needs an absolute path"),
])
def test_a_marketplace_source_in_settings(raw: dict[str, str], document: bool, why: str) -> None:
    if why:
        with pytest.raises(PluginError, match=why):
            parse_source(raw, "extraKnownMarketplaces.team", market=True)
        return
    assert parse_source(raw, "extraKnownMarketplaces.team", market=True).document is document
    assert not parse_source(raw, "a plugin's source").document  # for a plugin, `url` is a git repository
