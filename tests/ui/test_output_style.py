"""/output-style in the TUI (Pilot): it lists the styles, a chosen one shapes the next request's system prompt (the
rules for untrusted data still there), an unknown name is one line, and the choice is saved in the user's config."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path

from agentcli.paths import user_config_file
from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step
from tests.ui.conftest import MakeApp, notes, submit, wait_for


async def test_output_style_lists_sets_applies_and_saves(make_app: MakeApp, workspace: Path) -> None:
    styles = Path(os.environ["HOME"]) / ".claude" / "output-styles"
    styles.mkdir(parents=True)
    (styles / "pirate.md").write_text("---\nname: Pirate\ndescription: Talks like one\n---\nTalk like a pirate.\n")
    script = Script(steps=[Step(match=Match(system_contains="# Output style: Pirate\nTalk like a pirate."),
                                reply=Reply(text="Arr, the code be fine."))])
    with FakeLLMServer(script) as server:
        app = make_app(server)
        async with app.run_test(size=(110, 40)) as pilot:
            await submit(pilot, "/output-style")
            await wait_for(pilot, lambda: any("Output style: default." in n for n in notes(app)))
            listing = next(n for n in notes(app) if "Output style: default." in n)
            assert "Pirate (user): Talks like one" in listing and "Explanatory (built-in)" in listing
            await submit(pilot, "/output-style shanty")
            await wait_for(pilot, lambda: any("no style 'shanty'" in n for n in notes(app)))
            await submit(pilot, "/output-style pirate")
            await wait_for(pilot, lambda: any("Output style: Pirate, from the next message" in n for n in notes(app)))
            await submit(pilot, "how is the code?")
            await wait_for(pilot, lambda: len(server.requests) == 1 and not app.turn_running)
        server.assert_done()
        system = str(server.requests[0].body["system"])
        assert "# Untrusted data" in system and "# How to work" not in system  # the rules stay, its role went
    assert tomllib.loads(user_config_file().read_text()) == {"ui": {"output_style": "Pirate"}}
