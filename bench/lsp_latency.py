"""Edit → diagnostics latency of a real language server through `agentcli.lsp`, and the server's memory.

Run: python bench/lsp_latency.py [--language python|typescript] [--edits 10] [--sandbox] [--file agentcli/text.py]

python: basedpyright (the dev extra) on a copy of this repository's `agentcli/` package in a temp folder (the
repository itself is never written). The figures:

- start: from the first `before_edit` (which starts the server and opens the file) until its diagnostics of the
  file as it is are in: a cold start on a real project;
- first edit: `after_edit` of the first edit (an error introduced) until the server published the new version's
  diagnostics;
- steady state: the median (and max) of `--edits` edits, alternately introducing and fixing an error;
- RSS: the resident memory of the server's process group (launcher and node), from /proc, after the edits.

Each edit's result is checked (the error reported when introduced, none when fixed) so a figure never hides a
wrong answer. `--sandbox` runs the server in the Bash sandbox (`[sandbox]` as configured).

typescript: typescript-language-server and typescript from `npm ci --prefix tests/lsp_ts` (put on PATH here) on a
generated tree of `TS_MODULES` modules in strict mode, the last module edited (it imports the ones before it).

Other languages: add a `Suite` to `SUITES`: a name, the server's spec name, how to make the project, the file to
edit and its broken and fixed texts.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agentcli.config.schema import Settings  # noqa: E402
from agentcli.lsp import LanguageServers, RootIntel  # noqa: E402


@dataclass(frozen=True)
class Suite:
    """One language's bench: `make(folder)` builds the project there and returns the file the edits change."""

    name: str
    server: str
    make: Callable[[Path], Path]
    broken: Callable[[str], str]  # the file's text with an error added
    fixed: Callable[[str], str]  # and with it taken out again


