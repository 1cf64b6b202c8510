"""Skills figures: what a session's skills add to every request (the Skill tool's listing), against the same run
without skills, through the real `agentcli run` and the fake server.

Run: python bench/skills_overhead.py [--synthetic 30]
Setups: no skills; the three vendored public skills (tests/fixtures/skills/anthropics) in ~/.claude/skills; those
plus N synthetic skills with 300-character descriptions. Printed per setup: the first request's JSON body in bytes,
its tools' JSON in bytes, the Skill tool's spec in characters and tokens estimated as agentcli does
(`llm.base.tokens_for_chars`), and whether the body is byte-identical to the run without skills once the
Skill tool is left out (the rest of the request must not change).
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from fake_server import server_process

from agentcli.llm.base import tokens_for_chars
from agentcli.testing.fake_llm import Match, Reply, Script, Step

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "skills" / "anthropics"


def _first_body(workdir: Path) -> dict[str, Any]:
    script = Script(steps=[Step(match=Match(), reply=Reply(text="ok"), times=None, optional=True)])
    ws = workdir / "ws"
    ws.mkdir(exist_ok=True)
    with server_process(script, workdir) as (base_url, requests):
        env = {"PATH": "/usr/bin:/bin", "HOME": str(workdir / "home"), "XDG_CONFIG_HOME": str(workdir / "c"),
               "XDG_DATA_HOME": str(workdir / "d"), "XDG_STATE_HOME": str(workdir / "s"),
               "ANTHROPIC_API_KEY": "sk-bench", "ANTHROPIC_BASE_URL": base_url}
        subprocess.run([sys.executable, "-m", "agentcli", "run", "--cwd", str(ws), "hi"], capture_output=True,
                       check=True, env=env)
    body: dict[str, Any] = requests[0].body
    return body


def _setup(workdir: Path, vendored: bool, synthetic: int) -> None:
    skills = workdir / "home" / ".claude" / "skills"
    skills.mkdir(parents=True)
    if vendored:
        shutil.copytree(CORPUS, skills, dirs_exist_ok=True)
    for i in range(synthetic):
        folder = skills / f"synthetic-{i:02d}"
        folder.mkdir()
        description = f"Synthetic skill {i}: " + "does a well-described thing when asked about it. " * 6
        (folder / "SKILL.md").write_text(f"---\nname: synthetic-{i:02d}\ndescription: {description[:300]}\n---\n"
                                         + "Step.\n" * 200)


def _without_skill(body: dict[str, Any]) -> str:
    rest = dict(body, tools=[t for t in body.get("tools", []) if t["name"] != "Skill"])
    text = json.dumps(rest, sort_keys=True)
    return text.replace('"cache_control": {"type": "ephemeral"}', "")  # a breakpoint may move with the last tool


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--synthetic", type=int, default=30)
    args = parser.parse_args()
    setups = [("no skills", False, 0), ("3 public skills", True, 0),
              (f"3 public + {args.synthetic} synthetic", True, args.synthetic)]
    baseline = ""
    print(f"{'setup':<28} {'body bytes':>10} {'tools bytes':>11} {'Skill chars':>11} {'~tokens':>8}  rest same")
    for label, vendored, synthetic in setups:
        with tempfile.TemporaryDirectory() as tmp:
            workdir = Path(tmp)
            _setup(workdir, vendored, synthetic)
            body = _first_body(workdir)
            rest = _without_skill(body).replace(str(workdir.resolve()), "<tmp>").replace(tmp, "<tmp>")
        skill = next((t for t in body.get("tools", []) if t["name"] == "Skill"), None)
        chars = len(json.dumps(skill)) if skill else 0
        baseline = baseline or rest
        same = "yes" if rest == baseline else "no"
        print(f"{label:<28} {len(json.dumps(body)):>10} {len(json.dumps(body.get('tools', []))):>11} {chars:>11} "
              f"{tokens_for_chars(chars):>8}  {same}")


if __name__ == "__main__":
    main()
