"""The engine of an nbgrader test cell (``instructor_kit/make_assignments.py`` writes the cells).

A test cell loads this file *from disk* (not through ``import toy``, which a notebook can patch)
and scores one exercise::

    _grade = _grading.Grade("ex-p2-s04-clip-cap", "clip_cap", points=2, answer=lambda: (clip_cap,))
    ### BEGIN HIDDEN TESTS
    _grade.hidden([...cases whose expected values make_assignments.py computed...], forbidden=[...])
    ### END HIDDEN TESTS
    _grade.score()

``Grade`` runs a private copy of ``toy.check``, loaded afresh from the installed files, on the
answer: the cases a student saw in the book. ``hidden`` adds cases whose arguments and expected
values are stored in the (instructor's) cell. ``score`` is the cell's last expression:
``passed / total × points`` over every case, a number that nbgrader takes as partial credit.

Nothing the notebook did can raise the score:

- the comparison uses the fresh copy and values stored in the cell, never the notebook's ``check``;
- it checks that ``toy.check``'s functions and numpy's are the originals (numpy against a fresh
  interpreter's), that the builtins and IPython's display and traceback machinery are untouched,
  and that the answer does not call the library's own implementation of the exercise;
  tampering scores 0 and says what was changed;
- warnings and stderr from the answer never reach the cell's output (nbgrader zeroes a test cell
  that writes to stderr).

Only numpy and the standard library are used here, so the file can be loaded on its own.
"""
import base64
import builtins
import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import types
import uuid
import warnings
import zlib
from pathlib import Path

import numpy as np

TOY = Path(__file__).resolve().parents[1] / "toy"   # the installed toy package, installed beside this kit
NUMPY_DIR = Path(np.__file__).resolve().parent
BUILTINS = ("abs", "all", "any", "callable", "float", "getattr", "hasattr", "int", "isinstance", "len",
            "list", "max", "min", "print", "range", "repr", "round", "sorted", "str", "sum", "type", "zip")


# ------------------------------------------------------------------ stored values
def array(data, shape=None, dtype="float64"):
    """An array stored in a cell: a nested list, or ``zlib+base64`` bytes of ``dtype`` in ``shape``."""
    if isinstance(data, str):
        return np.frombuffer(zlib.decompress(base64.b64decode(data)), dtype=dtype).reshape(shape).copy()
    return np.array(data, dtype=dtype)


def encode(value):
    """Python source that rebuilds ``value`` (a number, an array, or a tuple/list of them) with ``array``."""
    if isinstance(value, (tuple, list)) and not _numeric_list(value):
        inner = ", ".join(encode(v) for v in value)
        return f"({inner},)" if isinstance(value, tuple) else f"[{inner}]"
    if isinstance(value, (bool, np.bool_, str)) or value is None:
        return repr(value.item() if isinstance(value, np.generic) else value)
    a = np.asarray(value)
    if a.ndim == 0:
        return repr(a.item())
    dtype = "float64" if a.dtype.kind == "f" else "int64" if a.dtype.kind in "iu" else "bool"
    if a.size <= 64:
        return f"array({a.tolist()!r}, dtype={dtype!r})"
    blob = base64.b64encode(zlib.compress(np.ascontiguousarray(a, dtype=dtype).tobytes(), 9)).decode()
    return f"array({blob!r}, {a.shape!r}, {dtype!r})"


def _numeric_list(v):
    return all(isinstance(x, (int, float, bool, np.number, np.bool_)) for x in v)


