"""book/toy_to_real.md against the real code, and the page's prose against its checked facts.

1. Every row of the page's "Checked facts" table is checked against the source of the release it
   names. The answers the checks need (a field's line and default, a statement at its lines, a call
   graph's verdict...) are kept in tests/real_code/extract.json, extracted from the released wheels
   by this file itself (`python tests/test_real_code.py --vendor`); the checks read only that file,
   so they need no network. When the wheels can be had (cached in _build/real-code-wheels or
   $REAL_CODE_WHEELS, else `pip download --no-deps`), test_extract_matches_the_wheel recomputes
   every answer from the wheel and fails on any difference, or on an answer no check uses.
   Kinds of row:
   - field: a config dataclass attribute at that line with that default;
   - yaml: a dotted key at that line with that value;
   - code: the *whole* statements on exactly those lines (compared as syntax trees, so no fragment
     passes), inside that function; and every later statement of the same block that rebinds a
     name they assign must be cited too (a normaliser's rescaling on the next line cannot be left
     out);
   - branch: the condition of the `if`/`elif` on that line (which settings share a branch);
   - param: a function parameter's default; kwarg: a keyword argument of a call on those lines;
     def: a function's signature; registered: a function registered under that key;
   - text: words inside a string or a comment on those lines (messages, help texts);
   - absent: no module defines that name.
   A trl or verl row on the trainer's path must sit in a function reachable from the trainer's
   loss path (GRPOTrainer.compute_loss / _prepare_inputs / __init__ / training_step, or verl's
   ppo_loss and advantage computation, with its registries), by an ast call graph of the wheel.
2. The prose: every number, every version and every `literal` (None, True, "group", ...) stated
   next to a citation [T6] must be in the cited row; a number stated without one must be in
   NOT_LIBRARY below, with the reason (the toy's own numbers are computed from toy/).
3. A newer release of trl or verl on the package index is reported as a warning naming it (not a
   failure; silent when the index cannot be reached in a few seconds).
"""
import ast
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import tokenize
import urllib.request
import warnings
import zipfile
from functools import lru_cache
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "book" / "toy_to_real.md"
EXTRACT = ROOT / "tests" / "real_code" / "extract.json"
CACHE = Path(os.environ.get("REAL_CODE_WHEELS", ROOT / "_build" / "real-code-wheels"))
HEADER = ["id", "package", "file:line", "kind", "name", "value"]
KINDS = ("field", "yaml", "code", "branch", "param", "kwarg", "def", "registered", "text", "absent")
TABLE_HEADING = "\n## Checked facts"


# ============================================================================ the page
def _value(cell):
    """A cell's value: its code span, or its code spans joined by newlines (one statement each)."""
    cell = cell.strip()
    spans = re.findall(r"`([^`]*)`", cell)
    rest = re.sub(r"`[^`]*`", "", cell).strip(" ↵;")
    return "\n".join(spans) if spans and not rest else cell


def _split_row(line):
    """The cells of a table row, not splitting at a | inside a code span."""
    cells, cur, code = [], "", False
    for ch in line.strip().strip("|"):
        if ch == "`":
            code = not code
        if ch == "|" and not code:
            cells.append(cur)
            cur = ""
        else:
            cur += ch
    return cells + [cur]


def facts():
    rows, inside = [], False
    for line in PAGE.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            inside = False
            continue
        cells = [_value(c) for c in _split_row(line)]
        if cells == HEADER:
            inside = True
        elif inside and not set("".join(cells)) <= set("-: "):
            assert len(cells) == len(HEADER), f"a checked-facts row must have {len(HEADER)} cells: {line}"
            rows.append(dict(zip(HEADER, cells)))
    return rows


FACTS = facts()
BY_ID = {f["id"]: f for f in FACTS}


def _where(fact):
    path, _, lines = fact["file:line"].rpartition(":")
    a, _, b = lines.replace("–", "-").partition("-")
    return path, int(a), int(b or a)


def newest_checked():
    """{name: version}: the newest release of each library the table checks."""
    from packaging.version import Version
    out = {}
    for f in FACTS:
        name, version = f["package"].split()
        if name not in out or Version(version) > Version(out[name]):
            out[name] = version
    return out


