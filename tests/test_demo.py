"""The demo's scripted session drives real tools on the folder it runs in."""

from __future__ import annotations

from pathlib import Path

from agentcli.cli.demo import demo_conversation, demo_script
from agentcli.testing.fake_llm import FakeLLMServer


async def test_demo_delegates_three_explorers_that_really_look(tmp_path: Path) -> None:
    ws = tmp_path / "project"
    (ws / "pkg").mkdir(parents=True)
    (ws / "pkg" / "engine.py").write_text("def run():\n    pass  # TODO: handle errors\n")
    (ws / "NOTES.txt").write_text("notes\n")
    with FakeLLMServer(demo_script(latency_ms=0, chunk_delay_ms=0)) as server:
        conversation = demo_conversation(ws, server, tmp_path)
        try:
            outcome = await conversation.send("show me around")
            second = await conversation.send("again please")  # every prompt replays the delegation
        finally:
            await conversation.aclose()
            assert conversation.store is not None
            conversation.store.close()
    assert outcome.status == "completed" and second.status == "completed"
    assert "demo" in outcome.result
    records = conversation.runner.records()
    assert len(records) == 6
    assert {r.status for r in records} == {"completed"}
    results = "\n".join(r.result or "" for r in records[:3])
    assert "pkg/engine.py" in results  # Glob really ran here
    assert "TODO: handle errors" in results  # so did Grep
    assert "NOTES.txt" in results  # and LS
    assert {r.model_used for r in records} == {"light"}
    server.assert_done()


def test_the_demos_end_text_names_a_command_that_works_here(monkeypatch: object) -> None:
    import shutil
    import sys

    from agentcli.cli.demo import final_text, start_command

    expected = "agentcli" if shutil.which("agentcli") else f"{sys.executable} -m agentcli"
    assert start_command() == expected
    assert f"run `{expected}`" in final_text(expected)


async def test_the_demo_says_how_to_start_it(tmp_path: Path) -> None:
    from agentcli.cli.demo import DEMO_TITLE, DEMO_WELCOME
    from agentcli.ui.app import AgentApp

    with FakeLLMServer(demo_script(latency_ms=0, chunk_delay_ms=0)) as server:
        conversation = demo_conversation(tmp_path, server, tmp_path)
        app = AgentApp(conversation, title=DEMO_TITLE, welcome=DEMO_WELCOME)
        try:
            async with app.run_test() as pilot:
                await pilot.pause()
                from agentcli.ui.model import NoteItem

                first = next(e for e in app.router.main.items if isinstance(e, NoteItem))
                assert first.text == DEMO_WELCOME and "Type any prompt" in first.text
        finally:
            await conversation.aclose()
