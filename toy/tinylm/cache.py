"""The warmed-up (SFT) model and RL runs, cached on disk so that notebooks do not retrain them.

A file is ``<cache dir>/tinylm-sft-<key>.npz`` (``tinylm-rl-<algo>-<key>.npz`` for an RL run).
The key is a hash of the full config, **of the source code that produces the model** (every
``toy`` module that ``toy.tinylm.train`` imports, followed transitively: ``code_hash()``) and of
the arithmetic (``toy.arithmetic.fingerprint()``). Any change to that code or to the BLAS
kernels gives a new key by itself, so a warm cache can never hide a regression, a model trained
with other kernels is never loaded, and two checkouts of different code never share a file.

The cache directory is ``$TOY_CACHE_DIR`` if set, else ``~/.cache/rl-by-hand/``; it is never
committed. Files are written atomically (a temporary file in the same directory, then
``os.replace``), with mode 0644, so two notebooks running at once never read half a file and
a shared cache works; a missing, truncated or otherwise unreadable file is rebuilt, and so is
a file whose stored key and configs are not those asked for (a file copied or renamed under
another key's name never loads as that model). Files are read with ``allow_pickle=False``. Where the directory cannot be created or written (read-only,
or the path is a file), one warning is given and the model is kept in memory for the rest of
the process instead.
"""
import ast
import functools
import hashlib
import inspect
import json
import os
import tempfile
import warnings
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from ..arithmetic import fingerprint
from .._check_args import integer
from ..parallel import starmap
from ..progress import Progress
from .model import ModelConfig, TinyLM
from .train import RLConfig, SFTConfig, shape_key, stack_runs, train_rl, train_rl_many, train_sft

__all__ = ["cache_dir", "code_hash", "config_hash", "save_model", "load_model", "warmup_model",
           "cached_train_rl", "cached_train_rl_many", "cached_train_rl_seeds", "warmup_configs"]

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
    its imports, followed transitively, and the package ``__init__`` files on the way."""
    todo = [Path(module_file or Path(__file__).with_name("train.py")).resolve()]
    seen = set()
    while todo:
        f = todo.pop()
        if f in seen:
            continue
        seen.add(f)
        todo.extend((_imported_toy_files(f) | _package_inits(f)) - seen)
    return sorted(seen)


@functools.lru_cache(maxsize=None)
def code_hash():
    """sha256 (16 hex digits) of the source of every file in ``code_files()``, read once per
    process: the part of the cache key that changes whenever the training code does."""
    h = hashlib.sha256()
    for f in code_files():
        h.update(str(f.relative_to(_TOY_ROOT)).encode() + b"\0" + f.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_dir():
    """``$TOY_CACHE_DIR`` or ``~/.cache/rl-by-hand`` as a Path (not created here)."""
    return Path(os.environ.get("TOY_CACHE_DIR") or Path.home() / ".cache" / "rl-by-hand")


def config_hash(cfg, **extra):
    """A short stable hash of a dataclass config, ``extra`` fields, ``code_hash()`` and the
    arithmetic that computes (``toy.arithmetic.fingerprint()``: BLAS kernels, numpy's SIMD
    dispatch, platform), so that a model trained with other kernels is never loaded here."""
    text = json.dumps({"code": code_hash(), "numerics": fingerprint(), "config": asdict(cfg), **extra},
                      sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


_memory = {}               # file name → (state, meta, arrays) when the directory is not writable
_warned = set()


def _warn_once(d, err):
    if str(d) not in _warned:
        _warned.add(str(d))
        warnings.warn(f"the model cache {d} is not usable ({type(err).__name__}: {err}); "
                      "models are kept in memory for this process only", RuntimeWarning, stacklevel=3)


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


def _store(name, model, meta, arrays=None):
    """Save to the cache directory; where that fails, warn once and keep it in memory."""
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        save_model(model, d / name, meta=meta, arrays=arrays)
    except OSError as e:                            # read-only, a file in the way, disk full, ...
        _warn_once(d, e)
        _memory[name] = ({k: v.copy() for k, v in model.state_dict().items()}, model.config,
                         {k: np.asarray(v, dtype=float).copy() for k, v in (arrays or {}).items()})


def _fetch(name, verbose, expect=None):
    """The cached ``(model, arrays)`` for ``name`` from memory or disk, or None. A file is used
    only if its meta data holds ``key == name`` and the items of ``expect`` (the configs that
    made it): a file copied under another key's name is rebuilt, not loaded."""
    if name in _memory:
        state, cfg, arrays = _memory[name]
        return TinyLM(cfg).load_state_dict({k: v.copy() for k, v in state.items()}), dict(arrays)
    path = cache_dir() / name
    if not path.is_file():
        return None
    try:
        model, meta, arrays = load_model(path, with_arrays=True)
        want = {"key": name, **_jsonable(expect or {})}
        wrong = sorted(k for k, v in want.items() if meta.get(k) != v)
        if wrong:
            raise ValueError(f"{path} holds another model (its {', '.join(wrong)} differ from the key's)")
        return model, arrays
    except ValueError as e:
        if verbose:
            print(f"rebuilding the cached model ({e})")
        return None


