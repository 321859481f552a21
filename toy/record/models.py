"""A model on disk: ``save_model``, ``load_model`` (atomic writes, read without pickle): the record's
warm-ups and kept policies, and the local model cache."""
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

import numpy as np

__all__ = ["save_model", "load_model"]


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
    from ..tinylm.model import ModelConfig, TinyLM       # here: toy.tinylm re-exports this module's names
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
