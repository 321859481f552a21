"""instructor_kit/grading.py, the engine of the instructor kit's nbgrader test cells, run in-process
on the right and wrong answers of tests/test_check.py, with the hidden cases of
instructor_kit/hidden_cases.py: per-case partial credit, and tampering scores 0."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "instructor_kit"))
sys.path.insert(0, str(ROOT / "scripts"))
import hidden_cases  # noqa: E402
from test_check import CHECKERS, VALUE_CHECKERS  # noqa: E402

from toy import check  # noqa: E402


def grading():
    spec = importlib.util.spec_from_file_location("_toy_grading_test", ROOT / "instructor_kit" / "grading.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


G = grading()


def grade(name, answer, seed=7, points=2):
    cases, forbidden, adapt = hidden_cases.hidden(name, seed)
    stored = [dict(c, expected=eval(G.encode(c["expected"]), {"array": G.array})) for c in cases]   # noqa: S307
    g = G.Grade(f"ex-{name}", name, points, lambda: answer)
    g.hidden(stored, forbidden, adapt)
    return g, g.score()


@pytest.mark.parametrize("checker, right, wrong, n_wrong, total", CHECKERS, ids=[c[0].__name__ for c in CHECKERS])
def test_right_answers_get_full_marks_on_hidden_cases_too(checker, right, wrong, n_wrong, total, capsys):
    g, score = grade(checker.__name__, (right,))
    assert score == 2.0 and g.passed == g.total > total and not g.tampered, capsys.readouterr().out


@pytest.mark.parametrize("checker, right, wrong, n_wrong, total", CHECKERS, ids=[c[0].__name__ for c in CHECKERS])
def test_wrong_answers_get_per_case_credit(checker, right, wrong, n_wrong, total, capsys):
    g, score = grade(checker.__name__, (wrong,))
    n_hidden = g.total - total
    assert n_hidden >= 3 and g.passed < g.total
    assert score == round(2 * g.passed / g.total, 2)
    assert g.passed >= n_wrong                 # the book's cases it passes count (hidden ones may add)


def test_clip_cap_without_the_min_passes_four_hidden_cases_whatever_the_seed(capsys):
    """grade_demo.py's partial submission relies on it: 4 of 6 book cases, 4 of 6 hidden ones."""
    no_min = lambda p, e: np.asarray(p, float) * (1 + e)                       # noqa: E731
    for seed in range(20):
        g, score = grade("clip_cap", (no_min,), seed)
        assert (g.passed, g.total, score) == (8, 12, 1.33)


def test_value_checker_has_no_hidden_cases(capsys):
    (checker, right, wrong, n_wrong, total), = VALUE_CHECKERS
    g, score = grade(checker.__name__, right)
    assert score == 2.0 and g.total == total
    g, score = grade(checker.__name__, wrong)
    assert score == round(2 * n_wrong / total, 2)


def test_the_hidden_cases_change_with_the_seed_and_not_otherwise():
    a, b, c = (hidden_cases.hidden("clipped_grad", s)[0] for s in (1, 1, 2))
    assert [x["setup"] for x in a] == [x["setup"] for x in b] != [x["setup"] for x in c]
    with pytest.raises(ValueError, match="checker must be one of"):
        hidden_cases.hidden("nope", 1)


def test_a_patched_checker_scores_zero(capsys, monkeypatch):
    right = next(c[1] for c in CHECKERS if c[0].__name__ == "clipped_grad")
    monkeypatch.setattr(sys.modules["toy.check.part2"], "clipped_grad", lambda fn: True)
    g, score = grade("clipped_grad", (right,))
    assert score == 0.0 and g.tampered == ["toy.check.part2.clipped_grad"]
    assert "scored 0 because" in capsys.readouterr().out


def test_patched_numpy_scores_zero(capsys, monkeypatch):
    monkeypatch.setattr(np, "allclose", lambda *a, **k: True)
    g, score = grade("clip_cap", (lambda p, e: np.zeros_like(np.asarray(p, float)),))
    assert score == 0.0 and "numpy.allclose" in g.tampered


def test_the_library_answer_scores_zero(capsys):
    from toy import rl
    for answer in (rl.clipped_surrogate_grad, lambda r, a, e: rl.clipped_surrogate_grad(r, a, e)):
        g, score = grade("clipped_grad", (answer,))
        assert score == 0.0 and any("toy.rl.clipped_surrogate_grad" in t for t in g.tampered), g.tampered


def test_warnings_and_stderr_of_a_right_answer_cost_nothing(capsys):
    def cap(p, e):
        np.log(0.0)
        print("debug", file=sys.stderr)
        return np.minimum(np.asarray(p, float) * (1 + e), 1.0)
    g, score = grade("clip_cap", (cap,))
    out, err = capsys.readouterr()
    assert score == 2.0 and err == "" and "warned" in out


def test_a_missing_answer_scores_zero(capsys):
    def answer():
        raise NameError("name 'clip_cap' is not defined")
    g = G.Grade("ex", "clip_cap", 2, answer)
    cases, forbidden, adapt = hidden_cases.hidden("clip_cap", 3)
    g.hidden([dict(c, expected=c["expected"]) for c in cases], forbidden, adapt)
    assert g.score() == 0.0 and g.total == 12 and "missing" in capsys.readouterr().out


def test_stored_arrays_round_trip():
    for v in (0.1 + 0.2, np.arange(5.0) / 3, np.random.default_rng(0).normal(size=(40, 30)), [1, 2],
              (np.ones(2), np.zeros((100, 2))), np.array([True, False])):
        back = eval(G.encode(v), {"array": G.array})                      # noqa: S307
        for x, y in zip(v if isinstance(v, tuple) else (v,), back if isinstance(v, tuple) else (back,)):
            assert np.array_equal(np.asarray(x), np.asarray(y)) and np.asarray(x).dtype == np.asarray(y).dtype


def test_a_name_alone_is_not_the_library_answer(capsys):
    """An answer whose own code has an attribute called like the library's function, on something
    that is not toy, is not flagged (only toy's function, by identity, name on a toy module, or call)."""
    from types import SimpleNamespace
    helper = SimpleNamespace(clipped_surrogate_grad=lambda r, a, e: np.where(
        ((np.asarray(a) > 0) & (np.asarray(r) > 1 + e)) | ((np.asarray(a) < 0) & (np.asarray(r) < 1 - e)),
        0.0, np.broadcast_arrays(np.asarray(r, float), np.asarray(a, float))[1]))
    g, score = grade("clipped_grad", (lambda r, a, e: helper.clipped_surrogate_grad(r, a, e),))
    assert score == 2.0 and not g.tampered


def test_a_module_view_hides_only_the_answer():
    from toy import rl
    import toy
    from toy.check._release import without
    view = without(rl, "clipped_surrogate_grad")
    assert view.clipped_surrogate is rl.clipped_surrogate and "clipped_surrogate_grad" not in dir(view)
    with pytest.raises(AttributeError, match="hidden here"):
        view.clipped_surrogate_grad
    top = without(toy, rl=view)
    assert top.rl is view and top.show is toy.show
    with pytest.raises(ValueError, match="names must be attributes"):
        without(rl, "no_such_function")
    with pytest.raises(ValueError, match="module must be a module"):
        without(3)