def _jsonable(d):
    """``d`` as it reads back from a file's JSON meta data (tuples become lists, ...)."""
    return json.loads(json.dumps(d, sort_keys=True))


def warmup_model(cfg=None, verbose=True, rebuild=False):
    """The SFT warm-up model for ``cfg`` (default ``SFTConfig()``): loaded from the cache, or
    trained with ``train_sft`` and cached (on a miss, a bad file, or ``rebuild=True``)."""
    cfg = cfg or SFTConfig()
    name = f"tinylm-sft-{config_hash(cfg)}.npz"
    hit = None if rebuild else _fetch(name, verbose, {"sft_config": asdict(cfg)})
    if hit is not None:
        return hit[0]
    if verbose:
        print(f"training the SFT warm-up model ({cfg.steps} steps; about 10-20 s, once: then cached)")
    with Progress(cfg.steps, "SFT warm-up (cached after this run)", "steps") as bar:
        model, hist = train_sft(cfg, progress=bar)
    _store(name, model, meta={"key": name, "sft_config": asdict(cfg), "final_loss": hist["loss"][-1]})
    return model


def _reward_key(reward_fn):
    """A reward function as part of a cache key: its qualified name and its source (so it must
    be a pure function of its arguments and of ``toy`` code). None: the verifier (no key)."""
    if reward_fn is None:
        return None
    if not callable(reward_fn):
        raise ValueError(f"reward_fn must be None or a function, got {type(reward_fn).__name__}")
    try:
        src = inspect.getsource(reward_fn)
    except (OSError, TypeError):
        raise ValueError(f"reward_fn must be a function whose source inspect can read (it keys the cache), "
                         f"got {reward_fn!r}") from None
    return f"{getattr(reward_fn, '__qualname__', '')}\n{inspect.cleandoc(src)}"


def _rl_name(rl_cfg, sft_cfg, seed, reward_fn=None):
    extra = {} if reward_fn is None else {"reward": _reward_key(reward_fn)}
    return f"tinylm-rl-{rl_cfg.algo}-{config_hash(rl_cfg, sft=asdict(sft_cfg), seed=seed, **extra)}.npz"


def cached_train_rl(rl_cfg=None, seed=0, sft_cfg=None, verbose=True, rebuild=False, callback=None,
                    reward_fn=None):
    """``train_rl(warmup_model(sft_cfg), rl_cfg, seed=seed, reward_fn=reward_fn)``, cached like the
    warm-up model (keyed by both configs, the seed, the code and, if given, ``reward_fn``'s source),
    so that several notebooks can share one run. Returns ``(policy, history)`` with each history
    entry as a float array over steps. ``callback`` only sees the steps of a run that is actually
    computed."""
    rl_cfg, sft_cfg = rl_cfg or RLConfig(), sft_cfg or SFTConfig()
    name = _rl_name(rl_cfg, sft_cfg, seed, reward_fn)
    hit = None if rebuild else _fetch(name, verbose, _rl_meta(rl_cfg, sft_cfg, seed))
    if hit is not None and hit[1]:
        return hit
    sft = warmup_model(sft_cfg, verbose=verbose)
    if verbose:
        print(f"training {rl_cfg.algo} for {rl_cfg.steps} steps (seed {seed})")
    with Progress(rl_cfg.steps, f"{rl_cfg.algo}, seed {seed} (cached after this run)", "steps") as bar:
        policy, hist = train_rl(sft, rl_cfg, seed=seed, callback=callback, progress=bar, reward_fn=reward_fn)
    return _store_run(name, rl_cfg, sft_cfg, seed, policy, hist)


