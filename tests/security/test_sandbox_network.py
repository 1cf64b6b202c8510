"""With the network off, the commands of one session share one network namespace: a server one command starts is
reachable from a later one (or a subagent's), and from nothing else; the host's `127.0.0.1` and another session's
servers stay out of reach; the namespace goes with the session, and with agentcli killed by SIGKILL.

Real processes in the real sandbox: servers are started through `Sandbox.child_hook` as Bash's child is (a Bash
call kills what it started when it ends), clients through the Bash tool or the same hook.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall
from agentcli.tools.base import FileLocks, ToolContext, ToolResult
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.sandbox import landlock, netns
from agentcli.tools.sandbox.policy import Sandbox, SandboxSpec
from agentcli.tools.shell.bash import BashArgs, BashTool
from tests.e2e.helpers import cli_env
from tests.processes import alive, wait_dead

ABI = landlock.abi_version()
pytestmark = [pytest.mark.skipif(ABI == 0, reason="no Landlock on this kernel"),
              pytest.mark.skipif(ABI > 0 and netns.probe() is not None, reason="no user namespaces here")]

#: Listens on 127.0.0.1 (a free port), prints the port, and answers each connection with `reply`.
SERVER = ("import socket, sys; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(8); "
          "print(s.getsockname()[1], flush=True)\n"
          "while True:\n    c = s.accept()[0]; c.sendall(sys.argv[1].encode()); c.close()\n")
#: Connects to 127.0.0.1:argv[1] and prints what the server said, or the error's name.
CLIENT = ("import socket, sys\ntry:\n    c = socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=10)\n"
          "    print('got', c.recv(64).decode())\nexcept OSError as exc:\n    print('failed', type(exc).__name__)\n")


@pytest.fixture
def sandboxes(tmp_path: Path, isolated_env: Path) -> Iterator[list[Sandbox]]:
    """Two sessions' sandboxes (network off), each in a workspace of its own; closed at the end."""
    made = []
    for name in ("one", "two"):
        workspace = (tmp_path / name).resolve()
        workspace.mkdir()
        made.append(Sandbox(SandboxSpec(workspace)))
    yield made
    for sandbox in made:
        sandbox.close()


