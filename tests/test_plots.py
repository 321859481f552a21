"""toy.plots (and the book helpers toy.widgets.render_frame, toy.show): bad input raises a
ValueError naming the argument."""
import re

import matplotlib
import numpy as np
import pandas as pd
import pytest

matplotlib.use("Agg")
from toy import plots, show, widgets  # noqa: E402

_FIG, _AX = plots.figure()
_DF = pd.DataFrame({"a": [1.0, -2.0]})

# (function, args, kwargs, the argument the ValueError's message must start with)
BAD_INPUTS = [
    (plots.figure, (0,), {}, "ncols"),
    (plots.figure, (1, 1.5), {}, "nrows"),
    (plots.figure, (), {"width": -1}, "width"),
    (plots.figure, (), {"height": "3"}, "height"),
    (plots.curves, ("ax", [0, 1], {"a": [1, 2]}), {}, "ax"),
    (plots.curves, (_AX, [0, 1], [[1, 2]]), {}, "series"),
    (plots.curves, (_AX, [0, 1], {"a": [1, 2, 3]}), {}, "series"),
    (plots.curves, (_AX, [0, 1], {"a": [1, 2]}), {"ylim": 1}, "ylim"),
    (plots.entropy_curves, (_AX, [0, 1], {"a": np.ones((2, 2, 2))}), {}, "series"),
    (plots.running_average, (_AX, [], "x"), {}, "samples"),
    (plots.running_average, (_AX, [[1, 2]], "x"), {}, "samples"),
    (plots.running_average, (_AX, [1, np.nan], "x"), {}, "samples"),
    (plots.running_average, (_AX, [1, 2], "x"), {"truth": "1"}, "truth"),
    (plots.running_average, (None, [1, 2], "x"), {}, "ax"),
    (plots.prob_bars, (_AX, [0.5, 0.5], ["a"]), {}, "labels"),
    (plots.prob_bars, (_AX, np.ones((2, 2, 2)), ["a", "b"]), {}, "probs"),
    (plots.prob_bars, (_AX, [[0.5, 0.5]], ["a", "b"]), {"series_labels": ["x", "y"]}, "series_labels"),
    (plots.prob_bars, (_AX, ["a", "b"], ["a", "b"]), {}, "probs"),
    (plots.table, ({"a": [1]},), {}, "df"),
    (plots.table, (_DF,), {"precision": -1}, "precision"),
    (plots.advantage_table, (_DF, ["b"]), {}, "columns"),
    (plots.advantage_table, (_DF, ["a"]), {"precision": 1.5}, "precision"),
    (widgets.render_frame, ("fig",), {}, "fig"),
    (widgets.slider, (lambda v: _FIG, [1]), {}, "values"),
    (widgets.slider, (lambda v: _FIG, [1, 2]), {"default": 3}, "default"),
    (widgets.slider, ("draw", [1, 2]), {}, "draw"),
    (show, ("not a function",), {}, "obj"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


def test_show_leaves_out_marked_input_checks():
    from toy import rl
    src = repr(show(rl.grpo_advantages))
    assert "# argcheck" not in src and "eps = nonneg(eps" in src
    assert src.rstrip().endswith("return _squeeze_like((r - mean) / (std + eps), rewards)")
