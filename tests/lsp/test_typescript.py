"""A real typescript-language-server (tests/lsp_ts): it publishes without versions, and not at all while a file's
findings stay empty, so an edit's diagnostics are asked of tsserver: the error an edit makes, none for the fix, and
none, without a note or a stall, for an edit that changes no finding."""

from __future__ import annotations

import os
import shutil
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio

from agentcli.lsp import LanguageServers, RootIntel
from agentcli.tools import EditDiagnostics
from tests.lsp.conftest import lsp_settings, write

pytestmark = [pytest.mark.lsp, pytest.mark.asyncio(loop_scope="module")]
TS_BIN = Path(__file__).resolve().parents[1] / "lsp_ts" / "node_modules" / ".bin"


@pytest.fixture(scope="module")
def ts_project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not (TS_BIN / "typescript-language-server").exists() or shutil.which("node") is None:
        if os.environ.get("AGENTCLI_TS_LSP_REQUIRED"):
            pytest.fail("typescript-language-server is not installed: npm ci --prefix tests/lsp_ts")
        pytest.skip("typescript-language-server is not installed (npm ci --prefix tests/lsp_ts)")
    root = tmp_path_factory.mktemp("ts").resolve()
    write(root / "tsconfig.json", '{"compilerOptions": {"strict": true, "noEmit": true}}\n')
    write(root / "math.ts", "export function double(n: number): number {\n  return n * 2;\n}\n")
    write(root / "app.ts", 'import { double } from "./math";\n\nconst x: number = double(2);\nconsole.log(x);\n')
    return root


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def ts_intel(ts_project: Path) -> AsyncIterator[RootIntel]:
    with pytest.MonkeyPatch.context() as patch:  # found on PATH, as a user's install is
        patch.setenv("PATH", f"{TS_BIN}{os.pathsep}{os.environ.get('PATH', '')}")
        servers = LanguageServers(lsp_settings(), dict(os.environ))
        yield RootIntel(servers, ts_project, None)
        await servers.aclose()


async def _edit(intel: RootIntel, path: Path, old: str, new: str) -> EditDiagnostics:
    before = await intel.before_edit([path])
    path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    found = await intel.after_edit([path], before)
    assert found is not None and found.server == "typescript"
    return found


async def test_the_error_an_edit_makes_and_none_after_the_fix_or_a_neutral_edit(ts_intel: RootIntel,
                                                                                ts_project: Path) -> None:
    app = ts_project / "app.ts"
    ts_intel.touch(app)
    broken = await _edit(ts_intel, app, "double(2)", 'double("two")')
    assert [(d.line, d.severity, d.code) for d in broken.introduced] == [(3, "error", "2345")]
    assert not broken.note

    fixed = await _edit(ts_intel, app, 'double("two")', "double(2)")
    assert fixed.introduced == () and not fixed.note

    neutral = await _edit(ts_intel, app, "console.log(x);", "console.log(x + 1);")  # no finding before or after
    assert neutral.introduced == () and not neutral.note
    slot = ts_intel.slot(app)
    assert slot is not None and not slot.stalled()  # the next edit still waits for its findings

    again = await _edit(ts_intel, app, "const x: number", "const x: string")
    assert [(d.line, d.code) for d in again.introduced] == [(3, "2322")]