def _spawn(sandbox: Sandbox, *argv: str) -> subprocess.Popen[str]:
    """A child in `sandbox` as Bash starts one (its hook, its environment, its workspace)."""
    return subprocess.Popen([sys.executable, "-c", *argv], preexec_fn=sandbox.child_hook(None), text=True,
                            env=sandbox.environment(os.environ), cwd=sandbox.spec.workspace,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


def _serve(sandbox: Sandbox, reply: str) -> tuple[subprocess.Popen[str], int]:
    server = _spawn(sandbox, SERVER, reply)
    assert server.stdout is not None
    line = server.stdout.readline()
    assert line.strip().isdigit(), server.communicate()
    return server, int(line)


def _connect(sandbox: Sandbox, port: int) -> str:
    out, err = _spawn(sandbox, CLIENT, str(port)).communicate(timeout=60)
    return out.strip() or err


def _bash(command: str, sandbox: Sandbox) -> ToolResult:
    ctx = ToolContext(workspace=sandbox.spec.workspace, agent="main", session_id="s-network",
                      permissions=PermissionPolicy("auto"), file_locks=FileLocks(), sandbox=sandbox)
    return asyncio.run(BashTool().run(BashArgs(command=command), ctx))


def _stop(server: subprocess.Popen[str]) -> None:
    server.kill()
    server.communicate()


def _holders(inode: int) -> list[str]:
    """Every process on the machine inside the network namespace `inode`, or holding a descriptor of it (what keeps
    a namespace alive; the ones this user can see)."""
    needle = f"net:[{inode}]"
    found = []
    for pid in (name for name in os.listdir("/proc") if name.isdigit()):
        if _link(f"/proc/{pid}/ns/net") == needle:
            found.append(f"{pid} inside")
        try:
            fds = os.listdir(f"/proc/{pid}/fd")
        except OSError:  # gone, or not ours
            continue
        found += [f"{pid} fd {fd}" for fd in fds if _link(f"/proc/{pid}/fd/{fd}") == needle]
    return found


def _link(path: str) -> str | None:
    try:
        return os.readlink(path)
    except OSError:  # gone (a descriptor closed since, a process exited), a zombie, or not ours
        return None


def test_a_server_one_command_starts_is_reachable_from_a_later_one(sandboxes: list[Sandbox], tmp_path: Path) -> None:
    """Through the Bash tool, and from a subagent's sandbox (rooted in its worktree) too."""
    session = sandboxes[0]
    server, port = _serve(session, "from-session")
    try:
        result = _bash(f"{sys.executable} - {port} <<'EOF'\n{CLIENT}EOF", session)
        assert result.content.strip() == "got from-session", result.content
        inode = session.network.inode()
        assert os.readlink(f"/proc/{server.pid}/ns/net") == f"net:[{inode}]" != os.readlink("/proc/self/ns/net")
        (tmp_path / "tree").mkdir()
        subagent = session.rooted(tmp_path / "tree")
        try:
            assert _connect(subagent, port) == "got from-session"
        finally:
            subagent.close()
        assert _connect(session, port) == "got from-session"  # a subagent's close leaves the session's alone
    finally:
        _stop(server)


def test_the_host_and_another_session_stay_out_of_reach(sandboxes: list[Sandbox]) -> None:
    """The session's server runs: still no host server on 127.0.0.1, no server of another session, and the host
    does not reach the session's server either."""
    session, other = sandboxes
    host = socket.socket()
    host.bind(("127.0.0.1", 0))
    host.listen(8)
    threading.Thread(target=_answer, args=(host,), daemon=True).start()
    server, port = _serve(session, "from-session")
    try:
        with host:
            assert _connect(session, host.getsockname()[1]) != "got from-host"
            assert "from-host" not in _bash(f"{sys.executable} - {host.getsockname()[1]} <<'EOF'\n{CLIENT}EOF",
                                            session).content
        assert _connect(other, port) == "failed ConnectionRefusedError"  # a namespace of its own: nothing there
        assert session.network.inode() != other.network.inode()
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as conn:
                assert conn.recv(64) != b"from-session"  # some host program with the same port number, not ours
        except OSError:
            pass
    finally:
        _stop(server)


def _answer(listener: socket.socket) -> None:
    try:
        while True:
            conn = listener.accept()[0]
            conn.sendall(b"from-host")
            conn.close()
    except OSError:  # the test closed the listener
        pass


def test_the_namespace_is_gone_once_the_session_closes(sandboxes: list[Sandbox]) -> None:
    session = sandboxes[0]
    server, _port = _serve(session, "from-session")
    inode = session.network.inode()
    assert inode is not None
    held = _holders(inode)
    assert f"{os.getpid()} inside" not in held
    assert any(entry.startswith(f"{os.getpid()} fd ") for entry in held), held  # the session's descriptor
    assert f"{server.pid} inside" in held and len([e for e in held if " inside" in e]) == 1, held  # no holder left
    _stop(server)
    session.close()
    assert _holders(inode) == []
    assert session.network.inode() is None


@pytest.mark.skipif(shutil.which("setsid") is None, reason="needs setsid")
def test_the_namespace_does_not_outlive_agentcli_killed_with_sigkill(tmp_path: Path) -> None:
    """Through `agentcli run --yes`: a command leaves a server in a session of its own and sleeps; agentcli gets
    SIGKILL. The reaper kills the server, the kernel closes agentcli's descriptors: nothing holds the namespace."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "server.py").write_text(SERVER)
    command = ("setsid python3 server.py x > port.txt 2>&1 < /dev/null & echo $! > server.pid; "
               "while [ ! -s port.txt ]; do sleep 0.02; done; readlink /proc/self/ns/net > ns.txt; "
               "touch started.flag; sleep 300").replace("python3", sys.executable)
    script = Script(steps=[Step(match=Match(turn=0),
                                reply=Reply(tool_calls=[ToolCall(name="Bash", input={"command": command})]))])
    with FakeLLMServer(script) as server:
        proc = subprocess.Popen([sys.executable, "-m", "agentcli", "run", "--yes", "--cwd", str(repo), "go"],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=cli_env("anthropic", server, tmp_path))
        try:
            deadline = time.monotonic() + 60
            while not (repo / "started.flag").exists():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the Bash call never started"
                time.sleep(0.02)
            server_pid = int((repo / "server.pid").read_text())
            inode = int((repo / "ns.txt").read_text().strip()[len("net:["):-1])
            held = _holders(inode)
            assert f"{server_pid} inside" in held and any(e.startswith(f"{proc.pid} fd ") for e in held), held
            inside = [int(entry.split()[0]) for entry in held if entry.endswith(" inside")]  # bash, sleep, server
            proc.send_signal(signal.SIGKILL)
            proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.communicate()
    try:
        assert all(wait_dead(pid, 20) for pid in inside), f"a command of {inside} outlived agentcli"
    finally:
        for pid in filter(alive, inside):
            os.kill(pid, signal.SIGKILL)
    assert _holders(inode) == []
