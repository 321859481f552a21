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