# ============================================================================ the sources
class WheelSource:
    """Answers from a wheel's files (zip), computed with ast / yaml / tokenize."""

    def __init__(self, whl):
        self.zip = zipfile.ZipFile(whl)
        self.names = set(self.zip.namelist())

    @lru_cache(maxsize=None)
    def text(self, path):
        if path not in self.names:
            return None
        return self.zip.read(path).decode("utf-8", "replace")

    @lru_cache(maxsize=None)
    def tree(self, path):
        return ast.parse(self.text(path))

    def answer(self, key):
        kind, *args = key
        return getattr(self, "q_" + kind)(*args)

    # --------------------------------------------------------------- simple look-ups
    def q_exists(self, path):
        return path in self.names

    def q_field(self, path, cls, attr):
        for node in ast.walk(self.tree(path)):
            if isinstance(node, ast.ClassDef) and node.name == cls:
                for s in node.body:
                    if isinstance(s, ast.AnnAssign) and getattr(s.target, "id", None) == attr:
                        v = s.value
                        if isinstance(v, ast.Call) and getattr(v.func, "id", None) == "field":
                            v = next((k.value for k in v.keywords if k.arg == "default"), None)
                        return {"line": s.lineno, "default": None if v is None else ast.unparse(v)}
        return None

    def q_yaml(self, path, dotted):
        node = yaml.compose(self.text(path))
        for key in dotted.split("."):
            pairs = [(k, v) for k, v in node.value if k.value == key] if isinstance(node, yaml.MappingNode) else []
            if not pairs:
                return None
            k, node = pairs[0]
        return {"line": k.start_mark.line + 1, "value": yaml.safe_load(yaml.serialize(node))}

    def q_absent(self, name):
        pat = re.compile(rf"^\s*(class|def)\s+{re.escape(name)}\b", re.M)
        return sorted(p for p in self.names if p.endswith(".py") and pat.search(self.text(p)))

    # --------------------------------------------------------------- functions
    def _defs(self, path):
        """{qualname: node} of every def and class, nested ones too."""
        out = {}

        def visit(node, prefix):
            for child in ast.iter_child_nodes(node):
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    out[prefix + child.name] = child
                    visit(child, prefix + child.name + ".")
                elif not isinstance(child, ast.expr):
                    visit(child, prefix)

        visit(self.tree(path), "")
        return out

    def q_enclosing(self, path, a, b):
        return sorted(q for q, n in self._defs(path).items() if n.lineno <= a and b <= n.end_lineno)

    def q_def(self, path, func):
        node = self._defs(path).get(func)
        if isinstance(node, ast.ClassDef):
            return {"line": node.lineno, "bases": [ast.unparse(b) for b in node.bases]}
        return None if node is None else {"line": node.lineno, "args": ast.unparse(node.args)}

    def q_branch(self, path, line):
        return [ast.unparse(n.test) for n in ast.walk(self.tree(path)) if isinstance(n, ast.If) and n.lineno == line]

    def q_param(self, path, func, param):
        node = self._defs(path).get(func)
        if node is None:
            return None
        args = node.args
        pos = args.posonlyargs + args.args
        pairs = list(zip(pos[len(pos) - len(args.defaults):], args.defaults))
        pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
        for a, d in pairs:
            if a.arg == param:
                return {"line": a.lineno, "default": ast.unparse(d)}
        return None

    def q_registered(self, path, func):
        node = self._defs(path).get(func)
        if node is None:
            return None
        out = []
        for d in node.decorator_list:
            if isinstance(d, ast.Call) and len(d.args) == 1:
                arg, key = d.args[0], None
                if isinstance(arg, ast.Constant):
                    key = arg.value
                elif isinstance(arg, ast.Attribute) and isinstance(arg.value, ast.Name):
                    enum = self._defs(path).get(arg.value.id)
                    for s in getattr(enum, "body", []):
                        if (isinstance(s, ast.Assign) and getattr(s.targets[0], "id", None) == arg.attr
                                and isinstance(s.value, ast.Constant)):
                            key = s.value.value
                out.append({"line": d.lineno, "registry": ast.unparse(d.func), "key": key})
        return out

    def q_kwarg(self, path, a, b, callee):
        """The keyword arguments (key=value) on lines a..b of the calls to ``callee``; for callee
        "dict", the string-keyed entries of the dict literals on those lines."""
        out = []
        for node in ast.walk(self.tree(path)):
            if callee == "dict" and isinstance(node, ast.Dict):
                out += [f"{k.value}={ast.unparse(v)}" for k, v in zip(node.keys, node.values)
                        if isinstance(k, ast.Constant) and isinstance(k.value, str)
                        and a <= v.lineno and v.end_lineno <= b]
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if name == callee:
                    out += [f"{k.arg}={ast.unparse(k.value)}" for k in node.keywords
                            if k.arg and a <= k.value.lineno and k.value.end_lineno <= b]
        return out

    def q_text(self, path, a, b):
        """The strings and comments on lines a..b."""
        strings = [n.value for n in ast.walk(self.tree(path))
                   if isinstance(n, ast.Constant) and isinstance(n.value, str)
                   and n.lineno <= b and a <= n.end_lineno]
        comments = [t.string for t in tokenize.generate_tokens(io.StringIO(self.text(path)).readline)
                    if t.type == tokenize.COMMENT and a <= t.start[0] <= b]
        return {"strings": strings, "comments": comments}

    # --------------------------------------------------------------- statements
    @staticmethod
    def _blocks(tree):
        for node in ast.walk(tree):
            for field in ("body", "orelse", "finalbody", "handlers"):
                block = getattr(node, field, None)
                if isinstance(block, list) and block and isinstance(block[0], (ast.stmt, ast.excepthandler)):
                    yield block

    @staticmethod
    def _assigned(stmt):
        out = set()
        for n in ast.walk(stmt):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(
                n, (ast.AugAssign, ast.AnnAssign)) else []
            for t in targets:
                for e in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    out.add(ast.unparse(e))
        return out

    def q_stmts(self, path, a, b):
        """The statements exactly on lines a..b (one run of one block, the innermost), and the later
        statements of that block that rebind a name they assign."""
        best = None
        for block in self._blocks(self.tree(path)):
            for i, s in enumerate(block):
                if s.lineno != a:
                    continue
                for j in range(i, len(block)):
                    if block[j].end_lineno == b:
                        if best is None or best[1][best[2]].col_offset < s.col_offset:
                            best = (block, block, i, j)
                        break
                    if block[j].end_lineno > b:
                        break
        if best is None:
            return {"code": None, "rebinds": []}
        _, block, i, j = best
        run = block[i:j + 1]
        names = set().union(*(self._assigned(s) for s in run))
        rebinds = [[t.lineno, t.end_lineno] for t in block[j + 1:] if self._assigned(t) & names]
        return {"code": [ast.unparse(s) for s in run], "rebinds": rebinds}

    # --------------------------------------------------------------- the call graph
    @lru_cache(maxsize=None)
    def graph(self, root):
        """Functions (path::qualname, methods as Class.name, nested defs inside their function) and
        the functions each one references: names and attributes resolved through the module's own
        defs, its imports (followed through re-exports) and self/cls to the class and its bases."""
        modules = {p: None for p in self.names if p.startswith(root + "/") and p.endswith(".py")}

        def modpath(dotted):
            base = dotted.replace(".", "/")
            for cand in (base + ".py", base + "/__init__.py"):
                if cand in self.names:
                    return cand
            return None

        def package_of(path):
            parts = path[:-3].split("/")
            return parts[:-1] if parts[-1] != "__init__" else parts[:-1]

        info = {}
        for path in modules:
            try:
                tree = self.tree(path)
            except SyntaxError:
                continue
            imports, tops, classes = {}, {}, {}
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    tops[node.name] = node
                elif isinstance(node, ast.ClassDef):
                    classes[node.name] = node
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        pkg = package_of(path) if not path.endswith("__init__.py") else path[:-12].split("/")
                        pkg = pkg[:len(pkg) - (node.level - 1)] if node.level > 1 else pkg
                        mod = ".".join(pkg + ([node.module] if node.module else []))
                    else:
                        mod = node.module or ""
                    for al in node.names:
                        sub = modpath(mod + "." + al.name)
                        imports[al.asname or al.name] = ("module", sub) if sub else ("from", mod, al.name)
                elif isinstance(node, ast.Import):
                    for al in node.names:
                        p = modpath(al.name)
                        if p:
                            imports[al.asname or al.name.split(".")[0]] = ("module", p)
            info[path] = (imports, tops, classes)

        def resolve(path, name, depth=0):
            """A def (path, qualname) or class for ``name`` in module ``path``."""
            if path not in info or depth > 6:
                return None
            imports, tops, classes = info[path]
            if name in tops:
                return ("def", path, name)
            if name in classes:
                return ("class", path, name)
            if name in imports:
                imp = imports[name]
                if imp[0] == "module":
                    return ("module", imp[1])
                target = modpath(imp[1])
                return resolve(target, imp[2], depth + 1) if target else None
            return None

        def methods(path, cls, seen=()):
            """{method name: qualname} of a class and its bases in the index."""
            if (path, cls) in seen or path not in info or cls not in info[path][2]:
                return {}
            node, out = info[path][2][cls], {}
            for base in node.bases:
                r = resolve(path, base.id) if isinstance(base, ast.Name) else None
                if r and r[0] == "class":
                    out.update(methods(r[1], r[2], seen + ((path, cls),)))
            for s in node.body:
                if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    out[s.name] = (path, f"{cls}.{s.name}")
            return out

        nodes, edges = {}, {}
        for path, (imports, tops, classes) in info.items():
            for name, node in tops.items():
                nodes[f"{path}::{name}"] = (path, None, node)
            for cname, cnode in classes.items():
                nodes[f"{path}::{cname}"] = (path, cname, cnode)
                for s in cnode.body:
                    if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        nodes[f"{path}::{cname}.{s.name}"] = (path, cname, s)

        def targets_of(r):
            if r is None:
                return []
            if r[0] == "def":
                return [f"{r[1]}::{r[2]}"]
            if r[0] == "class":
                return [f"{r[1]}::{r[2]}"]
            return []

        for key, (path, cls, fn) in nodes.items():
            out = set()
            own = methods(path, cls) if cls else {}
            if isinstance(fn, ast.ClassDef):      # a class reaches its methods (and its bases' in the index)
                edges[key] = {"{}::{}".format(*v) for v in own.values()}
                for b in fn.bases:
                    r = resolve(path, b.id) if isinstance(b, ast.Name) else None
                    edges[key].update(targets_of(r))
                continue
            for n in ast.walk(fn):
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                    out.update(targets_of(resolve(path, n.id)))
                elif isinstance(n, ast.Attribute):
                    base = n.value
                    if isinstance(base, ast.Name) and base.id in ("self", "cls") and n.attr in own:
                        out.add("{}::{}".format(*own[n.attr]))
                    elif isinstance(base, ast.Call) and getattr(base.func, "id", None) == "super" and n.attr in own:
                        out.add("{}::{}".format(*own[n.attr]))
                    elif isinstance(base, ast.Name):
                        r = resolve(path, base.id)
                        if r and r[0] == "module":
                            out.update(targets_of(resolve(r[1], n.attr)))
                        elif r and r[0] == "class":
                            m = methods(r[1], r[2])
                            if n.attr in m:
                                out.add("{}::{}".format(*m[n.attr]))
                            elif n.attr == "apply":          # torch.autograd.Function.apply
                                out.update("{}::{}".format(*m[k]) for k in ("forward", "backward") if k in m)
            edges[key] = out
        # registries: get_X_fn(name) returns any function decorated with register_X(...)
        for key, (path, cls, fn) in nodes.items():
            for d in fn.decorator_list:
                if isinstance(d, ast.Call) and isinstance(d.func, ast.Name) and d.func.id in REGISTRIES:
                    getter = f"{path}::{REGISTRIES[d.func.id]}"
                    if getter in edges:
                        edges[getter].add(key)
        return {k: sorted(v) for k, v in edges.items()}

    def q_reachable(self, root, entries, target):
        """Is target (path::qualname; a nested def counts as its function) reachable from entries?"""
        edges = self.graph(root)
        path, _, qual = target.partition("::")
        parts = qual.split(".")
        candidates = {f"{path}::{'.'.join(parts[:k])}" for k in range(1, len(parts) + 1)}
        seen, todo = set(), [e for e in entries if e in edges]
        while todo:
            k = todo.pop()
            if k in seen:
                continue
            seen.add(k)
            todo.extend(edges.get(k, ()))
        present = [e for e in entries if e in edges]
        return {"reachable": bool(seen & candidates), "entries_present": len(present)}


