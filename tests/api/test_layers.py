"""The layers, checked on the source: imports point down, the SDK is known
in one adapter, the kernel names no library above anyio and trio."""

from __future__ import annotations

import ast
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[2] / "src" / "agentsim"
ADAPTER = SOURCE / "contrib" / "openai_agents"
#: The layers, bottom up, by the name a folder declares in its __init__
#: (``__layer__``); doubles and the explorer are siblings.
RANKS = {"kernel": 0, "toolkit": 1, "doubles": 2, "explorer": 2, "integrations": 3}
#: The built-in strategies' classes: named only in the scheduling package
#: (and exported by the top package).
STRATEGY_CLASSES = ("FifoPolicy", "JitterPolicy", "RandomPolicy", "PCTPolicy", "ReplayPolicy", "RandomChooser", "PCTChooser", "TrustedChooser")


def _declared_layers() -> dict[str, str]:
    """Each top-level folder's ``__layer__``, read from its ``__init__.py``."""
    layers = {}
    for init in sorted(SOURCE.glob("*/__init__.py")):
        for node in ast.parse(init.read_text()).body:
            if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "__layer__" for t in node.targets):
                layers[init.parent.name] = ast.literal_eval(node.value)
    return layers


LAYERS = _declared_layers()


def _imports(path: Path) -> list[str]:
    """Absolute names of the modules ``path`` imports (relative ones resolved)."""
    package = ".".join(("agentsim", *path.relative_to(SOURCE).with_suffix("").parts))
    if path.name == "__init__.py":
        package += ".__init__"
    names = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: -node.level]
                names.append(".".join([*base, node.module] if node.module else base))
            elif node.module:
                names.append(node.module)
    return names


def _layer(module: str) -> str | None:
    """The layer of the folder ``module`` lives in (None: the top package
    and its loose modules, which only re-export)."""
    parts = module.split(".")
    if parts[0] != "agentsim" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def test_every_folder_declares_a_known_layer() -> None:
    folders = sorted(init.parent.name for init in SOURCE.glob("*/__init__.py"))
    assert folders == sorted(LAYERS), f"folders without __layer__: {sorted(set(folders) - set(LAYERS))}"
    assert {name: layer for name, layer in LAYERS.items() if layer not in RANKS} == {}
    assert LAYERS["_kernel"] == "kernel" and LAYERS["integrations"] == "integrations"


def test_loose_top_level_modules_only_re_export() -> None:
    """Code lives in the layers' folders: a module beside ``__init__`` only
    keeps a public name (imports, and making itself the moved module)."""
    offenders = []
    for path in sorted(SOURCE.glob("*.py")):
        if path.name in ("__init__.py", "__main__.py"):
            continue
        for node in ast.parse(path.read_text()).body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                continue
            if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
                continue  # the docstring
            if isinstance(node, ast.Assign) and ast.unparse(node.targets[0]) in ("sys.modules[__name__]", "__all__"):
                continue
            if isinstance(node, ast.If) and ast.unparse(node.test) == "__name__ == '__main__'":
                continue
            offenders.append(f"{path.name}:{node.lineno} {ast.unparse(node)[:60]}")
    assert offenders == []


def test_the_built_in_strategies_are_named_only_in_the_scheduling_package() -> None:
    scheduling = SOURCE / "_kernel" / "scheduling"
    offenders = [
        f"{path.relative_to(SOURCE)}: {name}"
        for path in SOURCE.rglob("*.py")
        if scheduling not in path.parents and path != SOURCE / "__init__.py"
        for node in ast.walk(ast.parse(path.read_text()))
        for name in [node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else node.name if isinstance(node, ast.alias) else None]
        if name in STRATEGY_CLASSES
    ]
    assert offenders == []


def test_only_the_sdk_adapter_imports_the_sdk() -> None:
    offenders = [
        f"{path.relative_to(SOURCE)} imports {name}"
        for path in SOURCE.rglob("*.py")
        if ADAPTER not in path.parents
        for name in _imports(path)
        if name == "agents" or name.startswith("agents.")
    ]
    assert offenders == []


def test_imports_point_down_the_layers() -> None:
    """Down only; siblings of one rank (the doubles, the explorer) do not
    import each other; folders of one layer may."""
    offenders = []
    for path in SOURCE.rglob("*.py"):
        own = _layer(".".join(("agentsim", *path.relative_to(SOURCE).with_suffix("").parts)))
        if own is None:
            continue
        for name in _imports(path):
            target = _layer(name)
            if target is not None and (RANKS[target] > RANKS[own] or (RANKS[target] == RANKS[own] and target != own)):
                offenders.append(f"{path.relative_to(SOURCE)} ({own}) imports {name} ({target})")
    assert offenders == []


