"""Layered configuration: layers, merge rules, env parsing, errors, provenance, redaction."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import BaseModel

from agentcli import resources
from agentcli.config.load import ConfigError, LoadedConfig, ModelSettings, Settings, load_config
from agentcli.config.show import render_config

FAKE_KEY = "sk-FAKE-7f3a9c1e5b-REDACT-ME"


class Layout:
    """A workspace, a user config dir and an environment for one test."""

    def __init__(self, tmp_path: Path) -> None:
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        self.xdg = tmp_path / "xdg"
        self.env: dict[str, str] = {"XDG_CONFIG_HOME": str(self.xdg)}
        self.user_file = self.xdg / "agentcli" / "config.toml"
        self.project_file = self.workspace / ".agentcli" / "config.toml"
        self.tmp = tmp_path

    def user(self, text: str) -> Path:
        return _write(self.user_file, text)

    def project(self, text: str) -> Path:
        return _write(self.project_file, text)

    def file(self, name: str, text: str) -> Path:
        return _write(self.tmp / name, text)

    def load(self, **kwargs: object) -> LoadedConfig:
        kwargs.setdefault("env", self.env)
        kwargs.setdefault("trusted", True)  # the project layer as a plain layer; test_trust.py: untrusted
        return load_config(self.workspace, **kwargs)  # type: ignore[arg-type]

    def error(self, **kwargs: object) -> str:
        with pytest.raises(ConfigError) as info:
            self.load(**kwargs)
        message = str(info.value)
        assert message.startswith("invalid config: ")
        assert "\n" not in message
        return message


def _write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def lay(tmp_path: Path) -> Layout:
    return Layout(tmp_path)


# ---------------------------------------------------------------- defaults


def test_shipped_defaults_alone_validate_and_equal_the_schema_defaults(lay: Layout) -> None:
    loaded = lay.load()
    assert loaded.settings == Settings()
    assert loaded.layers == [("default", str(resources.default_config_path()))]
    assert {src.layer for src in loaded.provenance.values()} == {"default"}
    main = loaded.settings.models.main
    assert isinstance(main, ModelSettings)
    assert (main.provider, main.model, main.base_url, main.api_key) == ("anthropic", "claude-sonnet-5-5", None, None)
    assert loaded.settings.models.light.model == "claude-haiku-5-5"
    assert loaded.settings.models.light.max_output_tokens == 4096
    assert loaded.settings.task_tool.max_concurrent == 5


def _schema_entries(model: type[BaseModel], section: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], str]]:
    """(section, key) for every leaf of the schema; a dict table is documented by its default keys."""
    entries: list[tuple[tuple[str, ...], str]] = []
    defaults = model()
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            entries += _schema_entries(annotation, (*section, name))
        elif isinstance(getattr(defaults, name), dict):
            entries += [((*section, name), key) for key in getattr(defaults, name)]
            entries.append(((*section, name), ""))  # the table itself
        else:
            entries.append((section, name))
    return entries


def test_default_config_documents_every_schema_key_with_a_comment() -> None:
    text = resources.default_config_path().read_text(encoding="utf-8")
    documented: dict[tuple[tuple[str, ...], str], bool] = {}
    section: tuple[str, ...] = ()
    comment_above = False
    for line in text.splitlines():
        line = line.strip()
        if header := re.match(r"^\[([\w.]+)\]\s*(#\s*\S)?", line):
            section = tuple(header[1].split("."))
            documented[(section, "")] = bool(header[2])
        elif entry := re.match(r"^(\w+)\s*=\s*(.*)$", line):
            documented[(section, entry[1])] = comment_above or bool(re.search(r"\s#\s*\S", entry[2]))
        comment_above = line.startswith("#")
    missing = [entry for entry in _schema_entries(Settings) if not documented.get(entry)]
    assert missing == [], f"keys missing from default_config.toml or without a comment: {missing}"
    # and nothing in the file the schema does not know (validation would fail, but say it plainly)
    file_keys = {entry for entry in documented if entry[1]}
    assert file_keys <= set(_schema_entries(Settings))


@pytest.mark.parametrize("example", ["example.user.toml", "example.project.toml"])
def test_example_configs_validate(lay: Layout, example: str) -> None:
    path = Path(__file__).resolve().parents[2] / "config" / example
    loaded = lay.load(config_file=path)
    assert any(src.layer == "config-file" for src in loaded.provenance.values())


# ---------------------------------------------------------------- layers and merging


def test_each_layer_overrides_the_one_below(lay: Layout) -> None:
    def check(value: str, layer: str, location: str, **kwargs: object) -> None:
        loaded = lay.load(**kwargs)
        assert loaded.settings.models.main.model == value
        assert loaded.source_of("models.main.model") == (layer, location)

    check("claude-sonnet-5-5", "default", str(resources.default_config_path()))
    lay.user('[models.main]\nmodel = "from-user"\n')
    check("from-user", "user", str(lay.user_file))
    lay.project('[models.main]\nmodel = "from-project"\n')
    check("from-project", "project", str(lay.project_file))
    explicit = lay.file("explicit.toml", '[models.main]\nmodel = "from-config"\n')
    check("from-config", "config-file", str(explicit), config_file=explicit)
    lay.env["LLM_MODEL_ID"] = "from-llm-var"
    check("from-llm-var", "env", "LLM_MODEL_ID", config_file=explicit)
    lay.env["AGENTCLI_MODELS__MAIN__MODEL"] = "from-agentcli-var"
    check("from-agentcli-var", "env", "AGENTCLI_MODELS__MAIN__MODEL", config_file=explicit)
    overrides = {"models.main.model": "from-flag"}
    check("from-flag", "cli", "models.main.model", config_file=explicit, overrides=overrides)
    check("from-flag", "cli", "--model", config_file=explicit, overrides=overrides,
          override_origins={"models.main.model": "--model"})  # fmt: skip


def test_tables_merge_across_layers(lay: Layout) -> None:
    lay.user('[models.main]\nprovider = "openai"\n[models.aliases]\nfast = "light"\n')
    lay.project('[models.main]\nmodel = "gpt-5"\n')
    loaded = lay.load()
    main = loaded.settings.models.main
    assert (main.provider, main.model, main.max_output_tokens) == ("openai", "gpt-5", 8192)
    assert loaded.source_of("models.main.provider").layer == "user"
    assert loaded.source_of("models.main.model").layer == "project"
    assert loaded.source_of("models.main.max_output_tokens").layer == "default"
    assert loaded.settings.models.aliases == {"opus": "main", "sonnet": "main", "haiku": "light", "fast": "light"}


def test_lists_replace_instead_of_concatenating(lay: Layout) -> None:
    lay.user('[task_tool]\ndeny_tools = ["A", "B"]\n[permissions]\nallow = ["Read", "Bash(ls*)"]\n')
    lay.project('[task_tool]\ndeny_tools = ["C"]\n')
    loaded = lay.load()
    assert loaded.settings.task_tool.deny_tools == ["C"]
    assert loaded.source_of("task_tool.deny_tools").layer == "project"
    assert loaded.settings.permissions.allow == ["Read", "Bash(ls*)"]
    lay.env["AGENTCLI_TASK_TOOL__DENY_TOOLS"] = "[]"
    assert lay.load().settings.task_tool.deny_tools == []
    loaded = lay.load(overrides={"permissions.allow": ["Edit(src/**)"]})
    assert loaded.settings.permissions.allow == ["Edit(src/**)"]


def test_env_nesting_and_toml_literal_values(lay: Layout) -> None:
    lay.env |= {
        "AGENTCLI_MODELS__MAIN__MODEL": "gpt-5",
        "AGENTCLI_MODELS__MAIN__PROVIDER": "openai",
        "AGENTCLI_TASK_TOOL__DENY_TOOLS": '["Bash"]',
        "AGENTCLI_TASK_TOOL__MAX_DEPTH": "3",
        "agentcli_task_tool__enabled": "false",  # names are case-insensitive
        "AGENTCLI_TASK_TOOL__ALLOW_MODEL_OVERRIDE": "False",
        "AGENTCLI_LLM__RETRY_MAX_DELAY_SECONDS": "2.5",
        "AGENTCLI_MODELS__LIGHT__API_KEY": "12345",  # a string field keeps the text
        "AGENTCLI_MODELS__ALIASES__LOCAL": "openai-compatible:llama3.1:8b",
        "AGENTCLI_FAKE_LLM_URL": "http://127.0.0.1:1",  # not config: not nested, not a section
    }
    s = lay.load().settings
    assert (s.models.main.model, s.models.main.provider) == ("gpt-5", "openai")
    assert s.task_tool.deny_tools == ["Bash"]
    assert s.task_tool.max_depth == 3
    assert s.task_tool.enabled is False
    assert s.task_tool.allow_model_override is False
    assert s.llm.retry_max_delay_seconds == 2.5
    assert s.models.light.api_key is not None and s.models.light.api_key.get_secret_value() == "12345"
    assert s.models.aliases["local"] == "openai-compatible:llama3.1:8b"


def test_env_inline_table_merges_and_more_specific_variable_wins(lay: Layout) -> None:
    lay.env |= {
        "AGENTCLI_MODELS__MAIN": '{model = "a", max_output_tokens = 100}',
        "AGENTCLI_MODELS__MAIN__MODEL": "b",
    }
    loaded = lay.load()
    assert (loaded.settings.models.main.model, loaded.settings.models.main.max_output_tokens) == ("b", 100)
    assert loaded.settings.models.main.provider == "anthropic"
    assert loaded.source_of("models.main.max_output_tokens") == ("env", "AGENTCLI_MODELS__MAIN")


def test_seed_llm_variables_map_onto_main_and_light(lay: Layout) -> None:
    lay.env |= {
        "LLM_MODEL_ID": "gpt-5",
        "LLM_PROVIDER": "openai",
        "LLM_BASE_URL": "https://llm.example/v1",
        "LLM_API_KEY": FAKE_KEY,
        "LIGHT_LLM_MODEL_ID": "qwen2.5:7b",
        "LIGHT_LLM_PROVIDER": "openai-compatible",
        "LIGHT_LLM_BASE_URL": "http://127.0.0.1:11434/v1",
        "LIGHT_LLM_API_KEY": "",  # empty: unset, the default stays
    }
    loaded = lay.load()
    main, light = loaded.settings.models.main, loaded.settings.models.light
    assert (main.provider, main.model, main.base_url) == ("openai", "gpt-5", "https://llm.example/v1")
    assert main.api_key is not None and main.api_key.get_secret_value() == FAKE_KEY
    assert (light.provider, light.model, light.base_url, light.api_key) == (
        "openai-compatible",
        "qwen2.5:7b",
        "http://127.0.0.1:11434/v1",
        None,
    )
    assert loaded.source_of("models.light.api_key").layer == "default"
    lay.env["AGENTCLI_MODELS__MAIN__PROVIDER"] = "anthropic"
    assert lay.load().settings.models.main.provider == "anthropic"


def test_empty_strings_mean_unset_and_none_overrides_are_skipped(lay: Layout) -> None:
    lay.user('[models.main]\nbase_url = "https://x.example"\napi_key = "k"\n')
    lay.project('[models.main]\nbase_url = ""\napi_key = ""\n')
    loaded = lay.load(overrides={"models.main.model": None})
    assert loaded.settings.models.main.base_url is None
    assert loaded.settings.models.main.api_key is None
    assert loaded.source_of("models.main.model").layer == "default"


def test_dotted_alias_names_and_provenance_keys(lay: Layout) -> None:
    lay.project('[models.aliases]\n"gpt-4.1" = "openai:gpt-4.1"\n')
    loaded = lay.load()
    assert loaded.settings.models.aliases["gpt-4.1"] == "openai:gpt-4.1"
    assert loaded.source_of('models.aliases."gpt-4.1"').layer == "project"
    with pytest.raises(KeyError):
        loaded.source_of("models.nope")


def test_provenance_and_layers_list(lay: Layout) -> None:
    lay.user("[agent]\nmax_turns = 10\n")
    lay.project('[logging]\nlevel = "DEBUG"\n')
    explicit = lay.file("run.conf", "[task_tool]\nmax_concurrent = 8\n")  # any suffix works
    lay.env["AGENTCLI_TASK_TOOL__MAX_DEPTH"] = "1"
    loaded = lay.load(config_file=explicit, overrides={"permissions.mode": "auto"})
    assert loaded.settings.logging.level == "debug"
    assert loaded.source_of("agent.max_turns") == ("user", str(lay.user_file))
    assert loaded.source_of("logging.level") == ("project", str(lay.project_file))
    assert loaded.source_of("task_tool.max_concurrent") == ("config-file", str(explicit))
    assert loaded.source_of("task_tool.max_depth") == ("env", "AGENTCLI_TASK_TOOL__MAX_DEPTH")
    assert loaded.source_of("permissions.mode") == ("cli", "permissions.mode")
    assert loaded.source_of("agent.bash_timeout_seconds").layer == "default"
    assert [layer for layer, _ in loaded.layers] == ["default", "user", "project", "config-file", "env", "cli"]


def test_each_layer_arrives_through_dynaconf_with_its_origin(lay: Layout) -> None:
    from dynaconf.utils.inspect import get_history, inspect_settings

    lay.user('[models.main]\nmodel = "from-user"\n')
    lay.project('[models.main]\nmodel = "from-project"\n')
    explicit = lay.file("explicit.toml", '[models.main]\nmodel = "from-config"\n')
    lay.env |= {"LLM_MODEL_ID": "from-llm-var", "AGENTCLI_MODELS__MAIN__MODEL": "from-agentcli-var"}
    loaded = lay.load(config_file=explicit, overrides={"models.main.model": "from-flag"},
                      override_origins={"models.main.model": "--model"})  # fmt: skip
    assert loaded.stack is not None
    records = get_history(loaded.stack.settings, "models.main.model")
    history = [(h["loader"], h["identifier"], h["value"]) for h in records]
    assert history == [
        ("default", str(resources.default_config_path()), "claude-sonnet-5-5"),
        ("user", str(lay.user_file), "from-user"),
        ("project", str(lay.project_file), "from-project"),
        ("config-file", str(explicit), "from-config"),
        ("env", "LLM_MODEL_ID", "from-llm-var"),
        ("env", "AGENTCLI_MODELS__MAIN__MODEL", "from-agentcli-var"),
        ("cli", "--model", "from-flag"),
    ]
    report = inspect_settings(loaded.stack.settings, key="models.main.model")
    assert report["current"] == loaded.settings.models.main.model == "from-flag"
    assert loaded.source_of("models.main.model") == ("cli", "--model")
    # a table a layer reaches merges with the one below: the other keys keep the origin they had
    assert loaded.source_of("models.main.provider").layer == "default"
    first = get_history(loaded.stack.settings, "models.main.provider")[0]
    assert (first["loader"], first["value"]) == ("default", "anthropic")


def test_empty_tables_merge_nothing_and_dotted_keys_merge_too(lay: Layout) -> None:
    lay.user('[models.main]\nmodel = "from-user"\n[models.aliases]\n"gpt-4.1" = "openai:gpt-4.1"\n')
    lay.project("[models]\n[models.main]\n[permissions]\n")
    loaded = lay.load()
    assert loaded.settings.models.main.model == "from-user"
    assert loaded.settings.models.main.provider == "anthropic"
    assert loaded.settings.models.aliases == {"opus": "main", "sonnet": "main", "haiku": "light",
                                              "gpt-4.1": "openai:gpt-4.1"}  # fmt: skip
    assert loaded.source_of('models.aliases."gpt-4.1"') == ("user", str(lay.user_file))
    assert loaded.source_of("models.aliases.opus").layer == "default"


def test_settings_is_pydantic_settings_reading_only_the_merged_layers(
    lay: Layout, monkeypatch: pytest.MonkeyPatch
) -> None:
    from pydantic_settings import BaseSettings

    assert issubclass(Settings, BaseSettings)
    monkeypatch.chdir(lay.workspace)
    (lay.workspace / ".env").write_text('TASK_TOOL={"max_depth": 9}\n')
    monkeypatch.setenv("TASK_TOOL", '{"max_depth": 9}')
    monkeypatch.setenv("task_tool__max_depth", "9")
    assert Settings().task_tool.max_depth == 2  # its own environment and .env sources are off
    assert lay.load().settings.task_tool.max_depth == 2
    assert Settings(task_tool={"max_depth": 3}).task_tool.max_depth == 3  # the one source: the merged tables


# ---------------------------------------------------------------- errors


def test_invalid_value_names_key_value_file_and_rule(lay: Layout) -> None:
    project = lay.project('[task_tool]\nmax_depth = "abc"\n')
    message = lay.error()
    assert f"task_tool.max_depth = 'abc' (from {project}): Input should be a valid integer" in message


def test_several_invalid_values_are_listed_on_one_line(lay: Layout) -> None:
    lay.user('[permissions]\nmode = "yolo"\nallow = ["Bash(ls*)", "not a rule"]\n')
    lay.env["AGENTCLI_TASK_TOOL__MAX_CONCURRENT"] = "100"
    message = lay.error()
    rule = "Input should be 'ask', 'accept_edits', 'auto' or 'readonly'"
    assert f"permissions.mode = 'yolo' (from {lay.user_file}): {rule}" in message
    assert "permissions.allow[1] = 'not a rule'" in message
    assert "task_tool.max_concurrent = 100 (from ENV AGENTCLI_TASK_TOOL__MAX_CONCURRENT): " in message
    assert message.count("; ") == 2


def test_unknown_keys_are_errors(lay: Layout) -> None:
    lay.env["AGENTCLI_TASK_TOOL__MAX_DEPT"] = "3"
    message = lay.error()
    assert "task_tool.max_dept (from ENV AGENTCLI_TASK_TOOL__MAX_DEPT): unknown key" in message
    assert "did you mean task_tool.max_depth?" in message
    del lay.env["AGENTCLI_TASK_TOOL__MAX_DEPT"]
    project = lay.project("[tasks]\nmax = 1\n")
    assert f"tasks (from {project}): unknown key" in lay.error()
    lay.project("[models.main]\ntemperature = 0.2\n")
    assert "models.main.temperature" in lay.error()


def test_toml_syntax_error(lay: Layout) -> None:
    project = lay.project("[agent]\nmax_turns = 3\nthis is not toml\n")
    message = lay.error()
    assert message.startswith(f"invalid config: cannot parse {project}: ")
    assert "line 3" in message


def test_missing_config_file(lay: Layout) -> None:
    missing = lay.tmp / "nope.toml"
    assert lay.error(config_file=missing) == f"invalid config: --config file {missing} does not exist"


def test_cross_field_rule(lay: Layout) -> None:
    project = lay.project("[task_tool]\ndefault_timeout_seconds = 4000\n")
    message = lay.error()
    assert (
        f"task_tool.default_timeout_seconds = 4000 (from {project}): must be <= "
        f"task_tool.max_timeout_seconds = 1800 (from {resources.default_config_path()})"
    ) in message
    lay.env["AGENTCLI_TASK_TOOL__MAX_TIMEOUT_SECONDS"] = "7200"
    assert lay.load().settings.task_tool.default_timeout_seconds == 4000


@pytest.mark.parametrize(
    ("toml", "fragment"),
    [
        ('[models.main]\nprovider = "gemini"\n', "models.main.provider = 'gemini'"),
        ('[models.main]\nbase_url = "localhost:8080"\n', "must be an http:// or https:// URL"),
        ('[models.aliases]\nbig = "gemini:pro"\n', "models.aliases.big = 'gemini:pro'"),
        ('[models.aliases]\ninherit = "main"\n', "alias name 'inherit' is reserved"),
        ('[task_tool]\non_limit = "drop"\n', "Input should be 'queue' or 'error'"),
        ("[task_tool]\nmax_depth = -1\n", "greater than or equal to 0"),
        ("[llm]\nretry_initial_delay_seconds = 9.0\n", "must be <= llm.retry_max_delay_seconds = 8.0"),
        ("models = 3\n", "models = 3"),
    ],
)
def test_schema_rules(lay: Layout, toml: str, fragment: str) -> None:
    lay.project(toml)
    assert fragment in lay.error()


def test_bad_environment_variable_name(lay: Layout) -> None:
    lay.env["AGENTCLI_TASK_TOOL____MAX_DEPTH"] = "1"
    assert "AGENTCLI_TASK_TOOL____MAX_DEPTH" in lay.error()


# ---------------------------------------------------------------- the libraries stay out of the way


def test_no_stray_files_or_library_variables_are_read(lay: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    stray_toml = "max_depth = 9\n[task_tool]\nmax_depth = 9\n"
    for folder in (lay.workspace, lay.workspace / ".agentcli", lay.tmp):
        folder.mkdir(exist_ok=True)
        _write(folder / "settings.toml", stray_toml)
        _write(folder / ".secrets.toml", stray_toml)
        _write(folder / ".env", "AGENTCLI_TASK_TOOL__MAX_DEPTH=9\nDYNACONF_TASK_TOOL__MAX_DEPTH=9\n")
    monkeypatch.chdir(lay.workspace)
    for name, value in {
        "SETTINGS_FILE_FOR_DYNACONF": str(lay.workspace / "settings.toml"),
        "INCLUDES_FOR_DYNACONF": str(lay.workspace / "settings.toml"),
        "ENV_FOR_DYNACONF": "production",
        "ENVVAR_PREFIX_FOR_DYNACONF": "AGENTCLI",
        "DYNACONF_TASK_TOOL__MAX_DEPTH": "9",
        "AGENTCLI_TASK_TOOL__MAX_DEPTH": "9",  # os.environ is not read when env= is given
    }.items():
        monkeypatch.setenv(name, value)
    loaded = lay.load()
    assert loaded.settings.task_tool.max_depth == 2
    assert loaded.layers == [("default", str(resources.default_config_path()))]


def test_values_are_not_cast_or_interpolated(lay: Layout, monkeypatch: pytest.MonkeyPatch) -> None:
    # dynaconf takes its own options from the environment over those agentcli gives it; none may apply
    for name, value in {"AUTO_CAST_FOR_DYNACONF": "true", "MERGE_ENABLED_FOR_DYNACONF": "true",
                        "DOTTED_LOOKUP_FOR_DYNACONF": "false", "NESTED_SEPARATOR_FOR_DYNACONF": "___"}.items():
        monkeypatch.setenv(name, value)
    lay.project(
        '[models.main]\nmodel = "@format {env[HOME]}"\n'
        '[models.light]\nmodel = "@int 3"\n'
        '[permissions]\nallow = ["Bash(echo @json)"]\n'
    )
    lay.env["AGENTCLI_MODELS__ALIASES__X"] = "@jinja {{ this.models }}"
    with pytest.raises(ConfigError, match=r"models\.aliases\.x = '@jinja"):
        lay.load()
    del lay.env["AGENTCLI_MODELS__ALIASES__X"]
    s = lay.load().settings
    assert (s.models.main.model, s.models.light.model) == ("@format {env[HOME]}", "@int 3")
    assert s.permissions.allow == ["Bash(echo @json)"]


def test_dynaconf_merge_markers_are_refused(lay: Layout) -> None:
    lay.user('[permissions]\nallow = ["Read"]\n[models.aliases]\nfast = "light"\n')
    lay.project("dynaconf_merge = true\n[task_tool]\ndeny_tools = []\n")
    assert "dynaconf_merge (from " in lay.error()
    lay.project("[task_tool]\ndynaconf_merge = true\n")
    assert "task_tool.dynaconf_merge (from " in lay.error()
    lay.project("[models.aliases]\ndynaconf_merge = false\n")  # would drop the aliases below
    assert "models.aliases.dynaconf_merge (from " in lay.error()
    lay.project('[permissions]\nallow = ["dynaconf_merge", "Bash"]\n')  # would keep the list below
    assert "permissions.allow (from " in lay.error()
    lay.project('[permissions]\nallow = ["Bash"]\n')
    assert lay.load().settings.permissions.allow == ["Bash"]


def test_keys_match_the_schema_exactly(lay: Layout) -> None:
    # dynaconf matches keys case-insensitively when it merges: a key in another case must not become the real one
    lay.user('[permissions]\nallow = ["Read"]\n')
    lay.project('[permissions]\nAllow = ["Bash"]\n[Models.main]\nmodel = "x"\n')
    message = lay.error()
    assert "permissions.Allow (from " in message and "did you mean permissions.allow?" in message
    assert "Models (from " in message


def test_importing_config_does_not_import_config_libraries() -> None:
    code = (
        "import sys, agentcli.config.load\n"
        "heavy = [m for m in ('pydantic', 'tomllib', 'agentcli.config.schema') if m in sys.modules]\n"
        "print(','.join(heavy))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == ""


# ---------------------------------------------------------------- config show and redaction


def _secret_layers(lay: Layout, monkeypatch: pytest.MonkeyPatch) -> dict[str, Callable[[], LoadedConfig]]:
    key_toml = f'[models.main]\napi_key = "{FAKE_KEY}"\n'

    def default() -> LoadedConfig:
        text = resources.default_config_path().read_text(encoding="utf-8")
        patched = lay.file("default_config.toml", text.replace('api_key = ""', f'api_key = "{FAKE_KEY}"', 1))
        monkeypatch.setattr(resources, "default_config_path", lambda: patched)
        return lay.load()

    def user() -> LoadedConfig:
        lay.user(key_toml)
        return lay.load()

    def project() -> LoadedConfig:
        lay.project(key_toml)
        return lay.load()

    def config_file() -> LoadedConfig:
        return lay.load(config_file=lay.file("c.toml", key_toml))

    def llm_var() -> LoadedConfig:
        return lay.load(env={**lay.env, "LLM_API_KEY": FAKE_KEY, "LIGHT_LLM_API_KEY": FAKE_KEY + "-light"})

    def agentcli_var() -> LoadedConfig:
        return lay.load(env={**lay.env, "AGENTCLI_MODELS__MAIN__API_KEY": FAKE_KEY})

    def cli() -> LoadedConfig:
        return lay.load(overrides={"models.main.api_key": FAKE_KEY})

    return {
        "default": default,
        "user": user,
        "project": project,
        "config-file": config_file,
        "env-llm": llm_var,
        "env-agentcli": agentcli_var,
        "cli": cli,
    }


@pytest.mark.parametrize("layer", ["default", "user", "project", "config-file", "env-llm", "env-agentcli", "cli"])
def test_render_redacts_secrets_from_every_layer(lay: Layout, monkeypatch: pytest.MonkeyPatch, layer: str) -> None:
    loaded = _secret_layers(lay, monkeypatch)[layer]()
    assert loaded.settings.models.main.api_key is not None
    text, as_json = render_config(loaded), render_config(loaded, json=True)
    for output in (text, as_json, repr(loaded), str(loaded.settings)):
        assert "FAKE-7f3a9c1e5b" not in output
    assert re.search(r'^api_key = "\*\*\*" +# ', text, re.MULTILINE)
    doc = json.loads(as_json)
    assert doc["models.main.api_key"]["value"] == "***"
    expected_layer = {"env-llm": "env", "env-agentcli": "env"}.get(layer, layer)
    assert doc["models.main.api_key"]["layer"] == expected_layer
    assert doc["models.light.api_key"]["value"] in (None, "***")


def test_secrets_never_appear_in_error_messages(lay: Layout) -> None:
    lay.project(f'[models.main]\napi_key = ["{FAKE_KEY}"]\nbase_url = "ftp://me:{FAKE_KEY}@host"\n')
    message = lay.error()
    assert "models.main.api_key = ['***']" in message or "models.main.api_key = '***'" in message
    assert "FAKE-7f3a9c1e5b" not in message


def test_render_text_and_json_show_every_value_with_its_origin(lay: Layout) -> None:
    lay.project('[task_tool]\nmax_depth = 3\ndeny_tools = ["Bash"]\n')
    loaded = lay.load(overrides={"models.main.model": "gpt-5"}, override_origins={"models.main.model": "--model"})
    text = render_config(loaded)
    assert re.search(rf"^max_depth = 3 +# project \({re.escape(str(lay.project_file))}\)$", text, re.MULTILINE)
    assert re.search(r'^deny_tools = \["Bash"\] +# project ', text, re.MULTILINE)
    assert re.search(r'^model = "gpt-5" +# cli \(--model\)$', text, re.MULTILINE)
    assert re.search(r'^base_url = "" +# unset; default ', text, re.MULTILINE)
    headers = re.findall(r"^\[(.+)\]$", text, re.MULTILINE)
    assert headers == sorted(headers) and "models.aliases" in headers
    # the text form is TOML again, and says the same as the settings
    assert tomllib.loads(text)["task_tool"]["max_depth"] == 3
    doc = json.loads(render_config(loaded, json=True))
    assert set(doc) == set(loaded.provenance)
    assert doc["task_tool.max_depth"] == {"value": 3, "layer": "project", "location": str(lay.project_file)}
    assert doc["models.main.base_url"]["value"] is None
    assert doc["models.aliases.haiku"]["value"] == "light"


def test_underscore_keys_in_a_file_are_unknown_keys_not_model_options(lay: Layout) -> None:
    lay.project(f'_secrets_dir = "{lay.tmp}"\n_cli_parse_args = true\n')
    message = lay.error()
    assert "_secrets_dir (from " in message and "_cli_parse_args (from " in message


def test_values_nested_thousands_deep_are_a_config_error_not_a_recursion_error(tmp_path: Path) -> None:
    from agentcli.config.layers import ConfigError, parse_env_value, read_toml, too_deep

    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 3000 + "]" * 3000 + "\n")
    with pytest.raises(ConfigError, match="nested more than"):
        read_toml(deep)
    deep.write_text("a = " + "{b = " * 50 + "1" + "}" * 50 + "\n")  # parses, but deeper than any setting
    with pytest.raises(ConfigError, match=str(deep)):
        read_toml(deep)
    assert parse_env_value("[" * 3000 + "]" * 3000, want_string=False) == "[" * 3000 + "]" * 3000
    assert not too_deep({"a": {"b": [1, [2]]}}) and too_deep([[[1]]], limit=2)


@pytest.mark.parametrize(
    ("raw", "want_string", "expected"),
    [
        ("3", False, 3),
        (" 2.5 ", False, 2.5),
        ("True", False, True),  # as shells often spell it
        ("false", False, False),
        ('["Bash", "Edit"]', False, ["Bash", "Edit"]),
        ('{model = "a", max_output_tokens = 100}', False, {"model": "a", "max_output_tokens": 100}),
        ("1 # a comment", False, 1),
        ("12345", True, "12345"),  # the schema wants a string: the text stays
        ("@int 3", False, "@int 3"),  # no casting tokens
        ("[1, 2", False, "[1, 2"),  # not a TOML value: the text
        ("", False, ""),
        ("1\nother = 2", False, "1\nother = 2"),  # never a second key
    ],
)
def test_environment_values_are_toml_literals_or_text(raw: str, want_string: bool, expected: object) -> None:
    from agentcli.config.layers import parse_env_value

    value = parse_env_value(raw, want_string=want_string)
    assert value == expected and type(value) is type(expected)


def test_file_layers_keep_their_keys_and_order_as_written(tmp_path: Path) -> None:
    from agentcli.config.layers import read_toml

    path = _write(tmp_path / "c.toml", '[zeta]\nb = 1\na = "x"\n[alpha]\nlist = [3, 1]\n[models.main]\nAPI_KEY = "k"\n')
    data = read_toml(path)
    assert list(data) == ["zeta", "alpha", "models"]  # unknown tables are kept, not sorted or dropped
    assert data == {"zeta": {"b": 1, "a": "x"}, "alpha": {"list": [3, 1]}, "models": {"main": {"API_KEY": "k"}}}
