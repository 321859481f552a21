"""The book's evidence record: every Part III run a notebook reports, computed once and kept.

Training Part III's ten seeds over three warm-ups takes about 20 CPU-minutes; reading what they
gave takes a second. So the runs are trained once (``make evidence``) and what the notebooks read
of them is committed in ``evidence/`` at the repository's root (laid out by ``files``: one compressed
file an arm, one manifest of keys and seals), a record a run:

- ``spec``: everything that determines the run: its ``RLConfig`` (or ``SFTConfig`` for a warm-up),
  its seed, where it starts (a warm-up's spec, or another run's), the source of its reward, of a
  watched reward, and the prompt sampler's key;
- ``code`` and ``arithmetic``: the training code that computed it, as code (``keys.code_key``: its
  syntax tree over what the run reaches, so that a docstring, a comment or an unused function
  changes nothing) and the arithmetic (``toy.machine.fingerprint()``);
- ``history`` (per step, as ``train_rl_many`` returns it, less the wall-clock ``time``),
  ``params_sha256`` (the final parameters), and ``measurements``: what notebooks computed from the
  final policy (``measured`` functions such as ``evaluate``), each with the call that made it;
- ``seal``: a sha256 over all of the above, so that a hand-edited number is caught (anyone can
  recompute a seal: what proves a number is training its run again, ``make evidence-check``).

A record's name is its spec's (``keys.spec_id``: the configs' fields at their defaults left out, so
a new config field with a default leaves every name as it was).

A run whose history is a prefix of a longer recorded run of the same spec (a 40-step run of
GRPO beside the 200-step one) is a *prefix record*: its history is sliced from the longer run,
never trained again (the loop depends on ``steps`` only through its length; a test checks it).
Weights (``evidence/models/<id>.npz``) are kept only for the SFT warm-ups and the few policies a
notebook uses as a model (not only through ``measured`` functions).

A record is *current* when its ``code`` is this code's ``code_key``; only current records are
read, on any machine (off the reference arithmetic the notebooks say once that the numbers were
made on it). ``use_record(False)`` (or ``RL_BY_HAND_EVIDENCE=off``) trains everything here
instead; ``RL_BY_HAND_EVIDENCE=record`` (``make evidence``) writes what is missing or stale.
``scripts/evidence.py check`` (``make evidence-check``) proves the record.
"""
import contextlib
import functools
import hashlib
import inspect
import json
import os
import textwrap
import warnings
from pathlib import Path

import numpy as np

from ..machine import fingerprint, on_reference
from . import files
from .keys import arm_key, canon, code_key, measure_key_code, normal, numbers, params_sha256, seal_of, sha, spec_id
from .models import load_model, save_model

__all__ = ["evidence_dir", "mode", "forget", "use_record", "RecordedPolicy", "measured", "spec_id", "arm_key",
           "get", "lookup", "store_run", "store_warmup", "warmup_weights", "version", "seal_of",
           "encode", "decode", "records"]

_ROOT, _FORCED = Path(__file__).resolve().parents[2], {}          # _FORCED: use_record's switch (this process)


def evidence_dir():
    """``$TOY_EVIDENCE_DIR`` or the repository's ``evidence/`` (beside ``toy/``)."""
    return Path(os.environ.get("TOY_EVIDENCE_DIR") or _ROOT / "evidence")


def mode():
    """``"read"`` (the default: current records are read), ``"record"`` (``make evidence``: missing
    or stale records are written) or ``"off"`` (nothing is read: every run is trained here)."""
    if _FORCED.get("off"):
        return "off"
    m = os.environ.get("RL_BY_HAND_EVIDENCE", "read")
    if m not in ("read", "record", "off"):
        raise ValueError(f"RL_BY_HAND_EVIDENCE must be 'read', 'record' or 'off', got {m!r}")
    return m


def use_record(on=True):
    """``True`` (the default): Part III's runs are read from the book's evidence record, where it
    holds them; ``False``: every run is trained here (minutes; a progress bar says how long)."""
    if not isinstance(on, (bool, np.bool_)):
        raise ValueError(f"on must be True or False, got {on!r}")
    _FORCED["off"] = not on


