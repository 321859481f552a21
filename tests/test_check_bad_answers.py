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


def _run(checker, fn, capsys):
    r = getattr(check, checker)(fn)
    out = capsys.readouterr().out
    assert isinstance(r, _core.Result) and not r, (checker, r)
    assert r.message and r.message.startswith("✗") and r.message in out
    return r


@pytest.mark.parametrize("checker", FUNCTION_CHECKERS)
@pytest.mark.parametrize("category", sorted(RETURNS))
def test_bad_returns_fail_without_raising(checker, category, capsys):
    _run(checker, RETURNS[category], capsys)


@pytest.mark.parametrize("checker", FUNCTION_CHECKERS)
@pytest.mark.parametrize("category", sorted(RAISES))
def test_answers_that_raise_fail_without_raising(checker, category, capsys):
    exc = RAISES[category]

    def fn(*a):
        raise exc
    r = _run(checker, fn, capsys)
    assert "raised" in r.message


@pytest.mark.parametrize("checker", FUNCTION_CHECKERS)
@pytest.mark.parametrize("what", ["not callable", "wrong arity", "a class"])
def test_bad_functions_fail_without_raising(checker, what, capsys):
    fn = {"not callable": 3.0, "wrong arity": lambda: 0.0, "a class": Weird}[what]
    _run(checker, fn, capsys)


@pytest.mark.parametrize("exc", [KeyboardInterrupt, SystemExit])
@pytest.mark.parametrize("checker", FUNCTION_CHECKERS)
def test_interrupts_go_through(checker, exc):
    def fn(*a):
        raise exc()
    with pytest.raises(exc):
        getattr(check, checker)(fn)


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
