"""The demo's scripted session drives real tools on the folder it runs in."""

from __future__ import annotations

from pathlib import Path

from agentcli.demo import demo_conversation, demo_script
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
