"""The environment Bash commands run with: agentcli's own without provider credentials.

A command the model runs (perhaps because a file told it to) must not be able to read the
person's API keys: the provider key variables, `AGENTCLI_*` variables holding a key, and any
variable whose value equals a configured key are removed, unless the person names the variable
in `[agent] bash_pass_env`. Computed once per session (`ToolContext.bash_env`).

agentcli's own environment still holds the keys, and a command could read it from
`/proc/$PPID/environ`; on Linux agentcli therefore makes itself non-dumpable (`PR_SET_DUMPABLE`
0) before any Bash command runs, which makes its `/proc/PID/environ` and `mem` unreadable to
other processes of the person's user. Its children are dumpable again after `exec`.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from agentcli import redact
from agentcli.config import ENV_PREFIX, is_secret_key

if TYPE_CHECKING:
    from agentcli.config import Settings

PR_SET_DUMPABLE = 4

KEY_VARIABLES = frozenset(
    {"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "OPENAI_API_KEY", "LLM_API_KEY", "LIGHT_LLM_API_KEY"}
)


def _holds_key(name: str) -> bool:
    """`AGENTCLI_MODELS__MAIN__API_KEY` and the like: an agentcli variable naming a secret."""
    upper = name.upper()
    return upper.startswith(ENV_PREFIX) and is_secret_key(upper[len(ENV_PREFIX) :].split("__")[-1])


def configured_keys(settings: Settings, env: Mapping[str, str]) -> set[str]:
    """Every key agentcli may use: from the config, the provider variables, and those resolved so far."""
    keys = {value for name, value in env.items() if name in KEY_VARIABLES or _holds_key(name)}
    for model in (settings.models.main, settings.models.light):
        if model.api_key is not None:
            keys.add(model.api_key.get_secret_value())
    keys.update(redact.secrets())
    return {key for key in keys if len(key) >= redact.MIN_SECRET_LENGTH}


def bash_environment(
    env: Mapping[str, str], keys: Iterable[str], pass_env: Iterable[str] = ()
) -> dict[str, str]:
    """`env` without key variables and without any variable whose value is one of `keys`."""
    secrets, keep = set(keys), set(pass_env)
    return {
        name: value
        for name, value in env.items()
        if name in keep or not (name in KEY_VARIABLES or _holds_key(name) or value in secrets)
    }


def hide_own_environment() -> bool:
    """Make this process non-dumpable, so a Bash command cannot read `/proc/$PPID/environ` (Linux).

    Returns whether it took effect (False where prctl does not exist).
    """
    from agentcli.tools.shell.reaper import load_prctl

    prctl = load_prctl()
    return prctl is not None and prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == 0


def session_bash_env(settings: Settings, env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The Bash environment of one session, from the process environment and the settings.

    Every key found on the way joins the masking registry (`agentcli.redact`).
    """
    hide_own_environment()
    env = os.environ if env is None else env
    keys = configured_keys(settings, env)
    for key in keys:
        redact.register_secret(key)  # configured but not yet resolved keys are masked too
    return bash_environment(env, keys, settings.agent.bash_pass_env)
