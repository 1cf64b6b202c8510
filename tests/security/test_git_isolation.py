"""A repository, or a subagent in its worktree, makes agentcli's own git run its commands; `worktrees prune`
deletes folders the repository names. Through the real CLI, the scripted fake server and real git.

Every program the attacker configures writes a marker file holding its environment (where the person's API key
would show); no marker may appear. A `git` on PATH that logs each command agentcli starts shows that every one
of them runs without the key.
"""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path
from typing import Any

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.tools.sandbox import landlock
from tests.e2e.helpers import MAIN, cli_env, last_json, run_cli
from tests.security.scripted import tool_results

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")

KEY = "sk-ant-e2e-secret"  # the person's key, as cli_env sets it
NO_IDENTITY = {"GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}
REAL_GIT = shutil.which("git") or "git"
#: What agentcli may run against a repository's own git dir: refs and worktree bookkeeping, never a command that
#: reads a work tree or applies `.gitattributes` (those run in agentcli's private git dir).
REPOSITORY_COMMANDS = {"rev-parse", "symbolic-ref", "for-each-ref", "update-ref", "branch", "worktree", "var",
                       "config"}


def git(cwd: Path, *args: str) -> str:
    return subprocess.run([REAL_GIT, "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                          capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", **NO_IDENTITY}).stdout.strip()


def _repo(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    git(ws, "init", "-q", "-b", "main")
    (ws / "app.py").write_text("print('hello')\n")
    (ws / "notes.txt").write_text("notes\n")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "start")
    return ws


def _evil_program(tmp_path: Path) -> tuple[Path, Path]:
    """A program that leaves a marker with its environment (then behaves as a filter: `cat`); its marker folder."""
    marks = tmp_path / "marks"
    marks.mkdir()
    program = tmp_path / "evil.sh"
    program.write_text(f'#!/bin/sh\nenv > "{marks}/$1-$$"\n[ "$1" = filter ] && exec cat\nexit 0\n')
    program.chmod(0o755)
    return program, marks


def _ran(marks: Path) -> str:
    """What ran: each marker's name, and whether the key was in its environment."""
    found = sorted(marks.iterdir())
    return ", ".join(f"{m.name}{' (WITH THE API KEY)' if KEY in m.read_text() else ''}" for m in found)


def _logging_git(tmp_path: Path) -> tuple[dict[str, str], Path]:
    """A `git` first on PATH that logs every command agentcli starts (its arguments and environment), one file per
    command (agentcli runs some at once)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    log = tmp_path / "git-runs"
    log.mkdir()
    wrapper = bin_dir / "git"
    wrapper.write_text(f'#!/bin/sh\n{{ printf "ARGV %s\\n" "$*"; env; }} > "$(mktemp "{log}/run.XXXXXX")"\n'
                       f'exec {REAL_GIT} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR)
    return {"PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}, log


def _subcommand(argv: list[str]) -> str:
    """The git command of a command line (`git -C x -c k=v status …` → status)."""
    rest = iter(argv)
    for arg in rest:
        if arg in ("-C", "-c"):
            next(rest, None)
        elif not arg.startswith("-"):
            return arg
    return ""


def _task(description: str) -> ToolCall:
    return ToolCall(name="Task", input={"description": description, "prompt": f"Please: {description}",
                                        "subagent_type": "general", "isolation": "worktree"})


def _run(steps: list[Step], tmp_path: Path, ws: Path, *flags: str, **env: str) -> tuple[dict[str, Any], FakeLLMServer]:
    with FakeLLMServer(Script(steps=steps)) as server:
        proc = run_cli(["run", *flags, "--output-format", "json", "--cwd", str(ws), "go"],
                       cli_env("anthropic", server, tmp_path, **NO_IDENTITY, **env))
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr
    return last_json(proc.stdout), server


def test_a_repositorys_config_runs_nothing_through_worktree_isolation_whatever_its_include_condition(
        tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    program, marks = _evil_program(tmp_path)
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    for hook in ("post-checkout", "reference-transaction", "post-index-change", "post-commit", "pre-auto-gc"):
        (hooks / hook).write_text(f'#!/bin/sh\nexec "{program}" hook-{hook}\n')
        (hooks / hook).chmod(0o755)
    # Everything that would run a program, behind conditions that hold only on agentcli's branch or in its
    # worktree (the workspace's own branch, main, sees none of it), and for any file.
    evil = f"""
[filter "x"]
\tclean = "{program} filter"
\tsmudge = "{program} filter"
[diff "x"]
\ttextconv = "{program} textconv"
\tcommand = "{program} diff-driver"
[merge "x"]
\tdriver = "{program} merge-driver"
[diff]
\texternal = "{program} diff-external"
[core]
\tfsmonitor = "{program} fsmonitor"
\thooksPath = "{hooks}"
\tsshCommand = "{program} ssh"
\tpager = "{program} pager"
\teditor = "{program} editor"
[commit]
\tgpgSign = true
[gpg]
\tprogram = "{program} gpg"
"""
    (ws / ".git" / "on-agentcli-branch.cfg").write_text(evil)
    (ws / ".git" / "in-a-worktree.cfg").write_text(evil)
    with (ws / ".git" / "config").open("a") as config:
        config.write('[includeIf "onbranch:agentcli/**"]\n\tpath = on-agentcli-branch.cfg\n'
                     '[includeIf "gitdir:**/worktrees/**"]\n\tpath = in-a-worktree.cfg\n')
    (ws / ".gitattributes").write_text("* filter=x diff=x merge=x\n")
    git(ws, "add", ".gitattributes")
    git(ws, "commit", "-qm", "attributes")
    (ws / "notes.txt").write_text("the person's uncommitted edit\n")
    path_env, log = _logging_git(tmp_path)
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task("Look around")])),
             Step(match=Match(system_contains="# Task\nLook around", turn=0), reply=Reply(text="Nothing to do.")),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done."))]
    result, server = _run(steps, tmp_path, ws, **path_env)  # a plain run: no --yes, no trust
    server.assert_done()
    assert _ran(marks) == ""  # nothing the repository configured ran
    (task,) = result["tasks"]
    assert (task["status"], task["merge"]) == ("completed", "no_changes")  # isolation itself still works
    assert git(ws, "branch", "--list", "agentcli/*") == ""
    # Every git agentcli started: no key in its environment, and nothing that reads a work tree or applies
    # attributes ran against the repository's own git dir.
    runs = [run.read_text() for run in sorted(log.iterdir())]
    assert runs and all(KEY not in run and "ANTHROPIC_" not in run for run in runs)
    real = str((ws / ".git").resolve())
    for run in runs:
        argv = run.splitlines()[0].removeprefix("ARGV ").split()
        if argv[0] in (f"--git-dir={real}", "-C"):
            assert _subcommand(argv) in REPOSITORY_COMMANDS, argv


@pytest.mark.skipif(landlock.abi_version() == 0, reason="no Landlock on this kernel: Bash is refused with --yes")
def test_a_sandboxed_subagent_that_replaces_its_worktrees_git_runs_nothing_outside_the_sandbox(
        tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    program, marks = _evil_program(tmp_path)
    takeover = (f"rm -f .git && git init -q && git config filter.x.clean '{program} filter' && "
                f"git config core.fsmonitor '{program} fsmonitor' && echo '* filter=x' > .gitattributes && "
                "echo \"print('changed')\" > app.py && echo taken")
    description = "Tidy the app"
    steps = [Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[_task(description)])),
             Step(match=Match(system_contains=f"# Task\n{description}", turn=0),
                  reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": takeover})])),
             Step(match=Match(system_contains=f"# Task\n{description}", turn=1, last_user_contains="taken"),
                  reply=Reply(text="Tidied.")),
             Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done."))]
    result, server = _run(steps, tmp_path, ws, "--yes")
    server.assert_done()
    assert _ran(marks) == ""  # its filter and fsmonitor never ran (they would, outside the sandbox, with the key)
    (task,) = result["tasks"]
    assert task["merge"] == "kept" and task["files_merged"] == []
    assert (ws / "app.py").read_text() == "print('hello')\n"  # nothing of it was merged
    assert "its worktree's .git was changed" in tool_results(server)[-1]


def test_worktrees_prune_never_deletes_a_folder_the_repository_names(tmp_path: Path) -> None:
    ws = _repo(tmp_path)
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("the person's work\n")
    # As a repository could ship it in its .git (or a sandboxed Bash call write it): a worktree entry on an
    # agentcli branch whose folder is the victim.
    git(ws, "branch", "agentcli/evil")
    entry = ws / ".git" / "worktrees" / "evil"
    entry.mkdir(parents=True)
    (entry / "gitdir").write_text(f"{victim}/.git\n")
    (entry / "commondir").write_text("../..\n")
    (entry / "HEAD").write_text("ref: refs/heads/agentcli/evil\n")
    assert str(victim) in git(ws, "worktree", "list")  # git itself lists it
    with FakeLLMServer(Script(steps=[])) as server:
        env = cli_env("anthropic", server, tmp_path, **NO_IDENTITY)
        listed = run_cli(["worktrees", "list", "--json", "--cwd", str(ws)], env)
        pruned = run_cli(["worktrees", "prune", "--cwd", str(ws)], env)
    assert listed.returncode == 0 and pruned.returncode == 0, listed.stderr + pruned.stderr
    assert (victim / "precious.txt").exists(), pruned.stdout  # never removed
    assert str(victim) not in listed.stdout  # not agentcli's: it never made it
    assert pruned.stdout == "Nothing to prune.\n"
