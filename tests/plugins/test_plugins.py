"""Plugins read, installed and chosen: a plugin's parts in their default and manifest places, the store's installs
from a folder, a git repository and a git marketplace, which plugins a session loads (Claude Code's enabledPlugins
and installs, agentcli's own switches, --plugin-dir), and their parts in the catalogs under the plugin's name."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agentcli.frontend import CommandSet
from agentcli.frontend.slash_commands import expand
from agentcli.hooks import load_hooks
from agentcli.plugins import (
    LOCAL,
    PluginError,
    PluginStore,
    armed,
    brings,
    read_marketplace,
    read_plugin,
    session_plugins,
)
from agentcli.plugins.marketplace import Entry, Source, marketplace_source
from agentcli.subagents import AgentRegistry, SkillCatalog

FIXTURES = Path(__file__).parents[1] / "fixtures" / "plugins"
MARKET = FIXTURES / "marketplace"
WSHOBSON = FIXTURES / "wshobson-agents"


def _git_repo(folder: Path, source: Path) -> Path:
    """A git repository at `folder` holding a copy of `source`."""
    subprocess.run(["cp", "-r", f"{source}/.", str(folder)], check=True)
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(folder.parent)}
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-qm", "plugins"]):
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=folder, check=True,
                       capture_output=True, env=env)
    return folder


def test_a_real_marketplace_reads_and_its_plugins_parts_are_found() -> None:
    market = read_marketplace(WSHOBSON)
    assert market.name == "claude-code-workflows" and "git-pr-workflows" in market.entries
    assert len(market.entries) + len(market.problems) == 92
    assert market.entries["protect-mcp"].source.path == (WSHOBSON / "plugins" / "protect-mcp").resolve()
    plugin = read_plugin(WSHOBSON / "plugins" / "protect-mcp", scope="user")
    assert (plugin.name, plugin.version) == ("protect-mcp", "0.1.1")
    assert brings(plugin) == "1 command, 1 agent, 1 skill"
    lines = armed(plugin)
    assert [line.split(":")[0] for line in lines] == ["hook PreToolUse (.*)", "hook PostToolUse (.*)"]
    assert all("npx protect-mcp@0.7.4" in line for line in lines)


def test_manifest_paths_add_to_the_default_places_and_inline_parts_are_read(tmp_path: Path) -> None:
    root = tmp_path / "p"
    for sub in ("commands", "extra-commands", ".claude-plugin"):
        (root / sub).mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({
        "name": "kit", "commands": ["./extra-commands", "./missing"],
        "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/stop.sh"}]}]},
        "mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db-server", "args": ["--ro"],
                              "env": {"NODE_OPTIONS": "--require ./hook.js"}}}}))
    (root / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {"type": "http", "url": "https://x.test/mcp"}}}))
    plugin = read_plugin(root, scope="session")
    assert plugin.commands == (root / "commands", root / "extra-commands")
    assert plugin.warnings == ("commands: './missing' does not exist",)
    assert set(plugin.servers) == {"web", "db"} and plugin.server_name("db") == "plugin_kit_db"
    real = root.resolve()
    assert plugin.expand(plugin.servers["db"])["command"] == f"{real}/db-server"
    assert armed(plugin) == ["hook Stop: ${CLAUDE_PLUGIN_ROOT}/stop.sh", "MCP server plugin_kit_web: https://x.test/mcp",
                             "MCP server plugin_kit_db: ${CLAUDE_PLUGIN_ROOT}/db-server --ro "
                             "(env: NODE_OPTIONS=--require ./hook.js)"]
    config = load_hooks({}, tmp_path / "ws", trusted=False, env={"HOME": str(tmp_path)}, plugins=[plugin])
    (stop,) = config.by_event["Stop"]
    assert stop.command == f"{real}/stop.sh" and "plugin.json" in stop.source


def test_installs_from_a_git_repository_and_a_git_marketplace_and_removes(tmp_path: Path) -> None:
    store = PluginStore(tmp_path / "store")
    repo = _git_repo(tmp_path / "guard-repo", MARKET / "plugins" / "edit-guard")
    staged = store.stage(Entry("plugin", Source(url=repo.as_uri())), LOCAL)
    assert staged.plugin_id == "edit-guard@local"
    place = store.keep(staged)
    assert place == store.root / "cache" / "local" / "edit-guard" / "1.0.0"
    assert (place / "hooks" / "guard.py").is_file() and not (place / ".git").exists()
    market_repo = _git_repo(tmp_path / "market-repo", MARKET)
    market = store.add_marketplace(marketplace_source(market_repo.as_uri()))
    assert market.root == (store.root / "marketplaces" / "fixture-plugins").resolve()
    store.keep(store.stage(market.entries["feature-dev"], market.name))
    assert set(store.installed()) == {"edit-guard@local", "feature-dev@fixture-plugins"}
    assert store.enabled() == {"edit-guard@local": True, "feature-dev@fixture-plugins": True}
    assert store.remove("edit-guard@local") and not place.exists()
    assert not store.remove("edit-guard@local")
    assert store.remove_marketplace("fixture-plugins") and not market.root.exists()
    assert "feature-dev@fixture-plugins" in store.installed()  # a plugin outlives its marketplace


def test_which_plugins_a_session_loads(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    store = PluginStore(tmp_path / "store")
    store.add_marketplace(Source(path=MARKET))
    market = read_marketplace(MARKET)
    for name in ("commit-tools", "feature-dev"):
        store.keep(store.stage(market.entries[name], market.name))
    # Claude Code installed frontend-design for this project, and the person's settings turn things on and off
    claude = home / ".claude"
    (claude / "plugins").mkdir(parents=True)
    (claude / "plugins" / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "frontend-design@fixture-plugins": [{"scope": "project", "projectPath": str(ws),
                                             "installPath": str(MARKET / "plugins" / "frontend-design")}],
        "clock@fixture-plugins": [{"scope": "local", "projectPath": str(tmp_path / "other"),
                                   "installPath": str(MARKET / "plugins" / "clock")}]}}))
    (claude / "settings.json").write_text(json.dumps({"enabledPlugins": {
        "frontend-design@fixture-plugins": True, "clock@fixture-plugins": True, "commit-tools@fixture-plugins": True}}))
    store.set_enabled("commit-tools@fixture-plugins", False)  # agentcli's switch over the person's settings
    env = {"HOME": str(home)}
    loaded = session_plugins(ws, trusted=True, env=env, store=store, dirs=[str(MARKET / "plugins" / "feature-dev")])
    assert [(p.name, p.scope) for p in loaded.plugins] == [("feature-dev", "session"), ("frontend-design", "user")]
    assert loaded.problems == [
        "plugin clock@fixture-plugins is enabled but not installed (agentcli plugins install clock@fixture-plugins)",
        "plugin feature-dev@fixture-plugins not loaded: a plugin named 'feature-dev' already is"]
    # a trusted project's settings have the last word
    (ws / ".claude" / "settings.local.json").write_text(json.dumps({"enabledPlugins": {
        "commit-tools@fixture-plugins": True, "frontend-design@fixture-plugins": False}}))
    loaded = session_plugins(ws, trusted=True, env=env, store=store)
    assert [p.name for p in loaded.plugins] == ["commit-tools", "feature-dev"]
    assert session_plugins(ws, trusted=True, env=env, store=store, enabled=False).plugins == []


def test_the_parts_join_the_catalogs_under_the_plugins_name(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    plugins = [read_plugin(MARKET / "plugins" / name, scope="user")
               for name in ("commit-tools", "feature-dev", "frontend-design")]
    plugins.append(read_plugin(WSHOBSON / "plugins" / "git-pr-workflows", scope="user"))
    env = {"HOME": str(tmp_path / "home")}
    registry = AgentRegistry.load(ws, env=env, plugins=plugins)
    explorer = registry.types["feature-dev:code-explorer"]
    assert explorer.tools == ("Glob", "Grep", "LS", "Read") and "You map existing code" in explorer.prompt
    assert "git-pr-workflows:git-pr-workflows-code-reviewer" in registry.types
    skills = SkillCatalog.load(ws, env=env, plugins=plugins)
    assert list(skills.skills) == ["frontend-design:frontend-design"]
    commands = CommandSet.load(ws, env=env, plugins=plugins)
    found = commands.find("commit-tools:describe")
    assert found is not None and not isinstance(found, list) and commands.find("describe") is found
    assert commands.find("git-pr-workflows:git-workflow") is not None
    text = expand(found, "the lexer").text()
    assert "focusing on: the lexer" in text
    assert f"{(MARKET / 'plugins' / 'commit-tools').resolve()}/scripts" in text


@pytest.mark.parametrize("text", ["./rel", "/abs/market"])
def test_a_marketplace_added_by_path_is_a_folder(text: str) -> None:
    assert marketplace_source(text).path is not None
    assert marketplace_source("owner/repo").url == "https://github.com/owner/repo.git"


def test_trusting_names_what_a_projects_enabled_plugins_would_run(tmp_path: Path) -> None:
    from agentcli.conversation import what_trust_arms

    store_root = tmp_path / "data" / "agentcli" / "plugins"
    store = PluginStore(store_root)
    market = read_marketplace(MARKET)
    lsps = read_marketplace(FIXTURES / "boostvolt-claude-code-lsps")
    for name, where in (("edit-guard", market), ("clock", market), ("pyright", lsps)):
        store.keep(store.stage(where.entries[name], where.name))
        store.set_enabled(f"{name}@{where.name}", False)
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {
        "edit-guard@fixture-plugins": True, "clock@fixture-plugins": True, "pyright@claude-code-lsps": True}}))
    report = what_trust_arms(ws, env={"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")})
    guard, check = sorted(report.hooks, key=lambda hook: hook.command, reverse=True)
    assert guard.command == f'python3 "{store_root.resolve()}/cache/fixture-plugins/edit-guard/1.0.0/hooks/guard.py"'
    assert check.command.endswith("/cache/claude-code-lsps/pyright/1.0.0/hooks/check-pyright.sh")
    (server,) = report.servers
    assert (server.name, server.target) == ("plugin_clock_time", "mcp-server-time --local-timezone UTC")
    assert report.language_servers == (("plugin_pyright_python", "pyright-langserver --stdio"),)


def test_a_plugins_language_servers_are_read_armed_and_preferred_over_the_built_ins(tmp_path: Path) -> None:
    from agentcli.config.schema import Settings
    from agentcli.lsp import BUILTIN_SERVERS, configured_servers, problems
    from agentcli.lsp.client import language_id
    from agentcli.lsp.specs import with_plugin_servers

    pyright = read_plugin(FIXTURES / "boostvolt-claude-code-lsps" / "pyright", scope="user")
    assert pyright.language_servers["python"]["command"] == "pyright-langserver"
    assert armed(pyright) == ["hook SessionStart: bash ${CLAUDE_PLUGIN_ROOT}/hooks/check-pyright.sh",
                              "language server plugin_pyright_python: pyright-langserver --stdio"]
    own = tmp_path / "own"
    (own / ".claude-plugin").mkdir(parents=True)
    (own / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "own", "lspServers": {
        "web": {"command": "${CLAUDE_PLUGIN_ROOT}/bin/web-ls", "args": ["--stdio"],
                "env": {"HOME_OF": "${CLAUDE_PLUGIN_ROOT}"}, "startupTimeout": 5000,
                "extensionToLanguage": {".vue": "vue", ".tsx": "typescriptreact"}},
        "sock": {"command": "x", "transport": "socket", "extensionToLanguage": {".x": "x"}},
        "bare": {"command": "y"},
        "badargs": {"command": "z", "args": 3, "extensionToLanguage": {".z": "z"}},
    }}))
    plugin = read_plugin(own, scope="session")
    assert list(plugin.language_servers) == ["web"]
    assert [w.split(" skipped: ")[1] for w in plugin.warnings] == [
        "only the stdio transport is run by agentcli",
        "'extensionToLanguage' must map extensions ('.py') to language ids",
        "'args' must be a list of strings"]
    specs = with_plugin_servers(list(BUILTIN_SERVERS), [pyright, plugin])
    assert [s.name for s in specs[:3]] == ["plugin_pyright_python", "plugin_own_web", "basedpyright"]
    web = specs[1]
    root = str(own.resolve())
    assert web.command == (f"{root}/bin/web-ls", "--stdio") and web.env == {"HOME_OF": root}
    assert web.extensions == (".vue", ".tsx") and web.runs_project_code and not web.builtin
    assert language_id(Path("a.vue"), web.language, web.language_ids) == "vue"
    assert language_id(Path("b.tsx"), web.language, web.language_ids) == "typescriptreact"
    assert [s.name for s in with_plugin_servers(specs, [plugin])] == [s.name for s in specs]  # once
    settings = Settings(lsp={"servers": {"plugin_pyright_python": {"disabled": True},
                                         "plugin_own_web": {"env": {"EXTRA": "1"}}}})
    assert problems(settings) == []  # a plugin server's table needs no command
    changed = with_plugin_servers(configured_servers(settings), [pyright, plugin], settings.lsp.servers)
    by_name = {spec.name: spec for spec in changed}
    assert by_name["plugin_pyright_python"].disabled and not by_name["plugin_own_web"].disabled
    assert by_name["plugin_own_web"].env == {"HOME_OF": root, "EXTRA": "1"}


def test_a_strict_false_entry_is_the_whole_definition_and_only_its_listed_skills_load(tmp_path: Path) -> None:
    """anthropics/skills' marketplace (vendored: its marketplace.json and one skill): three plugins share the
    folder `./`, each listing its skills with `strict: false`. Each loads only what it lists; a copy read without
    its entry (as a plain folder) scans `skills/` and finds every skill there."""
    market = read_marketplace(FIXTURES / "anthropics-skills")
    assert market.name == "anthropic-agent-skills"
    assert set(market.entries) == {"document-skills", "example-skills", "claude-api"}
    example = market.entries["example-skills"]
    assert not example.strict and "./skills/frontend-design" in example.parts["skills"]
    store = PluginStore(tmp_path / "store")
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    for name in ("document-skills", "example-skills"):
        store.keep(store.stage(market.entries[name], market.name))
    loaded = session_plugins(ws, trusted=False, env=env, store=store)
    document, examples = loaded.plugins
    assert document.skills == () and examples.skills == (examples.root / "skills" / "frontend-design",)
    assert list(SkillCatalog.load(ws, env=env, plugins=loaded.plugins).skills) == ["example-skills:frontend-design"]
    missing = [p for p in loaded.problems if "does not exist" in p]
    assert len(missing) == 4 + 11 and "plugin document-skills: skills: './skills/xlsx' does not exist" in missing
    plain = read_plugin(examples.root, scope="session")  # without its entry: the default folders
    assert plain.skills == (examples.root / "skills",)


def test_claude_codes_install_of_a_strict_false_plugin_loads_only_its_listed_parts(tmp_path: Path) -> None:
    """Claude Code installed `document-skills` (its copy of the whole shared folder) and keeps its marketplace's
    copy (`known_marketplaces.json`): agentcli reads the entry there, so the plugin brings only its listed skills,
    not `frontend-design` beside them (which Claude Code loads too: anthropics/skills#1087)."""
    home = tmp_path / "home"
    plugins = home / ".claude" / "plugins"
    market_copy = plugins / "marketplaces" / "anthropic-agent-skills"
    install = plugins / "cache" / "anthropic-agent-skills" / "document-skills" / "abc123"
    for folder in (market_copy, install):
        shutil.copytree(FIXTURES / "anthropics-skills", folder)
    (plugins / "known_marketplaces.json").write_text(json.dumps({"anthropic-agent-skills": {
        "source": {"source": "github", "repo": "anthropics/skills"}, "installLocation": str(market_copy),
        "lastUpdated": "2026-11-30T10:00:00.000Z"}}))
    (plugins / "installed_plugins.json").write_text(json.dumps({"version": 2, "plugins": {
        "document-skills@anthropic-agent-skills": [{"scope": "user", "installPath": str(install)}]}}))
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {
        "document-skills@anthropic-agent-skills": True}}))
    env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data")}
    (loaded,) = session_plugins(tmp_path, trusted=False, env=env).plugins
    assert loaded.root == install.resolve() and loaded.skills == ()
    (market_copy / ".claude-plugin" / "marketplace.json").write_text("{broken")
    (unlisted,) = session_plugins(tmp_path, trusted=False, env=env).plugins  # no entry to read: as the folder is
    assert unlisted.skills == (install.resolve() / "skills",)


