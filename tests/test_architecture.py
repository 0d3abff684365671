"""The package's shape stays easy to see: imports run one way, and modules stay small enough to read.

- The import graph of mockbroker/ (mockbroker.protocol included) has no circles. Every import counts:
  top-level, function-level, and those under `if TYPE_CHECKING:` (a type-only circle is still two modules
  that cannot be understood one without the other). Read from the source with ast, nothing imported.
- No hand-written module is over MAX_LINES lines (generated ones, marked "# GENERATED", are exempt).
"""

from __future__ import annotations

import ast
import os
import re
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "mockbroker"
MAX_LINES = 600

# No circle and no long module is known: every import in mockbroker/ runs one way, and every hand-written
# module is under the limit. Keep these empty.
KNOWN_CIRCLES: list[frozenset[str]] = []
KNOWN_LONG_MODULES: set[str] = set()


def _modules() -> dict[str, Path]:
    """Module name -> file, for every .py file of the package (mockbroker.protocol included), and
    every extension module by its stub (a .pyi without a .py twin, as mockbroker/protocol/records/_walk.pyi of _walk.c)."""
    out: dict[str, Path] = {}
    paths = [Path(d, f) for d, _, files in os.walk(PACKAGE) for f in files
             if f.endswith(".py") or (f.endswith(".pyi") and f[:-1] not in files)]
    for path in sorted(paths):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(["mockbroker", *parts])] = path
    return out


def _imported_names(module: str, path: Path, tree: ast.Module) -> Iterator[str]:
    """Every module name an import statement of the file names, relative imports resolved."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".")
                base_parts = base_parts[: len(base_parts) - (node.level - 1)]
                base = ".".join(base_parts + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            for alias in node.names:
                yield f"{base}.{alias.name}"  # a module (`from package import module`) or a name in base


def import_graph() -> dict[str, set[str]]:
    """module -> the package's modules it imports (a name that is not a module counts as its module)."""
    modules = _modules()
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for name in _imported_names(module, path, tree):
            target = name
            while target and target not in modules:
                target = target.rpartition(".")[0]
            if target and target != module:
                graph[module].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[frozenset[str]] = []
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
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def test_the_graph_sees_every_kind_of_import() -> None:
    graph = import_graph()
    assert "mockbroker.dispatch" in graph["mockbroker.connection"]  # `from mockbroker import dispatch`
    assert "mockbroker.server" in graph["mockbroker"]  # under TYPE_CHECKING
    assert "mockbroker.protocol.primitives" in graph["mockbroker.protocol.messages"]  # relative
    assert "mockbroker.handlers" in graph["mockbroker.dispatch"]  # inside a function
    assert "mockbroker.protocol.records._walk" in graph["mockbroker.protocol.records.record"]  # an extension


def test_the_circle_finder_finds_circles() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e"}}
    assert circles(graph) == [frozenset({"a", "b", "c"})]


def test_the_import_graph_has_no_circles() -> None:
    found = [sorted(c) for c in circles(import_graph()) if c not in KNOWN_CIRCLES]
    assert found == [], "modules that import each other (directly or round about): " + repr(found)


def test_no_hand_written_module_is_over_the_line_limit() -> None:
    long = []
    for module, path in _modules().items():
        text = path.read_text()
        if text.startswith("# GENERATED"):
            continue
        lines = text.count("\n")
        if lines > MAX_LINES and module not in KNOWN_LONG_MODULES:
            long.append(f"{module}: {lines} lines")
    assert long == [], f"modules over {MAX_LINES} lines (split them by idea): {long}"


def test_the_protocol_package_imports_nothing_of_the_broker() -> None:
    graph = import_graph()
    outside = {f"{m} -> {t}" for m, targets in graph.items() if m.startswith("mockbroker.protocol")
               for t in targets if not t.startswith("mockbroker.protocol")}
    assert outside == set()


def _handler_modules() -> set[str]:
    """The modules that register an API (a function decorated with @handler(...), mockbroker/dispatch.py)."""
    out = set()
    for module, path in _modules().items():
        if not path.name.endswith(".py"):
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.FunctionDef) and any(
                    isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id == "handler"
                    for d in node.decorator_list):
                out.add(module)
    return out


def test_no_handler_imports_another_handler_or_the_connection() -> None:
    graph = import_graph()
    handlers = _handler_modules()
    assert len(handlers) > 40  # every API module is found
    wrong = {f"{m} -> {t}" for m in handlers for t in graph[m]
             if t in handlers or t == "mockbroker.connection"}
    wrong |= {f"mockbroker.connection -> {t}" for t in graph["mockbroker.connection"] if t in handlers}
    assert wrong == set(), "shared helpers go to mockbroker/handlers/support/, RequestContext comes from context.py"


