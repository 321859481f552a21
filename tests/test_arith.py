"""Tests for toy.arith: the arithmetic world and the trainable toy model.

References are independent of the vectorised code: hand-worked long arithmetic, products of
per-step probabilities, naive loops, and finite differences.
"""
import itertools
import re

import numpy as np
import pytest

import toy.arith
from toy import metrics
from toy.arith import model as A


@pytest.fixture(scope="module")
def data():
    return A.make_dataset()


# --- calibration -------------------------------------------------------------------------

def test_calibration_four_probabilities():
    p = A.Model().p_correct()
    assert np.round(p[[A.ADD_NC, A.MUL1, A.MUL2, A.MUL2_BIG]], 3).tolist() == [0.821, 0.506, 0.186, 0.102]


def test_bug_beats_correct_in_the_two_hard_contexts_only():
    probs = A.Model().probs()
    assert probs[A.MUL2, A.BUG] > probs[A.MUL2, A.CORRECT]
    assert probs[A.MUL2_BIG, A.BUG] > probs[A.MUL2_BIG, A.CORRECT]
    assert np.all(probs[:A.MUL2, A.CORRECT] > probs[:A.MUL2, A.BUG])
    np.testing.assert_allclose(probs.sum(1), 1.0)


def test_test_pass1_about_one_tenth(data):
    _, test = data
    p = A.pass1_exact(A.Model(), test)
    assert 0.07 < p < 0.13
    # and by sampling: mean reward of 400 samples per test problem
    r = A.verify(A.sample(A.Model(), test, 400, np.random.default_rng(1)), test)
    assert abs(r.mean() - p) < 4 * np.sqrt(p * (1 - p) / r.size)


def test_temperature_scales_logits():
    m = A.Model()
    z = m.logits() / 0.5
    expected = np.exp(z) / np.exp(z).sum(1, keepdims=True)
    np.testing.assert_allclose(m.probs(temperature=0.5), expected)


# --- the world ---------------------------------------------------------------------------

def test_problems_shape_and_answers(data):
    train, test = data
    assert len(train) == 300 and len(test) == 200
    assert train.n_steps.min() >= 2 and train.n_steps.max() <= 12
    for i in range(20):                                  # naive left-to-right evaluation
        v = int(train.start[i])
        for t in range(train.n_steps[i]):
            v = v * int(train.operand[i, t]) if train.is_mul[i, t] else v + int(train.operand[i, t])
        assert v == train.answer[i]
        assert eval(train.text(i).replace("= ?", "").replace("×", "*").split("+")[0]) is not None