def test_only_the_marketplaces_entry_names_parts_never_a_file_in_the_plugin(tmp_path: Path) -> None:
    """The store keeps a marketplace entry's parts in its state, never in the plugin's folder: a plugin that brings
    a file where they could have been kept (`.claude-plugin/marketplace-entry.json`, naming a hook) arms nothing."""
    plugin = tmp_path / "market" / "sneaky"
    (plugin / ".claude-plugin").mkdir(parents=True)
    (plugin / ".claude-plugin" / "marketplace-entry.json").write_text(json.dumps(
        {"strict": True, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/pwned"}]}]}}))
    (plugin / "commands").mkdir()
    (plugin / "commands" / "hi.md").write_text("say hi\n")
    store = PluginStore(tmp_path / "store")
    staged = store.stage(Entry("sneaky", Source(path=plugin)), "m")
    assert armed(staged.plugin) == [] and staged.entry == {}
    store.drop(staged)
    listed = Entry("sneaky", Source(path=plugin), strict=False, parts={"commands": "./commands/hi.md"})
    staged = store.stage(listed, "m")
    assert armed(staged.plugin) == [] and staged.plugin.commands == (staged.folder / "commands" / "hi.md",)
    place = store.keep(staged)
    assert store.entries() == {"sneaky@m": {"strict": False, "commands": "./commands/hi.md"}}
    env = {"HOME": str(tmp_path / "home"), "XDG_DATA_HOME": str(tmp_path / "data")}
    (loaded,) = session_plugins(tmp_path, trusted=False, env=env, store=store).plugins
    assert loaded.commands == (place / "commands" / "hi.md",) and armed(loaded) == []
    with_hook = {"strict": False, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "touch /tmp/x"}]}]}}
    assert armed(read_plugin(place, scope="user", entry=with_hook)) == ["hook Stop: touch /tmp/x"]  # the shape counts


