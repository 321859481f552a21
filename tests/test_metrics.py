"""toy.metrics and toy.prob against brute force and closed forms."""
import itertools
import re
from collections import Counter
from math import comb

import numpy as np
import pytest

from toy import metrics, prob, shares


def brute_pass_at_k(n, c, k):
    """Fraction of all k-subsets of n samples (c correct) that contain a correct one."""
    samples = [1] * c + [0] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    return sum(any(samples[i] for i in s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n,c,k", [(5, 0, 1), (5, 1, 1), (6, 2, 3), (8, 3, 5), (7, 7, 2), (9, 4, 9)])
def test_pass_at_k_matches_subset_enumeration(n, c, k):
    assert metrics.pass_at_k(n, c, k) == pytest.approx(brute_pass_at_k(n, c, k))


def test_pass_at_k_vectorised_and_large_n():
    n = np.array([256, 256, 256])
    c = np.array([0, 3, 200])
    got = metrics.pass_at_k(n, c, 16)
    ref = [1 - comb(256 - ci, 16) / comb(256, 16) for ci in c]
    np.testing.assert_allclose(got, ref, rtol=1e-10)


def test_pass_at_k_lecture16_exercise6():
    # with infinitely many samples pass@k -> 1 - (1 - p)^k: p = 0.1 -> 0.81, p = 0.9 -> ~1.0
    n = 100_000
    assert metrics.pass_at_k(n, int(0.1 * n), 16) == pytest.approx(1 - 0.9 ** 16, abs=1e-3)
    assert metrics.pass_at_k(n, int(0.1 * n), 16) == pytest.approx(0.81, abs=0.005)   # the lecture's 0.81
    assert metrics.pass_at_k(n, int(0.9 * n), 16) == pytest.approx(1.0, abs=1e-9)


def test_pass_at_k_exact_by_enumerating_every_outcome():
    """P(at least one of k samples right), summed over all 2^k right/wrong outcomes."""
    for p, k in [(0.1, 1), (0.1, 16), (0.37, 5), (0.9, 3), (0.0, 4), (1.0, 2)]:
        brute = sum(np.prod([p if o else 1 - p for o in outcome])
                    for outcome in itertools.product([0, 1], repeat=k) if any(outcome))
        assert metrics.pass_at_k_exact(p, k) == pytest.approx(brute, abs=1e-10)
    assert metrics.pass_at_k_exact(0.1, 16) == pytest.approx(0.81, abs=0.005)       # lecture 16, exercise 6


def test_pass_at_k_exact_is_the_mean_of_the_unbiased_estimate():
    """E over c ~ Binomial(n, p) of pass_at_k(n, c, k) is exactly 1 − (1 − p)^k (unbiasedness)."""
    n = 12
    c = np.arange(n + 1)
    for p in (0.05, 0.3, 0.8):
        pmf = np.array([comb(n, j) * p ** j * (1 - p) ** (n - j) for j in c])
        for k in (1, 4, 12):
            assert pmf @ metrics.pass_at_k(n, c, k) == pytest.approx(metrics.pass_at_k_exact(p, k), abs=1e-12)


def test_pass_at_k_exact_shapes():
    p = np.array([[0.1, 0.5], [0.0, 1.0], [0.25, 0.75]])
    curve = metrics.pass_at_k_exact(p, [1, 2, 8])
    assert curve.shape == (3, 2, 3)
    for j, k in enumerate([1, 2, 8]):
        np.testing.assert_array_equal(curve[..., j], metrics.pass_at_k_exact(p, k))
    assert isinstance(metrics.pass_at_k_exact(0.5, 2), float) and metrics.pass_at_k_exact(0.5, 2) == 0.75


def test_pass_at_k_bad_input():
    with pytest.raises(ValueError, match="k must be <= n"):
        metrics.pass_at_k(4, 1, 5)
    with pytest.raises(ValueError, match="c must"):
        metrics.pass_at_k(4, 5, 1)
    with pytest.raises(ValueError, match="k must be an integer"):
        metrics.pass_at_k(4, 1, 0)


def naive_maj(answers, truth, seed):
    """Loop reference: count votes, list the tied winners in increasing order, pick one with
    the same uniform draw per row as metrics.maj_at_k."""
    u = np.random.default_rng(seed).random(len(answers))
    out = []
    for row, t, ui in zip(answers, truth, u):
        votes = Counter(int(x) for x in row)
        top = max(votes.values())
        winners = sorted(v for v, n in votes.items() if n == top)
        out.append(float(winners[int(ui * len(winners))] == t))
    return np.array(out)


def test_maj_at_k():
    answers = np.array([[3, 3, 5, 1], [2, 4, 4, 4], [7, 8, 9, 7]])
    np.testing.assert_array_equal(metrics.maj_at_k(answers, np.array([3, 2, 7])), [1, 0, 1])


def test_maj_at_k_matches_naive_loop_with_ties():
    rng = np.random.default_rng(0)
    answers = rng.integers(0, 4, size=(500, 4))               # many ties among 4 values
    truth = rng.integers(0, 4, size=500)
    for seed in (0, 1):
        np.testing.assert_array_equal(metrics.maj_at_k(answers, truth, seed=seed), naive_maj(answers, truth, seed))


def test_maj_at_k_ties_are_fair_whatever_the_values():
    # a tie between the correct answer and a smaller wrong one: credit 1/2 on average, not 0
    answers = np.tile([[1, 5]], (4000, 1))
    assert metrics.maj_at_k(answers, np.full(4000, 5)).mean() == pytest.approx(0.5, abs=0.03)
    three = np.tile([[2, 9, 4]], (6000, 1))                  # a three-way tie
    assert metrics.maj_at_k(three, np.full(6000, 4)).mean() == pytest.approx(1 / 3, abs=0.03)
    with pytest.raises(ValueError, match="correct_answer"):
        metrics.maj_at_k(answers, np.array([1, 2]))
    with pytest.raises(ValueError, match="seed"):
        metrics.maj_at_k(answers, np.full(4000, 5), seed=-1)


def test_entropy_closed_forms():
    assert metrics.entropy(np.ones(4) / 4) == pytest.approx(np.log(4))
    assert metrics.entropy([1.0, 0.0, 0.0]) == pytest.approx(0.0)
    p = np.array([[0.5, 0.5], [0.9, 0.1]])
    np.testing.assert_allclose(metrics.entropy(p), [np.log(2), -(0.9 * np.log(0.9) + 0.1 * np.log(0.1))])
    with pytest.raises(ValueError, match="sum to 1"):
        metrics.entropy([0.5, 0.2])
    with pytest.raises(ValueError, match=">= 0"):
        metrics.entropy([1.5, -0.5])


def test_softmax_and_temperature():
    z = np.array([1.0, 2.0, 3.0])
    ref = np.exp(z / 0.5) / np.exp(z / 0.5).sum()
    np.testing.assert_allclose(prob.softmax(z, 0.5), ref)
    np.testing.assert_allclose(prob.softmax(np.array([1000.0, 1000.0])), [0.5, 0.5])
    with pytest.raises(ValueError, match="temperature"):
        prob.softmax(z, 0.0)
    assert prob.sigmoid(0.0) == 0.5


def test_sample_categorical_frequencies():
    rng = np.random.default_rng(0)
    p = np.array([0.1, 0.6, 0.3])
    x = prob.sample_categorical(np.tile(p, (200_000, 1)), rng)
    np.testing.assert_allclose(np.bincount(x, minlength=3) / len(x), p, atol=0.005)


def test_pass_at_k_matches_math_comb_on_every_small_case():
    for n in range(1, 25):
        c, k = np.meshgrid(np.arange(n + 1), np.arange(1, n + 1), indexing="ij")   # every (c, k)
        ref = [[1 - comb(n - ci, ki) / comb(n, ki) for ki in range(1, n + 1)] for ci in range(n + 1)]
        got = np.array([metrics.pass_at_k(n, c[:, j], int(k[0, j])) for j in range(n)]).T
        np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("n, c, k", [(10**8, 5 * 10**7, 5), (10_000, 5_000, 3), (10**5, 4_097, 20),
                                     (10**6, 5_000, 50), (10**7, 5_000, 5_000)])
def test_pass_at_k_large_counts_against_exact_integers(n, c, k):
    # large n and c (k = 5000: more than one chunk of 4096 factors);
    # none of these is saturated at 1.0; math.comb is exact on Python integers
    from fractions import Fraction
    ref = 1 - Fraction(comb(n - c, k), comb(n, k))
    assert metrics.pass_at_k(n, c, k) == pytest.approx(float(ref), rel=1e-12, abs=1e-15)


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
BAD_INPUTS = [
    (metrics.pass_at_k_exact, (1.5, 2), {}, "p"),
    (metrics.pass_at_k_exact, ([0.5, np.nan], 2), {}, "p"),
    (metrics.pass_at_k_exact, ("0.5", 2), {}, "p"),
    (metrics.pass_at_k_exact, (0.5, 0), {}, "k"),
    (metrics.pass_at_k_exact, (0.5, 2.5), {}, "k"),
    (metrics.pass_at_k_exact, (0.5, [[1, 2]]), {}, "k"),
    (metrics.pass_at_k_exact, (0.5, [1, 0]), {}, "k"),
    (metrics.pass_at_k, (4, 1, None), {}, "k"),
    (metrics.pass_at_k, (4, 1, np.inf), {}, "k"),
    (metrics.pass_at_k, (4, 1, np.nan), {}, "k"),
    (metrics.pass_at_k, (4, 1, 1.5), {}, "k"),
    (metrics.pass_at_k, (4, 1, "2"), {}, "k"),
    (metrics.pass_at_k, (4, 1, 0), {}, "k"),
    (metrics.pass_at_k, (4, 1, 5), {}, "k"),
    (metrics.pass_at_k, (0, 0, 1), {}, "n"),
    (metrics.pass_at_k, (4.5, 1, 1), {}, "n"),
    (metrics.pass_at_k, (None, 1, 1), {}, "n"),
    (metrics.pass_at_k, (4, 5, 1), {}, "c"),
    (metrics.pass_at_k, (4, -1, 1), {}, "c"),
    (metrics.pass_at_k, (4, [1.5], 1), {}, "c"),
    (metrics.pass_at_k, ([4, 4], [1, 1, 1], 1), {}, "n"),
    (metrics.maj_at_k, (np.zeros((3, 4)), np.zeros(2)), {}, "correct_answer"),
    (metrics.maj_at_k, (np.zeros((3, 0)), np.zeros(3)), {}, "answers"),
    (metrics.maj_at_k, (5, 5), {}, "answers"),
    (metrics.entropy, ([0.5, 0.2],), {}, "probs"),
    (metrics.entropy, ([1.5, -0.5],), {}, "probs"),
    (metrics.entropy, ([np.nan, 1.0],), {}, "probs"),
    (metrics.entropy, (1.0,), {}, "probs"),
    (metrics.entropy, ("ab",), {}, "probs"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


# ------------------------------------------------------------------ generated bad inputs, per category
from bad_inputs import cases, same, tagged, valid_numpy_scalars  # noqa: E402

_VALID = [  # (function, a valid call, the kind of each argument)
    (metrics.pass_at_k, {"n": 10, "c": 3, "k": 2}, {"n": "int_array", "c": "int_array", "k": "int:1"}),
    (metrics.pass_at_k, {"n": [10, 12], "c": [3, 0], "k": 2}, {"n": "int_array", "c": "int_array"}),
    (metrics.pass_at_k_exact, {"p": [0.2, 0.5], "k": 3}, {"p": "array", "k": "int:1"}),
    (metrics.pass_at_k_exact, {"p": 0.5, "k": [1, 4]}, {"k": "int_array"}),
    (metrics.maj_at_k, {"answers": [[1, 2, 2]], "correct_answer": [2], "seed": 0},
     {"answers": "array", "correct_answer": "array", "seed": "int:0"}),
    (metrics.entropy, {"probs": [0.25, 0.75]}, {"probs": "array"}),
]
BAD_INPUTS += [case for fn, valid, spec in _VALID for case in cases(fn, valid, spec)]
BAD_INPUTS += tagged("size", [      # refused before the loop or the allocation, the limit in the message
    (metrics.pass_at_k, (10**12, 10**7 + 1, 10**11), {}, "n, c and k"),         # 1e7 factors
    (metrics.pass_at_k, (2**62, 2**40, 2**41), {}, "n, c and k"),
    (metrics.pass_at_k, (np.full(10**5 + 1, 10), 3, 2), {}, "n and c"),          # 1e5 problems
    (metrics.pass_at_k, (10, np.zeros(10**5 + 1, int), 2), {}, "n and c"),
    (metrics.pass_at_k_exact, (np.zeros(10**5), np.arange(1, 2002)), {}, "p and k"),
    (metrics.maj_at_k, (np.zeros((1, 10**4 + 1), int), np.zeros(1, int)), {}, "answers"),
    (metrics.maj_at_k, (np.zeros((10**3, 400), int), np.zeros(10**3, int)), {}, "answers"),
])
BAD_INPUTS += tagged("shape", [
    (metrics.pass_at_k, ([10, 10], [1, 1, 1], 2), {}, "n"),
    (metrics.pass_at_k_exact, ([0.5], [[1, 2]]), {}, "k"),
    (metrics.maj_at_k, (np.zeros((2, 3)), np.zeros((2, 1))), {}, "correct_answer"),
    (metrics.maj_at_k, (np.zeros(3), np.zeros(3)), {}, "correct_answer"),
    (metrics.entropy, (np.zeros((2, 0)),), {}, "probs"),
])
BAD_INPUTS += tagged("big-int", [
    (metrics.pass_at_k_exact, (0.5, 10**30), {}, "k"),
    (metrics.pass_at_k, (10**30, 1, 1), {}, "n"),
    (metrics.pass_at_k, ([10, 2**64], 1, 1), {}, "n"),
    (metrics.maj_at_k, ([[1, 2]], [1]), {"seed": 2**64}, "seed"),
])


@pytest.mark.parametrize("fn, kwargs, expected", [
    *valid_numpy_scalars(metrics.pass_at_k, {"n": 10, "c": 3, "k": 2}, ["n", "c", "k"]),
    *valid_numpy_scalars(metrics.pass_at_k_exact, {"p": 0.5, "k": 3}, ["p", "k"]),
    *valid_numpy_scalars(metrics.maj_at_k, {"answers": [[1, 2, 2]], "correct_answer": [2], "seed": 3}, ["seed"])])
def test_numpy_scalars_of_every_width_are_accepted(fn, kwargs, expected):
    assert same(fn(**kwargs), expected)


def test_pass_at_k_against_the_product_over_the_correct_samples():
    """The product over the k draws (more than one chunk of 4096 factors) against the other product,
    :math:`\\prod_{i=n-c+1}^{n} (1 - k/i)` over the c correct samples; a job beyond the loop limit
    (k factors per problem) is refused before work, naming the arguments."""
    n, c, k = 10**6, 5000, 20_000
    over_correct = np.prod(1.0 - k / np.arange(n - c + 1, n + 1))             # c factors
    assert metrics.pass_at_k(n, c, k) == pytest.approx(1 - over_correct, rel=1e-12)
    with pytest.raises(ValueError, match="^n, c and k"):
        metrics.pass_at_k(10**12, 10**5, 10**11)


def test_warmup_se_is_the_se_of_the_warmups_means_by_hand():
    # seeds 0..9 over 3 warm-ups: warm-up 0 holds seeds 0, 3, 6, 9; 1 holds 1, 4, 7; 2 holds 2, 5, 8
    x = np.array([1.0, 2.0, 6.0, 3.0, 2.0, 6.0, 1.0, 5.0, 9.0, 3.0])
    means = np.array([(1 + 3 + 1 + 3) / 4, (2 + 2 + 5) / 3, (6 + 6 + 9) / 3])      # 2, 3, 7
    by_hand = np.sqrt(((means - means.mean()) ** 2).sum() / 2) / np.sqrt(3)
    assert np.isclose(metrics.warmup_se(x, 3), by_hand)
    assert metrics.warmup_se(np.full(10, 0.5), 3) == 0.0
    with pytest.raises(ValueError, match="warmups"):
        metrics.warmup_se(x, 1)
    with pytest.raises(ValueError, match="x"):
        metrics.warmup_se(x.reshape(2, 5), 3)


def test_ratio_se_is_the_delta_method_by_hand_and_matches_its_spread():
    num, den = np.array([1.0, 2.0, 0.5, 3.0]), np.array([2.0, 3.0, 2.0, 4.0])
    r = num.sum() / den.sum()                                    # 6.5 / 11
    resid = num - r * den
    by_hand = np.sqrt(np.sum(resid ** 2) / (4 * 3)) / den.mean()
    share, se = shares.ratio_se(num, den)
    assert share == pytest.approx(6.5 / 11, rel=1e-15) and se == pytest.approx(by_hand, rel=1e-12)
    # Monte Carlo: over many experiments of K seeds, the s.e. is the spread of the pooled share
    rng = np.random.default_rng(0)
    K, trials = 100, 2000
    d = rng.gamma(2.0, 1.0, size=(trials, K))                    # each seed's whole
    n = d * rng.beta(3.0, 2.0, size=(trials, K))                 # the part of it
    values, ses = np.array([shares.ratio_se(a, b) for a, b in zip(n, d)]).T
    assert np.mean(ses) == pytest.approx(values.std(ddof=1), rel=0.1)
    assert shares.ratio_se([1.0, 1.0], [2.0, 2.0]) == (0.5, 0.0)


@pytest.mark.parametrize("args, name", [
    (([1.0], [2.0]), "num"),                                     # one seed: no s.e.
    (([[1.0, 2.0]], [[2.0, 3.0]]), "num"),
    (([1.0, 2.0], [2.0, 3.0, 4.0]), "den"),
    (([1.0, 2.0], [0.0, 0.0]), "den"),
    (([1.0, np.nan], [1.0, 2.0]), "num"),
    (([1.0, 2.0], [1.0, np.inf]), "den"),
])
def test_ratio_se_rejects_bad_input(args, name):
    with pytest.raises(ValueError, match=rf"^{name}\b"):
        shares.ratio_se(*args)
