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
