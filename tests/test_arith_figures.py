"""toy.arith.figures: Part II's section-specific figures draw what they are given."""
import re

import matplotlib
import numpy as np
import pytest

from toy.arith import figures


def test_clip_paths_draws_each_ratio_and_gain():
    paths = {(0.02, 0.2): np.array([0.02, 0.022, 0.024]), (0.8, 0.28): np.array([0.8, 0.9, 0.95])}
    fig = figures.clip_paths(paths)
    left, right = fig.axes
    for line_l, line_r, ((p, e), path) in zip(left.lines, right.lines, paths.items()):
        np.testing.assert_allclose(line_l.get_ydata(), [q / p for q in path])
        np.testing.assert_allclose(line_r.get_ydata(), [q - p for q in path])
        np.testing.assert_array_equal(line_l.get_xdata(), [1, 2, 3])
        assert line_l.get_linestyle() == ("-" if e == 0.2 else "--")
    matplotlib.pyplot.close(fig)


@pytest.mark.parametrize("paths", [{}, [0.1, 0.2]])
def test_clip_paths_refuses_bad_paths(paths):
    with pytest.raises(ValueError, match=r"^paths(?!\w)"):
        figures.clip_paths(paths)