# verl's registries: a function registered with the decorator is returned by the getter.
REGISTRIES = {"register_policy_loss": "get_policy_loss_fn", "register_adv_est": "get_adv_estimator_fn"}


class Replay:
    """Answers from tests/real_code/extract.json; notes which were asked."""

    def __init__(self, data):
        self.data, self.used = data, set()

    def answer(self, package, key):
        k = json.dumps(key)
        got = self.data.get(package, {})
        if k not in got:
            pytest.fail(f"{package} {k} is not in {EXTRACT.relative_to(ROOT)}: run "
                        f"`python tests/test_real_code.py --vendor` with the wheels at hand")
        self.used.add((package, k))
        return got[k]


class Recorder:
    def __init__(self, sources):
        self.sources, self.data = sources, {}

    def answer(self, package, key):
        got = self.sources[package].answer(key)
        self.data.setdefault(package, {})[json.dumps(key)] = got
        return got


def _load_extract():
    return json.loads(EXTRACT.read_text(encoding="utf-8")) if EXTRACT.exists() else {}


SOURCE = Replay(_load_extract())


def ask(package, *key):
    return SOURCE.answer(package, list(key))


# ============================================================================ the checks
def _same(got, want):
    """Equal as values; numbers compare as floats (YAML reads 1e-6 as a string, 1.0e-06 as a float)."""
    num = lambda x: isinstance(x, (int, float, str)) and not isinstance(x, bool)
    if num(got) and num(want):
        try:
            return float(got) == float(want)
        except ValueError:
            pass
    return got == want


