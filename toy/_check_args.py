"""Argument checks shared by the equation modules.

Every public function of `toy` validates its input with these helpers so that bad input
raises a ``ValueError`` naming the argument and what was expected, never a numpy
broadcasting error three frames deep (nor a NaN out).
"""
import dataclasses
import functools
import inspect
import numbers
import types

import numpy as np

MAX_ELEMENTS = 10**8      # the most entries an array a function builds may hold (0.8 GB of float64)
MAX_LOOP = 10**7          # the most steps a Python-level loop of a function may take
_INT64 = 2**63            # integers are computed as int64: |x| < 2**63


def _all_finite(a):
    """True if every entry of the float array ``a`` is finite (one sum, the exact test only
    if the sum is not finite: a sum of finite numbers can overflow)."""
    with np.errstate(over="ignore", invalid="ignore"):
        return bool(np.isfinite(a.sum())) or bool(np.isfinite(a).all())


def _scalar(x, name, what="a real number"):
    """``x`` as a number: a real scalar (Python or numpy, of any width) or 0-d array that is not
    a bool, str or None."""
    if isinstance(x, np.ndarray) and x.ndim == 0:
        x = x[()]
    if isinstance(x, (bool, np.bool_)) or not isinstance(x, numbers.Real):
        raise ValueError(f"{name} must be {what}, got {x!r:.60} ({type(x).__name__})")
    return x


def _float(x, name):
    """``float(x)`` for a real scalar; a Python int beyond the float range is refused by name."""
    try:
        return float(x)
    except OverflowError:
        raise ValueError(f"{name} must be a finite number, got an integer with {len(str(abs(int(x))))} "
                         f"digits (beyond the float range)") from None


def real(x, name, lo=None, hi=None, lo_open=False, hi_open=False):
    """A finite real scalar in the given range, as a float."""
    x = _float(_scalar(x, name), name)
    bad = (not np.isfinite(x) or (lo is not None and (x <= lo if lo_open else x < lo))
           or (hi is not None and (x >= hi if hi_open else x > hi)))
    if bad:
        rng = [f"{'>' if lo_open else '>='} {lo}"] if lo is not None else []
        rng += [f"{'<' if hi_open else '<='} {hi}"] if hi is not None else []
        raise ValueError(f"{name} must be a finite number{' ' + ' and '.join(rng) if rng else ''}, got {x!r}")
    return x


def nonneg(x, name):
    if not np.isscalar(x) and np.ndim(x) != 0:
        raise ValueError(f"{name} must be a scalar, got shape {np.shape(x)}")
    return real(x, name, lo=0)


def positive(x, name):
    if not np.isscalar(x) and np.ndim(x) != 0:
        raise ValueError(f"{name} must be a scalar, got shape {np.shape(x)}")
    return real(x, name, lo=0, lo_open=True)


def integer(x, name, lo=None, hi=None):
    """An integer scalar (an int of any size, a numpy integer of any width or an integral float)
    in [lo, hi], as a Python int. Without ``hi`` it must still fit int64 (|x| < 2**63): the
    arrays it sizes and the arithmetic it enters are int64 and would wrap around."""
    x = _scalar(x, name, "an integer")
    if not isinstance(x, (numbers.Integral, np.integer)):           # a float: finite and integral
        x = _float(x, name)
        ok = np.isfinite(x) and x == int(x)
        x = int(x) if ok else x
    else:
        ok, x = True, int(x)
    top = hi if hi is not None else _INT64 - 1
    ok = ok and (lo is None or x >= lo) and x <= top and x >= -_INT64
    if not ok:
        rng = (f" >= {lo}" if hi is None else f" in {lo}..{hi}") if lo is not None else (
            f" <= {hi}" if hi is not None else "")
        if hi is None and isinstance(x, int) and abs(x) >= _INT64:
            rng += " below 2**63"
        raise ValueError(f"{name} must be an integer{rng}, got {x!r:.60}")
    return x


def size(n, name, limit=MAX_ELEMENTS, what="entries"):
    """Refuse, before any allocation or loop, a job of ``n`` ``what`` beyond ``limit``
    (``name``: the argument(s) that set it). ``n`` is a Python int (no overflow)."""
    if n > limit:
        raise ValueError(f"{name} would need {n:.3g} {what}, more than the limit of {limit:.0e}")
    return n


