"""Checkpoints' cost per prompt on a big tree: a snapshot of the workspace's files, and a rewind, beside git's own
commands on the same tree in the same run.

Run: python bench/checkpoints.py [--files 30000] [--repeat 5] [--cold-repeat 3]

The tree is bench/tools.py's (copies of site-packages, at least --files files, a root `.gitignore` and a nested
one), made a git repository with one commit. Each case runs agentcli's `ShadowRepo` (its own bare git dir and index
outside the tree) in-process and git's commands on the same tree, interleaved, --repeat times after a dropped warm-up
round; medians, in wall time and in CPU time (user + system of this process and its waited-for children: steadier
than wall time on a busy machine), and the ratio to the git baseline:
- snapshot, cold: the first `snapshot()` of the tree (a new shadow repository: every file hashed and written),
  beside `git add -A && git write-tree` into a new git dir with a new index (every object written too);
- snapshot with 0, 10 and 1,000 files changed since the last one (the same files edited again each round),
  beside `git add -A && git write-tree` in a scratch git dir and index kept from round to round (the shadow's
  job, as a person would type it) and `git stash create` in the repository (what a person would use to save the
  work tree without touching it; it reads the repository's index, which stays at the commit, and looks at no
  untracked file, so it is a floor rather than the same job);
- snapshot with nothing changed after 10,000 files were touched once (new mtime, same bytes: a branch switched
  and back, a build, an editor's "save all"), the touch before the dropped warm-up round: what every later
  prompt pays;
- rewind of 10 and 1,000 changed files: `plan_rewind` + `apply_plan(overwrite=True)` back to the snapshot before
  the edits (the present snapshot taken before the timer starts: it is the "changed" row's cost), beside
  `git checkout -- .` undoing the same edits in the repository.
Figures only; nothing is asserted on time.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from tools import make_tree

from agentcli.checkpoints import ShadowRepo, Snapshot, Span, apply_plan, plan_rewind

#: No system or global config for git's side either: the shadow runs without them.
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@localhost", "GIT_COMMITTER_NAME": "bench",
           "GIT_COMMITTER_EMAIL": "bench@localhost", "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull}
Timing = tuple[float, float]  # wall ms, cpu ms


def git(cwd: Path, *args: str, env: dict[str, str] | None = None, check: bool = True) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=check, capture_output=True, text=True,
                          env={**os.environ, **GIT_ENV, **(env or {})}).stdout.strip()


def _cpu() -> float:
    """CPU seconds so far of this process and its waited-for children."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def timed(fn: Callable[[], object]) -> Timing:
    start, cpu = time.perf_counter(), _cpu()
    fn()
    return (time.perf_counter() - start) * 1000, (_cpu() - cpu) * 1000


class Edits:
    """The tree's first `.py` files (by path), edited and put back; its last files touched."""

    def __init__(self, tree: Path, count: int) -> None:
        self.tree = tree
        self.paths = sorted(git(tree, "ls-files", "*.py").splitlines())[:count]
        self.original = {p: (tree / p).read_bytes() for p in self.paths}
        self.others = [p for p in reversed(git(tree, "ls-files").splitlines()) if p not in self.original]

    def touch(self, count: int) -> None:
        """A new mtime, the same bytes (as after a branch switched and back), on `count` files not edited."""
        for path in self.others[:count]:
            os.utime(self.tree / path)

    def edit(self, count: int, mark: str) -> None:
        for path in self.paths[:count]:
            (self.tree / path).write_bytes(self.original[path] + f"# edited by the bench, {mark}\n".encode())

    def restore(self) -> None:
        for path in self.paths:
            (self.tree / path).write_bytes(self.original[path])


def add_all(tree: Path, git_dir: Path) -> None:
    """`git add -A && git write-tree` of `tree` with `git_dir`'s index, objects in `git_dir`."""
    env = {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(tree), "GIT_INDEX_FILE": str(git_dir / "index")}
    git(tree, "add", "-A", env=env)
    git(tree, "write-tree", env=env)


def cold(tree: Path, scratch: Path, repeat: int) -> dict[str, list[Timing]]:
    """The first snapshot of the tree, and `git add -A && write-tree` into a new git dir; each after a sync, so
    that neither pays for the other's writes, the two in turn first (no warm-up round: the tree was just read)."""
    found: dict[str, list[Timing]] = {"ours": [], "add": []}
    for i in range(repeat):
        shadow_root, git_dir = scratch / f"cold-shadow-{i}", scratch / f"cold-git-{i}"
        git(scratch, "init", "-q", "--bare", str(git_dir))
        cases: list[tuple[str, Callable[[], object]]] = [
            ("ours", ShadowRepo(tree, shadow_root).snapshot), ("add", partial(add_all, tree, git_dir))]
        for name, fn in cases[::-1] if i % 2 else cases:
            os.sync()
            found[name].append(timed(fn))
        shutil.rmtree(shadow_root)
        shutil.rmtree(git_dir)
    return found


