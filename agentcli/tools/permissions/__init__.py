"""Which tool calls run, which are refused and which ask the person: the policy (`policy`), the rules as written
(`rules`) and whether they match a call (`matching`), what is asked and answered (`approvals`), the person's "allow
always" answers (`remembered`), why a call is refused when no one can approve (`reasons`) and the files whose edit
is always asked (`guarded`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.faces import lazy_names

if TYPE_CHECKING:
    from agentcli.tools.permissions.approvals import Answer, Approval, Approver, PermissionRequest
    from agentcli.tools.permissions.guarded import guarded_reason
    from agentcli.tools.permissions.policy import PermissionPolicy
    from agentcli.tools.permissions.rules import PermissionRule

__all__ = [
    "Answer",
    "Approval",
    "Approver",
    "PermissionPolicy",
    "PermissionRequest",
    "PermissionRule",
    "guarded_reason",
]

__getattr__, __dir__ = lazy_names(__name__, {
    "agentcli.tools.permissions.approvals": ["Answer", "Approval", "Approver", "PermissionRequest"],
    "agentcli.tools.permissions.guarded": ["guarded_reason"],
    "agentcli.tools.permissions.policy": ["PermissionPolicy"],
    "agentcli.tools.permissions.rules": ["PermissionRule"],
})
