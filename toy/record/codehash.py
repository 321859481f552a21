"""The training code *as code*: what a recorded run's key hashes, so that a docstring, a comment, a
reformat or a function no run calls changes no key, and a changed token in an equation does.

``code_hash()`` starts from the functions a run goes through (``ROOTS``: ``train_rl_many``, the SFT
warm-up, the samplers, every reward term a notebook's reward is built from), follows every name
they use to the definitions of that name in the files they import (``code_files``), and hashes
each definition reached as its syntax tree: docstrings dropped, comments and layout gone with the
text, line numbers not kept. Following is by name and on purpose generous: ``x.update(...)``
reaches every top-level function or class named ``update``; a class is hashed whole (its methods
are reached through its instances). Module-level statements that are not definitions (a call
such as ``one_blas_thread()``) are always hashed. Two exceptions:

- the fields of the configs a run's spec carries (``SPEC_CONFIGS``) are not code but values: the
  spec holds each one, so a new field with a default changes no key (``toy.record.keys.normal``);
- names bound by ``import`` are followed to what they import (``as`` aliases included).
"""
import ast
import functools
import hashlib
from pathlib import Path

__all__ = ["TOY_ROOT", "code_files", "reachable", "names_in", "code_hash", "measure_hash", "ROOTS", "MEASURE_ROOTS",
           "SPEC_CONFIGS"]

TOY_ROOT = Path(__file__).resolve().parent.parent          # the toy package directory

# where a run starts: file (relative to toy/) → the names in it that a run calls ("*": every one)
ROOTS = {"tinylm/many.py": ("train_rl_many",),
         "tinylm/train.py": ("train_sft", "watching", "PoolSampler", "CurriculumSampler", "RLConfig", "SFTConfig"),
         "tinylm/rewards.py": "*",
         "tinylm/task.py": "*"}
# and a measurement of a trained policy (``toy.record.evidence.measured``): the evaluations' file too,
# reached from the measured function's own name (``evaluate``) or the names its source uses
MEASURE_ROOTS = {**ROOTS, "tinylm/evals.py": ()}
SPEC_CONFIGS = ("RLConfig", "SFTConfig", "ModelConfig")     # their fields are the spec's values


# ------------------------------------------------------------------------------------- files
def _imported_toy_files(path):
    """The toy source files that the module at ``path`` imports (relative or ``toy.`` imports)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = path.parent
                for _ in range(node.level - 1):
                    base = base.parent
                mod = node.module
            elif node.module and (node.module == "toy" or node.module.startswith("toy.")):
                base, mod = TOY_ROOT.parent, node.module
            else:
                continue
            base = base.joinpath(*mod.split(".")) if mod else base
            candidates = [base.with_suffix(".py"), base / "__init__.py"]
            candidates += [base / f"{a.name}.py" for a in node.names] + [base / a.name / "__init__.py" for a in node.names]
        elif isinstance(node, ast.Import):
            candidates = []
            for a in node.names:
                if a.name == "toy" or a.name.startswith("toy."):
                    base = TOY_ROOT.parent.joinpath(*a.name.split("."))
                    candidates += [base.with_suffix(".py"), base / "__init__.py"]
        else:
            continue
        found.update(c.resolve() for c in candidates if c.is_file())
    return found


def _package_inits(path):
    """``__init__.py`` of every package from ``toy`` down to ``path`` (importing runs them)."""
    inits, d = [], path.parent
    while TOY_ROOT in (d, *d.parents):
        inits.append((d / "__init__.py").resolve())
        d = d.parent
    return {p for p in inits if p.is_file()}


def code_files(*module_files):
    """Every toy source file that the ``module_files`` depend on: their imports, followed
    transitively, and the ``__init__`` files of the packages on the way (their own text: what
    they import in turn is not followed). The record's own code (``toy/record/``: keys, files, the
    ``measured`` decorator that ``evals`` wears) is bookkeeping and never followed. A package
    imported as a whole (``from .. import rl``) is followed into its modules."""
    todo = [Path(f).resolve() for f in module_files]
    seen, inits = set(), set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        deps, on_the_way = _imported_toy_files(f), _package_inits(f)
        deps = {g for g in deps if (TOY_ROOT / "record").resolve() not in g.parents}
        inits |= on_the_way | {g for g in deps if g.name == "__init__.py"}
        todo.extend(g for g in deps - seen if g.name != "__init__.py" or g not in on_the_way)
    return sorted(seen | inits)


# ------------------------------------------------------------------------------------- trees
def _strip(node, config=False):
    """``node`` without docstrings (and, in a spec config class, without its field declarations)."""
    for n in ast.walk(node):
        body = getattr(n, "body", None)
        if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
                    and isinstance(body[0].value.value, str):
                n.body = body[1:] or ([] if isinstance(n, ast.Module) else [ast.Pass()])
    if config:
        node.body = [s for s in node.body if not isinstance(s, ast.AnnAssign)] or [ast.Pass()]
    return node


def _names(node):
    """Every name ``node`` uses: plain names and attribute names."""
    out = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name):
            out.add(n.id)
        elif isinstance(n, ast.Attribute):
            out.add(n.attr)
    return out


def _bound(stmt):
    """The names a module-level statement defines (None: not a definition, always hashed)."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [stmt.name]
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    return None


