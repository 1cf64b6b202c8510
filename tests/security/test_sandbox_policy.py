"""What happens around the sandbox: without one, auto mode and --yes stop approving Bash; `required` refuses it;
`config show` and the status bar say what the sandbox is. These hold on any system (no Landlock needed)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentcli.config.schema import PermissionsSettings
from agentcli.tools.base import FileLocks, ToolContext, ToolError
from agentcli.tools.permissions.approvals import PermissionRequest
from agentcli.tools.permissions.policy import PermissionPolicy
from agentcli.tools.sandbox.notes import blocked_notes
from agentcli.tools.sandbox.policy import Mechanisms, Sandbox, SandboxSpec
from agentcli.tools.shell.bash import BashArgs, BashTool
from agentcli.ui.widgets.status_bar import Status, fit
from tests.e2e.helpers import run_cli

NONE = Mechanisms(0, "none", ("Landlock is not available on this system",))


def _ctx(workspace: Path, policy: PermissionPolicy, sandbox: Sandbox) -> ToolContext:
    return ToolContext(workspace=workspace, agent="main", session_id="s", permissions=policy,
                       file_locks=FileLocks(), sandbox=sandbox)


def _check(policy: PermissionPolicy, ctx: ToolContext) -> tuple[bool, str]:
    decision = asyncio.run(policy.check(BashTool(), BashArgs(command="touch x"), ctx))
    return decision.allowed, decision.reason


def test_without_a_sandbox_auto_mode_asks_and_yes_refuses_bash(tmp_path: Path) -> None:
    sandbox = Sandbox(SandboxSpec(tmp_path), NONE)
    asked: list[PermissionRequest] = []

    async def approver(request: PermissionRequest) -> str:
        asked.append(request)
        return "allow_once"

    auto = PermissionPolicy("auto", approver=approver)
    auto.bash_unsandboxed = sandbox.unsandboxed_reason()
    assert _check(auto, _ctx(tmp_path, auto, sandbox)) == (True, "")
    assert [r.tool for r in asked] == ["Bash"]  # asked, though the mode is auto
    yes = PermissionPolicy.from_settings(PermissionsSettings(), oneshot=True, yes=True)
    yes.bash_unsandboxed = sandbox.unsandboxed_reason()
    allowed, reason = _check(yes, _ctx(tmp_path, yes, sandbox))
    assert not allowed and "without a sandbox" in reason and '[sandbox] mode = "off"' in reason


def test_mode_off_on_purpose_keeps_auto_mode_unasked(tmp_path: Path) -> None:
    sandbox = Sandbox(SandboxSpec(tmp_path, mode="off"))
    assert not sandbox.active and sandbox.unsandboxed_reason() == "" and sandbox.summary() == "sandbox off"
    yes = PermissionPolicy.from_settings(PermissionsSettings(), oneshot=True, yes=True)
    yes.bash_unsandboxed = sandbox.unsandboxed_reason()
    assert _check(yes, _ctx(tmp_path, yes, sandbox)) == (True, "")


@pytest.mark.parametrize("mechanisms", [NONE, Mechanisms(3, "none", ("the network stays reachable",))],
                         ids=["no-landlock", "no-network-rules"])
def test_required_refuses_bash_where_the_sandbox_cannot_be_enforced(tmp_path: Path, mechanisms: Mechanisms) -> None:
    sandbox = Sandbox(SandboxSpec(tmp_path, mode="required"), mechanisms)
    policy = PermissionPolicy("auto")
    with pytest.raises(ToolError, match='mode = "required"'):
        asyncio.run(BashTool().run(BashArgs(command="touch ran"), _ctx(tmp_path, policy, sandbox)))
    assert not (tmp_path / "ran").exists()


def test_notes_name_the_path_or_the_address_the_sandbox_refused() -> None:
    output = "\n".join([
        "touch: cannot touch '/home/p/x': Permission denied",
        "cat: /home/p/.ssh/id_rsa: Permission denied",
        "ln: failed to create hard link 'hl' => '/home/p/notes': Invalid cross-device link",
        "touch: cannot touch '/ws/ok': Permission denied",  # inside the workspace: not the sandbox
        "curl: (7) Failed to connect to 10.0.0.1 port 8080 after 0 ms: Couldn't connect to server",
    ])
    notes = blocked_notes(output, workspace="/ws", write_roots=["/ws", "/tmp/agentcli-bash-1"],
                          denied=["/home/p/.ssh"], network_off=True)
    assert notes[0].startswith("[sandbox] /home/p/x is outside the folders the Bash sandbox lets commands write")
    assert notes[1].startswith("[sandbox] /home/p/.ssh/id_rsa is on the Bash sandbox's read deny list")
    assert "refuses links and moves" in notes[2] and "/home/p/notes" in notes[2]
    assert notes[-1].startswith("[sandbox] The network is off for Bash commands (10.0.0.1:8080)")
    assert not any("/ws/ok" in note for note in notes)


def test_config_show_and_the_status_bar_say_what_the_sandbox_is(tmp_path: Path) -> None:
    import os

    env = {**os.environ, "AGENTCLI_SANDBOX__MODE": "off"}
    proc = run_cli(["config", "show", "--cwd", str(tmp_path)], env)
    assert proc.returncode == 0, proc.stderr
    assert "# Bash sandbox: off ([sandbox] mode = \"off\")" in proc.stdout
    on = Sandbox(SandboxSpec(tmp_path), Mechanisms(7, "namespace"))
    assert "Landlock ABI 7" in on.describe() and "network namespace" in on.describe()
    assert "sandbox: landlock 7 + netns" in fit(Status(model="m", sandbox=on.summary()), 400).plain
    none = Sandbox(SandboxSpec(tmp_path), NONE)
    assert "no sandbox" in fit(Status(model="m", sandbox=none.summary()), 400).plain
    assert "auto mode and --yes ask before each Bash command" in none.describe()
