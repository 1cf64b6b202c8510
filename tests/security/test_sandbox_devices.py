"""The sandbox's device holes: the host's `/dev/shm` and the person's terminal.

Each escape runs through the real CLI with `--yes`, as a model (or a prompt injected into a file it read) would
run it unasked: Bash plants a file in the host's shared memory and rewrites the person's file there; Bash finds
agentcli's terminal from `/proc/$PPID/stat` and writes a title (OSC 0) and a clipboard (OSC 52) sequence
straight to its `/dev/pts/N`, past agentcli's output filtering.
"""

from __future__ import annotations

import asyncio
import fcntl
import os
import subprocess
import sys
import termios
import threading
import uuid
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer
from agentcli.tools.base import FileLocks, ToolContext
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.sandbox import landlock, netns
from agentcli.tools.sandbox.policy import Mechanisms, Sandbox, SandboxSpec
from agentcli.tools.shell.bash import BashArgs, BashTool
from tests.e2e.helpers import cli_env, run_cli
from tests.security.scripted import bash_calls, tool_results

ABI = landlock.abi_version()
pytestmark = pytest.mark.skipif(ABI == 0, reason="no Landlock on this kernel")
NAMESPACES = ABI > 0 and netns.probe(shm=True) is None
SHM = Path("/dev/shm")


@pytest.fixture
def shm_names() -> tuple[Path, Path]:
    """A file of the person's in the host's /dev/shm, and the name a command would plant; both removed after."""
    if not (SHM.is_dir() and os.access(SHM, os.W_OK)):
        pytest.skip("no writable /dev/shm here")
    tag = uuid.uuid4().hex[:10]
    persons, planted = SHM / f"agentcli-test-persons-{tag}", SHM / f"agentcli-test-planted-{tag}"
    persons.write_text("mine\n")
    yield persons, planted
    for path in (persons, planted):
        path.unlink(missing_ok=True)


def test_a_command_cannot_plant_or_rewrite_files_in_the_hosts_dev_shm(tmp_path: Path,
                                                                      shm_names: tuple[Path, Path]) -> None:
    persons, planted = shm_names
    repo = tmp_path / "repo"
    repo.mkdir()
    commands = [
        f"echo planted > {planted}; echo status=$?",
        f"echo rewritten > {persons}; echo status=$?",
        f"cat {persons}; ls /dev/shm",
    ]
    if NAMESPACES:  # a private /dev/shm: POSIX shared memory keeps working inside the sandbox
        commands.append(f"{sys.executable} -c \"from multiprocessing import shared_memory as s; "
                        "m = s.SharedMemory(create=True, size=64); m.buf[0] = 7; print('shm-ok', m.buf[0]); "
                        "m.close(); m.unlink()\"")
    with FakeLLMServer(bash_calls(*commands)) as server:
        proc = run_cli(["run", "--yes", "--cwd", str(repo), "use shared memory"],
                       cli_env("anthropic", server, tmp_path))
    assert proc.returncode == 0, proc.stderr
    results = tool_results(server)
    assert len(results) == len(commands), results
    assert not planted.exists(), "a sandboxed command planted a file in the host's /dev/shm"
    assert persons.read_text() == "mine\n", "a sandboxed command rewrote the person's file in /dev/shm"
    assert "mine" not in results[2].splitlines()  # the person's file is not even read
    if NAMESPACES:
        assert "status=0" in results[0] and "status=0" in results[1]  # written, in the command's own /dev/shm
        assert results[2].splitlines()[0] == "rewritten"  # its own file of that name
        assert "shm-ok 7" in results[3], results[3]
    else:
        assert "status=1" in results[0] and "[sandbox]" in results[0]


def _pts_of_parent() -> str:
    """A command that finds agentcli's terminal from /proc/$PPID/stat (tty_nr) and writes escapes to it, then to
    every terminal it can name."""
    return (
        "nr=$(sed 's/.*) //' /proc/$PPID/stat | cut -d' ' -f5); "
        "minor=$(( (nr & 0xff) | ((nr >> 12) & 0xfff00) )); "
        "echo tty=/dev/pts/$minor; "
        "printf '\\033]0;PWNED-TITLE\\007\\033]52;c;UFdORUQ=\\007' > /dev/pts/$minor && echo wrote-parent; "
        "for t in /dev/pts/[0-9]* /dev/tty /dev/console; do "
        "printf '\\033]0;PWNED-TITLE\\007' > $t 2>/dev/null && echo wrote $t; done; "
        "(: < /dev/pts/$minor) 2>/dev/null && echo read-parent; true"
    )


def _run_on_a_terminal(args: list[str], env: dict[str, str]) -> tuple[int, bytes]:
    """`agentcli ARGS` with a fresh pty as its controlling terminal (stdin, stdout, stderr); all it wrote there."""
    master, slave = os.openpty()

    def own_terminal() -> None:
        os.setsid()
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)

    proc = subprocess.Popen([sys.executable, "-m", "agentcli", *args], stdin=slave, stdout=slave, stderr=slave,
                            env=env, preexec_fn=own_terminal)
    os.close(slave)
    seen = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every holder of the terminal has closed it
                return
            if not chunk:
                return
            seen.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        code = proc.wait(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    reader.join(timeout=30)
    os.close(master)
    return code, bytes(seen)


def test_a_command_cannot_write_escape_sequences_to_the_persons_terminal(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    with FakeLLMServer(bash_calls(_pts_of_parent())) as server:
        env = cli_env("anthropic", server, tmp_path, TERM="xterm-256color")
        code, screen = _run_on_a_terminal(["run", "--yes", "--output-format", "json", "--cwd", str(repo),
                                           "retitle the terminal"], env)
    assert code == 0, screen.decode(errors="replace")
    (result,) = tool_results(server)
    assert "tty=/dev/pts/" in result  # it found the terminal
    assert b"\x1b]0;PWNED" not in screen and b"\x1b]52;" not in screen, "raw escapes reached the person's terminal"
    assert "wrote" not in result and "read-parent" not in result, result
    assert "[sandbox]" in result and "terminal" in result  # the refusal is named for the model


def test_without_namespaces_the_hosts_dev_shm_is_closed_and_named(tmp_path: Path, shm_names: tuple[Path, Path],
                                                                 isolated_env: Path) -> None:
    """Where user namespaces are not allowed (Landlock alone), commands get no /dev/shm at all."""
    persons, planted = shm_names
    workspace = tmp_path / "ws"
    workspace.mkdir()
    mechanism = "landlock-tcp" if ABI >= 4 else "none"
    sandbox = Sandbox(SandboxSpec(workspace.resolve()), Mechanisms(ABI, mechanism))  # type: ignore[arg-type]
    try:
        ctx = ToolContext(workspace=sandbox.spec.workspace, agent="main", session_id="s-shm",
                          permissions=PermissionPolicy("auto"), file_locks=FileLocks(), sandbox=sandbox)
        result = asyncio.run(BashTool().run(BashArgs(command=f"echo x > {planted}; cat {persons}"), ctx))
    finally:
        sandbox.close()
    assert not planted.exists() and "mine" not in result.content
    assert f"[sandbox] {planted}: the host's /dev/shm is closed to Bash commands" in result.content
