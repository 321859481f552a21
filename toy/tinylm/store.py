"""Files of Part III's world: the hash of the training code (what every cached or recorded run is
keyed by) and models on disk (``save_model``, ``load_model``: atomic, read without pickle)."""
import ast
import functools
import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .model import ModelConfig, TinyLM

__all__ = ["code_files", "training_files", "code_hash", "save_model", "load_model"]

_TOY_ROOT = Path(__file__).resolve().parent.parent          # the toy package directory


def _imported_toy_files(path):
    """The toy source files that the module at ``path`` imports (relative or ``toy.`` imports)."""
    package = path.parent
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package
                for _ in range(node.level - 1):
                    base = base.parent
            elif node.module and (node.module == "toy" or node.module.startswith("toy.")):
                base, node_module = _TOY_ROOT.parent, node.module
            else:
                continue
            mod = node.module if node.level else node_module
            base = base.joinpath(*mod.split(".")) if mod else base
            candidates = [base.with_suffix(".py"), base / "__init__.py"]
            candidates += [base / f"{a.name}.py" for a in node.names]
            candidates += [base / a.name / "__init__.py" for a in node.names]
        elif isinstance(node, ast.Import):
            candidates = []
            for a in node.names:
                if a.name == "toy" or a.name.startswith("toy."):
                    base = _TOY_ROOT.parent.joinpath(*a.name.split("."))
                    candidates += [base.with_suffix(".py"), base / "__init__.py"]
        else:
            continue
        found.update(c.resolve() for c in candidates if c.is_file())
    return found


def _package_inits(path):
    """``__init__.py`` of every package from ``toy`` down to ``path`` (importing runs them)."""
    inits, d = [], path.parent
    while _TOY_ROOT in (d, *d.parents):
        inits.append((d / "__init__.py").resolve())
        d = d.parent
    return {p for p in inits if p.is_file()}


def code_files(module_file=None):
    """Every toy source file that ``module_file`` (default ``toy/tinylm/train.py``) depends on:
    its imports, followed transitively, and the ``__init__`` files of the packages on the way
    (their own text: importing runs them; what they import in turn is not followed, so that the
    cache, the record and the plots, which ``toy.tinylm`` re-exports, do not key the training).
    A package imported as a whole (``from .. import rl``) is followed into its modules."""
    todo = [Path(module_file or Path(__file__).with_name("train.py")).resolve()]
    seen, inits = set(), set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        deps, on_the_way = _imported_toy_files(f), _package_inits(f)
        inits |= on_the_way | {g for g in deps if g.name == "__init__.py"}
        todo.extend(g for g in deps - seen if g.name != "__init__.py" or g not in on_the_way)
    return sorted(seen | inits)


def training_files():
    """The files that determine a run: ``code_files`` of ``many.py`` (the loop every cached and
    recorded run goes through), of ``train.py`` and of ``rewards.py`` (the reward terms a
    notebook's reward function is built from)."""
    here = Path(__file__).parent
    return sorted(set().union(*(code_files(here / f) for f in ("many.py", "train.py", "rewards.py"))))


@functools.lru_cache(maxsize=None)
def code_hash():
    """sha256 (16 hex digits) of the source of every file in ``training_files()``, read once per
    process: the part of the cache (and evidence) key that changes whenever the training code does."""
    h = hashlib.sha256()
    for f in training_files():
        h.update(str(f.relative_to(_TOY_ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def save_model(model, path, meta=None, arrays=None):
    """Write ``model``'s parameters (+ its ModelConfig as JSON, + ``meta``, + extra numeric
    ``arrays`` such as a training history) to ``path`` atomically."""
    path = Path(path)
    arrays = {f"array/{k}": np.asarray(v, dtype=float) for k, v in (arrays or {}).items()}
    arrays.update({f"param/{k}": v for k, v in model.state_dict().items()})
    arrays["model_config"] = np.array(json.dumps(asdict(model.config), sort_keys=True))
    arrays["meta"] = np.array(json.dumps(meta or {}, sort_keys=True))
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, 0o644)                        # mkstemp makes 0600: others may share the cache
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def load_model(path, with_arrays=False):
    """Read a model written by ``save_model`` → ``(model, meta)`` (``(model, meta, arrays)``
    with ``with_arrays``). Raises ``ValueError`` if the file is missing, truncated or
    inconsistent."""
    try:
        with np.load(path, allow_pickle=False) as z:
            cfg = ModelConfig(**json.loads(str(z["model_config"])))
            meta = json.loads(str(z["meta"]))
            state = {k[len("param/"):]: z[k] for k in z.files if k.startswith("param/")}
            arrays = {k[len("array/"):]: z[k] for k in z.files if k.startswith("array/")}
        model = TinyLM(cfg).load_state_dict(state)
    except Exception as e:  # zipfile.BadZipFile, OSError, EOFError, KeyError, ValueError, ...
        raise ValueError(f"cannot read a model from {path}: {type(e).__name__}: {e}") from None
    if not all(np.all(np.isfinite(v)) for v in model.state_dict().values()):
        raise ValueError(f"the model in {path} has non-finite parameters")
    return (model, meta, arrays) if with_arrays else (model, meta)