def _literal(text):
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return yaml.safe_load(text)


def _norm(code):
    """Statements, formatted by ast.unparse (formatting and comments do not count)."""
    return [ast.unparse(s) for s in ast.parse(code).body]


# The trainer's loss path: the functions from which a cited function must be reachable.
ENTRIES = {
    "trl": {
        "GRPOTrainer": ["trl/trainer/grpo_trainer.py::GRPOTrainer." + m
                        for m in ("__init__", "training_step", "compute_loss", "_prepare_inputs")]
        + ["trl/trainer/grpo_config.py::GRPOConfig.__post_init__"],
        "RLOOTrainer": ["trl/trainer/rloo_trainer.py::RLOOTrainer." + m
                        for m in ("__init__", "training_step", "compute_loss", "_prepare_inputs")],
    },
    "verl": {
        "verl-ppo": ["verl/trainer/ppo/v1/trainer_base.py::PPOTrainer", "verl/workers/utils/losses.py::ppo_loss",
                     "verl/trainer/ppo/v1/utils.py::compute_advantage_for_multi_trajectories",
                     "verl/trainer/ppo/ray_trainer.py::apply_kl_penalty"],
    },
}
# Files whose cited functions are checked for reachability, and from which entries.
REACH = {
    "trl/trainer/grpo_trainer.py": "GRPOTrainer", "trl/trainer/utils.py": "GRPOTrainer",
    "trl/kernels/chunked_logprob.py": "GRPOTrainer", "trl/trainer/callbacks.py": "GRPOTrainer",
    "trl/trainer/rloo_trainer.py": "RLOOTrainer",
    "verl/trainer/ppo/core_algos.py": "verl-ppo", "verl/utils/torch_functional.py": "verl-ppo",
    "verl/workers/utils/losses.py": "verl-ppo",
}


def check_reachable(f, path, qualname):
    entry = REACH.get(path)
    if entry is None or not qualname:
        return
    name = f["package"].split()[0]
    got = ask(f["package"], "reachable", name, ENTRIES[name][entry], f"{path}::{qualname}")
    assert got["entries_present"], f"{f['id']}: none of the entry points {ENTRIES[name][entry]} is in {f['package']}"
    assert got["reachable"], (f"{f['id']}: {qualname} ({path}) is never reached from {entry}'s loss path in "
                              f"{f['package']}: the page cites code the trainer does not run")


