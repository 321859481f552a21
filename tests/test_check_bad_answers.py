"""Checkers never raise on a student's answer: every checker, fed each kind of bad answer, returns
a failing Result whose message says what was wrong (KeyboardInterrupt and SystemExit go through).

The bad answers are generated per category below, for every exported checker (function checkers
get functions, the value checker gets values)."""
import numpy as np
import pytest

from toy import check
from toy.check import _core, part1, part1_numsearch, part2, part3

FUNCTION_CHECKERS = sorted(set(part1.__all__ + part1_numsearch.__all__ + part2.__all__ + part3.__all__)
                           - {"hard_problem_advantages"})


class Weird:
    """An object that breaks whatever numpy or formatting does with it."""

    def __array__(self, *a, **k):
        raise ValueError("no array for you")

    def __float__(self):
        raise TypeError("no float either")

    def __len__(self):
        raise RuntimeError("no len")

    def __repr__(self):
        raise RuntimeError("no repr")

    def __eq__(self, other):
        raise RuntimeError("no ==")

    __hash__ = object.__hash__


def _gen():
    yield 1.0


# category: what the student's function returns (or does)
RETURNS = {
    "a string": lambda *a: "0.5",
    "a ragged nested list": lambda *a: [[1], [1, 2]],
    "NaN": lambda *a: float("nan"),
    "infinity": lambda *a: np.inf,
    "a complex number": lambda *a: 1 + 2j,
    "a dict": lambda *a: {"a": 1},
    "an object that breaks numpy and repr": lambda *a: Weird(),
    "a generator": lambda *a: _gen(),
    "an empty array": lambda *a: np.array([]),
    "an array of the wrong shape": lambda *a: np.ones((3, 7, 2)),
    "an object array": lambda *a: np.array([None, "x", 1.0], dtype=object),
    "a tuple of strings": lambda *a: ("a", "b"),
    "a boolean": lambda *a: True,
}
RAISES = {
    "ValueError": ValueError("bad"),
    "an exception whose str raises": type("Nasty", (Exception,), {"__str__": lambda s: 1 / 0})(),
}


def _raiser(exc):
    def fn(*a):
        raise exc
    return fn


# one table: each category of bad answer, for every function checker
BAD_ANSWERS = {**{f"returns {k}": fn for k, fn in RETURNS.items()},
               **{f"raises {k}": _raiser(exc) for k, exc in RAISES.items()},
               "not callable": 3.0, "wrong arity": lambda: 0.0, "a class": Weird}


def _fails_cleanly(checker, fn, capsys):
    """None if the checker returns a failing Result for ``fn`` and prints its message; else what went wrong."""
    try:
        r = getattr(check, checker)(fn)
    except Exception as e:                                   # noqa: BLE001 — the defect under test
        return f"raised {type(e).__name__}: {e}"
    out = capsys.readouterr().out
    if not isinstance(r, _core.Result) or r:
        return f"returned {r!r}"
    if not (r.message and r.message.startswith("✗") and r.message in out):
        return f"message {r.message!r} not printed"
    return None


@pytest.mark.parametrize("checker", FUNCTION_CHECKERS)
def test_every_bad_answer_fails_without_raising(checker, capsys):
    wrong = {cat: why for cat, fn in BAD_ANSWERS.items() if (why := _fails_cleanly(checker, fn, capsys))}
    assert not wrong, wrong
    for cat in RAISES:                                       # the message says the answer raised
        getattr(check, checker)(BAD_ANSWERS[f"raises {cat}"])
        assert "raised" in capsys.readouterr().out, cat


@pytest.mark.parametrize("checker", FUNCTION_CHECKERS)
def test_interrupts_go_through(checker):
    for exc in (KeyboardInterrupt, SystemExit):
        with pytest.raises(exc):
            getattr(check, checker)(_raiser(exc()))


@pytest.mark.parametrize("values", [("x", "y"), ([[1], [1, 2]], None), (Weird(), Weird()),
                                    (np.nan, np.inf), ({"a": 1}, 1 + 2j), ([1.0] * 3, [0.0] * 9)],
                         ids=["strings", "ragged/None", "weird", "nan/inf", "dict/complex", "wrong length"])
def test_value_checker_never_raises(values, capsys):
    r = check.hard_problem_advantages(*values)
    assert isinstance(r, _core.Result) and not r and "✗" in capsys.readouterr().out


def test_a_warning_does_not_reach_stderr_and_is_reported(capsys):
    """A right answer that warns still passes; the warning is shown on stdout, never on stderr
    (nbgrader zeroes a test cell that writes to stderr)."""
    def cap(p, eps):
        np.log(0.0)
        import warnings
        warnings.warn("a stray warning")
        return np.minimum(np.asarray(p, float) * (1 + eps), 1.0)
    r = check.clip_cap(cap)
    out, err = capsys.readouterr()
    assert r and err == "" and "warn" in out