def int_array(x, name, lo=None, hi=None, ndim=None):
    """An array of integers (integer dtype or integral floats) in [lo, hi], as an int64 array."""
    try:
        a = np.asarray(x)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be an array of integers, got {type(x).__name__}") from None
    kind = a.dtype.kind                              # i/u: integers, f: floats (b: bool is refused)
    if kind == "O" and a.size and all(isinstance(v, numbers.Integral) and not isinstance(v, bool)
                                      for v in a.ravel()):
        raise ValueError(f"{name} must hold integers below 2**63, got values beyond int64")
    if kind not in "iuf" and not (a.size == 0 and kind == "O"):
        raise ValueError(f"{name} must be an array of integers, got dtype {a.dtype}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if kind == "f" and not (_all_finite(a) and np.all(a == np.round(a))):
        raise ValueError(f"{name} must hold integers, got non-integer values")
    if a.size and ((kind == "f" and float(np.abs(a).max()) >= 2.0**63) or (kind == "u" and int(a.max()) >= _INT64)):
        raise ValueError(f"{name} must hold integers below 2**63, got values up to {a.max():.3g}")
    a = a if a.dtype == np.int64 else a.astype(np.int64)
    if a.size and ((lo is not None and a.min() < lo) or (hi is not None and a.max() > hi)):
        raise ValueError(f"{name} must hold integers in {lo if lo is not None else '-inf'}.."
                         f"{hi if hi is not None else 'inf'}, got values from {a.min()} to {a.max()}")
    return a


def as_array(x, name, ndim=None, min_ndim=None):
    """Return ``x`` as a float array, checking its number of dimensions."""
    if x is None or isinstance(x, (str, bytes, bool, np.bool_)):
        raise ValueError(f"{name} must be numeric array-like, got {x!r:.40} ({type(x).__name__})")
    try:
        raw = np.asarray(x)
        if raw.dtype.kind in "USVMmc":          # strings, bytes, records, dates, complex: not reals
            raise TypeError
        a = np.asarray(raw, dtype=float)
    except (TypeError, ValueError, OverflowError):
        raise ValueError(f"{name} must be numeric array-like, got {type(x).__name__}") from None
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if min_ndim is not None and a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {a.shape}")
    if not _all_finite(a):
        raise ValueError(f"{name} must be finite, got non-finite values")
    return a


def nonempty(a, name):
    if a.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {a.shape}")
    return a


def probabilities(x, name, atol=1e-6):
    """Probability vectors along the last axis (..., K), K >= 1: finite, >= 0, each summing to 1."""
    p = as_array(x, name, min_ndim=1)
    if p.shape[-1] == 0:
        raise ValueError(f"{name} must have at least one category on its last axis, got shape {p.shape}")
    if np.any(p < 0) or (p.size and np.abs(p.sum(axis=-1) - 1.0).max() > atol):
        raise ValueError(f"{name} must be probabilities (>= 0, summing to 1 along the last axis)")
    return p


def same_shape(a, b, name_a, name_b):
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same shape, got {a.shape} and {b.shape}")


def mask01(mask, name="mask"):
    """``mask`` as a 2-d array of 0s and 1s, or a ValueError naming it."""
    m = as_array(mask, name, ndim=2)
    if not np.all((m == 0) | (m == 1)):
        raise ValueError(f"{name} must contain only 0 and 1")
    return m


def one_of(x, name, options):
    if not isinstance(x, str) or x not in options:
        raise ValueError(f"{name} must be one of {tuple(options)}, got {x!r}")
    return x


def flag(x, name):
    if not isinstance(x, (bool, np.bool_)):
        raise ValueError(f"{name} must be True or False, got {x!r}")
    return bool(x)


def random_source(rng, name="rng", *methods):
    """A numpy Generator, or an object with the given methods (default ``random``) that carries
    its own seeded state: not a module such as ``np.random``, whose hidden global state makes a
    run irreproducible."""
    methods = methods or ("random",)
    if isinstance(rng, types.ModuleType) or isinstance(rng, np.random.RandomState) or not all(
            callable(getattr(rng, m, None)) for m in methods):
        raise ValueError(f"{name} must be a numpy Generator (np.random.default_rng(seed)), "
                         f"got {getattr(rng, '__name__', type(rng).__name__)}")
    return rng


def generator(rng, name="rng"):
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"{name} must be a numpy Generator (np.random.default_rng(seed)), "
                         f"got {type(rng).__name__}")
    return rng


def seed(x, name="seed"):
    return integer(x, name, lo=0)


def instance(x, cls, name):
    """``x`` is a ``cls``. A config (a dataclass with a ``__post_init__`` check) is checked again
    here, so that a field changed after construction is refused where the config is used, and
    its int/float fields become Python numbers (:func:`config_fields`)."""
    if not isinstance(x, cls):
        raise ValueError(f"{name} must be a {cls.__name__}, got {type(x).__name__}")
    if dataclasses.is_dataclass(x) and callable(getattr(x, "__post_init__", None)):
        if not x.__dataclass_params__.frozen:
            config_fields(x)
        x.__post_init__()
    return x


def function(f, name):
    if not callable(f):
        raise ValueError(f"{name} must be a function, got {type(f).__name__}")
    return f