def _rl_meta(rl_cfg, sft_cfg, seed):
    return {"rl_config": asdict(rl_cfg), "sft_config": asdict(sft_cfg), "seed": int(seed)}


def _store_run(name, rl_cfg, sft_cfg, seed, policy, hist):
    hist = {k: np.asarray(v, dtype=float) for k, v in hist.items()}
    _store(name, policy, meta={"key": name, **_rl_meta(rl_cfg, sft_cfg, seed)}, arrays=hist)
    return policy, hist


def _writable():
    """True if runs stored by another process can be read back here (no in-memory fallback)."""
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
    except OSError:
        return False
    return not _memory and d.is_dir() and os.access(d, os.W_OK)


def _train_runs(jobs, counter=None):
    """Train the runs ``jobs`` [(name, config, seed, sft config, reward_fn)] (one ``shape_key``)
    together with ``train_rl_many`` and store each; ``counter`` (a shared integer, or a
    ``Progress``) counts run-steps for the progress bar. Returns the number of runs stored."""
    sfts = [warmup_model(j[3], verbose=False) for j in jobs]

    class _Count:
        def update(self, n):
            if isinstance(counter, Progress):
                counter.update(n)
            elif counter is not None:
                with counter.get_lock():
                    counter.value += n
    got = train_rl_many(sfts, [j[1] for j in jobs], [j[2] for j in jobs], reward_fns=[j[4] for j in jobs],
                        progress=_Count())
    for (name, c, s, sft_cfg, _), (policy, hist) in zip(jobs, got):
        _store_run(name, c, sft_cfg, s, policy, hist)
    return len(jobs)


# runs in one stack at most. Measured on the 2-core bench machine (GRPO, 32 prompts × 8 answers):
# on one core a run-step costs 67-70 ms alone, 67-72 ms in a stack of 2 and 76-84 ms in a stack of 5
# (a step is mostly arithmetic and memory traffic at these sizes; a bigger stack leaves the caches);
# ten 200-step seeds on both cores took 44 s in stacks of 1 (as long as the code before stacks),
# 47-52 s in stacks of 2 and 51-91 s in stacks of 5. So one run a job, two processes at a time;
# train_rl_many stays available (each run bit for bit what it is alone). A run's stack: ~55 MB.
MAX_STACK = 1


