"""The `agentcli` command and `python -m agentcli`: the cyclic GC paused from the process's first line.

Start-up allocates a few hundred thousand objects that live as long as the process (the modules, classes
and schemas of agentcli, typer, pydantic and the SDK); a collection pass over them all costs more the
further start-up gets, about 0.1 s in total. The command hands collection back: `run` once its first
request is out (`oneshot.settle_gc`), every other command as soon as its options are parsed.
"""

from __future__ import annotations

import gc


def main() -> None:
    """The process's entry: collection paused, then the command line (`agentcli.cli.app.entry`)."""
    gc.disable()
    from agentcli.cli import entry

    entry()


if __name__ == "__main__":
    main()
