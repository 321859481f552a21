"""toy.prob: bad input raises a ValueError naming the argument (values are checked in test_metrics.py)."""
import re

import numpy as np
import pytest

from toy import prob

RNG = np.random.default_rng(0)

# (function, args, kwargs, the argument the ValueError's message must start with)
BAD_INPUTS = [
    (prob.sigmoid, ("1",), {}, "x"),
    (prob.sigmoid, (None,), {}, "x"),
    (prob.sigmoid, ([np.nan],), {}, "x"),
    (prob.softmax, ([1.0, 2.0],), {"temperature": 0}, "temperature"),
    (prob.softmax, ([1.0, 2.0],), {"temperature": "1"}, "temperature"),
    (prob.softmax, ([1.0, 2.0],), {"temperature": None}, "temperature"),
    (prob.softmax, ([1.0, 2.0],), {"temperature": [1.0]}, "temperature"),
    (prob.softmax, (3.0,), {}, "logits"),
    (prob.log_softmax, ([np.inf, 1.0],), {}, "logits"),
    (prob.log_softmax, ([1.0],), {"temperature": -1}, "temperature"),
    (prob.sample_categorical, ([np.nan, 1.0], RNG), {}, "probs"),
    (prob.sample_categorical, ([], RNG), {}, "probs"),
    (prob.sample_categorical, ([-0.5, 1.5], RNG), {}, "probs"),
    (prob.sample_categorical, ([0.2, 0.2], RNG), {}, "probs"),
    (prob.sample_categorical, (0.5, RNG), {}, "probs"),
    (prob.sample_categorical, ([0.5, 0.5], 0), {}, "rng"),
    (prob.sample_categorical, ([0.5, 0.5], None), {}, "rng"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


def test_log_softmax_table_grad_against_finite_differences():
    rng = np.random.default_rng(0)
    theta = rng.normal(size=(4, 3))
    rows, actions, g = rng.integers(0, 4, 20), rng.integers(0, 3, 20), rng.normal(size=20)
    rows[:3] = 0                                                    # a state visited several times

    def L(th):
        return float(np.sum(g * prob.log_softmax(th)[rows, actions]))

    fd = np.zeros_like(theta)
    for i in np.ndindex(theta.shape):
        e = np.zeros_like(theta)
        e[i] = 1e-6
        fd[i] = (L(theta + e) - L(theta - e)) / 2e-6
    assert np.allclose(prob.log_softmax_table_grad(prob.softmax(theta), rows, actions, g), fd, atol=1e-7)


BAD_INPUTS += [
    (prob.log_softmax_table_grad, (np.full((2, 2), 0.5), [0, 2], [0, 1], [1.0, 1.0]), {}, "rows"),
    (prob.log_softmax_table_grad, (np.full((2, 2), 0.5), [0, 1], [0, 2], [1.0, 1.0]), {}, "actions"),
    (prob.log_softmax_table_grad, (np.full((2, 2), 0.5), [0, 1], [0, 1], [1.0]), {}, "dlogp"),
    (prob.log_softmax_table_grad, (np.full(2, 0.5), [0, 1], [0, 1], [1.0, 1.0]), {}, "probs"),
]


# ------------------------------------------------------------------ generated bad inputs, per category
from bad_inputs import cases, same, tagged, valid_numpy_scalars  # noqa: E402

_P2 = np.full((2, 2), 0.5)
_VALID = [  # (function, a valid call, the kind of each argument)
    (prob.sigmoid, {"x": [0.5, -1.0]}, {"x": "array"}),
    (prob.log_softmax, {"logits": [1.0, 2.0], "temperature": 0.7}, {"logits": "array", "temperature": "positive"}),
    (prob.softmax, {"logits": [[1.0, 2.0]], "temperature": 2}, {"logits": "array", "temperature": "positive"}),
    (prob.log_softmax_table_grad, {"probs": _P2, "rows": [0, 1], "actions": [1, 0], "dlogp": [1.0, -0.5]},
     {"probs": "array", "rows": "int_array", "actions": "int_array", "dlogp": "array"}),
    (prob.sample_categorical, {"probs": [0.3, 0.7], "rng": RNG}, {"probs": "array", "rng": "rng"}),
    (prob.inverse_cdf, {"p": [0.3, 0.7], "u": [0.5]}, {"p": "array", "u": "array"}),
]
BAD_INPUTS += [case for fn, valid, spec in _VALID for case in cases(fn, valid, spec)]
BAD_INPUTS += tagged("overflow", [        # (z − max z)/T overflows: log π is −∞, not a number
    (prob.log_softmax, ([1.0, 2.0],), {"temperature": T}, "temperature") for T in (1e-310, 5e-324, 1e-309)
] + [
    (prob.log_softmax, (np.float32([1.0, 3.0]),), {"temperature": T}, "temperature") for T in (1e-46, 1e-40)
] + [
    (prob.log_softmax, ([-1e308, 1e308],), {}, "logits"),           # the spread itself overflows
    (prob.log_softmax, ([[0.0, 0.0], [-1e308, 1e308]],), {"temperature": 0.5}, "logits"),
])
BAD_INPUTS += tagged("shape", [
    (prob.log_softmax, (np.zeros((2, 0)),), {}, "logits"),
    (prob.log_softmax_table_grad, (_P2, [0, 1], [0], [1.0, 1.0]), {}, "actions"),
    (prob.log_softmax_table_grad, (_P2, [0, 1], [0, 1], [[1.0, 1.0]] * 2), {}, "dlogp"),
    (prob.inverse_cdf, ([[0.5, 0.5]] * 2, [0.5]), {}, "u"),
    (prob.inverse_cdf, ([0.5, 0.5], [[0.5]]), {}, "u"),
    (prob.inverse_cdf, (np.zeros((2, 0)), [[0.5]] * 2), {}, "p"),
    (prob.sample_categorical, (np.zeros((2, 0)), RNG), {}, "probs"),
])
BAD_INPUTS += tagged("value", [
    (prob.inverse_cdf, ([0.0, 0.0], [0.5]), {}, "p"),
    (prob.inverse_cdf, ([-0.5, 1.5], [0.5]), {}, "p"),
    (prob.inverse_cdf, ([0.5, 0.5], [1.0]), {}, "u"),
    (prob.inverse_cdf, ([0.5, 0.5], [-0.1]), {}, "u"),
])


@pytest.mark.parametrize("fn, kwargs, expected", [
    *valid_numpy_scalars(prob.log_softmax, {"logits": [1.0, 2.0], "temperature": 2}, ["temperature"]),
    *valid_numpy_scalars(prob.softmax, {"logits": [1.0, 2.0], "temperature": 0.5}, ["temperature"])])
def test_numpy_scalars_of_every_width_are_accepted(fn, kwargs, expected):
    assert same(fn(**kwargs), expected)


def test_tiny_temperatures_give_the_argmax_not_nan():
    for T in (1e-46, 1e-310, 5e-324):
        np.testing.assert_array_equal(prob.softmax([1.0, 3.0, 2.0], T), [0.0, 1.0, 0.0])
        np.testing.assert_array_equal(prob.softmax(np.float32([[1, 3, 3]]), T), [[0.0, 0.5, 0.5]])
    # at a small but representable T the plain formula is kept, bit for bit
    z = np.array([0.3, -1.2, 2.0])
    assert np.array_equal(prob.log_softmax(z, 0.01), (z / 0.01 - 200.0) - np.log(np.exp(z / 0.01 - 200.0).sum()))