def group_rewards(rewards, name="rewards"):
    """Rewards of shape (groups, G) with G >= 2; a 1-D input is one group."""
    r = as_array(rewards, name)
    if r.ndim == 1:
        r = r[None, :]
    if r.ndim != 2:
        raise ValueError(f"{name} must have shape (groups, G) or (G,), got shape {r.shape}")
    if r.shape[1] < 2:
        raise ValueError(f"{name} needs a group size G >= 2, got G = {r.shape[1]}")
    return r


def broadcast(shapes, names):
    """The common shape of ``shapes`` (a ValueError naming them if they do not broadcast)."""
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        shapes = ", ".join(f"{n} {s}" for n, s in zip(names, shapes))
        raise ValueError(f"{', '.join(names)} must broadcast to one shape, got {shapes}") from None


def finite(x, name, ndim=None):
    """A float array (its dtype kept: float32 stays float32) with only finite values."""
    a = np.asarray(x) if not (x is None or isinstance(x, str)) else None
    if a is None or a.dtype.kind != "f":
        raise ValueError(f"{name} must be a float array, got {type(x).__name__}")
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if not _all_finite(a):
        raise ValueError(f"{name} must be finite, got non-finite values")
    return a


LOG_MAX = float(np.log(np.finfo(float).max))    # 709.78: e^x overflows above it


def finite_result(x, name, what):
    """Refuse an overflow in an intermediate result: ``x`` (computed from the arguments ``name``,
    or a bound of it; a function of no argument is evaluated here, without overflow warnings)
    must be finite; ``what`` says what overflowed."""
    with np.errstate(all="ignore"):
        a = np.asarray(x() if callable(x) else x, dtype=float)
        ok = _all_finite(a)
    if not ok:
        raise ValueError(f"{name} must be small enough that {what} cannot overflow "
                         f"(the float limit is {np.finfo(float).max:.3g})")
    return x


def exponent(x, name, what="e^x"):
    """Refuse entries of ``x`` above 709.78, where ``what`` (= e^x) overflows."""
    with np.errstate(all="ignore"):
        top = float(np.max(x)) if np.size(x) else 0.0
    if not top <= LOG_MAX:
        raise ValueError(f"{name} must be <= {LOG_MAX:.2f} so that {what} is finite, got {top:.4g}")
    return x


def has_methods(x, name, *methods):
    """``x`` has every one of ``methods`` (duck typing: a model, an optimiser's target, ...)."""
    if not all(callable(getattr(x, m, None)) for m in methods):
        raise ValueError(f"{name} must have the methods {', '.join(methods)}, got {type(x).__name__}")
    return x


def config_fields(cfg):
    """Make a config's ``int`` and ``float`` fields plain Python numbers, in place: numpy scalars of
    any width become ``int``/``float``, and an integral float in an ``int`` field an ``int``, so
    that ``range()`` and the JSON of a cache key take them. Anything else (2.5, "3", None, True)
    is left for the config's own checks to refuse by name. Call it first in ``__post_init__``."""
    for f in dataclasses.fields(cfg):
        kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "")
        v = getattr(cfg, f.name)
        if kind not in ("int", "float") or isinstance(v, (bool, np.bool_)):
            continue
        if isinstance(v, np.integer):
            setattr(cfg, f.name, int(v))
        elif isinstance(v, (float, np.floating)) and kind == "int" and np.isfinite(v) and v == int(v):
            setattr(cfg, f.name, int(v))
        elif isinstance(v, np.floating) and kind == "float":
            setattr(cfg, f.name, float(v))
    return cfg


# ----------------------------------------------------------------------------- the public boundary
def checked(check):
    """Decorator that keeps a function's argument checks apart from its equation.

    ``check`` takes the function's arguments by name (defaults filled in) and raises a
    ``ValueError`` naming a bad one; it may return a dict of normalised arguments (e.g. a list
    turned into an array) that replace the given ones. The decorated function is the equation
    alone (``toy.show`` shows it as written). The checks run on every call, whoever the caller
    (nothing looks at who calls); ``fn.equation`` is the function without them, for a caller
    inside ``toy`` that has checked its input and needs the arithmetic exactly as given (e.g.
    float32 arrays kept float32).

        def _check_gae(rewards, values, mask, gamma, lam):
            ...
        @checked(_check_gae)
        def gae(rewards, values, mask, gamma=1.0, lam=1.0):
            ...
    """
    def wrap(fn):
        sig = inspect.signature(fn)

        @functools.wraps(fn)
        def public(*args, **kwargs):
            try:
                bound = sig.bind(*args, **kwargs)
            except TypeError as e:
                raise ValueError(f"{fn.__name__}: {e}") from None
            bound.apply_defaults()
            new = check(**bound.arguments)
            if new:
                bound.arguments.update(new)
            return fn(*bound.args, **bound.kwargs)
        public.check, public.equation = check, fn
        return public
    return wrap