# ------------------------------------------------------------------ a private toy.check
def fresh_toy():
    """A private copy of the ``toy`` package's submodules, loaded from the installed files under a
    random name (``forget`` removes it from ``sys.modules`` when the cell is scored)."""
    name = f"_toy_grading_{uuid.uuid4().hex}"
    pkg = types.ModuleType(name)
    pkg.__path__, pkg.__package__, pkg.__file__ = [str(TOY)], name, str(TOY / "__init__.py")
    sys.modules[name] = pkg
    mods = {m: importlib.import_module(f"{name}.{m}")
            for m in ("check", "check._core", "rl", "prob", "bandit", "numsearch", "numsearch.train")}
    alias = {"check._core": "core", "numsearch.train": "numsearch_train"}
    return types.SimpleNamespace(name=name, **{alias.get(k, k): v for k, v in mods.items()})


def forget(fresh):
    for k in [k for k in sys.modules if k == fresh.name or k.startswith(fresh.name + ".")]:
        del sys.modules[k]


# ------------------------------------------------------------------ tampering
def _fingerprint(obj):
    """What identifies a function across processes and fresh copies: its kind, name, and where
    its code lives (file and line; a toy module's name is the same up to the copy's prefix)."""
    code = getattr(obj, "__code__", None)
    module = getattr(obj, "__module__", None)
    if isinstance(module, str) and module.startswith("_toy_grading_"):
        module = "toy" + module[module.index("."):] if "." in module else "toy"
    return (type(obj).__module__, type(obj).__qualname__, module,
            getattr(obj, "__qualname__", getattr(obj, "__name__", None)),
            None if code is None else (Path(code.co_filename).name, code.co_firstlineno))


NUMPY_PRINT = """
import json, numpy as np
def fp(o):
    c = getattr(o, "__code__", None)
    import pathlib
    return [type(o).__module__, type(o).__qualname__, getattr(o, "__module__", None),
            getattr(o, "__qualname__", getattr(o, "__name__", None)),
            None if c is None else [pathlib.Path(c.co_filename).name, c.co_firstlineno]]
out = {}
for mod in ("numpy", "numpy.linalg", "numpy.random"):
    m = __import__(mod, fromlist=["_"])
    out[mod] = {k: fp(getattr(m, k)) for k in dir(m) if not k.startswith("_") and callable(getattr(m, k))}
print(json.dumps(out))
"""


_numpy_fresh = None       # a fresh interpreter's numpy, once per loaded copy of this file (a test cell loads its own)


def numpy_changes():
    """numpy's public functions that differ from a fresh interpreter's (names), or a note when
    the comparison itself cannot run."""
    global _numpy_fresh
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONSTARTUP",)}
    try:
        if _numpy_fresh is None:
            run = subprocess.run([sys.executable, "-I", "-c", NUMPY_PRINT], capture_output=True, text=True,
                                 timeout=120, env=env, check=True)
            _numpy_fresh = json.loads(run.stdout)
        fresh = _numpy_fresh
    except Exception as e:  # noqa: BLE001
        return [f"(numpy could not be compared with a fresh interpreter: {type(e).__name__})"]
    changed = []
    for mod, names in fresh.items():
        m = sys.modules.get(mod)
        if m is None:
            continue
        for k, fp in names.items():
            mine = json.loads(json.dumps(_fingerprint(getattr(m, k, None))))
            if mine != fp:
                changed.append(f"{mod}.{k}")
    return changed


def check_changes(fresh):
    """``toy.check`` functions the notebook replaced (compared with the fresh copy)."""
    changed = []
    for key, mod in sorted(sys.modules.items()):
        if not (key == "toy.check" or key.startswith("toy.check.")) or mod is None:
            continue
        sub = key[len("toy.check"):].lstrip(".")
        ref = fresh.check if not sub else getattr(fresh.check, sub, None)
        if ref is None:
            continue
        for k in dir(ref):
            r = getattr(ref, k)
            if k.startswith("__") or not callable(r):
                continue
            if _fingerprint(getattr(mod, k, None)) != _fingerprint(r):
                changed.append(f"{key}.{k}")
    return changed


