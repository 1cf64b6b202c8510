"""Bell and desktop notifications: which sequence a terminal gets, and that model text cannot break out of it."""

from __future__ import annotations

from agentcli.ui.notify import BEL, Notifier, clean, osc_flavour, sequence


def test_the_flavour_follows_the_terminal() -> None:
    assert osc_flavour({"TERM_PROGRAM": "iTerm.app"}) == "9"
    assert osc_flavour({"TERM_PROGRAM": "WezTerm"}) == "9"
    assert osc_flavour({"TERM": "xterm-kitty"}) == "99"
    assert osc_flavour({"VTE_VERSION": "7600", "TERM": "xterm-256color"}) == "777"
    assert osc_flavour({"TERM": "foot"}) == "777"
    assert osc_flavour({"TERM": "xterm-256color"}) is None
    assert osc_flavour({"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/tmux-1000/default,1,0"}) is None


def test_sequences_carry_no_control_characters_from_the_text() -> None:
    hostile = "rm -rf /\x07\x1b]52;c;ZXZpbA==\x07\x1b\\;done\u009c"
    for flavour in ("9", "777", "99"):
        text = sequence(flavour, "agentcli", hostile)  # type: ignore[arg-type]
        body = text[2:-2] if text.endswith("\x1b\\") else text[2:-1]
        assert "\x1b" not in body and "\x07" not in body and "\u009c" not in body
    assert sequence("777", "agentcli", "a;b") == "\x1b]777;notify;agentcli;a,b\x1b\\"
    assert sequence("9", "agentcli", "done") == "\x1b]9;agentcli: done\x07"
    assert len(clean("x" * 1000)) <= 160


def test_modes() -> None:
    written: list[str] = []
    rings: list[int] = []

    def make(mode: str, env: dict[str, str]) -> Notifier:
        notifier = Notifier(mode, 30, env)  # type: ignore[arg-type]
        notifier.write = written.append
        notifier.bell = lambda: rings.append(1)
        return notifier

    osc = make("osc", {"TERM_PROGRAM": "WezTerm"})
    osc.approval_waiting("explore#2", "Bash: make")
    assert written == ["\x1b]9;agentcli: approval needed: [explore#2] wants to run Bash: make\x07"] and not rings
    unknown = make("osc", {"TERM": "xterm"})
    unknown.approval_waiting("main", "Write: x")
    assert rings == [1] and unknown.sent == [BEL]  # a terminal not known to show OSC gets the bell
    bell = make("bell", {"TERM_PROGRAM": "WezTerm"})
    bell.turn_ended(29.9, "completed")
    assert bell.sent == []  # shorter than notify_after_seconds
    bell.turn_ended(30, "completed")
    assert bell.sent == [BEL]
    off = make("off", {})
    off.approval_waiting("main", "Bash: x")
    off.turn_ended(999, "completed")
    assert off.sent == []


def test_the_terminal_driver_hands_its_writer_to_the_apps_notifier() -> None:
    from agentcli.ui.notify import with_terminal_writes

    class FakeDriver:
        def __init__(self, app: object, *, debug: bool = False, mouse: bool = True, size: object = None) -> None:
            self.app = app
            self.out: list[str] = []

        def write(self, data: str) -> None:
            self.out.append(data)

    class FakeApp:
        notifier = Notifier("osc", 30, {"TERM_PROGRAM": "ghostty"})

    driver_class = with_terminal_writes(FakeDriver)  # type: ignore[arg-type]
    driver = driver_class(FakeApp(), debug=False, mouse=True, size=None)  # type: ignore[call-arg]
    assert isinstance(driver, FakeDriver)
    FakeApp.notifier.approval_waiting("main", "Bash: ls")
    assert driver.out == ["\x1b]9;agentcli: approval needed: [main] wants to run Bash: ls\x07"]
