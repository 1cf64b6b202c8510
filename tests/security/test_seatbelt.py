"""macOS's Bash sandbox (Seatbelt via sandbox-exec), checked where the suite runs (Linux): the profile is
well-formed SBPL that says the policy, every path reaches it only as a parameter, and the session uses it where
there is no Landlock. It is not executed here (no sandbox-exec on Linux): docs/SECURITY.md says so."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentcli.tools.sandbox import policy as sandbox_module
from agentcli.tools.sandbox import seatbelt
from agentcli.tools.sandbox.policy import Mechanisms, Sandbox, SandboxSpec, detect

SEATBELT = Mechanisms(0, "seatbelt", seatbelt=True)
Sexp = str | list["Sexp"]


def parse(text: str) -> list[Sexp]:
    """SBPL's forms as nested lists (strings keep their quotes); fails on unbalanced parentheses or quotes."""
    stack: list[list[Sexp]] = [[]]
    i = 0
    while i < len(text):
        char = text[i]
        if char == ";":
            i = text.index("\n", i)
        elif char == "(":
            stack.append([])
        elif char == ")":
            assert len(stack) > 1, f"unbalanced ) at {i}"
            done = stack.pop()
            stack[-1].append(done)
        elif char == '"' or text.startswith('#"', i):
            start = i + (2 if char == "#" else 1)
            end = text.index('"', start)
            assert "\\" not in text[start:end] or char == "#", "no escapes needed: paths are parameters"
            stack[-1].append(text[i : end + 1])
            i = end
        elif not char.isspace():
            end = i
            while end < len(text) and not text[end].isspace() and text[end] not in "()":
                end += 1
            stack[-1].append(text[i:end])
            i = end - 1
        i += 1
    assert len(stack) == 1, "unbalanced ("
    return stack[0]


def test_the_profile_is_well_formed_and_says_the_policy() -> None:
    forms = parse(seatbelt.profile(2, 3, network_off=True))
    heads = [form[:2] if isinstance(form, list) else form for form in forms]
    assert heads[:3] == [["version", "1"], ["allow", "default"], ["deny", "file-write*"]]
    allow_write = forms[3]
    assert isinstance(allow_write, list) and allow_write[:2] == ["allow", "file-write*"]
    assert ["subpath", ["param", '"WRITE_0"']] in allow_write and ["subpath", ["param", '"WRITE_1"']] in allow_write
    assert ["literal", '"/dev/null"'] in allow_write
    # Later rules win in SBPL: the deny list comes after the write roots, for reads and writes alike.
    denies = [form for form in forms[4:] if isinstance(form, list) and form[0] == "deny"]
    assert [form[1] for form in denies] == ["file-read*", "file-read*", "file-write*", "signal", "network*"]
    assert denies[0] == ["deny", "file-read*", "file-write*", ["regex", '#"^/dev/(tty|pty|ptmx|console)"']]
    assert not any("tty" in str(part) for part in allow_write)  # no terminal is writable: no escape reaches one
    for form in denies[1:3]:
        assert form[2:] == [["subpath", ["param", f'"DENY_{i}"']] for i in range(3)]
    assert ["allow", "signal", ["target", "same-sandbox"]] in forms
    assert "network*" not in str(parse(seatbelt.profile(1, 0, network_off=False)))


def test_paths_reach_the_profile_only_as_parameters(tmp_path: Path) -> None:
    odd = str(tmp_path / 'we"ird) (allow default' / "x")
    argv = seatbelt.command(["bash", "-c", "true"], [odd, "/private/tmp/s"], ["/Users/me/.ssh"], network_off=True)
    assert argv[:2] == [seatbelt.SANDBOX_EXEC, "-p"]
    text = argv[2]
    assert odd not in text and ".ssh" not in text
    params = argv[3:-3]
    assert params == ["-D", f"WRITE_0={odd}", "-D", "WRITE_1=/private/tmp/s", "-D", "DENY_0=/Users/me/.ssh"]
    named = {p.split("=", 1)[0] for p in params[1::2]}
    used = {word.strip('"') for word in text.replace("(", " ").replace(")", " ").split() if word.startswith('"')
            and word.strip('"').split("_")[0] in ("WRITE", "DENY")}
    assert used == named  # every parameter the profile reads is given, and no other
    assert argv[-3:] == ["bash", "-c", "true"]
    parse(text)


