"""The warmed-up (SFT) model, cached on disk so that notebooks do not retrain it.

The file is ``<cache dir>/tinylm-sft-<hash>.npz`` where the hash covers the full
``SFTConfig`` (and ``CACHE_VERSION``, bumped whenever the training code changes its result).
The cache directory is ``$TOY_CACHE_DIR`` if set, else ``~/.cache/rl-by-hand/``; it is never
committed. Files are written atomically (a temporary file in the same directory, then
``os.replace``), so two notebooks running at once never read half a file; a missing, truncated
or otherwise unreadable file is rebuilt. Files are read with ``allow_pickle=False``.
"""
import hashlib
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

from .model import ModelConfig, TinyLM
from .train import RLConfig, SFTConfig, sft_warmup, train_rl

__all__ = ["CACHE_VERSION", "cache_dir", "config_hash", "save_model", "load_model", "warmup_model",
           "cached_train_rl"]

CACHE_VERSION = 2          # bump when a code change alters what sft_warmup produces (2: the fast numerics)


def cache_dir():
    """``$TOY_CACHE_DIR`` or ``~/.cache/rl-by-hand`` (created if needed), as a Path."""
    d = Path(os.environ.get("TOY_CACHE_DIR") or Path.home() / ".cache" / "rl-by-hand")
    d.mkdir(parents=True, exist_ok=True)
    return d


def config_hash(cfg):
    """A short stable hash of a dataclass config (and ``CACHE_VERSION``)."""
    text = json.dumps({"version": CACHE_VERSION, "config": asdict(cfg)}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


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


def warmup_model(cfg=None, verbose=True, rebuild=False):
    """The SFT warm-up model for ``cfg`` (default ``SFTConfig()``): loaded from the cache, or
    trained with ``sft_warmup`` and cached (on a miss, a bad file, or ``rebuild=True``)."""
    cfg = cfg or SFTConfig()
    path = cache_dir() / f"tinylm-sft-{config_hash(cfg)}.npz"
    if path.exists() and not rebuild:
        try:
            model, _ = load_model(path)
            return model
        except ValueError as e:
            if verbose:
                print(f"rebuilding the cached model ({e})")
    if verbose:
        print(f"training the SFT warm-up model ({cfg.steps} steps), cached at {path}")
    model, hist = sft_warmup(cfg)
    save_model(model, path, meta={"sft_config": asdict(cfg), "final_loss": hist["loss"][-1]})
    return model


def cached_train_rl(rl_cfg=None, seed=0, sft_cfg=None, verbose=True, rebuild=False, callback=None):
    """``train_rl(warmup_model(sft_cfg), rl_cfg, seed=seed)``, cached on disk like the warm-up
    model (keyed by both configs and the seed), so that several notebooks can share one run.
    Returns ``(policy, history)`` with each history entry as a float array over steps.
    ``callback`` only sees the steps of a run that is actually computed."""
    rl_cfg, sft_cfg = rl_cfg or RLConfig(), sft_cfg or SFTConfig()
    key = hashlib.sha256(json.dumps({"version": CACHE_VERSION, "sft": asdict(sft_cfg),
                                     "rl": asdict(rl_cfg), "seed": seed},
                                    sort_keys=True).encode()).hexdigest()[:16]
    path = cache_dir() / f"tinylm-rl-{rl_cfg.algo}-{key}.npz"
    if path.exists() and not rebuild:
        try:
            policy, _, hist = load_model(path, with_arrays=True)
            if hist:
                return policy, hist
        except ValueError as e:
            if verbose:
                print(f"rebuilding the cached run ({e})")
    sft = warmup_model(sft_cfg, verbose=verbose)
    if verbose:
        print(f"training {rl_cfg.algo} for {rl_cfg.steps} steps (seed {seed}), cached at {path}")
    policy, hist = train_rl(sft, rl_cfg, seed=seed, callback=callback)
    hist = {k: np.asarray(v, dtype=float) for k, v in hist.items()}
    save_model(policy, path, meta={"rl_config": asdict(rl_cfg), "seed": seed}, arrays=hist)
    return policy, hist