def changed(tree: Path, shadow: ShadowRepo, scratch_git: Path, edits: Edits, count: int, repeat: int,
            touched: int = 0) -> dict[str, list[Timing]]:
    """A snapshot after `count` files changed (0: none), `git add -A && write-tree` in a kept scratch index (its
    objects in `scratch_git`, so that `git stash create` finds none of them already written), and `git stash
    create`; with `touched`, that many other files are given a new mtime (same bytes) once before the rounds."""
    found: dict[str, list[Timing]] = {"ours": [], "add": [], "stash": []}
    edits.touch(touched)
    for i in range(repeat + 1):
        edits.edit(count, f"{count} files, round {i}")
        found["ours"].append(timed(shadow.snapshot))
        found["add"].append(timed(partial(add_all, tree, scratch_git)))
        found["stash"].append(timed(partial(git, tree, "stash", "create", check=False)))  # 1: nothing to save
    for runs in found.values():
        del runs[0]  # the first round warms caches (and takes the touched files' new stat data)
    edits.restore()
    shadow.snapshot()
    add_all(tree, scratch_git)
    git(tree, "update-index", "-q", "--refresh")  # the repository's index too: `checkout -- .` rewrites no file
    return found


def undo(shadow: ShadowRepo, span: Span, present: Snapshot, count: int) -> None:
    """Plan and apply the rewind to `span.before` (it changes `count` files, all the agent's)."""
    plan = plan_rewind(shadow, [span], present)
    assert len(plan.files) == count, (len(plan.files), count)
    done, problems = apply_plan(shadow, plan, overwrite=True)
    assert len(done) == count and not problems, problems


def rewind(tree: Path, shadow: ShadowRepo, edits: Edits, count: int, repeat: int) -> dict[str, list[Timing]]:
    """A rewind undoing `count` changed files, and `git checkout -- .` undoing the same edits."""
    found: dict[str, list[Timing]] = {"ours": [], "checkout": []}
    for i in range(repeat + 1):
        before = shadow.snapshot()
        edits.edit(count, f"rewind of {count}, round {i}")
        after = shadow.snapshot()
        present = shadow.snapshot()  # what a rewind takes first; nothing changed since `after`
        found["ours"].append(timed(partial(undo, shadow, Span(before.tree, after.tree), present, count)))
        assert all((tree / p).read_bytes() == edits.original[p] for p in edits.paths[:count])
        edits.edit(count, f"rewind of {count}, round {i}")
        found["checkout"].append(timed(partial(git, tree, "checkout", "-q", "--", ".")))
        assert all((tree / p).read_bytes() == edits.original[p] for p in edits.paths[:count])
    for runs in found.values():
        del runs[0]  # the first round warms caches
    return found


def median(runs: list[Timing], i: int) -> float:
    return statistics.median(run[i] for run in runs)


def row(label: str, runs: dict[str, list[Timing]], *bases: str) -> None:
    ours_ms, ours_cpu = median(runs["ours"], 0), median(runs["ours"], 1)
    line = f"  {label:<30} {ours_ms:8.1f} {ours_cpu:8.1f}"
    for base in bases:
        base_ms, base_cpu = median(runs[base], 0), median(runs[base], 1)
        line += f" | {base_ms:8.1f} {ours_ms / base_ms:6.2f}x {base_cpu:8.1f} {ours_cpu / base_cpu:6.2f}x"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--files", type=int, default=30_000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--cold-repeat", type=int, default=3, help="rounds of the cold case (each hashes the tree)")
    args = parser.parse_args()
    began = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="agentcli-bench-checkpoints-") as tmp:
        scratch = Path(tmp).resolve()
        tree = scratch / "tree"
        start = time.perf_counter()
        made = make_tree(tree, args.files)
        git(tree, "init", "-q", "-b", "main")
        git(tree, "add", "-A")
        git(tree, "commit", "-qm", "start")
        listed = len(git(tree, "ls-files").splitlines())
        print(f"repository: {made} files made, {listed} tracked, in {time.perf_counter() - start:.1f} s "
              f"({git(tree, 'version')})\n")
        edits = Edits(tree, 1000)
        heads = "ms     cpu"
        print(f"checkpoints on {listed} files, medians of {args.repeat} (ms; ratio = agentcli / git)")
        print(f"  {'snapshot':<30} {'agentcli':>8} {'':>8} | {'git add -A && write-tree':<34}"
              f" | {'git stash create':<34}")
        print(f"  {'':<30} {heads:>17} | {'ms   ratio      cpu   ratio':>34} | {'ms   ratio      cpu   ratio':>34}")
        row(f"cold (first snapshot), of {args.cold_repeat}", cold(tree, scratch, args.cold_repeat), "add")
        shadow = ShadowRepo(tree, scratch / "shadow")
        scratch_git = scratch / "scratch.git"
        git(scratch, "init", "-q", "--bare", str(scratch_git))
        shadow.snapshot()
        add_all(tree, scratch_git)
        for count in (0, 10, 1000):
            runs = changed(tree, shadow, scratch_git, edits, count, args.repeat)
            row(f"{count:,} files changed", runs, "add", "stash")
        touched = min(10_000, len(edits.others))
        row(f"0 changed, {touched:,} touched", changed(tree, shadow, scratch_git, edits, 0, args.repeat, touched),
            "add", "stash")
        print(f"\n  {'rewind (plan + apply)':<30} {'agentcli':>8} {'':>8} | {'git checkout -- .':<34}")
        for count in (10, 1000):
            row(f"undoing {count:,} changed files", rewind(tree, shadow, edits, count, args.repeat), "checkout")
    print(f"\n(the whole run: {time.perf_counter() - began:.0f} s)")


if __name__ == "__main__":
    main()