def check_enclosing(f, path, a, b):
    if f["name"] in ("", "-"):
        return
    names = ask(f["package"], "enclosing", path, a, b)
    assert f["name"] in names, f"{f['id']}: {path}:{a}-{b} is in {names} in {f['package']}, not in {f['name']}"
    check_reachable(f, path, f["name"])


def check_field(f):
    path, line, _ = _where(f)
    cls, attr = f["name"].split(".")
    got = ask(f["package"], "field", path, cls, attr)
    assert got is not None, f"{f['id']}: {cls} has no field {attr} in {path} of {f['package']}"
    assert got["line"] == line, f"{f['id']}: {cls}.{attr} is at {path}:{got['line']} in {f['package']}, the page says {line}"
    assert _same(_literal(got["default"]), _literal(f["value"])), (
        f"{f['id']}: {cls}.{attr} defaults to {got['default']} in {f['package']}, the page says {f['value']}")


def check_yaml(f):
    path, line, _ = _where(f)
    got = ask(f["package"], "yaml", path, f["name"])
    assert got is not None, f"{f['id']}: {f['name']} is not in {path} of {f['package']}"
    assert got["line"] == line, f"{f['id']}: {f['name']} is at {path}:{got['line']} in {f['package']}, the page says {line}"
    assert _same(got["value"], yaml.safe_load(f["value"])), (
        f"{f['id']}: {f['name']} is {got['value']!r} in {f['package']}, the page says {f['value']}")


def _code_rows():
    return [(f["package"], *_where(f)) for f in FACTS if f["kind"] == "code"]


def check_code(f):
    path, a, b = _where(f)
    got = ask(f["package"], "stmts", path, a, b)
    assert got["code"] is not None, (
        f"{f['id']}: {path}:{a}-{b} of {f['package']} is not a run of whole statements (a code row cites "
        f"whole statements, from the first line of the first to the last line of the last)")
    want = _norm(f["value"])
    assert got["code"] == want, (f"{f['id']}: {path}:{a}-{b} of {f['package']} reads\n  "
                                 + "\n  ".join(got["code"]) + "\nthe page says\n  " + "\n  ".join(want))
    cited = [(x, y) for p, q, x, y in _code_rows() if p == f["package"] and q == path]
    for la, lb in got["rebinds"]:
        assert any(x <= la and lb <= y for x, y in cited), (
            f"{f['id']}: {path}:{la}-{lb} of {f['package']} rebinds a name assigned on {a}-{b}; "
            f"no row cites it, so the row states only part of the expression")
    check_enclosing(f, path, a, b)


def check_branch(f):
    path, line, _ = _where(f)
    got = ask(f["package"], "branch", path, line)
    want = ast.unparse(ast.parse(f["value"], mode="eval").body)
    assert want in got, f"{f['id']}: the if/elif on {path}:{line} of {f['package']} tests {got}, the page says {want}"
    check_enclosing(f, path, line, line)


def check_param(f):
    path, line, _ = _where(f)
    func, _, param = f["name"].rpartition(".")
    got = ask(f["package"], "param", path, func, param)
    assert got is not None, f"{f['id']}: {func} has no parameter {param} with a default in {f['package']}"
    assert got["line"] == line, f"{f['id']}: {param} is at {path}:{got['line']}, the page says {line}"
    want = f["value"].partition("=")[2] if "=" in f["value"] else f["value"]
    assert _same(_literal(got["default"]), _literal(want)), f"{f['id']}: {f['name']} defaults to {got['default']}"
    check_reachable(f, path, func)


def check_kwarg(f):
    path, a, b = _where(f)
    callee, _, enclosing = f["name"].partition(" in ")
    call = ast.parse(f"f({f['value']})", mode="eval").body                   # key=value, ...
    want = [f"{k.arg}={ast.unparse(k.value)}" for k in call.keywords]
    got = ask(f["package"], "kwarg", path, a, b, callee)
    assert want and set(want) <= set(got), f"{f['id']}: the calls to {callee} on {path}:{a}-{b} pass {got}, not {want}"
    if enclosing:
        check_enclosing(dict(f, name=enclosing), path, a, b)


def check_def(f):
    path, line, _ = _where(f)
    got = ask(f["package"], "def", path, f["name"])
    assert got is not None and got["line"] == line, f"{f['id']}: {f['name']} is not defined at {path}:{line} ({got})"
    want = ast.parse(f["value"].rstrip(":") + ": pass").body[0]
    if isinstance(want, ast.ClassDef):
        assert got.get("bases") == [ast.unparse(b) for b in want.bases], f"{f['id']}: {f['name']}{got} in {f['package']}"
    else:
        assert got.get("args") == ast.unparse(want.args), f"{f['id']}: {f['name']}({got}) in {f['package']}"
    check_reachable(f, path, f["name"])


def check_registered(f):
    path, line, _ = _where(f)
    got = ask(f["package"], "registered", path, f["name"])
    assert got, f"{f['id']}: {f['name']} is not a registered function in {path} of {f['package']}"
    registry, _, key = f["value"].partition(":")
    hits = [d for d in got if d["registry"] == registry.strip() and d["key"] == key.strip()]
    assert hits, f"{f['id']}: {f['name']} is registered as {got}, the page says {f['value']}"
    assert hits[0]["line"] == line, f"{f['id']}: the decorator is at {path}:{hits[0]['line']}, the page says {line}"
    check_reachable(f, path, f["name"])


