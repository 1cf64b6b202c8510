"""Language servers through the real CLI and the scripted fake: an Edit that introduces a type error gets it in its
result and the fix gets none; the LSP tool finds a definition and references across files; a hanging server does
not stall an edit; an untrusted project's [lsp] command never runs; no server is left after the run. With the real
basedpyright (the dev extra) and typescript-language-server (npm, tests/lsp_ts: CI installs it)."""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli

TS_BIN = Path(__file__).resolve().parents[1] / "lsp_ts" / "node_modules" / ".bin"
WAITS = {"AGENTCLI_LSP__WAIT_SECONDS": "30", "AGENTCLI_LSP__FIRST_WAIT_SECONDS": "60"}  # bounds, not delays


def _processes_in(folder: Path) -> list[int]:
    """Processes whose working directory is inside `folder` (a language server runs in its root)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                cwd = Path(os.readlink(entry / "cwd"))
            except OSError:
                continue
            if cwd == folder or folder in cwd.parents:
                found.append(int(entry.name))
    return found


def _gone(folder: Path, seconds: float = 10) -> bool:
    deadline = time.monotonic() + seconds
    while _processes_in(folder):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _results(server: FakeLLMServer) -> list[str]:
    """Each request's last message, as text (the tool results the agent got)."""
    return [json.dumps(r.body["messages"][-1], ensure_ascii=False) for r in server.requests]


def _turn(n: int, *calls: ToolCall) -> Step:
    return Step(match=Match(system_contains=MAIN, turn=n), reply=Reply(tool_calls=list(calls)))


def _edit(path: str, old: str, new: str) -> ToolCall:
    return ToolCall(name="Edit", input={"file_path": path, "old_string": old, "new_string": new})


def _lsp(operation: str, **args: Any) -> ToolCall:
    return ToolCall(name="LSP", input={"operation": operation, **args})


def test_python_edit_diagnostics_and_the_lsp_tool_with_basedpyright(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "greet.py").write_text('def greet(name: str) -> str:\n    return "hi " + name\n')
    (ws / "main.py").write_text("from greet import greet\n\nprint(greet(\"you\"))\nprint(greet(\"me\"))\n")
    script = Script(steps=[
        _turn(0, ToolCall(name="Read", input={"file_path": "main.py"})),
        _turn(1, _edit("main.py", 'greet("you")', "greet(42)")),
        _turn(2, _edit("main.py", "greet(42)", 'greet("you")')),
        _turn(3, ToolCall(name="ToolSearch", input={"query": "select:LSP"})),
        _turn(4, _lsp("definition", path="main.py", line=3, column=7)),
        _turn(5, _lsp("references", path="greet.py", line=1, column=5)),
        Step(match=Match(system_contains=MAIN, turn=6), reply=Reply(text="Checked.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "check the greeting"],
                       cli_env("anthropic", server, tmp_path, **WAITS), timeout=240)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert last_json(proc.stdout)["result"] == "Checked."
    results = _results(server)
    broke, fixed, _, definition, references = results[2], results[3], results[4], results[5], results[6]
    assert "basedpyright reports 1 new error" in broke and "main.py:3:" in broke
    assert '\\"Literal[42]\\"' in broke or "Literal[42]" in broke
    assert "new error" not in fixed and "[basedpyright]" not in fixed
    assert "greet.py:1:" in definition
    assert "main.py:3:" in references and "main.py:4:" in references and "greet.py:1:" in references
    assert _gone(ws), f"a language server outlived agentcli: {_processes_in(ws)}"


def test_a_hanging_server_does_not_stall_the_edit_and_is_named_once(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.hang").write_text("one\n")
    hang = tmp_path / "hang.py"
    hang.write_text("import sys, time\nsys.stdin.read()\ntime.sleep(3600)\n")
    config = tmp_path / "config" / "agentcli" / "config.toml"
    config.parent.mkdir(parents=True)
    config.write_text(f'[lsp]\nwait_seconds = 1\nfirst_wait_seconds = 1\n[lsp.servers.hang]\n'
                      f'command = [{json.dumps(sys.executable)}, {json.dumps(str(hang))}]\nextensions = [".hang"]\n')
    script = Script(steps=[
        _turn(0, _edit("a.hang", "one", "two")),
        _turn(1, _edit("a.hang", "two", "three")),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="Edited.")),
    ])
    started = time.monotonic()
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "edit"],
                       cli_env("anthropic", server, tmp_path), timeout=120)
    took = time.monotonic() - started
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    assert (ws / "a.hang").read_text() == "three\n"
    first, second = _results(server)[1:3]
    assert "[hang]" in first  # named once, with what it failed to do
    assert "[hang]" not in second
    assert took < 100  # nothing waited for the hanging server past its bound (a generous ceiling, not a timing)
    assert _gone(ws), "the hanging server outlived agentcli"