def test_contexts_match_their_definition(data):
    train, _ = data
    for i in range(100):
        v = int(train.start[i])
        for t in range(train.n_steps[i]):
            c, x = train.context[i, t], int(train.operand[i, t])
            col = [(v // 10**k) % 10 + (x // 10**k) % 10 for k in range(8)]
            if c == A.ADD_NC:
                assert max(col) < 10
            elif c == A.ADD_C:
                assert max(col) >= 10
            elif c == A.MUL1:
                assert 2 <= x <= 9
            elif c == A.MUL2:
                assert 11 <= x <= 99 and v < 100
            else:
                assert 11 <= x <= 99 and 100 <= v < 1000
            v = v * x if train.is_mul[i, t] else v + x
    counts = np.bincount(train.context[train.context >= 0], minlength=5)
    assert np.all(counts > 50)                           # every context is well represented


def test_same_seed_same_problems():
    a, b = A.make_problems(10, seed=3), A.make_problems(10, seed=3)
    np.testing.assert_array_equal(a.operand, b.operand)
    assert not np.array_equal(a.operand, A.make_problems(10, seed=4).operand)


@pytest.mark.parametrize("v, x, is_mul, right, bug", [
    (47, 38, False, 85, 75),          # 7+8 = 15 → the carry is dropped: 75
    (12, 13, False, 25, 35),          # no carry: a phantom carry, +10
    (47, 6, True, 282, 42),           # 7·6 = 42 → 2, 4·6 = 24 → 4: "42"
    (123, 45, True, 5535, 5325),      # partials without carries: 505 + 4820
])
def test_methods_by_hand(v, x, is_mul, right, bug):
    assert A.apply_method(np.int64(v), x, is_mul, A.CORRECT, 3) == right
    assert A.apply_method(np.int64(v), x, is_mul, A.BUG, 3) == bug
    assert A.apply_method(np.int64(v), x, is_mul, A.SLIP, 3) == right + 3
    assert A.apply_method(np.int64(v), x, is_mul, A.SLIP, -3) == right - 3


def test_bug_keeps_units_digit_and_is_always_wrong():
    rng = np.random.default_rng(0)
    v = rng.integers(1, 10**5, size=2000)
    x = rng.integers(2, 100, size=2000)
    is_mul = rng.random(2000) < 0.5
    right = A.apply_method(v, x, is_mul, A.CORRECT, 1)
    bug = A.apply_method(v, x, is_mul, A.BUG, 1)
    assert np.all(bug != right)
    assert np.all(bug % 10 == right % 10)
    slip = A.apply_method(v, x, is_mul, A.SLIP, rng.integers(1, 10, 2000))
    assert np.all(slip % 10 != right % 10)


# --- sampling against exact enumeration --------------------------------------------------

def test_sampling_matches_enumeration_on_short_problems():
    probs = A.make_problems(6, seed=5, min_steps=2, max_steps=3)
    model = A.Model(delta=np.random.default_rng(0).normal(size=(5, 3)))
    n = 20000
    s = A.sample(model, probs, n, np.random.default_rng(2))
    pi = model.probs()
    for i in range(len(probs)):
        ctx = probs.context[i, :probs.n_steps[i]]
        # P(whole problem correct) = product of per-step P(correct)
        p_exact = np.prod(pi[ctx, A.CORRECT])
        got = (s.answer[i] == probs.answer[i]).mean()
        assert abs(got - p_exact) < 4 * np.sqrt(p_exact * (1 - p_exact) / n) + 1e-3
        # every method sequence: frequency vs product of probabilities (enumerated)
        seqs = s.method[i, :, :len(ctx)]
        for combo in itertools.product(range(3), repeat=len(ctx)):
            p = np.prod(pi[ctx, list(combo)])
            f = np.all(seqs == combo, axis=1).mean()
            assert abs(f - p) < 4 * np.sqrt(p * (1 - p) / n) + 1e-3


def test_logp_is_exact():
    probs = A.make_problems(5, seed=1)
    model = A.Model(delta=np.random.default_rng(1).normal(size=(5, 3)))
    s = A.sample(model, probs, 4, np.random.default_rng(0), temperature=0.7)
    pi = model.probs(0.7)
    for i in range(5):
        for j in range(4):
            L = probs.n_steps[i]
            naive = sum(np.log(pi[probs.context[i, t], s.method[i, j, t]]) for t in range(L))
            assert np.isclose(s.seq_logp[i, j], naive)
            assert np.all(s.method[i, j, L:] == -1)


def test_hint_raises_correct_logit_only():
    m = A.Model()
    np.testing.assert_allclose(m.logits(hint=1.5) - m.logits(), np.tile([1.5, 0, 0], (5, 1)))


def test_verifiers():
    probs = A.make_problems(30, seed=2)
    rng = np.random.default_rng(0)
    only_bug = A.Model(delta=np.tile([0.0, 50.0, 0.0], (5, 1)))     # always the bug
    s = A.sample(only_bug, probs, 3, rng)
    assert A.verify(s, probs, "exact").sum() == 0
    assert A.verify(s, probs, "units").min() == 1                  # the bug keeps the units digit
    only_right = A.Model(delta=np.tile([50.0, 0.0, 0.0], (5, 1)))
    assert A.verify(A.sample(only_right, probs, 3, rng), probs).min() == 1


# --- the data a log-likelihood gradient needs -----------------------------------------------

def test_counts_by_a_naive_loop():
    rng = np.random.default_rng(0)
    ctx = rng.integers(-1, 5, size=(7, 4))
    meth = rng.integers(0, 3, size=(7, 4))
    w = rng.normal(size=(7, 1))
    onehot, total = A.Model().counts(ctx, meth, w)
    ref_onehot, ref_total = np.zeros((5, 3)), np.zeros(5)
    for i, t in np.ndindex(7, 4):
        if ctx[i, t] >= 0:
            ref_onehot[ctx[i, t], meth[i, t]] += w[i, 0]
            ref_total[ctx[i, t]] += w[i, 0]
    np.testing.assert_allclose(onehot, ref_onehot)
    np.testing.assert_allclose(total, ref_total)


def test_hint_moves_only_the_correct_methods_logit_in_any_world():
    m = A.Model(base_logits=np.zeros((5, 4)))                     # four methods (as arith.variant)
    np.testing.assert_allclose(m.logits(hint=2.0) - m.logits(), np.tile([2.0, 0, 0, 0], (5, 1)))


# --- metrics -----------------------------------------------------------------------------

def test_step_entropy(data):
    _, test = data
    m = A.Model()
    h = A.step_entropy(m)
    np.testing.assert_allclose(h, metrics.entropy(A.P_START))
    steps = test.context[test.context >= 0]
    assert A.step_entropy(m, test) == pytest.approx(h[steps].mean())


# --- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("call, word", [
    (lambda: A.Model().probs(temperature=0), "temperature"),
    (lambda: A.Model().logits(hint=-1), "hint"),
    (lambda: A.Model(delta=np.zeros((5, 2))), "delta"),
    (lambda: A.make_problems(0, seed=0), "n"),
    (lambda: A.make_problems(5, seed=0, min_steps=3, max_steps=2), "min_steps"),
    (lambda: A.sample(A.Model(), A.make_problems(2, 0), 0, np.random.default_rng(0)), "n"),
    (lambda: A.verify(None, A.make_problems(2, 0), "approx"), "verifier"),
])
def test_bad_input_raises_value_error(call, word):
    with pytest.raises(ValueError, match=word):
        call()