# ------------------------------------------------------------------------------- keys (keys.py)
_canon, _sha = canon, sha


# ------------------------------------------------------------------------------- values
def encode(v):
    """A value a measurement returns, as JSON that ``decode`` turns back into an equal value."""
    if isinstance(v, dict):
        return {"items": [[encode(k), encode(x)] for k, x in v.items()]}          # in order
    if isinstance(v, np.ndarray):
        return {"array": encode(v.tolist()), "dtype": str(v.dtype), "shape": list(v.shape)}
    if isinstance(v, range):
        return {"range": [v.start, v.stop, v.step]}
    if isinstance(v, (list, tuple)):
        return {"list" if isinstance(v, list) else "tuple": [encode(x) for x in v]}
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return float(v)
    if v is None or isinstance(v, str):
        return v
    raise ValueError(f"a measurement must return numbers, strings, lists, dicts or arrays, got {type(v).__name__}")


def decode(v):
    if isinstance(v, dict):
        if "items" in v:
            return {decode(k): decode(x) for k, x in v["items"]}
        if "array" in v:
            return np.array(decode(v["array"]), dtype=v["dtype"]).reshape(v["shape"])
        if "list" in v:
            return [decode(x) for x in v["list"]]
        if "tuple" in v:
            return tuple(decode(x) for x in v["tuple"])
        if "range" in v:
            return range(*v["range"])
    return v


def _json_history(hist):
    return {k: np.asarray(v, dtype=float).tolist() for k, v in sorted(hist.items()) if k != "time"}


def _array_history(hist, steps=None):
    return {k: np.asarray(v, dtype=float)[:steps] for k, v in hist.items()}


# ------------------------------------------------------------------------------- files (files.py)
def _model_path(rid):
    return evidence_dir() / "models" / f"{rid}.npz"


def _read(rid):
    return files.read(evidence_dir(), rid)


def forget():
    """Drop what this process has read of the record (a worker serving several callers)."""
    files._CACHE.clear()


def records():
    """Every record in the evidence directory: {name: record}."""
    return files.read_all(evidence_dir())


def _write(recs):
    """Write records as they are (no seal: ``_save`` seals). The caller holds ``_locked()``."""
    files.write(evidence_dir(), list(recs), lambda rec: arm_key(rec["spec"]))


def _remove(rids):
    files.remove(evidence_dir(), list(rids))


def _write_json(path, obj):
    files.write_atomic(path, (json.dumps(obj, sort_keys=True, indent=1) + "\n").encode())


@contextlib.contextmanager
def _locked():
    """One writer at a time (nbval and make evidence run notebooks in two processes)."""
    import fcntl
    d = evidence_dir()
    d.mkdir(parents=True, exist_ok=True)
    with open(d / ".lock", "w") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


def _save(*recs):
    for rec in recs:
        rec["seal"] = seal_of(rec)
    _write(recs)
    for rec in recs:
        _touch(rec["id"])


