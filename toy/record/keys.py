"""How a record is named, keyed and sealed: by what determines its numbers, not by bytes.

- ``normal(spec)``: a run's spec (its configs, seed, start, reward and sampler) with every config
  field at its default left out, so that a new field with a default leaves every key as it was (and
  a changed default changes the key of every run that used the old value);
- ``spec_id``: a record's file name; ``arm_key``: its arm (the spec without any seed);
- ``code_key(spec)``: the training code as code (``codehash.code_hash``) over what the run reaches,
  its reward's and watched reward's names included, and the arithmetic goes beside it;
- ``numbers(rec)``: a digest of what a record says was computed (its history, final parameters,
  measurements): a re-key changes the key, never this;
- ``seal_of``: sha256 over a record, against a hand edit (anyone can recompute it: what proves a
  record is training it again, ``scripts/evidence.py check``).
"""
import functools
import hashlib
import json
from dataclasses import asdict

import numpy as np

from .codehash import code_hash, measure_hash, names_in

__all__ = ["canon", "sha", "normal", "spec_id", "arm_key", "code_key", "measure_key_code", "seal_of",
           "params_sha256", "numbers"]


def canon(obj):
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=True)


def sha(text):
    return hashlib.sha256(text.encode() if isinstance(text, str) else text).hexdigest()


@functools.lru_cache(maxsize=None)
def _defaults():
    from ..tinylm.model import ModelConfig
    from ..tinylm.train import RLConfig, SFTConfig
    d = lambda cfg: json.loads(canon(asdict(cfg)))                        # noqa: E731 — as a record holds it
    return {"rl_config": d(RLConfig()), "sft_config": d(SFTConfig()), "model": d(ModelConfig())}


def _same(v, d):
    """``v`` is ``d`` as JSON writes it (1 and 1.0 differ, True and 1 differ)."""
    if type(v) is type(d) and isinstance(v, (int, float, str, bool, type(None))):
        return v == d
    return canon(v) == canon(d)


def _drop_defaults(values, defaults):
    out = {}
    for k, v in values.items():
        if k == "model" and isinstance(v, dict):
            v = _drop_defaults(v, _defaults()["model"])
            if not v:
                continue
        elif k in defaults and _same(v, defaults[k]):
            continue
        out[k] = v
    return out


def normal(spec):
    """``spec`` with the config fields at their defaults left out (in its start's spec too)."""
    if not isinstance(spec, dict) or spec.get("kind") is None:
        return spec
    out = dict(spec)
    for k in ("rl_config", "sft_config"):
        if isinstance(out.get(k), dict):
            out[k] = _drop_defaults(out[k], _defaults()[k])
    if isinstance(out.get("start"), dict):
        out["start"] = normal(out["start"])
    return out


def spec_id(spec):
    """The file name (without ``.json``) of a run's record: its algorithm (or ``sft``), a hash of
    its normal spec without the number of steps (runs that differ only in length share it), the steps."""
    spec = json.loads(canon(spec))
    if spec["kind"] == "sft":
        return f"sft-{sha(canon(normal(spec)))[:16]}"
    n = normal(spec)
    family = {**n, "rl_config": {k: v for k, v in n["rl_config"].items() if k != "steps"}}
    return f"{spec['rl_config']['algo']}-{sha(canon(family))[:16]}-{spec['rl_config']['steps']}"


def _without_seeds(spec):
    if spec is None or spec.get("kind") is None:
        return spec
    out = {k: v for k, v in spec.items() if k not in ("seed", "start")}
    if spec["kind"] == "sft":
        out["sft_config"] = {k: v for k, v in spec["sft_config"].items() if k != "seed"}
    else:
        out["start"] = _without_seeds(spec["start"])
    return out


def arm_key(spec):
    """The arm a run belongs to: its normal spec without any seed (its own, its warm-up's, its start's)."""
    return sha(canon(_without_seeds(normal(json.loads(canon(spec))))))[:16]


def _sources(spec):
    """The reward and watched reward sources of ``spec`` and of the runs it starts from."""
    out = []
    while isinstance(spec, dict) and spec.get("kind") == "rl":
        out += [spec.get("reward"), spec.get("watch")]
        spec = spec.get("start")
    return [s for s in out if s]


def code_key(spec):
    """The training code that computes ``spec``'s run, as code: ``code_hash`` over the names its
    reward functions use besides the trainer's."""
    return code_hash(frozenset().union(*(names_in(s.split("\n", 1)[1]) for s in _sources(spec))))


def measure_key_code(source=None, qualname=None):
    """The ``toy`` code a measurement reaches (``measure_hash``): from a notebook's function, the
    names its ``source`` uses; from a ``toy`` function, its own name."""
    return measure_hash(names_in(source) | ({qualname.split(".")[-1]} if qualname and not source else set()))


def seal_of(rec):
    """sha256 over a record without its seal."""
    return sha(canon({k: v for k, v in rec.items() if k != "seal"}))


def params_sha256(model):
    """sha256 of a model's parameters (names, dtypes, shapes and bytes, in name order)."""
    h = hashlib.sha256()
    for k, v in sorted(model.state_dict().items()):
        v = np.ascontiguousarray(v)
        h.update(f"{k}|{v.dtype}|{v.shape}|".encode() + v.tobytes())
    return h.hexdigest()


def numbers(rec):
    """A digest (16 hex digits) of what ``rec`` says was computed: history, final parameters, the
    measurements' values, the length of the run it is a prefix of. Its code key, file name and seal
    are not in it."""
    meas = {k: e.get("value") for k, e in (rec.get("measurements") or {}).items()}
    prefix = rec.get("prefix_of")
    body = {"id": spec_id(rec["spec"]), "history": rec.get("history"), "params": rec.get("params_sha256"),
            "prefix_of": prefix and prefix.rsplit("-", 1)[-1], "measurements": meas}
    return sha(canon(body))[:16]
