"""A server that never answers or exits at once never holds an edit past its wait (and is named once); a crashed
server restarts on next need, a crash loop stops; closing leaves no server process; an untrusted project's
`[lsp.servers]` is never taken."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

from agentcli.config.load import load_config
from agentcli.conversation.trust_report import what_trust_arms
from agentcli.lsp import LanguageServers, RootIntel
from agentcli.lsp.manager import MAX_STARTS
from agentcli.tools import diagnostics_text
from tests.lsp.conftest import EXIT, HANG, alive, basedpyright_spec, fake_settings, group_members, lsp_settings, write

pytestmark = pytest.mark.lsp


async def test_a_server_that_never_answers_costs_an_edit_its_wait_once(tmp_path: Path) -> None:
    servers = LanguageServers(fake_settings(tmp_path, HANG, wait_seconds=0.2, first_wait_seconds=0.3), {})
    intel = RootIntel(servers, tmp_path, None)
    path = write(tmp_path / "x.fake", "one\n")
    try:
        first = await intel.after_edit([path], await intel.before_edit([path]))
        assert first is not None and first.server == "fake" and first.introduced == ()
        assert first.note == "not ready within 0.3 s; edits go on without its diagnostics until it is."
        assert diagnostics_text(first) == f"[fake] {first.note}"
        second = await intel.after_edit([path], await intel.before_edit([path]))
        assert second is not None and second.note == "" and second.introduced == ()  # said once; goes without
        slot = next(iter(servers.slots.values()))
        assert slot.starts == 1 and slot.conn is not None and slot.conn.pid is not None
        pid = slot.conn.pid
    finally:
        await servers.aclose()
    assert not alive(pid)


async def test_a_server_that_exits_at_once_is_named_and_not_started_in_a_loop(tmp_path: Path) -> None:
    servers = LanguageServers(fake_settings(tmp_path, EXIT, wait_seconds=0.2, first_wait_seconds=5.0), {})
    servers.backoff = (0.0,)
    intel = RootIntel(servers, tmp_path, None)
    path = write(tmp_path / "x.fake", "one\n")
    try:
        first = await intel.after_edit([path], await intel.before_edit([path]))
        assert first is not None and first.introduced == ()
        assert first.server == "fake" and ("exited" in first.note or "could not start" in first.note)
        for _ in range(MAX_STARTS + 2):
            later = await intel.after_edit([path], await intel.before_edit([path]))
            assert later is not None and later.note == ""
        slot = next(iter(servers.slots.values()))
        assert slot.starts == MAX_STARTS and "not started again" in slot.failure
    finally:
        await servers.aclose()


async def test_a_crashed_server_restarts_on_next_need_and_close_leaves_no_process(tmp_path: Path) -> None:
    basedpyright_spec()
    root = tmp_path.resolve()
    path = write(root / "m.py", "def f() -> int:\n    return 1\n")
    servers = LanguageServers(lsp_settings(), dict(os.environ))
    servers.backoff = (0.0,)
    intel = RootIntel(servers, root, None)
    await intel.before_edit([path])
    slot = next(iter(servers.slots.values()))
    assert slot.conn is not None and slot.conn.pid is not None
    crashed, first_pid = slot.conn, slot.conn.pid
    os.killpg(first_pid, signal.SIGKILL)
    await crashed.wait_exit()

    before = await intel.before_edit([path])  # the next need: started again, the file opened in the new one
    path.write_text('def f() -> int:\n    return "one"\n', encoding="utf-8")
    after = await intel.after_edit([path], before)
    assert slot.starts == 2 and slot.conn is not crashed and slot.conn is not None
    assert after is not None and [d.line for d in after.introduced if d.severity == "error"] == [2]
    second_pid = slot.conn.pid
    assert second_pid is not None and group_members(second_pid)  # basedpyright's launcher and node

    members = group_members(second_pid)
    await servers.aclose()
    assert not [pid for pid in [first_pid, *members] if alive(pid)]
    assert group_members(second_pid) == []
    assert intel.slot(path) is None  # closed: nothing starts again


def test_an_untrusted_projects_servers_are_refused_and_a_trusted_ones_taken(tmp_path: Path) -> None:
    ws = (tmp_path / "ws").resolve()
    marker = tmp_path / "ran"
    write(ws / ".agentcli" / "config.toml",
          f'[lsp]\nwait_seconds = 30\nmax_servers = 1\n[lsp.servers.basedpyright]\ncommand = ["touch", "{marker}"]\n'
          f'[lsp.servers.evil]\ncommand = ["touch", "{marker}"]\nextensions = [".py"]\n'
          '[lsp.servers.pylsp]\ndisabled = true\n')
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg"), "HOME": str(tmp_path / "home")}
    untrusted = load_config(ws, env=env, trusted=False)
    lsp = untrusted.settings.lsp
    assert lsp.max_servers == 1 and lsp.wait_seconds == 2.0  # lowered, never raised
    assert set(lsp.servers) == {"pylsp"} and lsp.servers["pylsp"].disabled
    assert {"lsp.servers.basedpyright.command", "lsp.servers.evil.command", "lsp.wait_seconds"} <= set(
        untrusted.ignored)
    trusted = load_config(ws, env=env, trusted=True).settings.lsp
    assert trusted.servers["evil"].command == ["touch", str(marker)] and trusted.wait_seconds == 30

    report = what_trust_arms(ws, untrusted, env)  # what the trust prompt shows
    assert report.arms
    assert f"Language server 'evil' starts: touch {marker}   (from .agentcli/config.toml)" in report.lines()
    assert "Language server 'basedpyright' starts" in report.summary()
    assert not marker.exists()  # nothing ran


async def test_with_the_bash_sandbox_on_a_server_runs_inside_it_and_still_reports(tmp_path: Path) -> None:
    from agentcli.tools import session_sandbox

    basedpyright_spec()
    root = tmp_path.resolve()
    path = write(root / "s.py", "n: int = 1\n")
    settings = lsp_settings()
    sandbox = session_sandbox(settings, root)
    if not (sandbox.active and sandbox.mechanisms.network == "namespace"):
        sandbox.close()
        pytest.skip(f"no sandbox with a network namespace here: {sandbox.describe()}")
    servers = LanguageServers(settings, dict(os.environ), sandbox)
    intel = RootIntel(servers, root, sandbox)
    try:
        before = await intel.before_edit([path])
        path.write_text('n: int = "one"\n', encoding="utf-8")
        after = await intel.after_edit([path], before)
        assert after is not None and [d.line for d in after.introduced if d.severity == "error"] == [1]
        conn = next(iter(servers.slots.values())).conn
        assert conn is not None and conn.pid is not None
        assert os.readlink(f"/proc/{conn.pid}/ns/net") != os.readlink("/proc/self/ns/net")  # the session's netns
    finally:
        await servers.aclose()
        sandbox.close()


STUBBORN = """import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(3600)"])
open(sys.argv[1], "w").write(str(child.pid))
sys.stdin.buffer.read()  # agentcli gone: its stdin ends, and it stays anyway
time.sleep(3600)
"""
HOLDER = """import asyncio, sys
from pathlib import Path
from agentcli.config.schema import Settings
from agentcli.lsp import LanguageServers, RootIntel