def _touch(rid):
    """``make evidence`` lists the records the notebooks used (the others are stale: removed)."""
    log = os.environ.get("RL_BY_HAND_EVIDENCE_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as f:
            f.write(rid + "\n")


def _current(rec):
    return rec is not None and rec.get("code") == code_key(rec["spec"])


_NOTED = []                       # the off-reference note is printed once per process


def _note_arithmetic(rec):
    """Off the reference arithmetic, say once that the record's numbers were made on it."""
    if not _NOTED and not on_reference():
        _NOTED.append(True)
        print(f"(The runs on this page are read from the book's evidence record, computed on the reference "
              f"arithmetic ({rec['arithmetic']}); this machine's arithmetic differs, so retraining here "
              "gives other digits: tinylm.use_record(False) trains them here.)")


# ------------------------------------------------------------------------------- runs
def get(spec):
    """The current record of ``spec`` (a full or a prefix record), or None."""
    if mode() == "off":
        return None
    rec = _read(spec_id(spec))
    return rec if _current(rec) and _canon(normal(rec["spec"])) == _canon(normal(json.loads(_canon(spec)))) else None


def _family(rid):
    head = rid.rsplit("-", 1)[0]
    return sorted((int(r.rsplit("-", 1)[1]), r) for r in files.ids(evidence_dir())
                  if r.rsplit("-", 1)[0] == head and r.rsplit("-", 1)[1].isdigit())


def _full(rec):
    """The full record a (possibly prefix) record reads its history from, or None."""
    while rec is not None and rec.get("prefix_of"):
        rec = _read(rec["prefix_of"])
        if rec is not None:
            _touch(rec["id"])                     # a record read through a chain is in use
    return rec if _current(rec) else None


def lookup(spec):
    """``(history, record id)`` of a run the record holds (its own record, or a prefix of a longer
    run of the same spec), or None. In record mode a prefix found this way gets its own (prefix)
    record, where measurements of its policy will go."""
    if mode() == "off":
        return None
    rid, steps = spec_id(spec), spec.get("rl_config", {}).get("steps")
    rec = get(spec)
    full = _full(rec) if rec is not None else None
    if full is None and spec["kind"] == "rl":
        for n, other in reversed(_family(rid)):
            if n > steps:
                cand = _read(other)
                if _current(cand) and not cand.get("prefix_of"):
                    full = cand
                    break
        if full is not None and mode() == "record":
            with _locked():
                if _read(rid) is None or not _current(_read(rid)):
                    _save(_new_record(spec, prefix_of=full["id"], arithmetic=full["arithmetic"]))
    if full is None:
        return None
    _touch(rid)
    _touch(full["id"])
    _note_arithmetic(full)
    return _array_history(full["history"], steps), rid


def _new_record(spec, history=None, params=None, prefix_of=None, arithmetic=None):
    return {"id": spec_id(spec), "spec": spec, "code": code_key(spec), "arithmetic": arithmetic or fingerprint(),
            "steps": spec["rl_config"]["steps"] if spec["kind"] == "rl" else spec["sft_config"]["steps"],
            "prefix_of": prefix_of, "history": history, "params_sha256": params, "measurements": {},
            "weights": False}


def _same(a, b):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    return a.shape == b.shape and bool(np.all((a == b) | (np.isnan(a) & np.isnan(b))))


def store_run(spec, policy, hist):
    """Record mode: write a trained run (history, parameter hash). A shorter full record of the same
    spec becomes a prefix of it (after checking, value for value, that it is one)."""
    if mode() != "record":
        return
    rid, steps = spec_id(spec), spec["rl_config"]["steps"]
    history = _json_history(hist)
    with _locked():
        old = _read(rid)
        rec = _new_record(spec, history, params_sha256(policy))
        if _current(old) and old.get("params_sha256") in (None, rec["params_sha256"]):
            rec["measurements"], rec["weights"] = old.get("measurements", {}), old.get("weights", False)
        _save(rec)
        for n, other in _family(rid):
            orec = _read(other)
            if n >= steps or not _current(orec):
                continue
            if not orec.get("prefix_of"):
                for k, v in orec["history"].items():
                    if not _same(v, np.asarray(history[k], dtype=float)[:n]):
                        raise RuntimeError(f"the {n}-step run {other} is not a prefix of the {steps}-step run "
                                           f"{rid} (history {k!r} differs): training depends on steps")
            if orec.get("prefix_of") != rid:      # every shorter run of the family points here
                orec["prefix_of"], orec["history"] = rid, None
                _save(orec)


def store_warmup(spec, model, final_loss):
    """Record mode: write an SFT warm-up's record and its weights."""
    if mode() != "record":
        return
    rid = spec_id(spec)
    with _locked():
        rec = _new_record(spec, {"final_loss": [float(final_loss)]}, params_sha256(model))
        rec["weights"] = True
        _model_path(rid).parent.mkdir(parents=True, exist_ok=True)
        save_model(model, _model_path(rid), meta={"id": rid})
        _save(rec)


def _load_weights(rec):
    path = _model_path(rec["id"])
    if not rec.get("weights") or not path.is_file():
        return None
    model, _ = load_model(path)
    if params_sha256(model) != rec["params_sha256"]:
        raise ValueError(f"evidence/models/{rec['id']}.npz does not hold the parameters its record names "
                         "(run make evidence)")
    return model


def warmup_weights(spec):
    """The recorded SFT warm-up model of ``spec`` (a current record with weights), or None."""
    rec = get(spec)
    if rec is None:
        return None
    _touch(rec["id"])
    _note_arithmetic(rec)
    return _load_weights(rec)


def keep_weights(rid, model):
    """Record mode: a notebook uses this run's policy as a model: keep its weights."""
    if mode() != "record":
        return
    with _locked():
        rec = _read(rid)
        if rec is None:
            return
        sha = params_sha256(model)
        if rec.get("params_sha256") not in (None, sha):
            raise RuntimeError(f"the policy of {rid} differs from its record's parameters")
        rec["params_sha256"] = sha
        save_model(model, _model_path(rid), meta={"id": rid})
        rec["weights"] = True
        _save(rec)


def keep_pool(sampler):
    """Record mode: keep a prompt sampler's pool (``evidence/pools/<sha256>.json``), so that a run
    drawing from it can be trained again from its record."""
    if mode() != "record":
        return
    key = sampler.key()
    path = evidence_dir() / "pools" / f"{key['pool_sha256'][:16]}.json"
    if not path.is_file():
        _write_json(path, {"pool_sha256": key["pool_sha256"], "pool": np.asarray(sampler.pool).tolist()})


def pool(key):
    """The pool a sampler's ``key()`` names, from the record, as an int64 array (checked)."""
    path = evidence_dir() / "pools" / f"{key['pool_sha256'][:16]}.json"
    p = np.ascontiguousarray(json.loads(path.read_text(encoding="utf-8"))["pool"], dtype=np.int64)
    if hashlib.sha256(p.tobytes()).hexdigest() != key["pool_sha256"]:
        raise ValueError(f"{path} does not hold the pool its name says")
    return p


def version(recs=None):
    """A hash of the record's numbers (``keys.numbers`` of every record, and its prompt pools): what
    ``claims.json`` names. A re-key (the code's hash changed, no number did) leaves it as it was."""
    recs = records() if recs is None else recs
    pools = sorted(p.name for p in (evidence_dir() / "pools").glob("*.json"))
    return _sha(_canon({"runs": sorted(numbers(rec) for rec in recs.values()), "pools": pools}))[:16]


# ------------------------------------------------------------------------------- policies
class RecordedPolicy:
    """The final policy of a cached or recorded run. ``measured`` functions read what they return
    from the record; any other use makes it a ``TinyLM`` (``materialize``), loading the recorded
    weights or training the run here (with a progress bar)."""

    def __init__(self, run, rid, model=None):
        self.__dict__["_run"], self.__dict__["_rid"], self.__dict__["_model"] = run, rid, model

    def __repr__(self):
        return f"RecordedPolicy({self._rid})"

    def materialize(self, keep=True):
        """This policy as a ``TinyLM`` (loaded or trained once). ``keep``: in record mode, keep its
        weights in the record (a notebook uses it as a model)."""
        if self._model is None:
            rec = get(self._run.spec())
            model = _load_weights(rec) if rec is not None else None
            if model is None:
                model = self._run.train_here()
                if rec is not None and rec.get("params_sha256") not in (None, params_sha256(model)):
                    warnings.warn(f"the policy trained here for {self._rid} differs from the record's "
                                  "(another arithmetic?)", RuntimeWarning, stacklevel=2)
            self.__dict__["_model"] = model
        if keep:
            keep_weights(self._rid, self._model)
        return self._model

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.materialize(), name)