def _python_project(folder: Path) -> Path:
    shutil.copytree(REPO / "agentcli", folder / "agentcli", ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(REPO / "pyproject.toml", folder / "pyproject.toml")
    return folder / "agentcli" / "subagents" / "runner.py"


TS_MODULES = 400  # the generated TypeScript tree: this many modules, each importing the two before it
TS_BIN = REPO / "tests" / "lsp_ts" / "node_modules" / ".bin"  # npm ci --prefix tests/lsp_ts


def _typescript_project(folder: Path) -> Path:
    """A generated tree (`TS_MODULES` modules in 20 folders, each class using the two before it), strict mode."""
    (folder / "tsconfig.json").write_text('{"compilerOptions": {"strict": true, "noEmit": true, "target": "es2022", '
                                          '"module": "es2022", "moduleResolution": "bundler"}, "include": ["src"]}\n')
    for n in range(TS_MODULES):
        deps = [d for d in (n - 1, n - 2) if d >= 0]
        imports = "".join(f'import {{ Part{d} }} from "../p{d % 20}/m{d}";\n' for d in deps)
        uses = " + ".join([f"new Part{d}(x).total()" for d in deps] or ["x"])
        body = (f"{imports}\nexport interface Shape{n} {{ id: number; name: string; tags: string[] }}\n\n"
                f"export class Part{n} {{\n  constructor(private readonly x: number) {{}}\n"
                f"  total(): number {{\n    return {uses};\n  }}\n"
                f"  shape(): Shape{n} {{\n    return {{ id: this.x, name: \"p{n}\", tags: [] }};\n  }}\n}}\n")
        path = folder / "src" / f"p{n % 20}" / f"m{n}.ts"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(body)
    return folder / "src" / f"p{(TS_MODULES - 1) % 20}" / f"m{TS_MODULES - 1}.ts"


_PY_ERROR = '\n\ndef _bench_broken() -> int:\n    return "not an int"\n'
_TS_ERROR = '\nexport const benchBroken: number = "not a number";\n'
SUITES: dict[str, Suite] = {
    "python": Suite("python", "basedpyright", _python_project, lambda text: text + _PY_ERROR,
                    lambda text: text.removesuffix(_PY_ERROR)),
    "typescript": Suite("typescript", "typescript", _typescript_project,
                        lambda text: text + _TS_ERROR, lambda text: text.removesuffix(_TS_ERROR)),
}


def group_rss_mib(pgid: int) -> float:
    """The resident memory of process group `pgid`, MiB (Linux /proc)."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            stat = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            if int(stat[2]) != pgid:
                continue
            for line in Path(f"/proc/{name}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total / 1024


async def run(suite: Suite, edits: int, sandboxed: bool, file: str | None = None) -> None:
    with tempfile.TemporaryDirectory(prefix="agentcli-lsp-bench-") as tmp:
        root = Path(tmp).resolve()
        target = suite.make(root)
        if file:
            target = root / file  # another file of the project (the default is a large module with many imports)
        settings = Settings(lsp={"wait_seconds": 60.0, "first_wait_seconds": 120.0,
                                 "servers": {name: {"disabled": True} for name in ("pyright", "pyrefly", "ty", "pylsp")
                                             if suite.server == "basedpyright"}})
        sandbox = None
        if sandboxed:
            from agentcli.tools import session_sandbox

            sandbox = session_sandbox(settings, root)
            print(sandbox.describe())
        servers = LanguageServers(settings, dict(os.environ), sandbox)
        intel = RootIntel(servers, root, sandbox)
        try:
            await _measure(suite, servers, intel, target, edits)
        finally:
            await servers.aclose()
            if sandbox is not None:
                sandbox.close()


async def _measure(suite: Suite, servers: LanguageServers, intel: RootIntel, target: Path, edits: int) -> None:
    clean = target.read_text(encoding="utf-8")
    started = time.perf_counter()
    before = await intel.before_edit([target])
    start_s = time.perf_counter() - started
    slot = next(iter(servers.slots.values()), None)
    if slot is None or slot.conn is None or slot.conn.pid is None:
        raise SystemExit(f"{suite.server} did not start (is it installed? pip install -e '.[dev]')")
    times: list[float] = []
    for n in range(edits + 1):
        text = suite.broken(clean) if n % 2 == 0 else suite.fixed(suite.broken(clean))
        target.write_text(text, encoding="utf-8")
        t0 = time.perf_counter()
        found = await intel.after_edit([target], before)
        times.append(time.perf_counter() - t0)
        errors = [] if found is None else [d for d in found.introduced if d.severity == "error"]
        if (n % 2 == 0) != bool(errors) or found is None or found.note:
            raise SystemExit(f"edit {n}: unexpected answer {found}")
        before = await intel.before_edit([target])
    rss = group_rss_mib(slot.conn.pid)
    steady = times[1:]
    print(f"{suite.server} on {target.relative_to(intel.workspace)} ({suite.name}):")
    print(f"  start → first diagnostics   {start_s * 1000:8.0f} ms")
    print(f"  first edit → diagnostics    {times[0] * 1000:8.0f} ms")
    print(f"  steady state, {len(steady)} edits     median {statistics.median(steady) * 1000:6.0f} ms, "
          f"max {max(steady) * 1000:6.0f} ms")
    print(f"  server RSS (process group)  {rss:8.0f} MiB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--language", choices=sorted(SUITES), default="python")
    parser.add_argument("--edits", type=int, default=10)
    parser.add_argument("--sandbox", action="store_true", help="run the server in the Bash sandbox")
    parser.add_argument("--file", help="the file to edit, relative to the project (default: the suite's)")
    args = parser.parse_args()
    if args.language == "typescript":
        os.environ["PATH"] = f"{TS_BIN}{os.pathsep}{os.environ.get('PATH', '')}"
    asyncio.run(run(SUITES[args.language], args.edits, args.sandbox, args.file))


if __name__ == "__main__":
    main()
