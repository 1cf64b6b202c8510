"""Which tool calls run, which are refused and which ask the person: the policy (`policy`), the rules as written
(`rules`) and whether they match a call (`matching`), what is asked and answered (`approvals`), the person's "allow
always" answers (`remembered`), why a call is refused when no one can approve (`reasons`) and the files whose edit
is always asked (`guarded`).

Its modules are its face; other packages import their names from `agentcli.tools`.
"""

__all__ = [
    "approvals",
    "guarded",
    "matching",
    "policy",
    "reasons",
    "remembered",
    "rules",
]
