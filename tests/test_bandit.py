"""The two-armed bandit of Part I §8 against the lectures' numbers, finite differences and sampling."""
import re

import numpy as np
import pytest

from toy import bandit

THETA = np.log(0.25 / 0.75)  # p = 0.25


def test_lecture_5a_estimates():
    np.testing.assert_allclose(bandit.estimates(THETA, [0, 1], 0.0), [0.75, 0.0], atol=1e-12)
    np.testing.assert_allclose(bandit.estimates(THETA, [0, 1], 0.5), [0.375, 0.125], atol=1e-12)


def test_lecture_5a_moments():
    m0, s0 = bandit.moments(THETA, 0.0)
    m5, s5 = bandit.moments(THETA, 0.5)
    assert m0 == pytest.approx(0.1875) and m5 == pytest.approx(0.1875)
    assert s0 == pytest.approx(0.325, abs=5e-4) and s5 == pytest.approx(0.108, abs=5e-4)


def test_exact_gradient_is_finite_difference_of_J():
    h = 1e-6
    for th in (-3.0, -1.1, 0.0, 2.0):
        fd = (bandit.prob_a(th + h) - bandit.prob_a(th - h)) / (2 * h)   # J(theta) = p
        assert bandit.exact_gradient(th) == pytest.approx(fd, rel=1e-6)


def test_moments_match_monte_carlo():
    rng = np.random.default_rng(0)
    a = bandit.sample(THETA, 400_000, rng)
    for b in (0.0, 0.5, 0.9):
        est = bandit.estimates(THETA, a, b)
        m, s = bandit.moments(THETA, b)
        assert est.mean() == pytest.approx(m, abs=0.003)
        assert est.std() == pytest.approx(s, abs=0.003)


def test_lecture6_exercise1_p09():
    th = np.log(9.0)
    assert bandit.moments(th, 0.0)[1] ** 2 == pytest.approx(0.0009)
    assert bandit.moments(th, 0.5)[1] ** 2 == pytest.approx(0.0144)
    assert bandit.optimal_baseline(th) == pytest.approx(0.1)
    assert bandit.moments(th, 0.1)[1] == pytest.approx(0.0, abs=1e-7)


def test_optimal_baseline_minimises_variance_on_a_grid():
    for p in (0.03, 0.25, 0.5, 0.8):
        th = np.log(p / (1 - p))
        grid = np.linspace(-1, 2, 3001)
        _, sd = bandit.moments(th, grid)
        assert grid[np.argmin(sd)] == pytest.approx(bandit.optimal_baseline(th), abs=1e-3)


def test_bad_actions():
    with pytest.raises(ValueError, match="actions"):
        bandit.score(0.0, [0, 2])
    with pytest.raises(ValueError, match="n must"):
        bandit.sample(0.0, 0, np.random.default_rng(0))


# ------------------------------------------------------------------ bad input, one table
# (function, args, kwargs, the argument the ValueError's message must start with)
RNG = np.random.default_rng(0)
BAD_INPUTS = [
    (bandit.prob_a, ("0.5",), {}, "theta"),
    (bandit.prob_a, ([np.nan],), {}, "theta"),
    (bandit.score, (THETA, [2]), {}, "actions"),
    (bandit.score, (THETA, ["A"]), {}, "actions"),
    (bandit.score, ([THETA, THETA], [0, 1, 1]), {}, "theta"),
    (bandit.reward, ([0.5],), {}, "actions"),
    (bandit.estimates, (THETA, [0, 1]), {"b": None}, "b"),
    (bandit.estimates, (THETA, [0, 3]), {}, "actions"),
    (bandit.estimates, ([THETA] * 2, [0, 1, 0]), {}, "theta"),
    (bandit.exact_gradient, (None,), {}, "theta"),
    (bandit.moments, (THETA,), {"b": "0"}, "b"),
    (bandit.moments, ([THETA] * 2,), {"b": [0, 0.5, 1]}, "theta"),
    (bandit.optimal_baseline, (38.0,), {}, "theta"),            # σ(38) == 1.0: b* would be 0/0
    (bandit.optimal_baseline, (-800.0,), {}, "theta"),           # σ(−800) == 0.0
    (bandit.sample, (THETA, 0, RNG), {}, "n"),
    (bandit.sample, (THETA, 2.5, RNG), {}, "n"),
    (bandit.sample, (THETA, None, RNG), {}, "n"),
    (bandit.sample, (THETA, 3, None), {}, "rng"),
    (bandit.sample, ([THETA] * 2, 3, RNG), {}, "theta"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


# ------------------------------------------------------------------ generated bad inputs, per category
from bad_inputs import cases, same, tagged, valid_numpy_scalars  # noqa: E402

_VALID = [  # (function, a valid call, the kind of each argument)
    (bandit.prob_a, {"theta": 0.3}, {"theta": "array"}),
    (bandit.score, {"theta": 0.3, "actions": [0, 1]}, {"theta": "array", "actions": "int_array"}),
    (bandit.reward, {"actions": [0, 1]}, {"actions": "int_array"}),
    (bandit.estimates, {"theta": 0.3, "actions": [0, 1], "b": 0.5},
     {"theta": "array", "actions": "int_array", "b": "array"}),
    (bandit.exact_gradient, {"theta": 0.3}, {"theta": "array"}),
    (bandit.moments, {"theta": 0.3, "b": 0.5}, {"theta": "array", "b": "array"}),
    (bandit.optimal_baseline, {"theta": 0.3}, {"theta": "array"}),
    (bandit.sample, {"theta": 0.3, "n": 5, "rng": RNG}, {"theta": "array", "n": "int:1", "rng": "rng"}),
]
BAD_INPUTS += [case for fn, valid, spec in _VALID for case in cases(fn, valid, spec)]
BAD_INPUTS += tagged("size", [(bandit.sample, (0.0, n, RNG), {}, "n") for n in (10**8 + 1, 10**12, 2**62)])
BAD_INPUTS += tagged("big-int", [(bandit.sample, (0.0, n, RNG), {}, "n") for n in (2**63, 10**30)])
BAD_INPUTS += tagged("type", [(bandit.score, (0.0, [True, False]), {}, "actions"),
                              (bandit.reward, (np.array([0, 1], dtype=np.uint64) - np.uint64(1),), {}, "actions")])


@pytest.mark.parametrize("fn, kwargs, expected", [
    *valid_numpy_scalars(bandit.prob_a, {"theta": 2.0}, ["theta"]),
    *valid_numpy_scalars(bandit.moments, {"theta": 0.5, "b": 0.25}, ["theta", "b"]),
    *valid_numpy_scalars(bandit.sample, {"theta": 0.5, "n": 7, "rng": np.random.default_rng(3)}, ["n"])])
def test_numpy_scalars_of_every_width_are_accepted(fn, kwargs, expected):
    if fn is bandit.sample:
        kwargs = {**kwargs, "rng": np.random.default_rng(3)}
    assert same(fn(**kwargs), expected)