def test_no_code_imports_a_top_level_protocol_module() -> None:
    """The codec is installed only as mockbroker.protocol (its folder is mockbroker/protocol/): an
    `import protocol` anywhere in the repository would work nowhere but in a stale checkout."""
    repo = PACKAGE.parent
    found = []
    for folder in ("mockbroker", "tests", "tools", "benchmarks", "examples", "docker"):
        for path in sorted((repo / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else [])
                found += [f"{path.relative_to(repo)}:{node.lineno}: {n}" for n in names
                          if n == "protocol" or n.startswith("protocol.")]
    assert found == [], f"imports of a top-level 'protocol' (use mockbroker.protocol): {found}"


# -- the layer order of docs/architecture.md ------------------------------------------------------------

ARCHITECTURE = PACKAGE.parent / "docs" / "architecture.md"
# The one import that goes up, by design: dispatch.load_handlers imports the handlers package (and, with
# importlib, every module in it) so that each handler registers itself.
UPWARD_BY_DESIGN = {("mockbroker.dispatch", "mockbroker.handlers")}
_NAME = re.compile(r"(?:[\w]+/)*[\w]+(?:\.py|/)")


def layer_blocks(text: str) -> list[list[list[str]]]:
    """The fenced blocks of the architecture note's "## Layers" section: per block, its lines (top layer
    first), each the names that stand at the start of the line (`cli.py`, `http/`, `state/log/`)."""
    section = text.split("## Layers", 1)[1].split("\n## ", 1)[0]
    blocks = re.findall(r"```\n(.*?)```", section, flags=re.S)
    out = []
    for block in blocks:
        lines = []
        for line in block.splitlines():
            names = []
            for word in line.split():
                if not _NAME.fullmatch(word):
                    break
                names.append(word)
            if names:
                lines.append(names)
        out.append(lines)
    return out


def _matches(module: str, name: str) -> bool:
    """Whether a module stands under a layer name: `cli.py` is mockbroker.cli, `http/` is mockbroker.http
    and everything in it, `__init__.py` the package itself."""
    dotted = "mockbroker." + name.removesuffix("/").removesuffix(".py").replace("/", ".")
    if name == "__init__.py":
        return module == "mockbroker"
    if name.endswith("/__init__.py"):
        return module == dotted.removesuffix(".__init__")
    if name.endswith("/"):
        return module == dotted or module.startswith(dotted + ".")
    return module == dotted


def layer_of(modules: set[str], layers: list[list[str]]) -> dict[str, int]:
    """module -> the index of its line (0 = top); the most specific name wins where names nest."""
    out: dict[str, int] = {}
    for module in modules:
        best: tuple[int, int] | None = None  # (length of the name, line)
        for index, names in enumerate(layers):
            for name in names:
                if _matches(module, name) and (best is None or len(name) > best[0]):
                    best = (len(name), index)
        if best is not None:
            out[module] = best[1]
    return out


def layer_violations(graph: dict[str, set[str]], layers: list[list[str]],
                     allowed: AbstractSet[tuple[str, str]] = frozenset()) -> list[str]:
    """Every import of a module on a line from a module on a line above it (a lower layer reaching up)."""
    where = layer_of(set(graph), layers)
    wrong = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            if module in where and target in where and where[target] < where[module] \
                    and (module, target) not in allowed:
                wrong.append(f"{module} (line {where[module] + 1}) imports {target} (line {where[target] + 1})")
    return wrong


def test_the_architecture_note_has_the_layer_blocks() -> None:
    package_layers, state_layers = layer_blocks(ARCHITECTURE.read_text())
    assert ["cli.py" in names for names in package_layers].count(True) == 1
    assert package_layers[-1] == ["protocol/"] and len(package_layers) > 10
    assert all(name.startswith("state/") for names in state_layers for name in names)


def test_every_module_stands_on_a_layer() -> None:
    package_layers, state_layers = layer_blocks(ARCHITECTURE.read_text())
    modules = set(import_graph())
    assert set(layer_of(modules, package_layers)) == modules, "place new modules in docs/architecture.md"
    in_state = {m for m in modules if m.startswith("mockbroker.state.")}
    assert set(layer_of(in_state, state_layers)) == in_state


def test_each_layer_imports_only_from_those_below() -> None:
    package_layers, state_layers = layer_blocks(ARCHITECTURE.read_text())
    graph = import_graph()
    assert layer_violations(graph, package_layers, UPWARD_BY_DESIGN) == []
    state_graph = {m: {t for t in targets if t.startswith("mockbroker.state.")}
                   for m, targets in graph.items() if m.startswith("mockbroker.state.")}
    assert layer_violations(state_graph, state_layers) == []


def test_the_layer_check_finds_an_import_that_goes_up() -> None:
    """On a deliberately wrong graph: the model importing the server, a room of state/ importing one
    above it, and a folder's module importing its own folder (same line: allowed)."""
    package_layers, state_layers = layer_blocks(ARCHITECTURE.read_text())
    graph = {
        "mockbroker.server": {"mockbroker.state.log.partition_log", "mockbroker.connection"},
        "mockbroker.state.log.partition_log": {"mockbroker.server", "mockbroker.state.configs"},
        "mockbroker.handlers.k01_fetch": {"mockbroker.handlers.support.leader_hints", "mockbroker.connection"},
        "mockbroker.handlers.support.leader_hints": set(), "mockbroker.state.configs": set(),
        "mockbroker.connection": set(),
    }
    assert layer_violations(graph, package_layers) == [
        "mockbroker.handlers.k01_fetch (line 7) imports mockbroker.connection (line 5)",
        "mockbroker.state.log.partition_log (line 14) imports mockbroker.server (line 3)",
    ]
    rooms = {"mockbroker.state.log.cleaner": {"mockbroker.state.groups.offsets"},
             "mockbroker.state.groups.offsets": {"mockbroker.state.log.cleaner"}}
    assert layer_violations(rooms, state_layers) == [
        "mockbroker.state.log.cleaner (line 5) imports mockbroker.state.groups.offsets (line 3)"]
    assert layer_violations(import_graph(), package_layers) == [
        "mockbroker.dispatch (line 9) imports mockbroker.handlers (line 7)"]  # the one upward by design