def kernel_changes():
    """Builtins, stdout/stderr and IPython's display and traceback machinery that were replaced."""
    changed = [f"builtins.{k}" for k in BUILTINS
               if getattr(getattr(builtins, k), "__module__", None) != "builtins"
               or type(getattr(builtins, k)).__name__ not in ("builtin_function_or_method", "type")]
    ip = getattr(builtins, "get_ipython", lambda: None)()
    if ip is None:
        return changed
    if ip.custom_exceptions:
        changed.append("IPython's custom exception handler (set_custom_exc)")
    for name in ("showtraceback", "_showtraceback", "run_cell", "showsyntaxerror"):
        f = getattr(ip, name, None)
        where = getattr(getattr(f, "__func__", f), "__code__", None)
        if where is not None and not any(p in where.co_filename for p in ("IPython", "ipykernel")):
            changed.append(f"the kernel's {name}")
    hook = sys.displayhook
    if not type(hook).__module__.startswith(("IPython", "ipykernel")):
        changed.append("sys.displayhook")
    return changed


def _names(code, seen):
    if id(code) in seen:
        return set()
    seen.add(id(code))
    out = set(code.co_names) | set(code.co_freevars)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            out |= _names(c, seen)
    return out


def references(fn, depth=3):
    """(names, objects) the answer's code uses: its globals and closures, and those of the
    functions it calls that were defined in the notebook, ``depth`` levels deep."""
    names, objects, todo, seen = set(), [], [(fn, 0)], set()
    while todo:
        f, d = todo.pop()
        if id(f) in seen:
            continue
        seen.add(id(f))
        objects.append(f)
        f = getattr(f, "func", f)                               # functools.partial
        code = getattr(f, "__code__", None)
        if code is None:
            continue
        used = _names(code, set())
        names |= used
        g = getattr(f, "__globals__", {})
        cells = [c.cell_contents for c in (getattr(f, "__closure__", None) or ()) if _has_contents(c)]
        for obj in [g[n] for n in used if n in g] + cells:
            objects.append(obj)
            if d < depth and isinstance(obj, types.FunctionType):
                todo.append((obj, d + 1))
    return names, objects


