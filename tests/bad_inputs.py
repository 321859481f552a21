"""Bad inputs generated per category and per argument, for the bad-input table of each module.

``cases(fn, valid, spec)`` takes a valid call (``fn(**valid)`` works) and the kind of each argument,
and returns one ``pytest.param(fn, (), kwargs, name)`` per bad value, where ``kwargs`` is the valid
call with that one argument replaced, and ``name`` the argument the ValueError's message must start
with. Each case's id starts with its category (``type``, ``numpy-scalar``, ``big-int``,
``non-finite``, ``overflow``, ``shape``, ``size``, ``value``), so that
``pytest --collect-only -q tests/test_X.py | grep -c '\\[type:'`` counts a category.
:func:`tagged` tags hand-written cases (overflow in intermediate results, sizes, shapes) the same way.
"""
import numpy as np
import pytest

CATEGORIES = ("type", "numpy-scalar", "big-int", "non-finite", "overflow", "shape", "size", "value")

# the bad values of each category, for a scalar argument
_NOT_A_NUMBER = [True, False, "1", None, b"1", 1j, [[1.0]], {"x": 1}, np.str_("2"), np.bool_(True)]
_NOT_FINITE = [np.nan, np.inf, -np.inf, np.float32("nan"), np.float16("inf"), np.longdouble("-inf")]
_BIG_INTS = [10**400, -10**400]                                    # beyond the float range
_INT_BIG = [2**63, 10**30, -10**30, np.uint64(2**64 - 1)]          # beyond int64


def _numpy_widths(x):
    """``x`` as a numpy scalar of every width that can hold it exactly."""
    out = [np.float16(x), np.float32(x), np.float64(x), np.longdouble(x)]
    if float(x) == int(x):
        out += [t(int(x)) for t in (np.int8, np.int16, np.int32, np.int64) if np.iinfo(t).min <= x <= np.iinfo(t).max]
        out += [t(int(x)) for t in (np.uint8, np.uint16, np.uint32, np.uint64) if 0 <= x <= np.iinfo(t).max]
    return [v for v in out if float(v) == float(x)]


def _array_bad(value):
    """Bad versions of a valid float array ``value``."""
    a = np.asarray(value, dtype=float)
    out = {"type": ["abc", None, True, np.array(["1", "2"]), [None] * max(a.size, 1), 1j * np.ones(a.shape),
                    {"a": 1}],
           "non-finite": [], "big-int": []}
    for bad in (np.nan, np.inf, -np.inf):
        b = a.copy()
        b.flat[0] = bad
        out["non-finite"].append(b)
    b = a.ravel().tolist()
    b[0] = 10**400
    out["big-int"].append(np.array(b, dtype=object).reshape(a.shape))
    return out


def cases(fn, valid, spec):
    """Generated bad calls of ``fn``: ``valid`` the kwargs of a valid call, ``spec`` {argument: kind}
    with kind one of "real", "positive", "nonneg", "int", "array", "int_array", "rng", "flag",
    "choice", optionally "kind:lo" for a range, e.g. "int:1" (>= 1), and a final "?" if None is valid."""
    params = []

    def add(cat, arg, value):
        if value is None and optional:
            return
        kw = {**valid, arg: value}
        params.append(pytest.param(fn, (), kw, arg, id=f"{cat}:{fn.__name__}:{arg}:{len(params)}"))

    for arg, kind in spec.items():
        optional = kind.endswith("?")                      # None is a valid value (the default)
        kind, _, lo = kind.rstrip("?").partition(":")
        if kind in ("real", "positive", "nonneg", "int"):
            for v in _NOT_A_NUMBER:
                add("type" if not isinstance(v, (np.str_, np.bool_)) else "numpy-scalar", arg, v)
            for v in _NOT_FINITE:
                add("non-finite", arg, v)
            for v in _BIG_INTS:
                add("big-int", arg, v)
        if kind == "positive":
            for v in (0, -1.0, np.float32(-2), np.int8(0)):
                add("value", arg, v)
        if kind == "nonneg":
            for v in (-1.0, np.float16(-1), np.int64(-3)):
                add("value", arg, v)
        if kind == "int":
            for v in _INT_BIG:
                add("big-int", arg, v)
            for v in (2.5, np.float32(1.5), np.float64(0.5)):
                add("numpy-scalar" if isinstance(v, np.generic) else "value", arg, v)
            if lo:
                for v in (int(lo) - 1, np.int8(int(lo) - 1), np.uint8(0) if int(lo) > 0 else np.int64(int(lo) - 5)):
                    add("value", arg, v)
        if kind == "array":
            for cat, values in _array_bad(valid[arg]).items():
                for v in values:
                    add(cat, arg, v)
        if kind == "int_array":
            a = np.asarray(valid[arg])
            for v in ("abc", None, np.array(["1"]), a.astype(bool) if a.size else np.array([True])):
                add("type", arg, v)
            for bad in (np.nan, np.inf, 0.5):
                b = a.astype(float).copy()
                b.flat[0] = bad
                add("non-finite" if bad != 0.5 else "value", arg, b)
            for bad in (10**30, 2**63):
                b = a.ravel().tolist()
                b[0] = bad
                add("big-int", arg, np.array(b, dtype=object).reshape(a.shape))
            b = a.astype(np.uint64).copy()
            b.flat[0] = np.uint64(2**64 - 1)
            add("big-int", arg, b)
        if kind == "rng":
            for v in (None, 0, "rng", np.random, np.random.RandomState(0), np.random.default_rng):
                add("type", arg, v)
        if kind == "flag":
            for v in (None, 1, "True", 1.0, np.float64(1.0)):
                add("type", arg, v)
        if kind == "choice":
            for v in (None, 1, True, "no such choice", b"grpo", np.str_("no such")):
                add("type" if not isinstance(v, str) else "value", arg, v)
    return params


def tagged(category, rows):
    """Hand-written (fn, args, kwargs, name) rows tagged with a category for the counts."""
    assert category in CATEGORIES
    return [pytest.param(*row, id=f"{category}:{row[0].__name__}:{row[3]}:{i}") for i, row in enumerate(rows)]


def valid_numpy_scalars(fn, valid, args):
    """``pytest.param(fn, kwargs, expected)``: each scalar argument in ``args`` given as a numpy
    scalar of every width that holds its value exactly (float16 to longdouble, int8 to uint64)
    must give exactly what the Python value gives."""
    expected = fn(**valid)
    return [pytest.param(fn, {**valid, a: v}, expected, id=f"{fn.__name__}:{a}:{type(v).__name__}")
            for a in args for v in _numpy_widths(valid[a])]


def same(a, b):
    """``a`` and ``b`` equal, bit for bit (arrays, tuples of arrays, dicts of arrays, numbers)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
