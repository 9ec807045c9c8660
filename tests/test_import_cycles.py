"""No import cycle inside pm_agent: the imports between its modules, read with `ast`, form a DAG.

An edge A -> B means A imports B: `import x.y`, `from x import y` (to x.y when y is a submodule, else to x),
relative imports. Two graphs:
- runtime: imports that run when A is imported (module level, also in `if`/`try`/`with` and class bodies);
  not those inside functions (they run later) nor under `if TYPE_CHECKING:` (they never run).
- design: every import in A, deferred ones included. A circle that only a function-level or TYPE_CHECKING
  import closes still ties the modules together (issue 10's prompting -> TaskFlow is one).
A submodule's implicit import of its parent package is not an edge: Python allows it (the parent is
already in sys.modules), and counting it would make every package that re-exports a submodule a "cycle".
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pm_agent

PACKAGE_DIR = Path(pm_agent.__file__).resolve().parent


def find_modules(package_dir: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every .py file of the package at `package_dir`."""
    modules: dict[str, Path] = {}
    for path in sorted(package_dir.rglob("*.py")):
        parts = path.relative_to(package_dir.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        modules[name] = path
    return modules


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _all_imports(tree: ast.Module) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of the module, wherever it is."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node


def _module_level_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Import statements that run when the module is imported (not in functions, not TYPE_CHECKING-only)."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If):
            if not _is_type_checking(node.test):
                yield from _module_level_imports(node.body)
            yield from _module_level_imports(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _module_level_imports(block)
        elif isinstance(node, ast.With | ast.ClassDef):
            yield from _module_level_imports(node.body)


def _package_of(name: str, path: Path) -> str:
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _resolve_from(node: ast.ImportFrom, name: str, path: Path) -> str:
    if node.level == 0:
        return node.module or ""
    base = _package_of(name, path)
    for _ in range(node.level - 1):
        base = base.rpartition(".")[0]
    return f"{base}.{node.module}" if node.module else base


def import_graph(package_dir: Path, *, deferred: bool = False) -> tuple[dict[str, set[str]], dict[str, Path]]:
    """The import edges between the modules of the package at `package_dir`; `deferred`: the design graph."""
    modules = find_modules(package_dir)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        for node in _all_imports(tree) if deferred else _module_level_imports(tree.body):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    target = alias.name
                    while target and target not in modules:  # `import a.b.c` where c is a name: a.b
                        target = target.rpartition(".")[0]
                    if target:
                        graph[name].add(target)
                continue
            base = _resolve_from(node, name, path)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:
                    graph[name].add(sub)
                elif base in modules:
                    graph[name].add(base)
    return graph, modules


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components, iteratively (no recursion limit on deep packages)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, Iterator[str]]] = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: list[str] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                components.append(sorted(component))
    return components


def _shortest_cycle(graph: dict[str, set[str]], start: str, members: set[str]) -> list[str]:
    """One shortest path start -> ... -> start inside the component, for a readable report."""
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following: list[str] = []
        for node in frontier:
            for child in sorted(graph[node] & members):
                if child == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if child not in previous:
                    previous[child] = node
                    following.append(child)
        frontier = following
    return [start]


def import_cycles(package_dir: Path, *, deferred: bool = False) -> list[str]:
    """Each import cycle of the package, as 'files: a.py, b.py (a.py -> b.py -> a.py)', sorted."""
    graph, modules = import_graph(package_dir, deferred=deferred)
    base = package_dir.parent

    def file_of(name: str) -> str:
        return modules[name].relative_to(base).as_posix()

    found = []
    for component in _strongly_connected(graph):
        if len(component) == 1 and component[0] not in graph[component[0]]:
            continue
        loop = " -> ".join(file_of(n) for n in _shortest_cycle(graph, component[0], set(component)))
        found.append(f"files: {', '.join(file_of(n) for n in component)} ({loop})")
    return sorted(found)


def test_pm_agent_has_no_import_cycle() -> None:
    cycles = import_cycles(PACKAGE_DIR)
    assert not cycles, "import cycles in pm_agent:\n" + "\n".join(cycles)


def test_pm_agent_has_no_import_cycle_through_deferred_imports() -> None:
    cycles = import_cycles(PACKAGE_DIR, deferred=True)
    assert not cycles, "import cycles in pm_agent (function-level and TYPE_CHECKING imports counted):\n" + "\n".join(
        cycles
    )


def test_the_graph_sees_the_real_package() -> None:
    # Guards the walk itself: a graph that found no modules or no edges would pass the test above vacuously.
    graph, modules = import_graph(PACKAGE_DIR)
    assert "pm_agent.store.sqlite" in modules
    assert "pm_agent.store.runs" in graph["pm_agent.store.sqlite"]
    assert "pm_agent.vcs.git" in graph["pm_agent.vcs.integrate"]


def _write(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root / "toy"


def test_a_cycle_is_named_with_its_files(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "toy/__init__.py": "from toy.front import run\n",
            "toy/front.py": "from toy import back\n\ndef run() -> None: ...\n",
            "toy/back.py": "from .sub import helper\n",
            "toy/sub/__init__.py": "",
            "toy/sub/helper.py": "from ..front import run\n",
            "toy/alone.py": "import toy.sub.helper\n",
        },
    )
    assert import_cycles(package) == [
        "files: toy/back.py, toy/front.py, toy/sub/helper.py"
        " (toy/back.py -> toy/sub/helper.py -> toy/front.py -> toy/back.py)"
    ]


def test_each_cycle_is_named_once_and_self_imports_count(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "toy/__init__.py": "",
            "toy/a.py": "import toy.b\n",
            "toy/b.py": "try:\n    from toy.a import x\nexcept ImportError:\n    pass\n",
            "toy/c.py": "class K:\n    from toy import c\n",
        },
    )
    assert import_cycles(package) == [
        "files: toy/a.py, toy/b.py (toy/a.py -> toy/b.py -> toy/a.py)",
        "files: toy/c.py (toy/c.py -> toy/c.py)",
    ]


def test_deferred_and_type_checking_imports_are_not_cycles(tmp_path: Path) -> None:
    package = _write(
        tmp_path,
        {
            "toy/__init__.py": "from toy.a import A\n",
            "toy/a.py": "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from toy.b import B\nA = 1\n",
            "toy/b.py": "import typing\nfrom toy.a import A\nif typing.TYPE_CHECKING:\n    import toy.a\n"
            "def later() -> None:\n    from toy import b\n",
            "toy/c.py": "from toy import A\n",
        },
    )
    graph, _ = import_graph(package)
    assert import_cycles(package) == []
    # The design graph counts them: b's own deferred self-import lies inside the same circle, named once.
    assert import_cycles(package, deferred=True) == ["files: toy/a.py, toy/b.py (toy/a.py -> toy/b.py -> toy/a.py)"]
    # `from toy import A`: A is a name in toy/__init__.py, so the edge goes to the package itself.
    assert graph["toy.c"] == {"toy"}
    assert graph["toy.b"] == {"toy.a"}
