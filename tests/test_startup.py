"""Start-up stays fast: the help and config paths import neither SDK nor Textual."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("anthropic", "openai", "textual", "httpx2", "aiohttp", "genai_prices", "pydantic", "dynaconf", "pygls",
         "lsprotocol")
CONFIG_LIBRARIES = ("pydantic", "dynaconf")  # what reading the config needs (`config show`), and nothing else

PROBE = """
import json, sys
from agentcli.cli.app import app
try:
    app(args=sys.argv[1:], prog_name="agentcli")
except SystemExit as exc:
    code = exc.code
else:
    code = 0
heavy = [m for m in {heavy!r} if m in sys.modules]
sys.stderr.write("PROBE " + json.dumps({{"code": code, "heavy": heavy}}) + "\\n")
"""


def _probe(args: list[str], cwd: Path) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE.format(heavy=HEAVY), *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
    )
    line = next(ln for ln in proc.stderr.splitlines() if ln.startswith("PROBE "))
    result: dict[str, object] = json.loads(line.removeprefix("PROBE "))
    result["stdout"] = proc.stdout
    return result


TYPER_PARAMETERS = ("pydantic",)  # typer builds a command's parameters through its own pydantic adapters


@pytest.mark.parametrize(("args", "allowed"), [(["--help"], ()), (["run", "--help"], TYPER_PARAMETERS),
                                              (["config", "show"], CONFIG_LIBRARIES)])
def test_light_paths_import_no_sdk(args: list[str], allowed: tuple[str, ...], tmp_path: Path) -> None:
    result = _probe(args, tmp_path)
    assert result["code"] in (0, None)
    assert [m for m in result["heavy"] if m not in allowed] == []  # type: ignore[attr-defined]
    assert result["stdout"]


def test_python_dash_m_runs(tmp_path: Path) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "agentcli", "--version"], capture_output=True, text=True, cwd=tmp_path, timeout=60
    )
    assert proc.returncode == 0
    assert proc.stdout.startswith("agentcli ")


GC_PROBE = """
import atexit, gc, sys
state = {}
def audit(event, args):
    if event == "import" and args[0] == "agentcli.cli" and "cli" not in state:
        state["cli"] = gc.isenabled()
sys.addaudithook(audit)
atexit.register(lambda: sys.stderr.write(f"GC {state.get('cli')} {gc.isenabled()}\\n"))
sys.argv = ["agentcli", *sys.argv[1:]]
from agentcli.__main__ import main
main()
"""


@pytest.mark.parametrize("args", [["config", "show"], ["--version"]])
def test_collection_is_paused_from_the_first_line_and_back_on_for_other_commands(
    tmp_path: Path, args: list[str]
) -> None:
    proc = subprocess.run([sys.executable, "-c", GC_PROBE, *args], capture_output=True, text=True, cwd=tmp_path,
                          timeout=60)
    assert proc.returncode == 0, proc.stderr
    # paused while the command line module loads; a command other than `run` turns it back on
    assert "GC False True" in proc.stderr


GROUPS_PROBE = """
import sys
from agentcli.cli.app import app
try:
    app(args=sys.argv[1:], prog_name="agentcli")
except SystemExit:
    pass
built = [m for m in ("agentcli.cli.agents", "agentcli.cli.tasks", "agentcli.cli.sessions", "agentcli.cli.mcp")
         if m in sys.modules]
sys.stderr.write("BUILT " + ",".join(built) + "\\n")
"""


def _groups_probe(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", GROUPS_PROBE, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=60)


def test_run_builds_none_of_the_command_groups(tmp_path: Path) -> None:
    assert "BUILT \n" in _groups_probe(["run", "--help"], tmp_path).stderr


def test_the_command_groups_are_listed_run_and_suggested(tmp_path: Path) -> None:
    listed = _groups_probe(["--help"], tmp_path).stdout
    assert all(f"  {name}" in listed for name in ("config", "agents", "tasks", "sessions", "mcp"))
    assert "Subagent types" in _groups_probe(["agents", "--help"], tmp_path).stdout
    typo = _groups_probe(["agnets"], tmp_path)
    assert "No such command 'agnets'. Did you mean 'agents'?" in typo.stderr


def test_the_document_libraries_wait_for_a_pdf_or_a_notebook(tmp_path: Path) -> None:
    """pypdf and nbformat are imported when Read meets a PDF or a notebook, not when the tools are built."""
    probe = ("import sys; from agentcli.tools.registry import build_tools; build_tools(); "
             "print(sorted(m for m in ('pypdf', 'nbformat') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"