def test_the_kernel_imports_only_the_standard_library_and_its_loops() -> None:
    # numpy: the random policy's bulk draws and the choice log's vectorised settling.
    allowed = {"anyio", "trio", "outcome", "sniffio", "sortedcontainers", "numpy", "agentsim"}
    import sys

    offenders = [
        f"{path.relative_to(SOURCE)} imports {name}"
        for path in (SOURCE / "_kernel").rglob("*.py")
        for name in _imports(path)
        if name.split(".")[0] not in allowed and name.split(".")[0] not in sys.stdlib_module_names
    ]
    assert offenders == []


def test_import_agentsim_loads_no_numpy_trio_hypothesis_or_sdk() -> None:
    """``import agentsim`` stays light: the libraries are loaded by what uses
    them (a random run's draws, the trio backend, the database, the adapter)."""
    import subprocess
    import sys

    program = "import sys, agentsim\nprint(sorted(m for m in ('numpy', 'trio', 'hypothesis', 'agents', 'rich') if m in sys.modules))"
    finished = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=60)
    assert finished.stdout.strip() == "[]", finished.stdout + finished.stderr


def _module_name(path: Path) -> str:
    parts = ("agentsim", *path.relative_to(SOURCE).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _runtime_imports(path: Path, modules: set[str]) -> set[str]:
    """The agentsim modules ``path`` imports when it runs: at module level or
    inside functions (a lazy import still closes a cycle), not under
    ``if TYPE_CHECKING:`` (never executed). ``from package import module``
    imports that module."""
    tree = ast.parse(path.read_text())
    typing_only = {
        id(inner)
        for node in ast.walk(tree)
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test)
        for inner in ast.walk(node)
    }
    own = _module_name(path)
    package = own if path.name == "__init__.py" else own.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        targets: list[str] = []
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package.split(".")[: len(package.split(".")) - (node.level - 1)]) if node.level else ""
            base = ".".join(part for part in (base, node.module or "") if part)
            submodules = [f"{base}.{alias.name}" for alias in node.names if f"{base}.{alias.name}" in modules]
            targets = submodules or [base]
        for target in targets:
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != own:
                found.add(target)
    return found


def test_no_import_cycles_lazy_imports_included() -> None:
    paths = {_module_name(path): path for path in SOURCE.rglob("*.py")}
    graph = {name: _runtime_imports(path, set(paths)) for name, path in paths.items()}
    # Tarjan's strongly connected components: a component of more than one module is a cycle.
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        on_stack.add(module)
        for imported in graph[module]:
            if imported not in index:
                visit(imported)
                low[module] = min(low[module], low[imported])
            elif imported in on_stack:
                low[module] = min(low[module], index[imported])
        if low[module] == index[module]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == module:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for module in graph:
        if module not in index:
            visit(module)
    # The top package's __init__ imports what it re-exports (and its modules
    # may read `agentsim.__version__`): a cycle through it alone is none.
    cycles = [cycle for cycle in cycles if _cycle_without_root(graph, cycle)]
    assert cycles == [], cycles


def _cycle_without_root(graph: dict[str, set[str]], cycle: list[str]) -> bool:
    """Whether ``cycle`` is still a cycle once the top package (whose
    ``__init__`` imports everything it re-exports) is left out."""
    members = [module for module in cycle if module != "agentsim"]
    reach = {module: graph[module] & set(members) for module in members}
    for start in members:
        seen, todo = set(), list(reach[start])
        while todo:
            module = todo.pop()
            if module == start:
                return True
            if module not in seen:
                seen.add(module)
                todo.extend(reach[module])
    return False


def test_small_modules_functions_and_classes() -> None:
    """No source file over 800 lines, no function over 100, no class over 40
    methods (except the event loop, which implements asyncio's API)."""
    too_big = []
    for path in sorted(SOURCE.rglob("*.py")):
        text = path.read_text()
        if text.count("\n") > 800:
            too_big.append(f"{path.relative_to(SOURCE)}: {text.count(chr(10))} lines")
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and (node.end_lineno or 0) - node.lineno + 1 > 100:
                too_big.append(f"{path.relative_to(SOURCE)}: {node.name}() {(node.end_lineno or 0) - node.lineno + 1} lines")
            if isinstance(node, ast.ClassDef) and not any(ast.unparse(base).endswith("BaseEventLoop") for base in node.bases):
                methods = [item for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
                if len(methods) > 40:
                    too_big.append(f"{path.relative_to(SOURCE)}: class {node.name} has {len(methods)} methods")
    assert too_big == []
