"""The package's layers point only down: no import cycle between modules or subpackages of agentcli/.

Every import counts, wherever it sits: at module level, inside a function, or under `TYPE_CHECKING`
(a cycle held apart only by where an import sits is still a cycle). Where a lower module must name a
higher one, it declares a small Protocol instead.

Run `python tests/test_layers.py` to print the graph's cycles and layer violations.
"""

from __future__ import annotations

import ast
import re
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "agentcli"

ARCHITECTURE = ROOT.parent / "docs" / "ARCHITECTURE.md"


def read_layers(text: str) -> list[set[str]]:
    """The units of each layer, lowest first, from the layer table of docs/ARCHITECTURE.md (`| 3 | `tools/` | …`)."""
    layers: dict[int, set[str]] = defaultdict(set)
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    for line in section.splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) >= 2 and cells[0].isdigit():
            layers[int(cells[0])] |= {name.rstrip("/") for name in re.findall(r"`([\w/]+)`", cells[1])}
    return [layers[level] for level in sorted(layers)]


# The layers, lowest first. A unit is a top-level module or a first-level subpackage of agentcli/; it may import
# units of lower layers only (and itself).
LAYERS: list[set[str]] = read_layers(ARCHITECTURE.read_text(encoding="utf-8"))


def module_name(path: Path) -> str:
    """`agentcli/ui/widgets/__init__.py` → `agentcli.ui.widgets`."""
    parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    """Every module of the package by dotted name."""
    return {module_name(p): p for p in sorted(ROOT.rglob("*.py"))}


def imports_of(name: str, path: Path, known: set[str]) -> set[str]:
    """The package's modules that `name` imports, anywhere in its file (functions and TYPE_CHECKING too)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                origin = ".".join([*base, node.module] if node.module else base)
            else:
                origin = node.module or ""
            targets = [f"{origin}.{alias.name}" if f"{origin}.{alias.name}" in known else origin
                       for alias in node.names]
        for target in targets:
            while target and target not in known:  # `import agentcli.x.y` of a name inside a module
                target = target.rpartition(".")[0]
            if target and target != name and target != "agentcli":
                found.add(target)
    return found


def graph() -> dict[str, set[str]]:
    """Module → the package's modules it imports."""
    found = modules()
    known = set(found)
    return {name: imports_of(name, path, known) for name, path in found.items()}


def unit(module: str) -> str:
    """The layer unit of a module: its first-level subpackage or top-level module name."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else parts[0]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    counter = 0
    for start in sorted(edges):
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                members = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    members.append(member)
                    if member == node:
                        break
                if len(members) > 1:
                    found.append(sorted(members))
    return found


def unit_edges(edges: dict[str, set[str]]) -> dict[str, set[str]]:
    """The graph between units (subpackages and top-level modules)."""
    result: dict[str, set[str]] = defaultdict(set)
    for source, targets in edges.items():
        for target in targets:
            if unit(source) != unit(target):
                result[unit(source)].add(unit(target))
    return result


def rank(name: str) -> int:
    for level, names in enumerate(LAYERS):
        if name in names:
            return level
    raise KeyError(f"unit {name!r} is in no layer of the table in docs/ARCHITECTURE.md")


def violations(edges: dict[str, set[str]]) -> list[str]:
    """Imports that point up or sideways between units."""
    problems = []
    for source, targets in edges.items():
        for target in sorted(targets):
            if unit(source) != unit(target) and rank(unit(target)) >= rank(unit(source)):
                problems.append(f"{source} -> {target}")
    return sorted(problems)


PUBLIC_UNDERSCORE_NAMES = frozenset({"_exit"})  # os._exit is os's public API


def private_reaches(path: Path) -> list[str]:
    """`from m import _x`, and `obj._x` where `_x` is not a name this module defines itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    own: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            own.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            own.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            own.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            own.add(node.target.id)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            found += [f"{path.name}:{node.lineno}: from {node.module} import {alias.name}"
                      for alias in node.names if alias.name.startswith("_") and not alias.name.startswith("__")]
        elif isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
            if node.attr in own or node.attr in PUBLIC_UNDERSCORE_NAMES:
                continue
            found.append(f"{path.relative_to(ROOT.parent)}:{node.lineno}: {ast.unparse(node)}")
    return found


def test_no_module_reaches_into_private_names() -> None:
    found = [line for path in modules().values() for line in private_reaches(path)]
    assert not found, "private names used from outside their module: " + "; ".join(found)


def test_no_module_cycles() -> None:
    found = cycles(graph())
    assert not found, "import cycles between modules: " + "; ".join(" ⇄ ".join(c) for c in found)


