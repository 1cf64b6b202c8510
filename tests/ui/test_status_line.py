"""The status line (Pilot): the person's command gets the session as JSON on stdin and its first line is shown under
the status bar, its colours drawn and every other control sequence (a title, a link, a screen clear) dropped; a
command that hangs is cut at the time limit with one line; an untrusted project's `statusLine` and
`[ui] status_line` never run."""

from __future__ import annotations

import json
import os
import stat
import sys
from pathlib import Path

from agentcli.testing.fake_llm import FakeLLMServer, Script
from agentcli.ui.status_line import TIME_LIMIT_SECONDS
from tests.ui.conftest import MakeApp, wait_for


def _script(path: Path, body: str) -> Path:
    path.write_text("#!/usr/bin/env bash\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def _claude_settings(folder: Path, command: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"statusLine": {"type": "command", "command": command}}))


def _shown(app: object) -> str:
    return str(app.status_line.render())  # type: ignore[attr-defined]


async def test_the_persons_status_line_command_reads_the_session_and_its_line_is_shown(
        make_app: MakeApp, tmp_path: Path) -> None:
    seen = tmp_path / "input.json"
    command = tmp_path / "line.py"
    command.write_text(f"""#!{sys.executable}
import json, os, sys
given = sys.stdin.read()
open({str(seen)!r}, "w").write(given)
data = json.loads(given)
name, folder = data["model"]["display_name"], os.path.basename(data["cwd"])
sys.stdout.write(f"\\033[1;32m{{name}}\\033[0m on {{folder}}\\033]0;title\\007\\033[2J"
                 f"\\033]8;;http://evil.test\\007 linked\\033]8;;\\007\\nsecond line\\n")
""")
    command.chmod(0o755)
    _claude_settings(Path(os.environ["HOME"]) / ".claude", str(command))
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: " on ws" in _shown(app))
            line = app.status_line.render()  # Textual's Content, made from the Rich Text
            assert line.plain.strip() == f"{app.conversation.model.display} on ws linked"  # type: ignore[union-attr]
            (span,) = line.spans  # type: ignore[union-attr]  # the name in bold green; nothing else styled, no link
            assert (span.start, span.end) == (0, len(app.conversation.model.display))
            assert span.style.bold and span.style.foreground.ansi == 2 and not span.style.link
            given = json.loads(seen.read_text())
            assert given["hook_event_name"] == "Status" and given["session_id"] == app.conversation.session.id
            assert given["model"]["display_name"] == app.conversation.model.display
            assert given["output_style"] == {"name": "default"} and given["permission_mode"] == "ask"


async def test_a_hanging_status_line_command_is_cut_at_its_time_limit(make_app: MakeApp, tmp_path: Path) -> None:
    command = _script(tmp_path / "slow.sh", "sleep 60\necho never\n")
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server, AGENTCLI_UI__STATUS_LINE=str(command))
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_for(pilot, lambda: "took over" in _shown(app), timeout=TIME_LIMIT_SECONDS + 20)
            assert _shown(app).strip() == f"status line: the command took over {TIME_LIMIT_SECONDS:g} s"


async def test_an_untrusted_projects_status_line_never_runs(make_app: MakeApp, workspace: Path,
                                                           tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    _claude_settings(workspace / ".claude", f"touch {ran}")
    (workspace / ".agentcli").mkdir()
    (workspace / ".agentcli" / "config.toml").write_text(f'[ui]\nstatus_line = "touch {ran}"\n')
    with FakeLLMServer(Script(steps=[])) as server:
        app = make_app(server)
        async with app.run_test(size=(100, 30)) as pilot:
            await pilot.pause(1.0)
            assert not app.status_line.display and app.status_line.command == ""
    assert not ran.exists()