def _chunks(todo, processes):
    """The runs to train as jobs: runs of one ``shape_key`` together, each group split into
    near-equal parts of at most ``MAX_STACK`` runs, their number a multiple of ``processes``
    (so that the processes get equal shares)."""
    groups = {}
    for job in todo:
        key = shape_key(job[1])
        groups.setdefault(key, []).append(job)
    jobs = []
    for g in groups.values():
        n = min(len(g), processes * -(-len(g) // (processes * MAX_STACK)))
        jobs += [g[i::n] for i in range(n)]
    return sorted(jobs, key=lambda j: -len(j) * j[0][1].steps)       # the longest first


def _run_spec(run, sft_cfg):
    """A run of ``cached_train_rl_many`` as ``(rl_cfg, seed, sft_cfg, reward_fn)``."""
    if not isinstance(run, (tuple, list)) or not 2 <= len(run) <= 4:
        raise ValueError(f"runs must be (RLConfig, seed[, SFTConfig[, reward_fn]]) tuples, got {run!r}")
    rl_cfg, seed, sft, fn = (*run, None, None)[:4]
    rl_cfg = rl_cfg or RLConfig()
    if not isinstance(rl_cfg, RLConfig):
        raise ValueError(f"runs must be (RLConfig, seed) pairs, got {type(rl_cfg).__name__}")
    sft = sft or sft_cfg or SFTConfig()
    if not isinstance(sft, SFTConfig):
        raise ValueError(f"runs' third item must be an SFTConfig (the warm-up), got {type(sft).__name__}")
    _reward_key(fn)                                           # checks reward_fn
    return rl_cfg, int(seed), sft, fn


def cached_train_rl_many(runs, sft_cfg=None, processes=2):
    """``[cached_train_rl(rl_cfg, seed, sft_cfg, reward_fn=reward_fn) for ... in runs]``, with the
    runs that are not cached yet trained together. A run is ``(rl_cfg, seed)``, or
    ``(rl_cfg, seed, sft_cfg)`` to start from another warm-up than ``sft_cfg``, or
    ``(rl_cfg, seed, sft_cfg, reward_fn)`` (``reward_fn`` keyed by its source). Runs whose configs
    share ``train.shape_key`` go through ``train_rl_many`` as one stack (each run bit for bit what
    it is alone), split over ``processes`` worker processes, at most ``MAX_STACK`` runs a stack;
    each process stores its runs in the disk cache. Where the cache is not writable, everything is
    trained here. A progress bar counts the run-steps."""
    runs = [_run_spec(r, sft_cfg) for r in runs]
    todo = {}                                                 # cache file name → run, once each
    for c, s, sft, fn in runs:
        name = _rl_name(c, sft, s, fn)
        if name not in todo and _fetch(name, False, _rl_meta(c, sft, s)) is None:
            todo[name] = (c, s, sft, fn)
    todo = [(name, *run) for name, run in todo.items()]
    if todo:
        for sft in {json.dumps(asdict(j[3]), sort_keys=True): j[3] for j in todo}.values():
            warmup_model(sft, verbose=False)                  # trained (or loaded) once, before the fork
        total = sum(j[1].steps for j in todo)
        with Progress(total, f"training {len(todo)} runs (cached after this)", "run-steps") as bar:
            if _writable() and processes > 1 and len(todo) > 1:
                _in_workers(_chunks(todo, processes), processes, bar)
            else:
                for job in _chunks(todo, 1):
                    _train_runs(job, bar)
    return [cached_train_rl(c, s, sft, verbose=False, reward_fn=fn) for c, s, sft, fn in runs]


def warmup_configs(seeds, warmups=1, sft_cfg=None):
    """The warm-up of each seed: seed ``s`` starts from ``sft_cfg`` (default ``SFTConfig()``) with
    its seed moved by ``s % warmups``, so that seeds 0..9 with ``warmups=3`` span three warm-ups
    (SFT seeds 0, 1, 2: four, three and three runs). ``warmups=1``: every seed from ``sft_cfg``."""
    warmups = integer(warmups, "warmups", lo=1)
    sft_cfg = sft_cfg or SFTConfig()
    if not isinstance(sft_cfg, SFTConfig):
        raise ValueError(f"sft_cfg must be an SFTConfig or None, got {type(sft_cfg).__name__}")
    seeds = [integer(s, "seeds", lo=0) for s in seeds]
    return [sft_cfg if warmups == 1 else replace(sft_cfg, seed=sft_cfg.seed + s % warmups) for s in seeds]


def cached_train_rl_seeds(rl_cfg, seeds, sft_cfg=None, warmups=1, reward_fn=None):
    """Several seeds of one config, cached (``cached_train_rl_many``) → ``(policies, history)``,
    ``history`` a dict of arrays shaped (seeds, steps): the way a notebook runs seeds.
    ``warmups=W``: seed ``s`` starts from the warm-up ``SFTConfig(seed=s % W)`` (``warmup_configs``),
    so that a comparison spans W SFT models; 1 (the default): every seed from ``sft_cfg``.
    ``reward_fn``: trained on instead of the verifier (keyed by its source)."""
    seeds = list(seeds)
    sfts = warmup_configs(seeds, warmups, sft_cfg)
    return stack_runs(cached_train_rl_many([(rl_cfg, s, w, reward_fn) for s, w in zip(seeds, sfts)]))


def _in_workers(jobs, processes, bar):
    """``_train_runs`` of every job, ``processes`` at a time (``toy.parallel.starmap``), while
    this process moves the progress bar from a counter the workers share."""
    import multiprocessing
    global _COUNTER
    _COUNTER = multiprocessing.get_context("fork").Value("q", 0) if "fork" in multiprocessing.get_all_start_methods() else None
    try:
        starmap(_train_job, [(job,) for job in jobs], processes,
                poll=lambda: bar.update((_COUNTER.value if _COUNTER is not None else bar.done) - bar.done))
    finally:
        _COUNTER = None


_COUNTER = None


def _train_job(job):
    return _train_runs(job, _COUNTER)