def test_no_subpackage_cycles() -> None:
    found = cycles(unit_edges(graph()))
    assert not found, "import cycles between subpackages: " + "; ".join(" ⇄ ".join(c) for c in found)


def test_every_package_has_a_row_of_its_own() -> None:
    """The layer table names each folder in a row of its own, so its one line says what the folder holds."""
    section = ARCHITECTURE.read_text(encoding="utf-8").split("## Layers", 1)[1].split("\n## ", 1)[0]
    rows = [re.findall(r"`([\w/]+)`", line.split("|")[2]) for line in section.splitlines()
            if line.startswith("|") and line.split("|")[1].strip().isdigit()]
    packages = {p.parent.name for p in ROOT.glob("*/__init__.py")}
    shared = [row for row in rows if len(row) > 1 and any(name.rstrip("/") in packages for name in row)]
    folders = {name.rstrip("/") for row in rows for name in row if name.endswith("/")}
    assert not [row for row in shared if sum(name.endswith("/") for name in row) > 1], shared
    assert folders == packages, f"folders without a row: {sorted(packages - folders)}"


def test_every_unit_has_a_layer() -> None:
    for name in {unit(m) for m in modules()} - {"agentcli"}:
        rank(name)


def test_layers_point_down() -> None:
    found = violations(graph())
    assert not found, "imports that do not point down a layer: " + "; ".join(found)


def test_the_checker_sees_function_level_and_type_checking_imports(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from agentcli.a import X\n"
        "def f():\n    import agentcli.b.c\n    from . import d\n",
        encoding="utf-8",
    )
    known = {"agentcli.a", "agentcli.b", "agentcli.b.c", "agentcli.d"}
    assert imports_of("agentcli.m", source, known) == {"agentcli.a", "agentcli.b.c", "agentcli.d"}
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


if __name__ == "__main__":
    edges = graph()
    for cycle in cycles(edges):
        print("module cycle:", " ⇄ ".join(cycle))
    for cycle in cycles(unit_edges(edges)):
        print("subpackage cycle:", " ⇄ ".join(cycle))
    try:
        for line in violations(edges):
            print("points up:", line)
    except KeyError as exc:
        print(exc)


def test_every_package_declares_its_face() -> None:
    """Each package's `__init__` has a docstring and names in `__all__` what other packages may use."""
    faceless = []
    for init in sorted(ROOT.rglob("__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        declares = any(isinstance(node, (ast.Assign, ast.AnnAssign)) and "__all__" in ast.unparse(node).split("=")[0]
                       for node in tree.body)
        if not ast.get_docstring(tree) or not declares:
            faceless.append(str(init.relative_to(ROOT.parent)))
    assert not faceless, "packages without a docstring or __all__: " + ", ".join(faceless)


def cross_package_reaches(edges_from: dict[str, Path]) -> list[str]:
    """`from agentcli.pkg.module import name` in a module outside `pkg`, where `pkg`'s face offers `name`."""
    found = []
    for name, path in edges_from.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module):
                continue
            parts = node.module.split(".")
            if parts[0] != "agentcli" or len(parts) < 3 or name.split(".")[:2] == parts[:2]:
                continue
            face = f"agentcli.{parts[1]}"
            offered = _face_names(edges_from[face]) if face in edges_from else set()
            found += [f"{name}: from {node.module} import {alias.name}"
                      for alias in node.names if alias.name in offered]
    return found


def _face_names(init: Path) -> set[str]:
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets):
            return {ast.literal_eval(elt) for elt in node.value.elts} if isinstance(node.value, ast.List) else set()
    return set()


def test_imports_across_packages_use_the_face() -> None:
    """A module imports another package's names from that package (its `__init__`), not from the module inside it."""
    reaches = cross_package_reaches(modules())
    assert not reaches, "import these from the package's face: " + "; ".join(reaches)


MAX_MODULE_LINES, MAX_FUNCTION_LINES = 500, 80


def test_rooms_stay_small() -> None:
    """No module over 500 lines and no function over 80: past that, a room is split by responsibility."""
    large = []
    for path in sorted(ROOT.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        where = path.relative_to(ROOT.parent)
        if len(text.splitlines()) > MAX_MODULE_LINES:
            large.append(f"{where}: {len(text.splitlines())} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                length = (node.end_lineno or node.lineno) - node.lineno + 1
                if length > MAX_FUNCTION_LINES:
                    large.append(f"{where}:{node.lineno} {node.name}: {length} lines")
    assert not large, "split by responsibility: " + "; ".join(large)
