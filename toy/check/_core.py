"""The machinery behind ``toy.check.<exercise>(answer)``.

A checker runs the student's answer on a few cases and *prints* either ``✓ ...`` or, for the
first failing case, what was expected, what came back and a hint. It never raises: an
exception inside the student's code is reported as a failed case with its message.
"""
import numpy as np

__all__ = ["Case", "run_cases", "compare", "passed", "failed"]


class Case:
    """One test case: ``Case("G = 4, one success", args=([1, 0, 0, 0],), expected=..., hint=...)``."""

    def __init__(self, name, args=(), expected=None, hint="", atol=1e-6, rtol=1e-6):
        self.name, self.args, self.expected = name, args, expected
        self.hint, self.atol, self.rtol = hint, atol, rtol


def _fmt(x):
    if isinstance(x, np.ndarray) or isinstance(x, (list, tuple)):
        return np.array2string(np.asarray(x, dtype=float), precision=4, suppress_small=True)
    if isinstance(x, (float, np.floating)):
        return f"{x:.4g}"
    return repr(x)


def passed(msg):
    print(f"✓ {msg}")
    return None


def failed(msg, hint=""):
    print(f"✗ {msg}" + (f"\n  hint: {hint}" if hint else ""))
    return None


def _close(got, expected, atol, rtol):
    try:
        g = np.asarray(got, dtype=float)
    except (TypeError, ValueError):
        return False, "not a number or array"
    e = np.asarray(expected, dtype=float)
    if g.shape != e.shape:
        return False, f"shape {g.shape}, expected shape {e.shape}"
    if not np.allclose(g, e, atol=atol, rtol=rtol, equal_nan=False):
        return False, None
    return True, None


def compare(name, got, expected, hint="", atol=1e-6, rtol=1e-6):
    """Check one value; prints ✓ or ✗ with expected vs got. Returns True when it matches."""
    if got is None:
        failed(f"{name}: got None — the exercise is not answered yet", hint)
        return False
    ok, why = _close(got, expected, atol, rtol)
    if ok:
        passed(f"{name}: {_fmt(got)}")
        return True
    detail = f" ({why})" if why else ""
    failed(f"{name}: expected {_fmt(expected)}, got {_fmt(got)}{detail}", hint)
    return False


def run_cases(fn, cases, what="your function"):
    """Call ``fn(*case.args)`` on every case; report the first failure, or ✓ for all."""
    if fn is None or not callable(fn):
        return failed(f"{what} must be a function, got {type(fn).__name__}",
                      "pass the function itself, e.g. check.x(my_fn), not my_fn(...)")
    for c in cases:
        try:
            got = fn(*c.args)
        except Exception as e:  # report, never raise
            return failed(f"case '{c.name}': {what} raised {type(e).__name__}: {e}", c.hint)
        if got is None:
            return failed(f"case '{c.name}': {what} returned None — fill in the exercise", c.hint)
        ok, why = _close(got, c.expected, c.atol, c.rtol)
        if not ok:
            detail = f" ({why})" if why else ""
            return failed(f"case '{c.name}': expected {_fmt(c.expected)}, got {_fmt(got)}{detail}", c.hint)
    return passed(f"all {len(cases)} cases pass")