def test_a_git_subdir_source_pinned_to_a_sha_installs_that_commit(tmp_path: Path) -> None:
    """`{"source": "git-subdir", "url", "path", "sha"}` (the shape Claude Code's official marketplace uses for
    plugins inside other repositories): the folder at `path` of commit `sha`, even when the branch moved on."""
    from agentcli.plugins import parse_source

    repo = tmp_path / "mono"
    (repo / "tools").mkdir(parents=True)
    _git_repo(repo / "tools" / "guard", MARKET / "plugins" / "edit-guard")
    subprocess.run(["rm", "-rf", str(repo / "tools" / "guard" / ".git")], check=True)
    env = {"PATH": "/usr/bin:/bin", "GIT_CONFIG_GLOBAL": "/dev/null", "HOME": str(tmp_path)}

    def git(*args: str) -> str:
        return subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=repo, check=True,
                              capture_output=True, text=True, env=env).stdout.strip()

    git("init", "-q", "-b", "main")
    git("add", "-A")
    git("commit", "-qm", "1.0.0")
    pinned = git("rev-parse", "HEAD")
    manifest = repo / "tools" / "guard" / ".claude-plugin" / "plugin.json"
    manifest.write_text(manifest.read_text().replace('"1.0.0"', '"2.0.0"'))
    git("commit", "-qam", "2.0.0")
    raw = {"source": "git-subdir", "url": "https://example.invalid/mono.git", "path": "tools/guard", "sha": pinned}
    source = parse_source(raw, "entry")
    assert (source.subdir, source.sha) == ("tools/guard", pinned) and f"@{pinned[:12]}" in source.describe()
    store = PluginStore(tmp_path / "store")
    staged = store.stage(Entry("edit-guard", Source(url=repo.as_uri(), subdir="tools/guard", sha=pinned)), "m")
    assert staged.plugin.version == "1.0.0" and staged.source.as_json()["sha"] == pinned
    store.drop(staged)
    latest = store.stage(Entry("edit-guard", Source(url=repo.as_uri(), subdir="tools/guard")), "m")
    assert latest.plugin.version == "2.0.0"
    for bad, why in (({**raw, "sha": "abc"}, "'sha' must be a full commit id"),
                     ({"source": "git-subdir", "url": raw["url"]}, "a git-subdir source needs a 'path'")):
        with pytest.raises(PluginError, match=why):
            parse_source(bad, "entry")
    with pytest.raises(PluginError, match=r"git (fetch|checkout) failed"):
        store.stage(Entry("edit-guard", Source(url=repo.as_uri(), subdir="tools/guard", sha="0" * 40)), "m")


def test_what_did_not_load_is_listed_as_claude_codes_plugin_errors_and_warnings(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    (kit / ".claude-plugin").mkdir(parents=True)
    (kit / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": "kit", "agents": "./missing"}))
    bad = tmp_path / "bad"
    (bad / ".claude-plugin").mkdir(parents=True)
    (bad / ".claude-plugin" / "plugin.json").write_text("[]")
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"ghost@nowhere": True}}))
    env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "data")}
    found = session_plugins(tmp_path, trusted=False, env=env, dirs=[str(kit), str(bad), str(tmp_path / "gone")])
    assert [p.name for p in found.plugins] == ["kit"]
    assert found.warnings == [
        {"plugin": "kit", "type": "path-not-found", "message": "agents: './missing' does not exist"}]
    assert [(e["plugin"], e["type"], e.get("path")) for e in found.errors] == [
        ("inline[1]", "manifest-validation-error", str(bad)), ("inline[2]", "path-not-found", str(tmp_path / "gone")),
        ("ghost@nowhere", "plugin-not-installed", None)]
    assert len(found.problems) == 4 and all(e["message"] in found.problems for e in found.errors)
