"""The layout shows the architecture: no import cycles between toy's modules, and no private
name (``_x``) imported from another module (make it public, or keep it where it is used).

Read from the source with ``ast`` (every import statement, at module level or inside a
function), not by importing."""
import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "toy"


def module_name(path):
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(mod, node, is_pkg):
    """The absolute module an ImportFrom/Import node names (None outside toy)."""
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name.split(".")[0] == "toy"]
    if node.level:
        base = mod.split(".") if is_pkg else mod.split(".")[:-1]
        base = base[:len(base) - node.level + 1]
        target = ".".join(base + ([node.module] if node.module else []))
    else:
        target = node.module or ""
    return [target] if target.split(".")[0] == "toy" else []


def imports():
    """{module: [(imported module, [names], line)]} over every toy source file."""
    mods = {module_name(p): p for p in PKG.rglob("*.py")}
    out = {}
    for mod, path in mods.items():
        tree = ast.parse(path.read_text())
        edges = []
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in resolve(mod, node, path.name == "__init__.py"):
                    names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
                    sub = [f"{target}.{n}" for n in names if f"{target}.{n}" in mods]   # "from . import rl"
                    edges += [(t, [], node.lineno) for t in sub]
                    if target in mods:
                        edges.append((target, [n for n in names if f"{target}.{n}" not in mods], node.lineno))
        out[mod] = edges
    return out


def cycles(graph):
    """Every elementary cycle found by depth-first search (as module lists)."""
    found, state = [], {}

    def visit(m, stack):
        state[m] = 1
        for t in graph.get(m, ()):
            if t == m or t.startswith(m + ".") and m.endswith("toy"):
                continue
            if state.get(t) == 1:
                found.append(stack[stack.index(t):] + [t])
            elif not state.get(t):
                visit(t, stack + [t])
        state[m] = 2
    for m in sorted(graph):
        if not state.get(m):
            visit(m, [m])
    return found


def test_no_import_cycles():
    imp = imports()
    # a package's __init__ importing its own submodules is how a package is assembled, not a cycle
    graph = {m: {t for t, _, _ in e if not (t.startswith(m + ".") and (PKG / "/".join(m.split(".")[1:]) / "__init__.py").exists()
                                            or (m == "toy" and t.startswith("toy.")))}
             for m, e in imp.items()}
    assert len(graph) > 20
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_no_private_names_imported_across_modules():
    bad = [f"{mod}:{line} imports {', '.join(p)} from {target}"
           for mod, edges in imports().items() for target, names, line in edges
           if target != mod and (p := [n for n in names if n.startswith("_") and not n.startswith("__")])]
    assert not bad, "private names imported across modules:\n" + "\n".join(bad)


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"toy.a": {"toy.b"}, "toy.b": {"toy.c"}, "toy.c": {"toy.a"}}) == [["toy.a", "toy.b", "toy.c", "toy.a"]]
    assert cycles({"toy.a": {"toy.b"}, "toy.b": set()}) == []


def test_no_module_is_over_600_lines():
    """One idea per module: a file past 600 lines holds several (split it by idea, as
    ``numsearch/game.py`` and ``exact.py``, ``tinylm/model.py`` and ``layers.py`` are)."""
    long = {str(p.relative_to(ROOT)): n for p in PKG.rglob("*.py") if (n := len(p.read_text().splitlines())) > 600}
    assert not long, f"modules over 600 lines: {long}"
