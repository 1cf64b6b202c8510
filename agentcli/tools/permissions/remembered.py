"""The person's "allow always" answers of one session: file edits as one family, Bash by command prefix (see
`tools/shell/rules.BashAnswers`), any other tool by name."""

from __future__ import annotations

from agentcli.tools.registry import EDIT_TOOLS
from agentcli.tools.shell.rules import BashAnswers
from agentcli.tools.shell.syntax import split_command


def family(name: str) -> str:
    """The name an answer is remembered under: `Edit` for every tool that edits files."""
    return "Edit" if name in EDIT_TOOLS else name


class RememberedAnswers:
    """What "allow always" answers allow from then on (for this session, this policy object)."""

    def __init__(self) -> None:
        self.tools: set[str] = set()  # tool names (file edits as "Edit")
        self.bash = BashAnswers()

    def covers(self, name: str, target: str) -> bool:
        """Whether an earlier answer allows this call."""
        if name != "Bash":
            return family(name) in self.tools
        return self.bash.covers(split_command(target))

    def remember(self, name: str, target: str) -> None:
        """Allow calls like this one from now on."""
        if name != "Bash":
            self.tools.add(family(name))
            return
        self.bash.remember(split_command(target))

    @staticmethod
    def scope(name: str, target: str, guard: str = "") -> str:
        """Words for the dialog: what "allow always" would allow (`guard`: what a guarded file is)."""
        if guard:
            return f"this call only: {target} is asked every time ({guard})"
        if name in EDIT_TOOLS:
            return f"all file edits ({', '.join(EDIT_TOOLS)}) for the rest of this session"
        if name != "Bash":
            return f"every {name} call for the rest of this session"
        return BashAnswers.scope(split_command(target))