def check_text(f):
    path, a, b = _where(f)
    got = ask(f["package"], "text", path, a, b)
    squash = lambda s: re.sub(r"\s+", " ", s).strip()
    where = squash(" ".join(got["strings"])) + " || " + squash(" ".join(c.lstrip("# ") for c in got["comments"]))
    assert squash(f["value"]) in where, f"{f['id']}: `{f['value']}` is not in a string or comment on {path}:{a}-{b} of {f['package']}"
    check_enclosing(f, path, a, b)


def check_absent(f):
    where = ask(f["package"], "absent", f["name"])
    assert not where, f"{f['id']}: {f['name']} is defined in {where} of {f['package']}"


CHECKS = {"field": check_field, "yaml": check_yaml, "code": check_code, "branch": check_branch, "param": check_param,
          "kwarg": check_kwarg, "def": check_def, "registered": check_registered, "text": check_text,
          "absent": check_absent}


def test_the_page_has_a_checked_facts_table():
    assert len(FACTS) >= 20
    ids = [f["id"] for f in FACTS]
    assert len(ids) == len(set(ids)), "ids must be unique"
    for f in FACTS:
        assert f["kind"] in KINDS, f
        assert re.fullmatch(r"[a-z]+ \d+(\.\d+)+", f["package"]), f


@pytest.mark.parametrize("fact", FACTS, ids=[f["id"] for f in FACTS])
def test_fact(fact):
    path = fact["file:line"].rpartition(":")[0]
    if fact["kind"] != "absent":
        assert ask(fact["package"], "exists", path), f"{path} is not in the {fact['package']} wheel"
    CHECKS[fact["kind"]](fact)


# ============================================================================ the prose
def prose():
    text = PAGE.read_text(encoding="utf-8")
    assert TABLE_HEADING in text
    return text.split(TABLE_HEADING, 1)[0]


def units(text):
    """Table cells, list items and paragraphs: a citation binds only inside its unit."""
    out, para = [], []
    for line in text.splitlines() + [""]:
        s = line.strip()
        if s.startswith("|"):
            out.append(" ".join(para)), para.clear()
            out += _split_row(s)
        elif not s or s.startswith(("- ", "#")) or re.match(r"\(.*\)=$", s):
            out.append(" ".join(para)), para.clear()
            if s and not s.startswith("#") and not s.endswith(")="):
                para.append(s)
        else:
            para.append(s)
    return [u for u in out if u.strip()]


CITE = re.compile(r"\[[TV]\d+\](?:\s*,\s*\[[TV]\d+\])*")
NUMBER = re.compile(r"(?<![\w.\-/])(?:10\^\{(-?\d+)\}|(\d+(?:\.\d+)?(?:e-?\d+)?))(?![\w.]*\w)")
VERSION = re.compile(r"(?<![\w.])\d+\.\d+\.\d+(?![\w.]*\w)")
BOUNDARY = re.compile(r"[.;]\s")
MATH = re.compile(r"\$[^$]*\$")
LITERAL = re.compile(r"`(?:[\w.\[\]]+=)?(None|True|False|true|false|null|\"[^\"`]*\")`")


def _clean(text):
    text = re.sub(r"\]\([^)]*\)", "]", text)                 # link targets
    text = re.sub(r"\{cite\}`[^`]*`", "", text)               # citations of papers
    text = re.sub(r"§[IVX]+\.\d+", "§", text)                 # section numbers
    text = re.sub(r"\\(?:frac|tfrac)\{1\}\{2\}|\\tfrac12", "½", text)
    return text


def segments():
    """(text, [row ids]) for each stretch of prose that ends at a citation; ids [] at a unit's end."""
    out = []
    for unit in units(prose()):
        unit, last = _clean(unit), 0
        for m in CITE.finditer(unit):
            start = last
            for b in BOUNDARY.finditer(unit, last, m.start()):
                start = b.end()
            if start > last:
                out.append((unit[last:start], [], unit))
            out.append((unit[start:m.start()], re.findall(r"[TV]\d+", m.group()), unit))
            last = m.end()
        out.append((unit[last:], [], unit))
    return out


def _numbers(text, spans=False):
    text = VERSION.sub(lambda m: " " * len(m.group()), text)
    for m in NUMBER.finditer(text):
        value = float(f"1e{m.group(1)}") if m.group(1) else float(m.group(2))
        yield (value, m.group(0), m.start()) if spans else (value, m.group(0))


def _row_numbers(f):
    return {n for n, _ in _numbers(re.sub(r"[A-Za-z_]\w*", " ", f["value"] + " " + f["name"]))} | {
        n for n, _ in _numbers(f["value"])}


