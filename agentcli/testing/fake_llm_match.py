"""Reading a request body (either API) and checking it against a step's Match."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from agentcli.testing.fake_llm_models import ApiName, Match, Step


def _text_of(content: Any) -> str:
    """Plain text of a message content: a string or a list of blocks / parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                btype = block.get("type")
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
                elif btype == "tool_result":
                    parts.append(_text_of(block.get("content")))
                elif btype == "tool_use":
                    parts.append(json.dumps(block.get("input", {})))
        return "\n".join(p for p in parts if p)
    return ""


@dataclass(frozen=True)
class RequestView:
    """The parts of a request that matching looks at, the same for both APIs."""

    api: ApiName
    model: str
    system: str
    tools: tuple[str, ...]
    turn: int
    last_user: str
    last_is_tool_result: bool
    all_text: str
    stream: bool
    include_usage: bool

    @classmethod
    def of(cls, api: ApiName, body: dict[str, Any]) -> RequestView:
        """Build the view of a parsed request body."""
        messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
        model = str(body.get("model", ""))
        stream = bool(body.get("stream", False))
        turn = sum(1 for m in messages if m.get("role") == "assistant")
        if api == "anthropic":
            system = _text_of(body.get("system"))
            tools = tuple(str(t.get("name", "")) for t in body.get("tools") or [] if isinstance(t, dict))
            include_usage = True
        else:
            system = "\n".join(_text_of(m.get("content")) for m in messages if m.get("role") in ("system", "developer"))
            names: list[str] = []
            for t in body.get("tools") or []:
                if isinstance(t, dict):
                    fn = t.get("function")
                    names.append(str(fn.get("name", "")) if isinstance(fn, dict) else str(t.get("name", "")))
            for f in body.get("functions") or []:
                if isinstance(f, dict):
                    names.append(str(f.get("name", "")))
            tools = tuple(names)
            opts = body.get("stream_options")
            include_usage = bool(isinstance(opts, dict) and opts.get("include_usage"))
        return cls(
            api=api,
            model=model,
            system=system,
            tools=tools,
            turn=turn,
            last_user=_last_user_text(messages),
            last_is_tool_result=_answers_tools(messages),
            all_text="\n".join([system, *(_message_text(m) for m in messages)]),
            stream=stream,
            include_usage=include_usage,
        )


def _message_text(message: dict[str, Any]) -> str:
    parts = [_text_of(message.get("content"))]
    for call in message.get("tool_calls") or []:
        if isinstance(call, dict) and isinstance(call.get("function"), dict):
            parts.append(str(call["function"].get("arguments", "")))
    return "\n".join(p for p in parts if p)


def _last_user_text(messages: list[dict[str, Any]]) -> str:
    """Text of the user/tool messages after the last assistant message, else of the last user one."""
    last_assistant = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
    tail = [m for m in messages[last_assistant + 1 :] if m.get("role") in ("user", "tool")]
    if not tail:
        tail = [m for m in messages if m.get("role") == "user"][-1:]
    return "\n".join(_text_of(m.get("content")) for m in tail)


def _answers_tools(messages: list[dict[str, Any]]) -> bool:
    """Whether the request's last message carries tool results (Anthropic blocks or OpenAI tool role)."""
    if not messages:
        return False
    last = messages[-1]
    if last.get("role") == "tool":
        return True
    content = last.get("content")
    return isinstance(content, list) and any(
        isinstance(b, dict) and b.get("type") == "tool_result" for b in content
    )


def _short(text: str, limit: int = 60) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def mismatch(match: Match, view: RequestView) -> str | None:
    """The first predicate of `match` that `view` fails, as a sentence; None when all hold."""
    if match.api is not None and match.api != view.api:
        return f"api is {view.api}, not {match.api}"
    if match.model is not None and match.model != view.model:
        return f"model is {view.model!r}, not {match.model!r}"
    if match.system_contains is not None and match.system_contains not in view.system:
        return f"system prompt lacks {match.system_contains!r} (starts {_short(view.system)!r})"
    if match.tools_include is not None:
        missing = [t for t in match.tools_include if t not in view.tools]
        if missing:
            return f"tools {missing} not offered (offered {list(view.tools)})"
    if match.tools_exclude is not None:
        present = [t for t in match.tools_exclude if t in view.tools]
        if present:
            return f"tools {present} offered but excluded"
    if match.no_tools is True and view.tools:
        return f"tools offered {list(view.tools)}, expected none"
    if match.no_tools is False and not view.tools:
        return "no tools offered, expected some"
    if match.turn is not None and match.turn != view.turn:
        return f"turn is {view.turn}, not {match.turn}"
    if match.last_user_contains is not None and match.last_user_contains not in view.last_user:
        return f"last user message lacks {match.last_user_contains!r} (is {_short(view.last_user)!r})"
    if match.last_user_is_tool_result is not None and match.last_user_is_tool_result != view.last_is_tool_result:
        verb = "does not carry" if match.last_user_is_tool_result else "carries"
        return f"the last message {verb} tool results"
    if match.any_message_contains is not None and match.any_message_contains not in view.all_text:
        return f"no message contains {match.any_message_contains!r}"
    return None


class StepTable:
    """The script's steps and how often each was used: routing and the unused-step report.

    Shared by the HTTP server and the in-process scripted provider, so both answer a request
    with the same step. Not thread-safe: the caller holds its own lock.
    """

    def __init__(self, steps: list[Step] | None = None) -> None:
        self.steps: list[Step] = list(steps or [])
        self.uses: list[int] = [0] * len(self.steps)

    def add(self, steps: tuple[Step, ...] | list[Step]) -> None:
        """Append steps (also while serving)."""
        self.steps.extend(steps)
        self.uses.extend([0] * len(steps))

    def pairs(self) -> list[tuple[Step, int]]:
        """Each step with how many times it was used."""
        return list(zip(self.steps, self.uses, strict=True))

    def route(self, view: RequestView) -> tuple[int | None, list[str]]:
        """Use the first step with uses left whose Match holds; else (None, why each step refused)."""
        reasons: list[str] = []
        for i, step in enumerate(self.steps):
            if step.times is not None and self.uses[i] >= step.times:
                reasons.append(f"{step.label(i)}: used up")
                continue
            why = mismatch(step.match, view)
            if why is None:
                self.uses[i] += 1
                return i, []
            reasons.append(f"{step.label(i)}: {why}")
        return None, reasons or ["script has no steps left"]

    def unused(self) -> list[str]:
        """One line per step (not optional) that was not used up."""
        out: list[str] = []
        for i, (step, used) in enumerate(self.pairs()):
            missing = (used == 0) if step.times is None else (used < step.times)
            if missing and not step.optional:
                want = "unlimited" if step.times is None else str(step.times)
                cond = step.match.model_dump(exclude_none=True)
                out.append(f"{step.label(i)} unused: {used} of {want} uses, match {cond}")
        return out


def with_echo(step: Step, view: RequestView) -> Step:
    """The step with `reply.echo_last_user` applied: the reply text plus the request's last user text."""
    if not step.reply.echo_last_user:
        return step
    echoed = step.reply.text + view.last_user[: step.reply.echo_last_user]
    return step.model_copy(update={"reply": step.reply.model_copy(update={"text": echoed})})