def _fn_ident(fn):
    fn = inspect.unwrap(fn)
    mod = getattr(fn, "__module__", "") or ""
    try:
        src = textwrap.dedent(inspect.getsource(fn))
    except (OSError, TypeError):
        raise ValueError(f"fn must be a function whose source inspect can read (it keys the record), "
                         f"got {fn!r}") from None
    return mod, fn.__qualname__, src


def _args_key(args, kwargs):
    def enc(v):
        if isinstance(v, np.random.Generator):
            raise ValueError("a measured function takes seeds, not random generators (its value must be "
                             "a function of its arguments)")
        try:
            return encode(v)
        except ValueError:
            raise ValueError("a measured function's arguments must be numbers, strings, lists, dicts or arrays "
                             f"(they key the record), got {type(v).__name__}") from None
    return {"args": [enc(a) for a in args], "kwargs": {k: enc(v) for k, v in sorted(kwargs.items())}}


def _call_text(name, args, kwargs):
    short = lambda v: f"array{tuple(np.shape(v))}" if isinstance(v, np.ndarray) else repr(v)  # noqa: E731
    parts = [short(a) for a in args] + [f"{k}={short(v)}" for k, v in sorted(kwargs.items())]
    return f"{name}(policy{''.join(', ' + p for p in parts)})"


