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

# One bad value per category and argument (the categories share their check: a second NaN or
# another integer width would run the same line again): for a scalar argument,
_NOT_A_NUMBER = ["1", None]                                        # type: a string, a missing value
_NUMPY_NOT_A_NUMBER = np.bool_(True)                              # numpy-scalar: a numpy bool
_NOT_FINITE = np.nan                                               # non-finite
_BIG_INT = 10**400                                                 # big-int: beyond the float range
_INT_BIG = 2**63                                                   # big-int: beyond int64


def _numpy_widths(x):
    """``x`` as a numpy scalar of every width that can hold it exactly."""
    out = [np.float16(x), np.float32(x), np.float64(x), np.longdouble(x)]
    if float(x) == int(x):
        out += [t(int(x)) for t in (np.int8, np.int16, np.int32, np.int64) if np.iinfo(t).min <= x <= np.iinfo(t).max]
        out += [t(int(x)) for t in (np.uint8, np.uint16, np.uint32, np.uint64) if 0 <= x <= np.iinfo(t).max]
    return [v for v in out if float(v) == float(x)]


def _array_bad(value):
    """Bad versions of a valid float array ``value``, one per category."""
    a = np.asarray(value, dtype=float)
    nan, big = a.copy(), a.ravel().tolist()
    nan.flat[0] = np.nan
    big[0] = 10**400
    return {"type": ["abc"], "non-finite": [nan], "big-int": [np.array(big, dtype=object).reshape(a.shape)]}


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
                add("type", arg, v)
            add("numpy-scalar", arg, _NUMPY_NOT_A_NUMBER)
            add("non-finite", arg, _NOT_FINITE)
            add("big-int", arg, _BIG_INT if kind != "int" else _INT_BIG)
        if kind == "positive":
            add("value", arg, 0)
        if kind == "nonneg":
            add("value", arg, -1.0)
        if kind == "int":
            add("value", arg, 2.5)
            if lo:
                add("value", arg, int(lo) - 1)
        if kind == "array":
            for cat, values in _array_bad(valid[arg]).items():
                for v in values:
                    add(cat, arg, v)
        if kind == "int_array":
            a = np.asarray(valid[arg])
            add("type", arg, "abc")
            for bad, cat in ((np.nan, "non-finite"), (0.5, "value")):
                b = a.astype(float).copy()
                b.flat[0] = bad
                add(cat, arg, b)
            b = a.ravel().tolist()
            b[0] = 2**63
            add("big-int", arg, np.array(b, dtype=object).reshape(a.shape))
        if kind == "rng":
            add("type", arg, 0)
        if kind == "flag":
            add("type", arg, "True")
        if kind == "choice":
            add("type", arg, 1)
            add("value", arg, "no such choice")
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
