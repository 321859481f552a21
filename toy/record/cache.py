"""The warmed-up (SFT) model and RL runs, cached on disk so that notebooks do not retrain them.

A file is ``<cache dir>/tinylm-sft-<key>.npz`` (``tinylm-rl-<algo>-<key>.npz`` for an RL run).
The key is a hash of the full config, **of the code that produces the model**, as code
(``codehash.code_hash()``: the syntax trees of what training reaches) and of
the arithmetic (``toy.machine.fingerprint()``). Any change to that code or to the BLAS
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
import hashlib
import inspect
import json
import os
import textwrap
import warnings
from dataclasses import asdict, replace
from pathlib import Path

import numpy as np

from ..machine import fingerprint
from .. import seeds as fresh_seeds
from .._check_args import integer
from ..progress import Progress
from ..tinylm.model import TinyLM
from ..tinylm.many import shape_key, stack_runs, train_rl_many
from ..tinylm.train import PoolSampler, RLConfig, SFTConfig, train_sft, watching
from . import engine, evidence
from .codehash import code_files, code_hash
from .keys import code_key
from .models import load_model, save_model

__all__ = ["cache_dir", "code_files", "code_hash", "config_hash", "save_model", "load_model", "warmup_model", "Run",
           "cached_train_rl", "cached_train_rl_many", "cached_train_rl_seeds", "warmup_configs", "sft_spec"]

def cache_dir():
    """``$TOY_CACHE_DIR`` or ``~/.cache/rl-by-hand`` as a Path (not created here)."""
    return Path(os.environ.get("TOY_CACHE_DIR") or Path.home() / ".cache" / "rl-by-hand")


def config_hash(cfg, **extra):
    """A short stable hash of a dataclass config, ``extra`` fields, ``code_hash()`` and the
    arithmetic that computes (``toy.machine.fingerprint()``: BLAS kernels, numpy's SIMD
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


def _store(name, model, meta, arrays=None):
    """Save to the cache directory; where that fails, warn once and keep it in memory."""
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        save_model(model, d / name, meta=meta, arrays=arrays)
    except OSError as e:                            # read-only, a file in the way, disk full, ...
        _warn_once(d, e)
        _memory[name] = ({k: v.copy() for k, v in model.state_dict().items()}, model.config,
                         {k: np.asarray(v, dtype=float).copy() for k, v in (arrays or {}).items()}, meta or {})


def _fetch(name, verbose, expect=None, with_meta=False):
    """The cached ``(model, arrays)`` (``with_meta``: ``(model, arrays, meta)``) for ``name`` from
    memory or disk, or None. A file is used only if its meta data holds ``key == name`` and the
    items of ``expect`` (the configs that made it): a file copied under another key's name is
    rebuilt, not loaded."""
    if name in _memory:
        state, cfg, arrays = _memory[name][:3]
        got = TinyLM(cfg).load_state_dict({k: v.copy() for k, v in state.items()}), dict(arrays)
        return (*got, _memory[name][3]) if with_meta else got
    path = cache_dir() / name
    if not path.is_file():
        return None
    try:
        model, meta, arrays = load_model(path, with_arrays=True)
        want = {"key": name, **_jsonable(expect or {})}
        wrong = sorted(k for k, v in want.items() if meta.get(k) != v)
        if wrong:
            raise ValueError(f"{path} holds another model (its {', '.join(wrong)} differ from the key's)")
        return (model, arrays, meta) if with_meta else (model, arrays)
    except ValueError as e:
        if verbose:
            print(f"rebuilding the cached model ({e})")
        return None


def _jsonable(d):
    """``d`` as it reads back from a file's JSON meta data (tuples become lists, ...)."""
    return json.loads(json.dumps(d, sort_keys=True))


def warmup_model(cfg=None, verbose=True, rebuild=False):
    """The SFT warm-up model for ``cfg`` (default ``SFTConfig()``): read from the book's evidence
    record (``evidence.py``), else loaded from the cache, else trained with ``train_sft`` and cached
    (on a miss, a bad file, or ``rebuild=True``, which also skips the record)."""
    cfg = cfg or SFTConfig()
    spec = sft_spec(cfg)
    if not rebuild:
        model = evidence.warmup_weights(spec)
        if model is not None:
            return model
    name = f"tinylm-sft-{config_hash(cfg)}.npz"
    hit = None if rebuild else _fetch(name, verbose, {"sft_config": asdict(cfg)}, with_meta=True)
    if hit is not None:
        model, meta = hit[0], hit[2]
    else:
        if verbose:
            print(f"training the SFT warm-up model ({cfg.steps} steps; about 10-20 s, once: then cached)")
        with Progress(cfg.steps, "SFT warm-up (cached after this run)", "steps") as bar:
            model, hist = train_sft(cfg, progress=bar)
        meta = {"key": name, "sft_config": asdict(cfg), "final_loss": hist["loss"][-1]}
        _store(name, model, meta=meta)
    if evidence.mode() == "record" and evidence.get(spec) is None:
        evidence.store_warmup(spec, model, meta.get("final_loss", float("nan")))
    return model


def sft_spec(cfg):
    """A warm-up's spec (what determines it), as the evidence record keys it."""
    return {"kind": "sft", "sft_config": asdict(cfg)}


def _reward_key(reward_fn, name="reward_fn"):
    """A reward function as part of a cache key: its qualified name and its source (so it must
    be a pure function of its arguments and of ``toy`` code, defined at a module's or a notebook's
    top level: a closure or a lambda cannot be told apart by its source). None: no key."""
    if reward_fn is None:
        return None
    if not callable(reward_fn):
        raise ValueError(f"{name} must be None or a function, got {type(reward_fn).__name__}")
    qual = getattr(reward_fn, "__qualname__", "")
    if getattr(reward_fn, "__closure__", None) or "<lambda>" in qual or "<locals>" in qual:
        raise ValueError(f"{name} must be a function defined at the top level (not a lambda or a closure: "
                         f"its source keys the cache and the evidence record), got {qual or reward_fn!r}")
    try:
        src = inspect.getsource(reward_fn)
    except (OSError, TypeError):
        raise ValueError(f"{name} must be a function whose source inspect can read (it keys the cache), "
                         f"got {reward_fn!r}") from None
    return f"{qual}\n{textwrap.dedent(src)}"


class Run:
    """One RL run as the cache and the evidence record know it: ``train_rl(start, cfg, seed,
    reward_fn=..., prompt_sampler=...)``, where ``start`` is an ``SFTConfig`` (that warm-up) or
    the policy of another cached run (it continues that run), ``watch_fn(answers, digits)`` → (N,)
    a reward that is only watched (its batch mean goes into the history as ``watched``) and
    ``sampler`` a ``PoolSampler`` (a fresh copy is used; its draws go into the history as ``drawn``).
    ``spec()`` is everything that determines the run; the cache and the record are keyed by it."""

    def __init__(self, cfg, seed, start, reward_fn=None, watch_fn=None, sampler=None):
        if not isinstance(cfg, RLConfig):
            raise ValueError(f"rl_cfg must be an RLConfig, got {type(cfg).__name__}")
        if not isinstance(start, (SFTConfig, evidence.RecordedPolicy)):
            raise ValueError("start must be an SFTConfig (a warm-up) or the policy of a cached run "
                             f"(from cached_train_rl_seeds), got {type(start).__name__}")
        if sampler is not None and not isinstance(sampler, PoolSampler):
            raise ValueError(f"prompt_sampler must be None or a tinylm.PoolSampler, got {type(sampler).__name__}")
        self.cfg, self.seed, self.start = cfg, integer(seed, "seed", lo=0), start
        self.reward_fn, self.watch_fn, self.sampler = reward_fn, watch_fn, sampler
        self._spec = {"kind": "rl", "rl_config": asdict(cfg), "seed": self.seed,
                      "start": sft_spec(start) if isinstance(start, SFTConfig) else start._run.spec(),
                      "reward": _reward_key(reward_fn), "watch": _reward_key(watch_fn, "watch"),
                      "sampler": None if sampler is None else sampler.key()}

    @classmethod
    def of_spec(cls, spec, start, reward_fn=None, watch_fn=None, sampler=None):
        """The run a recorded ``spec`` describes, its functions rebuilt from their source by the
        caller (``scripts/evidence.py``): keyed by ``spec`` itself."""
        run = cls.__new__(cls)
        run.cfg, run.seed, run.start = RLConfig(**spec["rl_config"]), spec["seed"], start
        run.reward_fn, run.watch_fn, run.sampler, run._spec = reward_fn, watch_fn, sampler, spec
        return run

    def spec(self):
        return self._spec

    def name(self):
        """The run's file name in the (local, uncommitted) model cache: also keyed by the code and
        the arithmetic."""
        text = json.dumps({"code": code_key(self._spec), "numerics": fingerprint(), "spec": self._spec}, sort_keys=True)
        return f"tinylm-rl-{self.cfg.algo}-{hashlib.sha256(text.encode()).hexdigest()[:16]}.npz"

    def train_here(self):
        """This run's final policy, trained here (or from the cache)."""
        return train_one(self)

    def start_model(self):
        if isinstance(self.start, SFTConfig):
            return warmup_model(self.start, verbose=False)
        return self.start.materialize(keep=False)


def _run_meta(run):
    return {"spec": _jsonable(run.spec())}


def _store_run(run, policy, hist):
    hist = {k: np.asarray(v, dtype=float) for k, v in sorted(hist.items()) if k != "time"}   # wall clock: not kept
    name = run.name()
    _store(name, policy, meta={"key": name, **_run_meta(run)}, arrays=hist)
    return policy, hist


def _cached_run(run, verbose=False):
    hit = _fetch(run.name(), verbose, _run_meta(run))
    return hit if hit is not None and hit[1] else None


def train_one(run, callback=None):
    """Train ``run`` here (a progress bar where a person watches) and cache it: ``(policy, history)``
    from the cache if it is there."""
    hit = None if callback is not None else _cached_run(run)
    if hit is not None:
        return hit[0]
    return _train_runs([run], None, callback=callback)[0][0]


def cached_train_rl(rl_cfg=None, seed=0, sft_cfg=None, verbose=True, rebuild=False, callback=None,
                    reward_fn=None):
    """``train_rl(warmup_model(sft_cfg), rl_cfg, seed=seed, reward_fn=reward_fn)``, read from the
    evidence record or the cache where it is there (keyed by both configs, the seed, the code and,
    if given, ``reward_fn``'s source), else trained and cached, so that several notebooks share one
    run. Returns ``(policy, history)`` with each history entry as a float array over steps.
    ``callback`` only sees the steps of a run that is actually computed; ``rebuild=True`` trains
    it again."""
    run = Run(rl_cfg or RLConfig(), seed, sft_cfg or SFTConfig(), reward_fn)
    if rebuild or callback is not None:
        got = None if rebuild else _served(run)
        if got is None:
            if verbose:
                print(f"training {run.cfg.algo} for {run.cfg.steps} steps (seed {run.seed})")
            policy, hist = _train_runs([run], None, callback=callback)[0]
            evidence.store_run(run.spec(), policy, hist)
            got = _handle(run, policy), hist
        return got
    return cached_train_rl_many([run])[0]


def _served(run):
    """``(policy, history)`` of ``run`` from the evidence record, or None."""
    got = evidence.lookup(run.spec())
    if got is None:
        return None
    hist, rid = got
    return evidence.RecordedPolicy(run, rid), hist


def _handle(run, policy):
    """What a caller gets for a policy trained here: a ``RecordedPolicy`` that holds it (its
    measurements computed, and in record mode recorded; it can start other runs)."""
    return evidence.RecordedPolicy(run, evidence.spec_id(run.spec()), policy)


def _train_runs(runs, counter=None, callback=None, store=True):
    """Train ``runs`` (``Run``s of one ``shape_key``) together with ``train_rl_many`` and cache
    each (``store``); ``counter`` (a ``Progress``; None: a bar of its own; False: none) counts
    run-steps for the progress bar. Returns ``[(policy, history)]``."""
    starts = [r.start_model() for r in runs]
    samplers = [None if r.sampler is None else r.sampler.fresh() for r in runs]
    seen = [[] if r.watch_fn is not None else None for r in runs]
    fns = [r.reward_fn if s is None else watching(r.reward_fn, r.watch_fn, s) for r, s in zip(runs, seen)]

    got = train_rl_many(starts, [r.cfg for r in runs], [r.seed for r in runs], reward_fns=fns,
                        prompt_samplers=samplers, callbacks=[callback] * len(runs), progress=counter)
    out = []
    for r, (policy, hist), s, smp in zip(runs, got, seen, samplers):
        if s is not None:
            hist["watched"] = s
        if smp is not None:
            hist["drawn"] = np.array(smp.drawn)
        hist = {k: np.asarray(v, dtype=float) for k, v in sorted(hist.items()) if k != "time"}  # wall clock: not kept
        out.append(_store_run(r, policy, hist) if store else (policy, hist))
    return out


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
    for run in todo:
        groups.setdefault(shape_key(run.cfg), []).append(run)
    jobs = []
    for g in groups.values():
        n = min(len(g), processes * -(-len(g) // (processes * MAX_STACK)))
        jobs += [g[i::n] for i in range(n)]
    return sorted(jobs, key=lambda j: -len(j) * j[0].cfg.steps)       # the longest first


def _as_run(run, sft_cfg):
    """A run of ``cached_train_rl_many``: a ``Run``, or ``(rl_cfg, seed[, sft_cfg[, reward_fn]])``."""
    if isinstance(run, Run):
        return run
    if not isinstance(run, (tuple, list)) or not 2 <= len(run) <= 4:
        raise ValueError(f"runs must be Run objects or (RLConfig, seed[, SFTConfig[, reward_fn]]) tuples, got {run!r}")
    rl_cfg, seed, sft, fn = (*run, None, None)[:4]
    if rl_cfg is not None and not isinstance(rl_cfg, RLConfig):
        raise ValueError(f"runs must be (RLConfig, seed) pairs, got {type(rl_cfg).__name__}")
    sft = sft or sft_cfg or SFTConfig()
    if not isinstance(sft, SFTConfig):
        raise ValueError(f"runs' third item must be an SFTConfig (the warm-up), got {type(sft).__name__}")
    return Run(rl_cfg or RLConfig(), seed, sft, fn)


def cached_train_rl_many(runs, sft_cfg=None, processes=None):
    """``[cached_train_rl(rl_cfg, seed, sft_cfg, reward_fn=reward_fn) for ... in runs]``: each run
    read from the evidence record (``evidence.py``) or the cache where it is there; the others
    trained together and cached. A run is a ``Run``, or ``(rl_cfg, seed)``, or
    ``(rl_cfg, seed, sft_cfg)`` to start from another warm-up than ``sft_cfg``, or
    ``(rl_cfg, seed, sft_cfg, reward_fn)`` (``reward_fn`` keyed by its source). Runs whose configs
    share ``many.shape_key`` go through ``train_rl_many`` as one stack (each run bit for bit what
    it is alone), split over ``processes`` workers (None: ``$WORKERS`` or 2; ``toy.record.engine``),
    at most ``MAX_STACK`` runs a stack; the runs come back and are stored in the disk cache here. Where the cache is not writable, everything is
    trained here. A progress bar counts the run-steps and estimates the time left."""
    runs = [_as_run(r, sft_cfg) for r in runs]
    processes = engine.settings(processes)[0]
    for r in runs:
        if r.sampler is not None:
            evidence.keep_pool(r.sampler)                     # record mode: the pool, to train the run again
    out = [_served(r) for r in runs]
    todo = {}                                                 # cache file name → run, once each
    for r, got in zip(runs, out):
        if got is None and r.name() not in todo and _cached_run(r) is None:
            todo[r.name()] = r
    todo = list(todo.values())
    if todo:
        for r in todo:
            r.start_model()                                   # trained (or loaded) once, before the fork
        total = sum(r.cfg.steps for r in todo)
        with Progress(total, f"training {len(todo)} runs (cached after this)", "run-steps") as bar:
            if processes > 1 and len(todo) > 1:
                _in_workers(_chunks(todo, processes), processes, bar)
            else:
                for job in _chunks(todo, 1):
                    _train_runs(job, bar)
    for i, r in enumerate(runs):
        if out[i] is None:
            hit = _cached_run(r)
            policy, hist = hit if hit is not None else _train_runs([r], None)[0]
            evidence.store_run(r.spec(), policy, hist)
            out[i] = _handle(r, policy), hist
    return out


def warmup_configs(seeds, warmups=1, sft_cfg=None):
    """The warm-up of each seed: seed ``s`` starts from ``sft_cfg`` (default ``SFTConfig()``) with
    its seed moved by ``s % warmups``, so that seeds 0..9 with ``warmups=3`` span three warm-ups
    (SFT seeds 0, 1, 2: four, three and three runs). ``warmups=1``: every seed from ``sft_cfg``.
    On the fresh seeds (``toy.seeds``) the warm-ups' seeds move by ``FRESH_BASE`` too."""
    warmups = integer(warmups, "warmups", lo=1)
    sft_cfg = sft_cfg or SFTConfig()
    if not isinstance(sft_cfg, SFTConfig):
        raise ValueError(f"sft_cfg must be an SFTConfig or None, got {type(sft_cfg).__name__}")
    seeds, base = [integer(s, "seeds", lo=0) for s in seeds], fresh_seeds.base()
    return [replace(sft_cfg, seed=sft_cfg.seed + base + (s % warmups if warmups > 1 else 0)) if base or warmups > 1
            else sft_cfg for s in seeds]


def _per_seed(value, n, name):
    if isinstance(value, (list, tuple)):
        if len(value) != n:
            raise ValueError(f"{name} must be one value or a list of {n} (one per seed), got {len(value)}")
        return list(value)
    return [value] * n


def cached_train_rl_seeds(rl_cfg, seeds, sft_cfg=None, warmups=1, reward_fn=None, start=None, watch=None,
                          prompt_sampler=None):
    """Several seeds of one config → ``(policies, history)``, ``history`` a dict of arrays shaped
    (seeds, steps): the way a notebook runs seeds. Each run is read from the book's evidence record
    where it holds it, else from the cache, else trained (two at a time, with a progress bar).
    ``warmups=W``: seed ``s`` starts from the warm-up ``SFTConfig(seed=s % W)`` (``warmup_configs``),
    so that a comparison spans W SFT models; 1 (the default): every seed from ``sft_cfg``.
    ``reward_fn``: trained on instead of the verifier (keyed by its source). ``start``: the
    policies of earlier cached runs, one per seed, which these runs continue (instead of a warm-up).
    ``watch``: a reward that is only watched (``history["watched"]``). ``prompt_sampler``: a
    ``PoolSampler``, or one per seed (``history["drawn"]``: the indices drawn)."""
    if not isinstance(seeds, (range, list, tuple, np.ndarray)) or len(seeds) == 0:
        raise ValueError(f"seeds must be a non-empty range or list of seeds, got {seeds!r}")
    seeds = [integer(s, "seeds", lo=0) for s in seeds]
    if start is not None and (sft_cfg is not None or warmups != 1):
        raise ValueError("start must not be given with sft_cfg or warmups (the runs continue start's policies, "
                         "which came from their own warm-ups)")
    starts = warmup_configs(seeds, warmups, sft_cfg) if start is None else _per_seed(start, len(seeds), "start")
    samplers = _per_seed(prompt_sampler, len(seeds), "prompt_sampler")
    return stack_runs(cached_train_rl_many([Run(rl_cfg or RLConfig(), s, w, reward_fn, watch, smp)
                                            for s, w, smp in zip(seeds, starts, samplers)]))


def _in_workers(jobs, processes, bar):
    """``_train_runs`` of every job, ``processes`` at a time (``toy.record.engine``: joblib's
    workers here, or a Dask cluster); each job's runs come back and are cached here, and the bar
    moves as each job ends."""
    env = {k: v for k, v in os.environ.items() if k.startswith(("TOY_", "RL_BY_HAND_"))}
    runs = {r.name(): r for job in jobs for r in job}
    for got in engine.imap(_train_job, [(job, env) for job in jobs], workers=processes):
        for name, policy, hist in got:
            _store_run(runs[name], policy, hist)
            bar.update(runs[name].cfg.steps)


def _train_job(job, env):
    """In a worker: train ``job`` with the caller's ``TOY_*``/``RL_BY_HAND_*`` settings (a worker
    may outlive one call) and give back ``[(cache name, policy, history)]``."""
    for k in [k for k in os.environ if k.startswith(("TOY_", "RL_BY_HAND_"))]:
        del os.environ[k]
    os.environ.update(env)
    evidence.forget()
    return [(r.name(), policy, hist) for r, (policy, hist) in zip(job, _train_runs(job, False, store=False))]
