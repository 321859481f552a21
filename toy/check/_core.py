"""The machinery behind ``toy.check.<exercise>(answer)``.

A checker runs the student's answer on a few cases and *prints* either ``✓ ...`` or, for the
first failing case, what was expected, what came back and a hint. It never raises: an
exception inside the student's code is reported as a failed case with its message.

It also *returns* a :class:`Result` — truthy iff every case passes, with ``passed`` / ``total``
cases and the printed ``message`` — so that a grader can score it
(``assert check.x(my_fn)``). The result displays nothing in Jupyter: the message is already
printed, and a checker call ending a cell adds no output.
"""
import numpy as np

__all__ = ["Case", "Result", "run_cases", "tally", "compare", "passed", "failed"]


class Case:
    """One test case: ``Case("G = 4, one success", args=([1, 0, 0, 0],), expected=..., hint=...)``."""

    def __init__(self, name, args=(), expected=None, hint="", atol=1e-6, rtol=1e-6):
        self.name, self.args, self.expected = name, args, expected
        self.hint, self.atol, self.rtol = hint, atol, rtol


class Result:
    """What a checker found: ``passed`` of ``total`` cases pass; ``message`` is what it printed.
    Truthy iff every case passes (and there is at least one)."""

    def __init__(self, passed, total, message):
        self.passed, self.total, self.message = int(passed), int(total), message

    def __bool__(self):
        return self.total > 0 and self.passed == self.total

    def __repr__(self):
        return f"Result(passed={self.passed}, total={self.total}, message={self.message!r})"

    def _ipython_display_(self):
        """Show nothing: the checker has printed its message already."""


def _fmt(x):
    if isinstance(x, np.ndarray) or isinstance(x, (list, tuple)):
        return np.array2string(np.asarray(x, dtype=float), precision=4, suppress_small=True)
    if isinstance(x, (float, np.floating)):
        return f"{x:.4g}"
    return repr(x)


def passed(msg, n_passed=1, total=1):
    """Print ``✓ msg``; return the (truthy) :class:`Result` of ``n_passed`` of ``total`` cases."""
    text = f"✓ {msg}"
    print(text)
    return Result(n_passed, total, text)


def failed(msg, hint="", n_passed=0, total=1):
    """Print ``✗ msg`` and the hint; return the (falsy) :class:`Result`."""
    text = f"✗ {msg}" + (f"\n  hint: {hint}" if hint else "")
    print(text)
    return Result(n_passed, total, text)


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


def tally(fn, cases, judge, what="your function"):
    """Run every case; ``judge(got, case)`` returns ``None`` when ``got`` is right, else the
    ``(message, hint)`` to report. Prints ✓ for all or the first failure only; returns the
    :class:`Result` with the number of cases that pass. ``cases`` need ``name``, ``args``, ``hint``."""
    if fn is None or not callable(fn):
        return failed(f"{what} must be a function, got {type(fn).__name__}",
                      "pass the function itself, e.g. check.x(my_fn), not my_fn(...)", 0, len(cases))
    first, n_ok = None, 0
    for c in cases:
        try:
            got = fn(*c.args)
        except Exception as e:  # report, never raise
            report = (f"case '{c.name}': {what} raised {type(e).__name__}: {e}", c.hint)
        else:
            report = ((f"case '{c.name}': {what} returned None — fill in the exercise", c.hint)
                      if got is None else judge(got, c))
        if report is None:
            n_ok += 1
        elif first is None:
            first = report
    if first is None:
        return passed(f"all {len(cases)} cases pass", n_ok, len(cases))
    return failed(*first, n_ok, len(cases))


def _judge_close(got, c):
    ok, why = _close(got, c.expected, c.atol, c.rtol)
    if ok:
        return None
    detail = f" ({why})" if why else ""
    return f"case '{c.name}': expected {_fmt(c.expected)}, got {_fmt(got)}{detail}", c.hint


def run_cases(fn, cases, what="your function"):
    """Call ``fn(*case.args)`` on every case; report the first failure, or ✓ for all. Returns
    the :class:`Result`."""
    return tally(fn, cases, _judge_close, what)