def test_an_untrusted_projects_lsp_command_never_runs(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".agentcli").mkdir(parents=True)
    marker = tmp_path / "ran"
    evil = tmp_path / "evil.py"
    evil.write_text(f"open({json.dumps(str(marker))}, 'w').write('x')\n")
    (ws / ".agentcli" / "config.toml").write_text(
        f'[lsp.servers.evil]\ncommand = [{json.dumps(sys.executable)}, {json.dumps(str(evil))}]\n'
        'extensions = [".txt"]\n')
    (ws / "a.txt").write_text("one\n")
    script = Script(steps=[
        _turn(0, ToolCall(name="Read", input={"file_path": "a.txt"})),
        _turn(1, _edit("a.txt", "one", "two")),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="Done.")),
    ])
    with FakeLLMServer(script) as server:
        proc = run_cli(["run", "--yes", "--output-format", "json", "--cwd", str(ws), "edit"],
                       cli_env("anthropic", server, tmp_path), timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert (ws / "a.txt").read_text() == "two\n"
    assert not marker.exists(), "an untrusted project's [lsp] command ran"


def _ts_server() -> Path:
    server = TS_BIN / "typescript-language-server"
    if not server.exists() or shutil.which("node") is None:
        if os.environ.get("AGENTCLI_TS_LSP_REQUIRED"):
            pytest.fail("typescript-language-server is not installed: npm ci --prefix tests/lsp_ts")
        pytest.skip("typescript-language-server is not installed (npm ci --prefix tests/lsp_ts)")
    return server


def test_typescript_edit_diagnostics_and_definition(tmp_path: Path) -> None:
    _ts_server()
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true}}\n')
    (ws / "math.ts").write_text("export function double(n: number): number {\n  return n * 2;\n}\n")
    (ws / "app.ts").write_text('import { double } from "./math";\n\nconst x: number = double(2);\nconsole.log(x);\n')
    script = Script(steps=[
        _turn(0, ToolCall(name="Read", input={"file_path": "app.ts"})),
        _turn(1, _edit("app.ts", "double(2)", 'double("two")')),
        _turn(2, _edit("app.ts", 'double("two")', "double(2)")),
        _turn(3, _lsp("definition", path="app.ts", line=3, column=19)),
        Step(match=Match(system_contains=MAIN, turn=4), reply=Reply(text="Checked.")),
    ])
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path, **WAITS)
        env["PATH"] = f"{TS_BIN}{os.pathsep}{env.get('PATH', '')}"
        proc = run_cli(["run", "--yes", "--trust", "--output-format", "json", "--cwd", str(ws), "check"], env,
                       timeout=240)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    results = _results(server)
    broke, fixed, definition = results[2], results[3], results[4]
    assert "new error" in broke and "app.ts:3:" in broke and "2345" in broke  # TS2345: argument type
    assert "new error" not in fixed
    assert "math.ts:1:" in definition
    assert _gone(ws), f"the TypeScript server outlived agentcli: {_processes_in(ws)}"


def test_a_plugins_language_server_from_a_real_lsp_marketplace(tmp_path: Path) -> None:
    """boostvolt/claude-code-lsps' `pyright` plugin (vendored): installed from its marketplace, its `.lsp.json`
    server reports an Edit's type error. Its command, `pyright-langserver`, is basedpyright's (a fork of pyright
    with the same server; the dev extra installs it) on PATH under that name, so its SessionStart check finds it
    and installs nothing."""
    program = shutil.which("basedpyright-langserver", path=str(Path(sys.executable).parent))
    if program is None:
        pytest.skip("basedpyright-langserver is not installed (pip install -e '.[dev]')")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "pyright-langserver").symlink_to(program)
    for pip in ("pip", "pip3"):  # were the check not to find the server, its install fails here: nothing is fetched
        (bin_dir / pip).write_text("#!/bin/sh\nexit 1\n")
        (bin_dir / pip).chmod(0o755)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "main.py").write_text("def twice(n: int) -> int:\n    return n * 2\n\nprint(twice(2))\n")
    script = Script(steps=[
        _turn(0, ToolCall(name="Read", input={"file_path": "main.py"})),
        _turn(1, _edit("main.py", "twice(2)", 'twice("two")')),
        Step(match=Match(system_contains=MAIN, turn=2), reply=Reply(text="Checked.")),
    ])
    market = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "boostvolt-claude-code-lsps"
    with FakeLLMServer(script) as server:
        env = cli_env("anthropic", server, tmp_path, **WAITS)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        for args in (["plugins", "marketplace", "add", str(market)],
                     ["plugins", "install", "pyright@claude-code-lsps", "--yes"]):
            step = run_cli(args, env, timeout=60)
            assert step.returncode == 0, step.stdout + step.stderr
        assert "language server plugin_pyright_python: pyright-langserver --stdio" in step.stdout
        listed = run_cli(["lsp", "list", "--cwd", str(ws)], env, timeout=60)
        assert "plugin_pyright_python" in listed.stdout and "(used)" in listed.stdout.split("plugin_pyright")[1]
        proc = run_cli(["run", "--yes", "--trust", "--output-format", "json", "--cwd", str(ws), "check"], env,
                       timeout=240)
    assert proc.returncode == 0, proc.stderr
    server.assert_done()
    broke = _results(server)[2]
    assert "plugin_pyright_python reports 1 new error" in broke and "main.py:4:" in broke, broke
    assert _gone(ws), f"the plugin's server outlived agentcli: {_processes_in(ws)}"
