"""The layers import downward only, and no modules import each other in a circle.

The layers (docs/architecture.md), bottom to top: the MJCF assets (the package
robodyn.assets, the repository's assets/), robodyn.engine, robogym, robodyn.envs,
robodyn.training. Every import statement of every module of those packages is read from its
source (at any depth: inside functions, classes,
`if TYPE_CHECKING:` blocks and `try:` blocks too, so a lazy import counts like any other):

- a module may import its own layer and the layers below it, never one above, and never
  tests/ or benchmarks/, which sit outside the layers;
- the graph of module-to-module imports inside the project has no cycle (a cycle inside one
  layer counts too).

`from pkg import name` is an import of the module pkg.name when that module exists, else of
pkg; a relative import is resolved against the importing module's package.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.helpers import REPO

# (package name, its directory in the repository), bottom layer first
LAYERS = (
    ("robodyn.assets", "assets"),
    ("robodyn.engine", "engine"),
    ("robogym", "robogym"),
    ("robodyn.envs", "envs"),
    ("robodyn.training", "training"),
)
OUTSIDE = ("tests", "benchmarks")  # project code that no layer may import
RANK = {name: i for i, (name, _) in enumerate(LAYERS)}


def layer_of(module: str) -> str | None:
    """The layer (a LAYERS package) that the dotted module name is or lies in; None for none."""
    for package, _ in LAYERS:
        if module == package or module.startswith(f"{package}."):
            return package
    return None


def project_modules() -> dict[str, Path]:
    """{dotted module name: source file} for every module of every layer."""
    modules = {}
    for package, directory in LAYERS:
        root = REPO / directory
        for path in sorted(root.rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join([package, *parts])] = path
    return modules


def imports_of(module: str, path: Path, known: set[str]) -> list[tuple[int, str]]:
    """(line, imported module) for every import statement in the module's source, at any depth."""
    is_package = path.name == "__init__.py"
    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = module.split(".")
                keep = len(parts) - node.level + (1 if is_package else 0)
                base = ".".join(parts[:keep] + ([base] if base else []))
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                found.append((node.lineno, sub if sub in known else base))
    return found


def import_graph() -> tuple[dict[str, Path], dict[str, list[tuple[int, str]]]]:
    """(modules, {module: [(line, imported module)]}) for the project's own modules."""
    modules = project_modules()
    known = set(modules)
    graph = {m: imports_of(m, path, known) for m, path in modules.items()}
    return modules, graph


def test_the_layers_hold_modules():
    modules = project_modules()
    for package, _ in LAYERS:
        assert package in modules, f"no package {package}"
    assert len(modules) > 40, f"found only {len(modules)} modules"


def test_no_layer_imports_a_layer_above_it_or_tests():
    modules, graph = import_graph()
    upward = []
    for module, imported in graph.items():
        here = RANK[layer_of(module)]
        for line, target in imported:
            top = target.split(".")[0]
            if top in OUTSIDE or RANK.get(layer_of(target), -1) > here:
                path = modules[module].relative_to(REPO)
                upward.append(f"{path}:{line} ({module}) imports {target}")
    assert upward == [], "imports against the layer order:\n" + "\n".join(upward)


def test_no_import_cycle():
    modules, graph = import_graph()
    edges = {m: sorted({t for _, t in imported if t in modules}) for m, imported in graph.items()}
    cycles = _cycles(edges)
    text = [" -> ".join([*c, c[0]]) for c in cycles]
    assert cycles == [], "modules importing each other in a circle:\n" + "\n".join(text)


def test_the_checks_see_lazy_relative_and_upward_imports(tmp_path):
    # the reader itself, on a made-up module: an import inside a function, a relative one,
    # and an upward one are all found
    src = tmp_path / "mod.py"
    src.write_text(
        "from . import physics\n\n"
        "def f():\n    from robodyn.training.cli import main\n    import robodyn.envs\n"
    )
    known = {"robogym.physics", "robodyn.training.cli"}
    found = imports_of("robogym.mod", src, known)
    assert found == [(1, "robogym.physics"), (4, "robodyn.training.cli"), (5, "robodyn.envs")]
    assert [RANK[layer_of(t)] for _, t in found] == [2, 4, 3]  # the two upward ones rank above robogym
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert _cycles({"a": ["a"]}) == [["a"]]
    assert _cycles({"a": ["b"], "b": []}) == []


def _cycles(edges: dict[str, list[str]]) -> list[list[str]]:
    """One cycle (a list of modules, each importing the next, the last the first) for every
    strongly connected component of the graph that has one (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, []):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in edges.get(v, []):
                components.append(set(component))

    for v in sorted(edges):
        if v not in index:
            visit(v)
    return [_path_through(edges, c) for c in components]


def _path_through(edges: dict[str, list[str]], component: set[str]) -> list[str]:
    """A cycle inside a strongly connected component, from its first module in sorted order."""
    start = min(component)
    parent = {start: None}
    todo = [start]
    while todo:  # breadth-first back to start
        v = todo.pop(0)
        for w in edges[v]:
            if w == start:
                path = [v]
                while parent[path[-1]] is not None:
                    path.append(parent[path[-1]])
                return path[::-1]
            if w in component and w not in parent:
                parent[w] = v
                todo.append(w)
    raise AssertionError(f"no cycle through {start}")