# Numbers the prose may state without a citation: the toy's own (checked in test_the_toy_numbers),
# maths and examples. {number: (a few words that must stand in the same cell/paragraph, why)}.
NOT_LIBRARY = [
    (0.28, "dapo_config", "the toy's DAPO clip-higher, checked in test_the_toy_numbers"),
    (0.2, "high_entropy_mask", "the toy's example quantile, the paper's 0.2"),
    (20, "top 20 %", "the same quantile in percent"),
    (4.0, "eps_high=4.0", "the toy's equivalent of TRL's cap 5.0: 1 + 4.0"),
    (5.0, "eps_high=4.0", "TRL's cap, stated again next to the toy's equivalent"),
    (1.73, "[1,0,0,0]", "toy.rl.grpo_advantages([1,0,0,0]), checked in test_the_toy_numbers"),
    (0.58, "[1,0,0,0]", "the same"),
    (1.5, "[1,0,0,0]", "grpo_advantages([1,0,0,0], ddof=1), checked in test_the_toy_numbers"),
    (0.5, "[1,0,0,0]", "the same"),
    (13.4, "G = 4", "1 - sqrt(3/4), checked in test_the_toy_numbers"),
    (6.5, "G = 8", "1 - sqrt(7/8), checked in test_the_toy_numbers"),
    (4, "G = 4", "the group size of the example"),
    (8, "G = 8", "the group size of the example"),
    (4, "learning rate 4", "§II.4's learning rate"),
    (1e-4, "to $10^{-3}$", "Part III's Adam learning rates"),
    (1e-3, "to $10^{-3}$", "Part III's Adam learning rates"),
    (1.0, "grad_clip", "Part III's grad_clip"),
    (2, "spg = 2", "the worked example of TRL's rescaling"),
    (2, "with 2 micro-batches", "an example"),
    (2, "k_2", "the square in k2's formula"),
    (3.1, "section 3.1", "a section of the DeepSeek-V3.2 paper"),
    (0.2, "5× smaller", "the CISPO trap: the cap 0.2 of [T18], [T44], checked in test_the_cispo_trap"),
    (5, "5× smaller", "1 / 0.2, checked in test_the_cispo_trap"),
    (5.0, "5× smaller", "the cap TRL's help text recommends, [T56]"),
]
TRIVIAL = {0.0, 1.0}


def test_every_cited_id_is_a_row_and_every_row_is_cited():
    cited = set(re.findall(r"\[([TV]\d+)\]", prose()))
    ids = set(BY_ID)
    assert not cited - ids, f"cited in the prose but not in the table: {sorted(cited - ids)}"
    assert not ids - cited, f"rows the prose never cites: {sorted(ids - cited)}"


def test_every_version_the_prose_names_is_a_checked_release():
    packages = {f["package"].split()[1] for f in FACTS}
    named = set(VERSION.findall(_clean(prose())))
    assert named <= packages, f"versions named in the prose that no row checks: {sorted(named - packages)}"
    for name, version in newest_checked().items():
        assert re.search(rf"(?i)\b{name} {re.escape(version)}\b", prose()), f"the page must say it checked {name} {version}"


def prose_problems():
    problems = []
    for text, ids, unit in segments():
        rows = [BY_ID[i] for i in ids if i in BY_ID]
        allowed = set().union(*(_row_numbers(f) for f in rows)) if rows else set()
        math_spans = [m.span() for m in MATH.finditer(text)]
        for value, shown, at in _numbers(text, spans=True):
            if value in (0.0, 1.0, 2.0) and any(x <= at < y for x, y in math_spans):
                continue                                   # a formula's structure, not a setting
            if rows and any(abs(value - x) <= 1e-12 * max(1, abs(x)) for x in allowed):
                continue
            if not rows and value in TRIVIAL:
                continue
            if any(v == value and ctx in unit for v, ctx, _ in NOT_LIBRARY):
                continue
            problems.append(f"{shown} in «…{text[-90:].strip()}» " + (
                f"is not in {ids}" if rows else "has no citation and is not in NOT_LIBRARY"))
        stated = text.rsplit("default", 1)[1] if "default" in text else ""
        for m in LITERAL.finditer(stated):               # the defaults the segment states
            lit = m.group(1)
            if not rows:
                problems.append(f"the default `{m.group(0)}` in «…{text[-90:].strip()}» has no citation")
                continue
            body = " ".join(f["value"] + " " + f["name"] for f in rows)
            want = [lit, lit.replace('"', "'")] if lit.startswith('"') else [lit]
            if not any(re.search(rf"(?<!\w){re.escape(w)}(?!\w)", body) for w in want):
                problems.append(f"`{m.group(0)}` in «…{text[-90:].strip()}» is not in {ids}")
    return problems


def test_every_number_and_literal_in_the_prose_is_tied_to_its_row():
    problems = prose_problems()
    assert not problems, "the prose states what its rows do not:\n" + "\n".join(problems)


def test_the_toy_numbers():
    """The numbers of the prose that are the toy's own, computed from toy/."""
    import numpy as np
    from toy.arith.train import dapo_config
    from toy.rl import grpo_advantages
    text = " ".join(prose().split())
    assert dapo_config().eps_high == 0.28
    pop = grpo_advantages(np.array([1.0, 0, 0, 0]))
    sample = grpo_advantages(np.array([1.0, 0, 0, 0]), ddof=1)
    assert f"[+{pop[0]:.2f}, {pop[1]:.2f}, {pop[1]:.2f}, {pop[1]:.2f}]" in text
    assert f"[+{sample[0]:.2f}, {sample[1]:.2f}, {sample[1]:.2f}, {sample[1]:.2f}]" in text
    for g in (4, 8):
        assert f"{100 * (1 - np.sqrt((g - 1) / g)):.1f} % " in text