def test_trace_by_hand():
    probs = A.make_problems(1, seed=0, min_steps=2, max_steps=2)
    rows = A.trace(probs, 0, [A.CORRECT, A.SLIP], slip=2)
    v0, (x0, x1) = int(probs.start[0]), probs.operand[0, :2]
    first = v0 * x0 if probs.is_mul[0, 0] else v0 + x0
    second = first * x1 if probs.is_mul[0, 1] else first + x1
    assert rows[0]["value"] == rows[0]["correct value"] == first
    assert rows[1]["correct value"] == second == probs.answer[0]
    assert rows[1]["value"] == second + 2
    with pytest.raises(ValueError, match="methods"):
        A.trace(probs, 0, [0, 0, 0])


def test_p_solve_is_the_product_of_per_step_probabilities(data):
    _, test = data
    model = A.Model(delta=np.random.default_rng(3).normal(size=(5, 3)))
    pc = model.probs()[:, A.CORRECT]
    naive = [np.prod([pc[test.context[i, t]] for t in range(test.n_steps[i])]) for i in range(len(test))]
    np.testing.assert_allclose(A.p_solve(model, test), naive)
    assert np.isclose(A.pass1_exact(model, test), np.mean(naive))


def test_apply_method_matches_computing_every_method_everywhere():
    """apply_method computes the carry bug only where it is chosen; compare with the plain
    formula that computes all three methods for every entry and selects."""
    rng = np.random.default_rng(5)
    v = rng.integers(0, 10**6, size=(50, 40))
    operand = rng.integers(1, 100, size=(50, 1))
    is_mul = rng.random((50, 1)) < 0.5
    method = rng.integers(0, 3, size=(50, 40))
    slip = rng.integers(-9, 10, size=(50, 40))
    right = np.where(is_mul, v * operand, v + operand)
    naive_bug = np.array([[A._carry_bug(v[i, j], operand[i, 0], is_mul[i, 0]) for j in range(40)]
                          for i in range(50)])
    slipped = np.where(right + slip >= 0, right + slip, right + np.abs(slip))
    expected = np.select([method == A.CORRECT, method == A.BUG], [right, naive_bug], slipped)
    np.testing.assert_array_equal(A.apply_method(v, operand, is_mul, method, slip), expected)


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
_P = A.make_problems(4, seed=0)
_M = A.Model()
_RNG = np.random.default_rng(0)
_S = A.sample(_M, _P, 2, _RNG)
_G = np.zeros((5, 3))
BAD_INPUTS = [
    (A.make_problems, (0, 0), {}, "n"),
    (A.make_problems, (None, 0), {}, "n"),
    (A.make_problems, (3, -1), {}, "seed"),
    (A.make_problems, (3, 0), {"min_steps": 3, "max_steps": 2}, "min_steps"),
    (A.make_problems, (3, 0), {"min_steps": 0}, "min_steps"),
    (A.make_problems, (3, 0), {"max_steps": 2.5}, "max_steps"),
    (A.make_dataset, (), {"n_train": 0}, "n_train"),
    (A.make_dataset, (), {"n_test": "5"}, "n_test"),
    (A.make_dataset, (), {"seed": None}, "seed"),
    (A.Model, (), {"delta": np.zeros((5, 2))}, "delta"),
    (A.Model, (), {"base_logits": np.ones(3)}, "base_logits"),
    (_M.logits, (), {"hint": -1}, "hint"),
    (_M.log_probs, (), {"temperature": 0}, "temperature"),
    (_M.probs, (), {"temperature": None}, "temperature"),
    (_M.p_correct, (), {"temperature": "1"}, "temperature"),
    (_M.counts, ([5], [0], [1.0]), {}, "context"),
    (_M.counts, ([0], [3], [1.0]), {}, "method"),
    (_M.counts, ([0, 1], [0, 1, 2], [1.0]), {}, "context"),
    (_M.counts, ([0], [0], [np.nan]), {}, "weight"),
    (_M.counts, ([0.5], [0], [1.0]), {}, "context"),
    (_M.logits, (), {"hint": None}, "hint"),
    (A.sample, (_M, _P, 0, _RNG), {}, "n"),
    (A.sample, (_M, _P, 2, 0), {}, "rng"),
    (A.sample, ("model", _P, 2, _RNG), {}, "model"),
    (A.sample, (_M, None, 2, _RNG), {}, "problems"),
    (A.sample, (_M, _P, 2, _RNG), {"temperature": -1}, "temperature"),
    (A.sample, (_M, _P, 2, _RNG), {"hint": np.nan}, "hint"),
    (A.apply_method, (47, 6, True, 5, 1), {}, "method"),
    (A.apply_method, (47, 6, True, 0, 20), {}, "slip"),
    (A.apply_method, (47.5, 6, True, 0, 1), {}, "v"),
    (A.apply_method, (47, [6, 7], True, [0, 1, 2], 1), {}, "v"),
    (A.apply_method, (47, 6, 3, 0, 1), {}, "is_mul"),
    (A.verify, (None, _P, "approx"), {}, "verifier"),
    (A.verify, (None, _P), {}, "samples"),
    (A.verify, (_S, _P.subset([0, 1])), {}, "samples"),
    (A.verify, (_S, "problems"), {}, "problems"),
    (A.p_solve, (_M, [1, 2]), {}, "problems"),
    (A.p_solve, (_M, _P), {"temperature": 0}, "temperature"),
    (A.pass1_exact, (_M, _P.subset([])), {}, "problems"),
    (A.pass1_exact, (None, _P), {}, "model"),
    (A.step_entropy, (None,), {}, "model"),
    (A.step_entropy, (_M, "problems"), {}, "problems"),
    (A.step_entropy, (_M, _P), {"temperature": 0}, "temperature"),
    (A.pass1_exact, (_M, _P.subset([])), {}, "problems"),
    (A.p_solve, (_M, _P), {"temperature": -1}, "temperature"),
    (A.step_entropy, (_M, "problems"), {}, "problems"),
    (A.step_entropy, (_M,), {"temperature": np.inf}, "temperature"),
    (A.trace, (_P, 99, [0, 0]), {}, "i"),                                 # was an IndexError
    (A.trace, (_P, 0, [0] * 99), {}, "methods"),
    (A.trace, (_P, 0, [7] * int(_P.n_steps[0])), {}, "methods"),
    (A.trace, (_P, 0, [0.5] * int(_P.n_steps[0])), {}, "methods"),
    (A.trace, (_P, 0, [0] * int(_P.n_steps[0])), {"slip": 0.5}, "slip"),
    (A.trace, ("p", 0, [0]), {}, "problems"),
    (_P.text, (4,), {}, "i"),
    (_P.subset, ([0, 9],), {}, "idx"),
    (_P.subset, ([True, False],), {}, "idx"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument_table(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)



def test_the_package_re_exports_the_model():
    for name in A.__all__:
        assert getattr(toy.arith, name) is getattr(A, name)
    assert toy.arith.train.__name__ == "toy.arith.train" and toy.arith.variant.__name__ == "toy.arith.variant"
