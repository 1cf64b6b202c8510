"""Worktree isolation's cost: creating a task's worktree and merging it back on a big repository, and the
per-call overhead of an isolated Task against a plain one.

Run: python bench/worktrees.py [--files 30000] [--repeat 5] [--calls 10]

1. On a git repository of at least --files files (bench/tools.py's generated tree: copies of site-packages,
   committed once), --repeat times each, medians:
   - create: `worktree.create` (the snapshot of the workspace as the person sees it, through a copy of the
     index, then `git worktree add --no-checkout` of it and its checkout, both in a private git dir: `gitsafe`),
     beside plain `git worktree add --detach HEAD` (git's own floor),
     on a clean workspace and with 20 files edited and 20 added in it (the snapshot is then a new commit);
   - merge back: 20 files changed in the worktree (10 of them also changed elsewhere in the workspace, a
     three-way merge each): `commit_all` + `merge_into` (all files under their locks) + `remove`.
2. Per Task call, against the fake server in its own process at zero model latency (real runner, real store):
   the parent's wait for a Task whose subagent writes one file, from the end of the parent's response to its
   next request (server clock), for a plain Task and an isolated one, on a small repository and on the big one.
Figures only, with ratios; nothing is asserted on time.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from fake_server import server_process
from tools import make_tree

from agentcli.agent.loop import AgentLoop
from agentcli.agent.session import Session
from agentcli.config.load import load_config
from agentcli.conversation import main_agent_tools
from agentcli.events import EventBus
from agentcli.llm.base import RetryPolicy
from agentcli.llm.models import ProviderPool, resolve_model
from agentcli.llm.prices import cost_usd
from agentcli.store.db import Store
from agentcli.store.recorder import StoreRecorder
from agentcli.subagents.definitions.registry import AgentRegistry
from agentcli.subagents.runner import SubagentRunner
from agentcli.subagents.task_tool import ParentLink
from agentcli.subagents.worktrees import worktree
from agentcli.subagents.worktrees.merge_back import merge_into
from agentcli.testing.fake_llm import Match, Reply, Script, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy

MAIN = "MAIN AGENT UNDER BENCH"
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@localhost"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV}).stdout.strip()


def make_repo(dest: Path, files: int) -> int:
    """A committed repository of at least `files` files; the count."""
    dest.mkdir(parents=True)
    made = make_tree(dest, files) if files > 10 else 0
    (dest / "small.txt").write_text("small\n")
    git(dest, "init", "-q", "-b", "main")
    git(dest, "add", "-A")
    git(dest, "commit", "-qm", "start")
    return made + 1


def _ms(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def _sources(repo: Path, n: int) -> list[str]:
    return sorted(git(repo, "ls-files", "*.py").splitlines())[:n]


def creation(repo: Path, repeat: int) -> dict[str, float]:
    """Medians (ms): agentcli's create and git's bare worktree add, clean and with edits in the workspace."""
    ids = iter(range(10_000))

    def ours() -> None:
        worktree.remove(worktree.create(repo, f"bench{next(ids)}"), keep_branch=False)

    def floor() -> None:
        path = Path(tempfile.gettempdir()) / f"agentcli-bench-wt-{os.getpid()}"
        git(repo, "worktree", "add", "--quiet", "--detach", str(path), "HEAD")
        git(repo, "worktree", "remove", "--force", str(path))

    figures = {"create+remove": _ms(ours, repeat), "git worktree add+remove": _ms(floor, repeat)}
    edited = _sources(repo, 20)
    for rel in edited:
        with (repo / rel).open("a") as handle:
            handle.write("# edited by the person\n")
    for i in range(20):
        (repo / f"new_{i}.txt").write_text(f"new {i}\n")
    figures["create+remove (40 files changed)"] = _ms(ours, repeat)
    git(repo, "checkout", "-q", "--", ".")
    for i in range(20):
        (repo / f"new_{i}.txt").unlink()
    return figures


def merging(repo: Path, repeat: int) -> dict[str, float]:
    """Median (ms) of committing and merging back 20 changed files (10 also changed in the workspace), and of
    removing the worktree; the create is not counted."""
    rels = _sources(repo, 20)
    merge_ms, remove_ms = [], []
    for i in range(repeat):
        tree = worktree.create(repo, f"merge{i}")
        for rel in rels:
            text = (tree.path / rel).read_text()
            (tree.path / rel).write_text(f"# changed by the subagent {i}\n" + text)
        for rel in rels[:10]:
            with (repo / rel).open("a") as handle:
                handle.write(f"# changed by the person {i}\n")
        start = time.perf_counter()
        tip = worktree.commit_all(tree, "bench")
        assert tip is not None
        plan = asyncio.run(merge_into(tree, tip, repo, FileLocks()))
        assert not plan.conflicts and len(plan.paths) == 20, plan.conflicts
        merge_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        worktree.remove(tree, keep_branch=False)
        remove_ms.append((time.perf_counter() - start) * 1000)
        git(repo, "checkout", "-q", "--", ".")
    return {"commit+merge 20 files": statistics.median(merge_ms), "remove": statistics.median(remove_ms)}


def _task(i: int, isolated: bool) -> ToolCall:
    extra = {"isolation": "worktree"} if isolated else {}
    return ToolCall(name="Task", input={"description": f"Bench task {i:04d}", "prompt": f"write file {i}",
                                        "subagent_type": "general", **extra})


async def task_calls(repo: Path, scratch: Path, calls: int, isolated: bool) -> float:
    """Median (ms) of the parent's wait for one Task call whose subagent writes one file (server clock)."""
    steps = []
    for i in range(calls):
        write = ToolCall(name="Write", input={"file_path": f"out_{isolated}_{i}.txt", "content": f"{i}\n"})
        steps.append(Step(match=Match(system_contains=MAIN, turn=i), reply=Reply(tool_calls=[_task(i, isolated)])))
        steps.append(Step(match=Match(system_contains=f"# Task\nBench task {i:04d}", turn=0),
                          reply=Reply(tool_calls=[write])))
        steps.append(Step(match=Match(system_contains=f"# Task\nBench task {i:04d}", turn=1),
                          reply=Reply(text=f"wrote {i}")))
    steps.append(Step(match=Match(system_contains=MAIN, turn=calls), reply=Reply(text="done")))
    with server_process(Script(steps=steps), scratch) as (base_url, requests):
        os.environ.update(ANTHROPIC_API_KEY="sk-bench", ANTHROPIC_BASE_URL=base_url)
        settings = load_config(workspace=repo, env=dict(os.environ), overrides={"llm.max_retries": 0}).settings
        pool = ProviderPool(RetryPolicy(max_retries=0))
        store = Store.open(scratch / f"bench-{isolated}.db")
        model = resolve_model("main", settings)
        session = Session(system_prompt=MAIN, model=model, workspace=repo)
        permissions = PermissionPolicy("auto")
        runner = SubagentRunner(settings=settings, registry=AgentRegistry.load(repo), pool=pool, workspace=repo,
                                permissions=permissions, store=store, price=cost_usd)
        bus = EventBus()
        bus.subscribe(StoreRecorder(store))
        ctx = ToolContext(workspace=repo, agent="main", session_id=session.id, permissions=permissions,
                          file_locks=FileLocks())
        loop = AgentLoop(session, pool.get(model), main_agent_tools(runner, ParentLink(session, bus)), ctx, bus,
                         max_turns=10_000, price=cost_usd)
        outcome = await loop.run("bench")
        assert outcome.status == "completed", outcome
        merges = {r.merge for r in runner.records()}
        assert merges == ({"merged"} if isolated else {None}), merges
        await runner.aclose()
        await pool.aclose()
        await store.flush()
        store.close()
    mains = sorted((r for r in requests if MAIN in str(r.body.get("system", ""))), key=lambda r: r.received_at)
    waits = [(b.received_at - (a.finished_at or 0)) * 1000 for a, b in itertools.pairwise(mains)]
    for path in repo.glob(f"out_{isolated}_*.txt"):
        path.unlink()
    return statistics.median(waits)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--calls", type=int, default=10)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-worktrees-") as tmp:
        root = Path(tmp)
        os.environ["XDG_DATA_HOME"] = str(root / "data")  # the worktrees go beside it
        os.environ["XDG_CONFIG_HOME"] = str(root / "config")
        os.environ["XDG_STATE_HOME"] = str(root / "state")
        start = time.perf_counter()
        big = root / "big"
        made = make_repo(big, args.files)
        print(f"repository: {made} files committed in {time.perf_counter() - start:.1f} s "
              f"(git {git(big, 'version').split()[-1]})\n")
        made_figures = creation(big, args.repeat)
        floor = made_figures["git worktree add+remove"]
        print(f"worktree on {made} files (median of {args.repeat}, ms)      time   vs git's own worktree add")
        for name, value in made_figures.items():
            print(f"  {name:<42} {value:8.1f}   {value / floor:5.2f}x")
        merged = merging(big, args.repeat)
        for name, value in merged.items():
            print(f"  {name:<42} {value:8.1f}   {value / floor:5.2f}x")
        small = root / "small"
        make_repo(small, 0)
        print(f"\nparent's wait per Task call (subagent writes one file, median of {args.calls}, ms)")
        print("  repository            plain   isolated   overhead   ratio")
        for label, repo, calls in (("1 file", small, args.calls), (f"{made} files", big, max(2, args.calls // 3))):
            scratch = root / f"scratch-{label.split()[0]}"
            scratch.mkdir()
            plain = asyncio.run(task_calls(repo, scratch, calls, isolated=False))
            isolated = asyncio.run(task_calls(repo, scratch, calls, isolated=True))
            print(f"  {label:<20} {plain:7.1f}   {isolated:8.1f}   {isolated - plain:8.1f}   {isolated / plain:5.2f}x")


if __name__ == "__main__":
    main()
