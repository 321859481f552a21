"""The machinery behind ``toy.check.<exercise>(answer)``.

A checker runs the student's answer on a few cases and *prints* either ``✓ ...`` or, for the
first failing case, what was expected, what came back and a hint. It never raises on a
student's answer (only ``KeyboardInterrupt`` and ``SystemExit`` go through): an exception inside
the student's code, or an answer that cannot be compared or even printed, is a failed case whose
message says what was wrong. Warnings and anything the answer writes to stderr are caught and
reported on stdout (a grader such as nbgrader zeroes a test cell that writes to stderr, and a
right answer that warns is still right).

It also *returns* a :class:`Result` — truthy iff every case passes, with ``passed`` / ``total``
cases and the printed ``message`` — so that a grader can score it
(``assert check.x(my_fn)``). The result displays nothing in Jupyter: the message is already
printed, and a checker call ending a cell adds no output.
"""
import contextlib
import io
import warnings

import numpy as np

from .._check_args import integer, real

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
        total = integer(total, "total", lo=0)
        self.passed, self.total, self.message = integer(passed, "passed", 0, total), total, message

    def __bool__(self):
        return self.total > 0 and self.passed == self.total

    def __repr__(self):
        return f"Result(passed={self.passed}, total={self.total}, message={self.message!r})"

    def _ipython_display_(self):
        """Show nothing: the checker has printed its message already."""


def fmt_value(x):
    """``x`` as short text; never raises (an answer may be an object that breaks numpy or repr)."""
    try:
        if isinstance(x, np.ndarray) or isinstance(x, (list, tuple)):
            return np.array2string(np.asarray(x, dtype=float), precision=4, suppress_small=True)
        if isinstance(x, (float, np.floating)):
            return f"{x:.4g}"
        text = repr(x)
        return text if len(text) <= 200 else text[:197] + "..."
    except Exception:  # noqa: BLE001 — whatever the answer is, describe it
        return f"an object of type {type(x).__name__}"


def _why(e):
    """``TypeName: message`` of an exception, never raising (its ``__str__`` may raise)."""
    try:
        text = str(e)
    except Exception:  # noqa: BLE001
        text = "(its message cannot be printed)"
    return f"{type(e).__name__}: {text}" if text else type(e).__name__


@contextlib.contextmanager
def _contained(notes):
    """Run student code with its warnings recorded and its stderr captured into ``notes``."""
    err = io.StringIO()
    with warnings.catch_warnings(record=True) as caught, contextlib.redirect_stderr(err):
        warnings.simplefilter("always")
        try:
            yield
        finally:
            for w in caught:
                note = f"{w.category.__name__}: {w.message}"
                if note not in notes:
                    notes.append(note)
            if err.getvalue().strip():
                notes.append("wrote to stderr: " + err.getvalue().strip()[:200])


def _with_notes(text, notes):
    if not notes:
        return text
    shown = "; ".join(notes[:3]) + (f" (and {len(notes) - 3} more)" if len(notes) > 3 else "")
    return f"{text}\n  note: your code warned (not an error, but worth a look): {shown}"


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


def close_enough(got, expected, atol, rtol):
    """(True, None) when ``got`` matches ``expected``, else (False, why or None)."""
    if isinstance(got, (str, bytes, dict)) or (isinstance(got, np.ndarray) and got.dtype.kind in "OUSV"):
        return False, f"not a number or array of numbers, a {type(got).__name__}"
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", np.exceptions.ComplexWarning)
            g = np.asarray(got, dtype=float)
    except Exception as e:  # noqa: BLE001 — a ragged list, a complex number, an object
        return False, f"not a number or array of numbers ({_why(e)})"
    e = np.asarray(expected, dtype=float)
    if g.shape != e.shape:
        return False, f"shape {g.shape}, expected shape {e.shape}"
    if not np.allclose(g, e, atol=atol, rtol=rtol, equal_nan=False):
        return False, "not a finite number" if not np.all(np.isfinite(g)) else None
    return True, None


def compare(name, got, expected, hint="", atol=1e-6, rtol=1e-6):
    """Check one value; prints ✓ or ✗ with expected vs got. Returns True when it matches.
    ``expected``, ``atol`` and ``rtol`` are the instructor's (checked); ``got`` is the student's."""
    atol, rtol = real(atol, "atol", lo=0), real(rtol, "rtol", lo=0)
    try:
        np.asarray(expected, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"expected must be a number or an array of numbers, got {type(expected).__name__}") from None
    if got is None:
        failed(f"{name}: got None — the exercise is not answered yet", hint)
        return False
    notes = []
    with _contained(notes):
        ok, why = close_enough(got, expected, atol, rtol)
    if ok:
        passed(f"{name}: {fmt_value(got)}")
        return True
    detail = f" ({why})" if why else ""
    failed(f"{name}: expected {fmt_value(expected)}, got {fmt_value(got)}{detail}", hint)
    return False


def tally(fn, cases, judge, what="your function"):
    """Run every case; ``judge(got, case)`` returns ``None`` when ``got`` is right, else the
    ``(message, hint)`` to report. Prints ✓ for all or the first failure only; returns the
    :class:`Result` with the number of cases that pass. ``cases`` need ``name``, ``args``, ``hint``."""
    if fn is None or not callable(fn) or isinstance(fn, type):
        return failed(f"{what} must be a function, got {type(fn).__name__}",
                      "pass the function itself, e.g. check.x(my_fn), not my_fn(...)", 0, len(cases))
    first, n_ok, notes = None, 0, []
    for c in cases:
        with _contained(notes):
            try:
                got = fn(*c.args)
            except Exception as e:  # noqa: BLE001 — report, never raise
                report = (f"case '{c.name}': {what} raised {_why(e)}", c.hint)
            else:
                if got is None:
                    report = (f"case '{c.name}': {what} returned None — fill in the exercise", c.hint)
                else:
                    try:
                        report = judge(got, c)
                    except Exception as e:  # noqa: BLE001 — an answer the judge cannot handle
                        report = (f"case '{c.name}': {what} returned {fmt_value(got)}, which cannot be "
                                  f"compared with the expected value ({_why(e)})", c.hint)
        if report is None:
            n_ok += 1
        elif first is None:
            first = report
    if first is None:
        return passed(_with_notes(f"all {len(cases)} cases pass", notes), n_ok, len(cases))
    return failed(_with_notes(first[0], notes), first[1], n_ok, len(cases))


def _judge_close(got, c):
    ok, why = close_enough(got, c.expected, c.atol, c.rtol)
    if ok:
        return None
    detail = f" ({why})" if why else ""
    return f"case '{c.name}': expected {fmt_value(c.expected)}, got {fmt_value(got)}{detail}", c.hint


def run_cases(fn, cases, what="your function"):
    """Call ``fn(*case.args)`` on every case; report the first failure, or ✓ for all. Returns
    the :class:`Result`."""
    return tally(fn, cases, _judge_close, what)