def _has_contents(cell):
    try:
        cell.cell_contents
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------ the grade of one cell
class Grade:
    """Scores one exercise: the book's checker (fresh copy) on the answer, then hidden cases."""

    def __init__(self, label, checker, points, answer):
        self.label, self.checker, self.points = label, checker, float(points)
        self.passed = self.total = 0
        self.tampered, self.failures = [], []
        self.fresh = fresh_toy()
        self.tampered += numpy_changes() + check_changes(self.fresh) + kernel_changes()
        try:
            self.args = tuple(answer())
        except Exception as e:  # noqa: BLE001 — e.g. NameError: the answer cell was deleted
            self.args, self.missing = None, f"{type(e).__name__}: {e}"
        else:
            self.missing = None
        self.n_cases = self._cases_of_checker() if self.args is None else None
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            if self.args is not None:
                r = getattr(self.fresh.check, checker)(*self.args)
            else:
                r = self.fresh.core.Result(0, self.n_cases or 1, f"✗ the answer is missing ({self.missing})")
        self._add("the book's cases", r)
        print(r.message)

    def _cases_of_checker(self):
        """How many cases the checker has (it is run on a function that returns None)."""
        with contextlib.redirect_stdout(io.StringIO()):
            nargs = getattr(self.fresh.check, self.checker).__code__.co_argcount
            r = getattr(self.fresh.check, self.checker)(*([lambda *a: None] * nargs))
        return r.total

    def _add(self, what, r):
        self.passed += r.passed
        self.total += r.total
        if not r:
            self.failures.append(f"{what}: {r.passed} of {r.total} pass")

    def hidden(self, cases, forbidden=(), adapt=None):
        """Run the answer on ``cases`` — dicts with ``name``, ``setup`` (code that sets ``args``)
        and ``expected`` (and optionally ``atol``, ``rtol``) — and check it does not use the
        ``forbidden`` ``(module, function)`` pairs of toy (the library's own answer)."""
        fresh = self.fresh
        if not cases and not forbidden:
            return
        ns = {"np": np, "array": array, "ns": fresh.numsearch, "nt": fresh.numsearch_train, "rl": fresh.rl,
              "prob": fresh.prob, "bandit": fresh.bandit, "check": fresh.check}
        built = []
        for c in cases:
            env = dict(ns)
            exec(c["setup"], env)                                               # noqa: S102
            built.append(types.SimpleNamespace(name=c["name"], args=env["args"], expected=c["expected"],
                                               hint="", atol=c.get("atol", 1e-6), rtol=c.get("rtol", 1e-6)))
        if self.args is None:
            self._add("hidden cases", fresh.core.Result(0, len(built), "missing"))
            return
        fns = [a for a in self.args if callable(a)]
        self._forbidden(fns, forbidden)
        fn = fns[0] if fns else None
        if adapt == "pair" and fn is not None:
            inner = fn

            def fn(*a):
                out = inner(*a)
                return None if out is None else np.stack([np.asarray(o, dtype=float) for o in out])
        with contextlib.redirect_stdout(io.StringIO()), self._trapped(forbidden):
            r = fresh.core.run_cases(fn, built, "your answer")
        if built:
            self._add(f"{len(built)} hidden cases", r)
            print(f"hidden cases: {r.passed} of {r.total} pass")

    def _forbidden(self, fns, forbidden):
        mods = {"rl": self.fresh.rl, "prob": self.fresh.prob, "bandit": self.fresh.bandit,
                "numsearch": self.fresh.numsearch, "numsearch_train": self.fresh.numsearch_train}
        refs = {(m, f): _fingerprint(getattr(mods[m], f)) for m, f in forbidden}
        for fn in fns:
            names, objects = references(fn)
            uses_toy = any(isinstance(o, types.ModuleType) and o.__name__.split(".")[0] == "toy" for o in objects)
            for (m, f), fp in refs.items():
                if any(_fingerprint(o) == fp for o in objects) or (
                        uses_toy and f in names and f not in getattr(fn, "__globals__", {})):
                    self.tampered.append(f"the answer uses toy.{m}.{f}, the library's own answer")

    @contextlib.contextmanager
    def _trapped(self, forbidden):
        """While the hidden cases run, the library's own answers report their use."""
        saved, used = [], []
        for m, f in forbidden:
            mod = sys.modules.get(f"toy.{m}")
            if mod is None or not hasattr(mod, f):
                continue
            orig = getattr(mod, f)

            def trap(*a, _orig=orig, _name=f"toy.{m}.{f}", **k):
                used.append(_name)
                return _orig(*a, **k)
            saved.append((mod, f, orig))
            setattr(mod, f, trap)
        try:
            yield
        finally:
            for mod, f, orig in saved:
                setattr(mod, f, orig)
            for name in dict.fromkeys(used):
                self.tampered.append(f"the answer calls {name}, the library's own answer")

    def score(self):
        """The cell's grade, ``passed / total × points`` (0 when anything was tampered with)."""
        forget(self.fresh)
        self.tampered += [c for c in kernel_changes() if c not in self.tampered]
        if self.tampered:
            print(f"✗ {self.label}: scored 0 because the notebook changed what grading relies on: "
                  + "; ".join(dict.fromkeys(self.tampered)))
            value = 0.0
        else:
            value = round(self.points * self.passed / max(self.total, 1), 2)
            print(f"{self.label}: {self.passed} of {self.total} cases pass → {value:g} of {self.points:g} points"
                  + ("" if not self.failures else " (" + "; ".join(self.failures) + ")"))
        ip = getattr(builtins, "get_ipython", lambda: None)()
        if ip is not None and ip.display_formatter.format(value)[0].get("text/plain") != repr(value):
            raise RuntimeError(f"{self.label}: the notebook changed how numbers are displayed; "
                               "the grade cannot be reported")
        return value