@functools.lru_cache(maxsize=None)
def _definitions(files):
    """``(defs, always, aliases)`` of ``files``: name → [(file, dump)], the dumps of module-level
    statements that are not definitions (with the names they use), and import alias → name."""
    defs, always, aliases = {}, [], {}
    for f in files:
        rel = str(Path(f).relative_to(TOY_ROOT))
        tree = _strip(ast.parse(Path(f).read_text(encoding="utf-8")))
        for stmt in tree.body:
            if isinstance(stmt, ast.Pass):
                continue
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for a in stmt.names:
                    if a.asname:
                        aliases.setdefault(a.asname, set()).add(a.name.split(".")[-1])
                continue
            names = _bound(stmt)
            if isinstance(stmt, ast.ClassDef) and stmt.name in SPEC_CONFIGS:
                stmt = _strip(stmt, config=True)
            item = (rel, ast.dump(stmt, annotate_fields=False, include_attributes=False), frozenset(_names(stmt)))
            if names is None:
                always.append(item)
            for name in names or ():
                defs.setdefault(name, []).append(item)
    return defs, tuple(always), {k: frozenset(v) for k, v in aliases.items()}


def reachable(roots, files, names=()):
    """The definitions (``(file, dump)`` pairs, sorted) that ``roots`` (file → names or "*") and
    the other ``names`` reach through ``files``, with every module-level statement that is not a
    definition."""
    defs, always, aliases = _definitions(tuple(sorted(str(f) for f in files)))
    todo = set(names)
    for rel, names in roots.items():
        if names == "*":
            names = [n for n, items in defs.items() if any(r == rel for r, _, _ in items)]
        todo |= set(names)
    items, seen = set(always), set()
    for _, _, used in always:
        todo |= used
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        todo |= aliases.get(name, frozenset())
        for item in defs.get(name, ()):
            if item not in items:
                items.add(item)
                todo |= item[2]
    return sorted((rel, dump) for rel, dump, _ in items)


def names_in(source):
    """The names a piece of Python source uses (a notebook's reward or measured function)."""
    return frozenset(_names(ast.parse(source))) if source else frozenset()


@functools.lru_cache(maxsize=None)
def _hash(roots, names):
    roots = dict(roots)
    files = code_files(*(TOY_ROOT / rel for rel in roots))
    h = hashlib.sha256()
    for rel, dump in reachable(roots, files, names):
        h.update(rel.encode() + b"\0" + dump.encode() + b"\0")
    return h.hexdigest()[:16]


def code_hash(names=frozenset()):
    """sha256 (16 hex digits) of the training code a run can reach, as code, from ``ROOTS`` and
    the other ``names`` it uses (those of a notebook's reward function: ``names_in``): the part of
    a recorded or cached run's key that changes when the code that computes it does."""
    return _hash(tuple((k, v if v == "*" else tuple(v)) for k, v in sorted(ROOTS.items())), frozenset(names))


def measure_hash(names=frozenset()):
    """The same for a measurement of a trained policy: the training code and the evaluations."""
    return _hash(tuple((k, v if v == "*" else tuple(v)) for k, v in sorted(MEASURE_ROOTS.items())), frozenset(names))
