"""Every function the book shows with ``toy.show(X)`` is its equation alone: the text ``toy.show``
displays holds no argument check (no ``raise ValueError``, no call of a ``toy._check_args`` helper or
of a ``_check_*`` function, no ``# argcheck`` line, no ``@checked`` decorator). The checks live in the
``_check_<name>`` function that ``@checked(_check_<name>)`` runs at the public boundary.

The shown names are collected from the notebooks' code cells and resolved the way the notebooks
import them (the aliases below; a world module may live in a package or at the top of ``toy``).
"""
import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

import toy
from toy import _check_args

ROOT = Path(__file__).resolve().parent.parent

# Shown functions of the world modules whose checks their owners move out (issue 21): expected to
# fail until then. The lead empties this set at the merge (xfail is strict: an entry that passes fails).
PENDING = set()

# the name a notebook gives a module -> where that module may live (first importable wins)
ALIASES = {
    "toy": ["toy"],
    "ns": ["toy.numsearch.game", "toy.numsearch"], "numsearch": ["toy.numsearch"],
    "nt": ["toy.numsearch.train", "toy.numsearch_train"], "numsearch_train": ["toy.numsearch.train", "toy.numsearch_train"],
    "arith": ["toy.arith"], "arith_train": ["toy.arith.train", "toy.arith_train"],
    "arith_variant": ["toy.arith.variant", "toy.arith_variant"],
    "tinylm": ["toy.tinylm"], "tlm": ["toy.tinylm.model"],
    "V": ["toy.arith.variant", "toy.arith_variant"],        # Part II: V = arith_variant (Part III: below)
    "rewards": ["toy.tinylm.rewards"], "task": ["toy.tinylm.task"],
    "lt": ["toy.length_toy"], "length_toy": ["toy.length_toy"],
    "rl": ["toy.rl"], "prob": ["toy.prob"], "bandit": ["toy.bandit"], "metrics": ["toy.metrics"],
    "variants": ["toy.tinylm.variants"],
}

PART3 = {"V": ["toy.tinylm.variants"]}                     # Part III's own meaning of an alias

SHOW = re.compile(r"(?<![\w.])(?:toy\.)?show\(\s*([A-Za-z_][\w.]*)\s*\)")

# the helpers of toy._check_args: a call of one of them is a check wherever it is (their names are
# distinctive), or, for the few with common names (size, seed, ...), where the shown function's
# module binds the name to the helper
_HELPERS = {n for n, f in vars(_check_args).items()
            if inspect.isfunction(f) and f.__module__ == _check_args.__name__ and not n.startswith("_")
            and n != "checked"}
_COMMON = {"size", "seed", "generator", "function"}


def shown():
    """(notebook, expression) for every ``toy.show(expression)`` in a code cell of a Part notebook."""
    out = []
    for nb in sorted(ROOT.glob("notebooks/part*/*.ipynb")):
        for cell in json.loads(nb.read_text(encoding="utf-8"))["cells"]:
            if cell["cell_type"] != "code":
                continue
            src = "".join(cell["source"])
            for line in src.splitlines():
                if line.lstrip().startswith("#"):
                    continue
                for expr in SHOW.findall(line):
                    name = f"{nb.parent.name}/{nb.stem}"
                    if (name, expr) not in out:
                        out.append((name, expr))
    return out


def resolve(expr, notebook=""):
    """The object ``expr`` names in ``notebook`` (its first name an alias of ALIASES)."""
    head, *rest = expr.split(".")
    errors = []
    candidates = PART3.get(head) if notebook.startswith("part3") and head in PART3 else ALIASES.get(head, [])
    for module in candidates:
        try:
            obj = importlib.import_module(module)
            for part in rest:
                obj = getattr(obj, part)
            return obj
        except (ImportError, AttributeError) as e:
            errors.append(f"{module}: {e}")
    raise LookupError(f"{expr}: no module of {candidates} has it ({'; '.join(errors) or 'unknown alias'})")


def checks_in(obj):
    """The argument checks in the text ``toy.show(obj)`` displays (an empty list if none)."""
    text = repr(toy.show(obj))
    module = inspect.getmodule(obj)
    found = [m for m in ("raise ValueError", "# argcheck", "@checked(") if m in text]
    found += re.findall(r"(?<![\w])[\w.]*_check_\w*\(", text)
    for name in sorted(_HELPERS):
        bound = getattr(module, name, None) is getattr(_check_args, name)
        if (name not in _COMMON or bound) and re.search(rf"(?<![\w.]){name}\(", text):
            found.append(f"{name}(")
    found += re.findall(r"_check_args\.\w+\(", text)
    return found


SHOWN = shown()


def test_the_notebooks_show_functions():
    exprs = {e for _, e in SHOWN}
    assert len(exprs) >= 40, sorted(exprs)                # the collector finds the book's toy.show calls
    assert {"rl.clipped_surrogate", "toy.rl.policy_loss", "lt.train", "bandit.estimates"} <= exprs
    assert PENDING <= exprs, PENDING - exprs              # no stale entry


@pytest.mark.parametrize("notebook, expr", [
    pytest.param(nb, e, id=f"{nb}:{e}",
                 marks=[pytest.mark.xfail(strict=True, reason="a world module, converted by its owner")]
                 if e in PENDING else [])
    for nb, e in SHOWN])
def test_a_shown_function_is_its_equation_alone(notebook, expr):
    found = checks_in(resolve(expr, notebook))
    assert not found, f"{notebook}: toy.show({expr}) shows argument checks: {found}"


PROBE = """
import numpy as np
from toy._check_args import as_array, checked, real


def _check_clean(x, eps):
    return {"x": as_array(x, "x"), "eps": real(eps, "eps")}


@checked(_check_clean)
def clean(x, eps=0.2):
    return np.clip(x, 1 - eps, 1 + eps)


def inline(x, eps=0.2):
    eps = real(eps, "eps", 0, 1)
    return np.clip(x, 1 - eps, 1 + eps)


def raises(x, eps=0.2):
    if eps < 0:
        raise ValueError("eps must be >= 0")
    return x


def marked(x, eps=0.2):
    _check_clean(x, eps)
    return x
"""


def test_a_check_in_a_shown_function_is_caught(tmp_path):
    """The detector itself, on functions written here: a check of each kind is found; the equation
    behind ``@checked(_check_<name>)`` is clean."""
    import importlib.util
    path = tmp_path / "shown_probe.py"
    path.write_text(PROBE)
    spec = importlib.util.spec_from_file_location("shown_probe", path)
    probe = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(probe)
    assert checks_in(probe.clean) == []
    assert checks_in(probe.inline) == ["real("]
    assert checks_in(probe.raises) == ["raise ValueError"]
    assert checks_in(probe.marked) == ["_check_clean("]
    assert probe.clean([0.5, 2.0]).tolist() == [0.8, 1.2]            # the check ran and the equation too
    with pytest.raises(ValueError, match="^eps"):
        probe.clean([1.0], "0.2")