NAMESPACE_IMPORTS = ("import numpy as np\nimport toy\nfrom toy import tinylm, rl\n"
                     "from toy.tinylm import task, rewards, model as tlm\nfrom toy.record.evidence import measured\n")


def _namespace():
    ns = {}
    exec(NAMESPACE_IMPORTS, ns)                  # noqa: S102 — the book's own modules
    return ns


def replay(entry, model):
    """Compute a recorded measurement again on ``model`` (``make evidence-check``)."""
    if entry["module"].startswith("toy."):
        import importlib
        fn = importlib.import_module(entry["module"])
        for part in entry["qualname"].split("."):
            fn = getattr(fn, part)
        fn = inspect.unwrap(fn)
    else:
        ns = _namespace()
        exec(entry["source"], ns)                # noqa: S102 — a notebook's function, kept in the record
        fn = inspect.unwrap(ns[entry["qualname"]])
    a = decode({"list": entry["args"]["args"]})
    kw = {k: decode(v) for k, v in entry["args"]["kwargs"].items()}
    return fn(model, *a, **kw)


def _equal(a, b):
    return _canon(encode(a)) == _canon(encode(b))


def measured(fn):
    """Decorate ``fn(policy, *args, **kwargs)``, a measurement of a trained policy: for the policy of
    a recorded run, its value is read from the evidence record (keyed by ``fn``'s source and the
    arguments); otherwise it is computed. ``fn`` must compute from its arguments alone (numpy and
    ``toy`` names as a Part III notebook imports them): ``make evidence`` checks that, and
    ``make evidence-check`` computes it again for the runs it re-trains."""
    if not inspect.isfunction(fn):
        raise ValueError(f"fn must be a function (def ...), got {type(fn).__name__}")

    @functools.wraps(fn)
    def wrapper(policy, *args, **kwargs):
        if not isinstance(policy, RecordedPolicy):
            return fn(policy, *args, **kwargs)
        return _measure(fn, policy, args, kwargs)
    return wrapper


def measure_code(source=None, qualname=None):
    """The hash of the ``toy`` code a measurement reaches (``keys.measure_key_code``): the training
    code and what the measured function (a notebook's ``source``, or ``toy``'s ``qualname``) uses."""
    return measure_key_code(source, qualname)


def measurement_key(qual, src, akey):
    """The key of a measurement in a record: the function's name, its source's and its arguments' hashes."""
    return f"{qual}:{_sha(src)[:12]}:{_sha(_canon(akey))[:12]}"


def _measure(fn, policy, args, kwargs):
    mod, qual, src = _fn_ident(fn)
    akey = _args_key(args, kwargs)
    key = measurement_key(qual, src, akey)
    rec = get(policy._run.spec()) if mode() != "off" else None
    entries = rec.get("measurements", {}) if rec is not None else {}
    if key in entries and entries[key].get("code") == measure_code(entries[key].get("source"), qual):
        _touch(rec["id"])
        return decode(rec["measurements"][key]["value"])
    value = decode(encode(fn(policy.materialize(keep=False), *args, **kwargs)))   # as the record gives it back
    if mode() == "record" and rec is not None:
        source = None if mod.startswith("toy.") else src
        entry = {"call": _call_text(qual, args, kwargs), "module": mod, "qualname": qual, "code": measure_code(source, qual),
                 "source": source, "args": akey, "value": encode(value)}
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")       # the check's second computation says nothing new
            again = replay(entry, policy.materialize(keep=False))
        if not _equal(again, value):
            raise ValueError(f"the measured function {qual} does not give the same value computed from its "
                             "arguments alone (it reads a global?): pass what it uses as arguments")
        with _locked():
            rec = _read(rec["id"])
            rec["measurements"][key] = entry
            _save(rec)
    return value
