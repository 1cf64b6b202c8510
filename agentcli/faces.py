"""A package's public face: the names its `__init__` offers other packages, each imported on first use.

Importing a package costs nothing this way (start-up stays at its floor), and a package's `__init__` still says in
`__all__` what it offers; mypy reads the same names from the `__init__`'s `TYPE_CHECKING` imports.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable


def lazy_names(package: str, where: dict[str, list[str]]) -> tuple[Callable[[str], object], Callable[[], list[str]]]:
    """`__getattr__` and `__dir__` for `package`, whose names live in its modules (`where`: module → names)."""
    owner = {name: module for module, names in where.items() for name in names}

    def __getattr__(name: str) -> object:
        module = owner.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)  # asked once
        return value

    def __dir__() -> list[str]:
        return sorted({*owner, *vars(sys.modules[package])})

    return __getattr__, __dir__