async def main() -> None:
    root = Path(sys.argv[1])
    servers = {"fake": {"command": [sys.executable, sys.argv[2], sys.argv[3]], "extensions": [".fake"]}}
    manager = LanguageServers(Settings(lsp={"servers": servers, "first_wait_seconds": 0.2}), {})
    intel = RootIntel(manager, root, None)
    path = root / "x.fake"
    await intel.before_edit([path])
    conn = next(iter(manager.slots.values())).conn
    print(conn.pid, flush=True)
    await asyncio.sleep(3600)

asyncio.run(main())
"""


def test_agentcli_killed_with_sigkill_leaves_no_server_behind(tmp_path: Path) -> None:
    import subprocess
    import sys
    import time

    root = tmp_path.resolve()
    write(root / "x.fake", "one\n")
    server, holder, grandchild = write(tmp_path / "server.py", STUBBORN), write(tmp_path / "holder.py", HOLDER), \
        tmp_path / "grandchild.pid"
    proc = subprocess.Popen([sys.executable, str(holder), str(root), str(server), str(grandchild)],
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    server_pid = int(proc.stdout.readline())
    while not grandchild.exists() or not grandchild.read_text():
        time.sleep(0.05)
    pids = [server_pid, int(grandchild.read_text())]
    assert all(alive(pid) for pid in pids)
    proc.kill()  # kill -9: no clean-up of its own runs
    proc.wait()
    deadline = time.monotonic() + 30  # the reaper's pipe ends; it kills the group (a wait, not a timed assertion)
    while any(alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert [pid for pid in pids if alive(pid)] == []