def test_a_mac_without_landlock_gets_seatbelt(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seatbelt, "available", lambda: True)
    assert detect(SandboxSpec(tmp_path), abi=0) == SEATBELT
    assert detect(SandboxSpec(tmp_path, network="allow"), abi=0).network == "allowed"
    monkeypatch.setattr(seatbelt, "available", lambda: False)
    assert not detect(SandboxSpec(tmp_path), abi=0).available


def test_the_session_runs_bash_under_sandbox_exec_and_says_so(tmp_path: Path) -> None:
    box = Sandbox(SandboxSpec(tmp_path, mode="required"), SEATBELT)
    try:
        assert box.active and box.refusal() is None and box.unsandboxed_reason() == ""
        assert box.summary() == "sandbox: seatbelt"
        assert "Seatbelt (sandbox-exec)" in box.describe() and "every network operation" in box.describe()
        def before() -> None:
            return None
        assert box.child_hook(before) is before  # no Landlock in the child: the profile does it all
        argv = box.argv(["bash", "-c", "make"])
        assert argv[0] == seatbelt.SANDBOX_EXEC and argv[-3:] == ["bash", "-c", "make"]
        assert f"WRITE_0={tmp_path.resolve()}" in argv and f"WRITE_1={box.tmpdir()}" in argv
        assert any(a.startswith("DENY_") and a.endswith("/.ssh") for a in argv)
        assert "(deny network*)" in argv[2]
        assert box.notes("curl: (7) Couldn't connect to server")  # a refusal names the sandbox
        off = Sandbox(SandboxSpec(tmp_path, mode="off"), SEATBELT)
        assert not off.active and off.argv(["bash"]) == ["bash"]
        linux = Sandbox(SandboxSpec(tmp_path), Mechanisms(7, "namespace"))
        assert linux.argv(["bash", "-c", "x"]) == ["bash", "-c", "x"]
    finally:
        box.close()


def test_bash_starts_through_the_sandboxs_command_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The Bash tool runs what `Sandbox.argv` gives (here a stand-in for sandbox-exec that records its arguments
    and runs the command: Linux has no sandbox-exec)."""
    from agentcli.tools.base import FileLocks, ToolContext
    from agentcli.tools.permissions.policy import PermissionPolicy
    from agentcli.tools.shell.bash import BashArgs, BashTool

    log = tmp_path / "argv.txt"
    fake = tmp_path / "sandbox-exec"
    fake.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\nshift 2\nwhile [ "$1" = -D ]; do shift 2; done\n'
                    'exec "$@"\n')
    fake.chmod(0o755)
    monkeypatch.setattr(seatbelt, "SANDBOX_EXEC", str(fake))
    ws = tmp_path / "ws"
    ws.mkdir()
    box = Sandbox(SandboxSpec(ws), SEATBELT)
    monkeypatch.setattr(sandbox_module.Sandbox, "notes", lambda self, output: [])
    ctx = ToolContext(workspace=ws, agent="main", session_id="s", permissions=PermissionPolicy(mode="auto"),
                      file_locks=FileLocks(), sandbox=box)
    try:
        result = asyncio.run(BashTool().run(BashArgs(command="echo hi; echo $TMPDIR"), ctx))
    finally:
        box.close()
    assert result.content.splitlines()[0] == "hi"
    recorded = log.read_text().splitlines()
    assert recorded[0] == "-p" and "(deny network*)" in "\n".join(recorded)
    assert f"WRITE_0={ws.resolve()}" in recorded and recorded[-3:] == ["bash", "-c", "echo hi; echo $TMPDIR"]