def test_the_cispo_trap():
    """TRL's CISPO cap falls back to epsilon (0.2): the weight on policy is 0.2, 5× less than with 5.0
    (a weight, not Adam's step: §III.8 computes the step)."""
    eps = float(BY_ID_NAME("GRPOConfig.epsilon")["value"])
    assert round(min(1.0, 5.0) / min(1.0, eps)) == 5
    assert "5× smaller" in prose()


def BY_ID_NAME(name):
    (row,) = [f for f in FACTS if f["name"] == name and f["package"].startswith("trl 1")]
    return row


# ============================================================================ the wheels
def _index_url():
    return os.environ.get("PIP_INDEX_URL", "https://pypi.org/simple/").rstrip("/") + "/"


@lru_cache(maxsize=None)
def _probe_index(name, timeout=15):
    try:
        urllib.request.urlopen(_index_url() + name + "/", timeout=timeout).close()
        return None
    except OSError as e:
        return f"the package index {_index_url()} cannot be reached ({e})"


@lru_cache(maxsize=None)
def _download(package):
    """The cached wheel of ``"trl 1.16.0"``, downloaded once if missing; a string (why not) if it cannot be."""
    name, version = package.split()
    found = sorted(CACHE.glob(f"{name}-{version}-*.whl"))
    if found:
        return found[0]
    reason = _probe_index(name)
    if reason:
        return reason
    CACHE.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=CACHE) as tmp:
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:", "--quiet",
             "--disable-pip-version-check", "--retries", "2", "--timeout", "30",
             f"{name}=={version}", "-d", tmp],
            capture_output=True, text=True, timeout=600)
        if proc.returncode != 0:
            return f"pip download {name}=={version} failed: {proc.stderr[-500:]}"
        (whl,) = Path(tmp).glob("*.whl")
        target = CACHE / whl.name
        os.replace(whl, target)
    return target


def _run_all_checks():
    """Every row check and nothing else; failures are returned, not raised."""
    failures = []
    for f in FACTS:
        try:
            test_fact(f)
        except BaseException as e:  # pytest's fail is a BaseException
            failures.append(f"{f['id']}: {e}")
    return failures


@pytest.mark.parametrize("package", sorted({f["package"] for f in FACTS}))
def test_extract_matches_the_wheel(package):
    """Every answer kept in extract.json is what the wheel says today, and every one is used."""
    whl = _download(package)
    if isinstance(whl, str):
        pytest.skip(f"{whl}; the extract of {package} was not compared with its wheel")
    kept = _load_extract().get(package, {})
    src = WheelSource(whl)
    stale = [k for k, v in kept.items() if src.answer(json.loads(k)) != json.loads(json.dumps(v))]
    assert not stale, f"{package}: the wheel answers otherwise for {stale[:5]}: run `python tests/test_real_code.py --vendor`"
    replay = Replay(_load_extract())
    global SOURCE
    saved, SOURCE = SOURCE, replay
    try:
        _run_all_checks()
    finally:
        SOURCE = saved
    unused = sorted(set(kept) - {k for p, k in replay.used if p == package})
    assert not unused, f"{package}: answers no check asks for: {unused[:5]}: run `python tests/test_real_code.py --vendor`"


# ============================================================================ newer releases
def latest_release(name, timeout=5):
    """The newest final release of ``name`` on the index, or None if it cannot be asked."""
    from packaging.version import InvalidVersion, Version
    req = urllib.request.Request(_index_url() + name + "/",
                                 headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            body = r.read().decode("utf-8", "replace")
    except (OSError, ValueError):
        return None
    try:
        versions = json.loads(body).get("versions", [])
    except ValueError:
        versions = re.findall(rf"{re.escape(name)}-(\d[^-]*?)(?:-py|\.tar\.gz|\.zip)", body)
    good = []
    for v in versions:
        try:
            v = Version(v)
        except InvalidVersion:
            continue
        if not v.is_prerelease and not v.is_devrelease:
            good.append(v)
    return str(max(good)) if good else None


@pytest.mark.parametrize("name", ["trl", "verl"])
def test_no_newer_release(name):
    from packaging.version import Version
    checked = newest_checked()[name]
    latest = latest_release(name)
    if latest is not None and Version(latest) > Version(checked):
        warnings.warn(f"{name} {latest} is out; book/toy_to_real.md was checked against {name} {checked}: "
                      f"read its rows in {latest} and update the page", UserWarning)


# ============================================================================ vendoring
def vendor():
    """Write tests/real_code/extract.json from the wheels (downloaded if missing)."""
    global SOURCE
    sources = {}
    for package in sorted({f["package"] for f in FACTS}):
        whl = _download(package)
        if isinstance(whl, str):
            sys.exit(whl)
        sources[package] = WheelSource(whl)
    SOURCE = Recorder(sources)
    failures = _run_all_checks()
    EXTRACT.parent.mkdir(parents=True, exist_ok=True)
    EXTRACT.write_text(json.dumps(SOURCE.data, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {EXTRACT.relative_to(ROOT)}: {sum(map(len, SOURCE.data.values()))} answers")
    for f in failures:
        print("FAIL", f)


if __name__ == "__main__":
    if sys.argv[1:] == ["--vendor"]:
        vendor()
    else:
        sys.exit("usage: python tests/test_real_code.py --vendor")
