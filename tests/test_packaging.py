"""A real wheel carries the prompts and the default config, and the installed code finds them."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_wheel_ships_prompts_and_default_config(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(tmp_path), str(ROOT)],
        check=True, capture_output=True, timeout=180,
    )
    (wheel,) = tmp_path.glob("agentcli-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "agentcli/_bundled/default_config.toml" in names
    assert "agentcli/_bundled/prompts/system.md" in names
    assert "agentcli/py.typed" in names
    assert "agentcli/testing/fake_llm.py" in names
    assert "agentcli/ui/app.tcss" in names  # the TUI's styles ship inside the package
    metadata = next(n for n in names if n.endswith(".dist-info/METADATA"))
    requires = [line for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist: ")]
    core = {line.split()[1].split("<")[0].split(">")[0].split(";")[0] for line in requires if "extra ==" not in line}
    assert {"mcp", "dynaconf", "pydantic-settings"} <= core  # MCP works from a plain `pip install agentcli`
    shipped = zipfile.ZipFile(wheel).read("agentcli/_bundled/default_config.toml").decode()
    assert shipped == (ROOT / "default_config.toml").read_text()

    # Unpacked on its own (no checkout beside it), the package resolves the bundled copies.
    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    probe = (
        "import agentcli.resources as r; "
        "print(r.default_config_path()); print(r.prompts_dir())"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True,
        env={"PYTHONPATH": str(site), "PATH": "/usr/bin:/bin"}, cwd=tmp_path, timeout=60,
    ).stdout.split()
    assert out == [str(site / "agentcli/_bundled/default_config.toml"), str(site / "agentcli/_bundled/prompts")]
