"""The data every toy.plots helper draws, read back from the figure and compared with an
independent computation (naive loops). nbval compares text outputs, never images: without
these a helper could draw the wrong numbers unseen. Bad input (here also for the book helpers
toy.widgets.render_frame and toy.show) raises a ValueError naming the argument."""
import math
import re

import matplotlib
import numpy as np
import pandas as pd
import pytest

from toy import plots, show, widgets
from toy.tinylm import figures as tfig


@pytest.fixture
def ax():
    fig, ax = plots.figure()
    yield ax
    matplotlib.pyplot.close(fig)


def _naive_mean_std(rows):
    """Column mean and population std of a list of equal-length rows, by loops."""
    n, T = len(rows), len(rows[0])
    mean = [sum(r[t] for r in rows) / n for t in range(T)]
    std = [math.sqrt(sum((r[t] - mean[t]) ** 2 for r in rows) / n) for t in range(T)]
    return mean, std


def _band(collection, x):
    """(lower, upper) edge of a fill_between band at each x, from its polygon's vertices."""
    v = collection.get_paths()[0].vertices
    lo = [min(y for xv, y in v if xv == xi) for xi in x]
    hi = [max(y for xv, y in v if xv == xi) for xi in x]
    return lo, hi


def test_curves_draws_the_seed_mean_and_a_one_std_band(ax):
    x = [0, 10, 20, 30]
    runs = [[0.1, 0.4, 0.5, 0.9], [0.3, 0.2, 0.7, 0.8], [0.8, 0.9, 0.0, 0.7]]     # 3 seeds
    single = [1.0, 2.0, 0.5, 0.25]
    plots.curves(ax, x, {"grpo": np.array(runs), "one run": single}, ylabel="J", title="t",
                 ylim=(0, 2), styles={"one run": {"ls": "--", "color": "k"}})
    mean, std = _naive_mean_std(runs)
    l0, l1 = ax.get_lines()
    np.testing.assert_array_equal(l0.get_xdata(), x)
    np.testing.assert_allclose(l0.get_ydata(), mean, rtol=1e-12)
    assert l0.get_label() == "grpo (mean of 3)" and l0.get_color() == plots.COLORS[0]
    assert len(ax.collections) == 1                                # no band for a single run
    lo, hi = _band(ax.collections[0], x)
    np.testing.assert_allclose(lo, [m - s for m, s in zip(mean, std)], rtol=1e-12)
    np.testing.assert_allclose(hi, [m + s for m, s in zip(mean, std)], rtol=1e-12)
    np.testing.assert_array_equal(l1.get_ydata(), single)
    assert l1.get_label() == "one run" and l1.get_color() == "k" and l1.get_linestyle() == "--"
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == ("step", "J", "t")
    assert ax.get_ylim() == (0, 2)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["grpo (mean of 3)", "one run"]


def test_entropy_curves_draws_the_same_data_from_zero(ax):
    runs = [[1.5, 1.0, 0.8], [1.3, 1.2, 0.4]]
    plots.entropy_curves(ax, [1, 2, 3], {"H": runs})
    mean, std = _naive_mean_std(runs)
    np.testing.assert_allclose(ax.get_lines()[0].get_ydata(), mean, rtol=1e-12)
    np.testing.assert_allclose(_band(ax.collections[0], [1, 2, 3])[1], [m + s for m, s in zip(mean, std)])
    assert ax.get_ylim()[0] == 0 and ax.get_ylabel() == "entropy (nats)"


def test_running_average_draws_the_mean_of_the_first_n_samples(ax):
    samples = [1.0, 0.0, 0.0, 1.0, 1.0, 0.5]
    plots.running_average(ax, samples, "estimate", truth=0.6, color="C3")
    line, truth = ax.get_lines()
    ref, total = [], 0.0
    for n, s in enumerate(samples, start=1):
        total += s
        ref.append(total / n)
    np.testing.assert_array_equal(line.get_xdata(), [1, 2, 3, 4, 5, 6])
    np.testing.assert_allclose(line.get_ydata(), ref, rtol=1e-12)
    assert ref[:3] == [1.0, 0.5, 1 / 3]                              # by hand
    np.testing.assert_array_equal(truth.get_ydata(), [0.6, 0.6])     # the dashed true value
    assert line.get_label() == "estimate" and ax.get_xlabel() == "number of samples"


def test_prob_bars_heights_positions_and_labels(ax):
    probs = [[0.1, 0.5, 0.4], [0.3, 0.2, 0.5]]
    plots.prob_bars(ax, probs, ["a", "b", "c"], series_labels=["before", "after"], title="π")
    bars = ax.patches
    assert len(bars) == 6
    width = 0.8 / 2
    for i, row in enumerate(probs):                                  # series i, context j
        for j, p in enumerate(row):
            bar = bars[3 * i + j]
            assert bar.get_height() == pytest.approx(p)
            assert bar.get_x() + bar.get_width() / 2 == pytest.approx(j + (i - 0.5) * width)
            assert bar.get_width() == pytest.approx(width)
            assert matplotlib.colors.to_hex(bar.get_facecolor()) == plots.COLORS[i]
    assert [t.get_text() for t in ax.texts] == ["0.10", "0.50", "0.40", "0.30", "0.20", "0.50"]
    assert [t.get_text() for t in ax.get_xticklabels()] == ["a", "b", "c"]
    assert ax.get_ylim() == (0, 1.0) and ax.get_title() == "π"
    fig, ax2 = plots.figure()
    plots.prob_bars(ax2, [0.2, 1.5], ["x", "y"])                     # one series, above 1
    assert [b.get_height() for b in ax2.patches] == pytest.approx([0.2, 1.5])
    assert [b.get_x() + b.get_width() / 2 for b in ax2.patches] == pytest.approx([0, 1])
    assert ax2.get_ylim()[1] == pytest.approx(1.5 * 1.12)
    matplotlib.pyplot.close(fig)


def test_table_shows_the_numbers_at_its_precision():
    df = pd.DataFrame({"method": ["a", "b"], "J": [0.12345, 0.5]})
    t = plots.table(df, precision=2, caption="cap")
    assert repr(t).split() == ["method", "J", "0", "a", "0.12", "1", "b", "0.50"]
    html = t._repr_html_()
    assert ">0.12<" in html and ">0.50<" in html and "cap" in html
    assert t.df is df


def test_advantage_table_colours_each_cell_by_its_sign_and_size():
    df = pd.DataFrame({"A": [1.0, -0.5, 0.0], "B": [-2.0, 0.25, 2.0], "n": [1, 2, 3]})
    html = plots.advantage_table(df, ["A", "B"], uuid="u")._repr_html_()
    cmap, vmax = matplotlib.colormaps["RdBu"], 2.0                  # centred at 0, ± max |value|
    colours = dict(re.findall(r"#T_u_(row\d+_col\d+) \{\s*background-color: (#[0-9a-f]{6})", html))
    for j, col in enumerate(["A", "B"]):
        for i, v in enumerate(df[col]):
            expected = matplotlib.colors.to_hex(cmap((v + vmax) / (2 * vmax)))
            assert colours.pop(f"row{i}_col{j}") == expected, (col, i)
    assert colours == {}                                             # the count column is not coloured
    assert ">-0.50<" in html and ">0.25<" in html


def test_figure_sizes():
    """6 in wide for one column, 4.2 in per column otherwise, 3.3 in per row."""
    for args, kw, size, n_axes in [((), {}, (6.0, 3.3), 1), ((2,), {}, (8.4, 3.3), 2),
                                   ((3, 2), {}, (12.6, 6.6), 6), ((), {"width": 5, "height": 2}, (5, 2), 1)]:
        fig, axes = plots.figure(*args, **kw)
        assert tuple(fig.get_size_inches()) == pytest.approx(size)
        assert np.size(axes) == n_axes
        matplotlib.pyplot.close(fig)


# ------------------------------------------------------------------ Part III's figures and slider frames
def test_clip_objective_draws_the_objective_and_its_slope():
    draw = tfig.clip_objective(advantages=(2.0, -1.0))
    fig = draw(0.5)
    for a in fig.axes:
        band, = a.patches
        np.testing.assert_allclose([band.get_x(), band.get_x() + band.get_width()], [0.5, 1.5])
    assert draw(0.2) is fig                                           # one figure, redrawn
    left, right = fig.axes
    solid = [l for l in left.lines if l.get_linestyle() == "-"]
    for line, slope, A in zip(solid, right.lines, (2.0, -1.0)):
        rho, J = line.get_data()
        np.testing.assert_array_equal(J, np.minimum(rho * A, np.clip(rho, 0.8, 1.2) * A))
        rho, dJ = slope.get_data()
        clipped = (rho > 1.2) if A > 0 else (rho < 0.8)                # where the min is the flat term
        np.testing.assert_array_equal(dJ, np.where(clipped, 0.0, A))
    for a in (left, right):
        band, = a.patches
        np.testing.assert_allclose([band.get_x(), band.get_x() + band.get_width()], [0.8, 1.2])
    assert "ε = 0.2 " in left.get_title()
    assert [t.get_text() for t in left.get_legend().get_texts()] == ["A = +2", "A = -1"]
    matplotlib.pyplot.close(fig)


def test_mean_se_band_is_the_mean_and_standard_error_over_seeds(ax):
    v = np.array([[1.0, 2.0, np.nan], [3.0, 6.0, 4.0], [2.0, 1.0, 8.0]])    # (seeds, steps)
    line = plots.mean_se_band(ax, [0, 1, 2], v, n_se=2, color="C3", label="run")
    for t in range(3):                                                    # naive loop, NaN left out
        col = [x for x in v[:, t] if not math.isnan(x)]
        m = sum(col) / len(col)
        se = math.sqrt(sum((x - m) ** 2 for x in col) / (len(col) - 1)) / math.sqrt(3)
        assert line.get_ydata()[t] == pytest.approx(m)
        band = ax.collections[0].get_paths()[0].vertices[:, 1]
        assert band.min() <= m - 2 * se + 1e-12 and np.any(np.isclose(band, m + 2 * se))
    assert line.get_label() == "run" and line.get_color() == "C3"
    line_runs = plots.mean_se_band(ax, [0, 1, 2], v.T, axis=-1)           # runs on the last axis
    np.testing.assert_allclose(line_runs.get_ydata(), line.get_ydata())


def _line_named(ax, label):
    return next(l for l in ax.lines if l.get_label() == label)


def test_proxy_vs_accuracy_averages_each_seed_over_the_window():
    rng = np.random.default_rng(0)
    curves = {"a": {"proxy": rng.random((4, 12)), "accuracy": rng.random((4, 12))},
              "b": {"proxy": rng.random((4, 12)), "accuracy": rng.random((4, 12))}}
    draw = tfig.proxy_vs_accuracy(curves, window=3)
    fig = draw(2)
    assert draw(10) is fig
    dots = fig.axes[0].collections
    for run, d in zip(curves, dots):
        for seed, (px, acc) in enumerate(d.get_offsets()):
            assert px == pytest.approx(sum(curves[run]["proxy"][seed, t] for t in (8, 9, 10)) / 3)
            assert acc == pytest.approx(sum(curves[run]["accuracy"][seed, t] for t in (8, 9, 10)) / 3)
    assert fig.axes[0].get_title().startswith("Steps 8–10")
    draw(0)
    np.testing.assert_allclose(dots[0].get_offsets()[:, 0], curves["a"]["proxy"][:, 0])
    matplotlib.pyplot.close(fig)


def test_estimator_bars_show_the_scale_and_the_rescaled_variance():
    names = ["x", "y"]
    scale, variance = {2: [0.5, 1.0], 8: [0.875, 2.0]}, {2: [1.0, 3.0], 8: [0.5, 8.0]}
    draw = tfig.estimator_bars(names, scale, variance)
    fig = draw(2)
    assert draw(8) is fig
    ax1, ax2 = fig.axes
    assert [b.get_width() for b in ax1.patches] == [0.875, 2.0]
    assert [b.get_width() for b in ax2.patches] == pytest.approx([0.5 / 0.875 ** 2, 8.0 / 4.0])
    assert list(ax1.lines[1].get_xdata()) == [7 / 8, 7 / 8]                # (G − 1)/G, dotted
    assert ax2.get_xlim()[1] == pytest.approx(1.05 * 4.0)                  # the widest bar of any G: 1/0.5²
    assert "G = 8" in ax1.get_title()
    matplotlib.pyplot.close(fig)


def test_stacked_barh_stacks_the_columns_and_writes_the_totals(ax):
    df = pd.DataFrame({"p": [10.0, 20.0], "q": [5.0, 0.0]}, index=["one", "two"])
    plots.stacked_barh(ax, df, xlim=(0, 100), fmt="{:.0f} GB")
    bars = ax.patches
    assert [(b.get_x(), b.get_width()) for b in bars] == [(0, 10), (0, 20), (10, 5), (20, 0)]
    assert [(t.get_text(), t.get_position()[0]) for t in ax.texts] == [("15 GB", 16.0), ("20 GB", 21.0)]


def test_sigma_loudness_draws_the_relative_steps_and_their_ratio():
    p = np.array([0.1, 0.5, 0.9])
    relative = {4: {"grpo": np.array([2.0, 1.0, 2.0]), "dr_grpo": np.array([0.5, 1.0, 0.5])},
                8: {"grpo": np.array([3.0, 1.0, 3.0]), "dr_grpo": np.array([1.0, 1.0, 1.0])}}
    large_G = {"grpo": np.array([0.6, 1.0, 0.6]), "dr_grpo": np.array([0.36, 1.0, 0.36])}
    draw = tfig.sigma_loudness(p, relative, large_G)
    fig = draw(8)
    assert draw(4) is fig
    ax1, ax2 = fig.axes
    np.testing.assert_array_equal(_line_named(ax1, "GRPO (÷σ)").get_ydata(), [2.0, 1.0, 2.0])
    np.testing.assert_array_equal(_line_named(ax1, "Dr. GRPO (no ÷σ)").get_ydata(), [0.5, 1.0, 0.5])
    np.testing.assert_array_equal(_line_named(ax2, "the G of the slider").get_ydata(), [4.0, 1.0, 4.0])
    np.testing.assert_allclose(_line_named(ax2, "large-G limit").get_ydata(), [0.6 / 0.36, 1.0, 0.6 / 0.36])
    assert "G = 4" in ax1.get_title()
    matplotlib.pyplot.close(fig)


def test_length_curves_draw_right_and_wrong_lengths_per_run_set(ax):
    runs = {"A": {"len_right": np.array([[8.0, 8.0], [6.0, 4.0]]), "len_wrong": np.array([[8.0, 8.0], [9.0, 11.0]])}}
    tfig.length_curves(ax, [0, 1], runs, "t", start=1)
    np.testing.assert_array_equal(_line_named(ax, "A: right answers").get_ydata(), [8.0, 5.0])
    np.testing.assert_array_equal(_line_named(ax, "A: wrong answers").get_ydata(), [8.0, 10.0])
    assert _line_named(ax, "A: wrong answers").get_linestyle() == "--"
    assert list(ax.lines[-1].get_xdata()) == [1, 1]


# ------------------------------------------------------------------ bad input, one table
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
    (tfig.clip_objective, (), {"advantages": []}, "advantages"),
    (plots.mean_se_band, ("ax", [0], [[1.0]]), {}, "ax"),
    (plots.mean_se_band, (_AX, [0], [[np.inf]]), {}, "values"),
    (plots.mean_se_band, (_AX, [0], [["a"]]), {}, "values"),
    (plots.mean_se_band, (_AX, [0, 1], np.ones((3, 2))), {"axis": 2}, "axis"),
    (plots.mean_se_band, (_AX, [0, 1, 2], np.ones((3, 2))), {}, "x"),
    (plots.mean_se_band, (_AX, [0, 1], np.ones((3, 2))), {"n_se": -1}, "n_se"),
    (tfig.proxy_vs_accuracy, ([],), {}, "curves"),
    (tfig.proxy_vs_accuracy, ({"a": {"proxy": np.ones((2, 3))}},), {}, "curves"),
    (tfig.proxy_vs_accuracy, ({"a": {"proxy": np.ones((2, 3)), "accuracy": np.ones((2, 3))}},), {"window": 0}, "window"),
    (tfig.estimator_bars, (["x"], {2: [1.0, 2.0]}, {2: [1.0]}), {}, "scale"),
    (tfig.estimator_bars, (["x"], {2: [1.0]}, {4: [1.0]}), {}, "variance"),
    (plots.stacked_barh, (_AX, {"a": [1]}, (0, 1)), {}, "df"),
    (plots.stacked_barh, (_AX, _DF, 10), {}, "xlim"),
    (tfig.sigma_loudness, ([0.5], {}, {"grpo": [1.0]}), {}, "large_G"),
    (tfig.sigma_loudness, ([0.5], {2: {"grpo": [1.0]}}, {"grpo": [1.0], "dr_grpo": [1.0]}), {}, "relative"),
    (tfig.length_curves, (_AX, [0], [], "t"), {}, "runs"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", BAD_INPUTS)
def test_bad_input_raises_value_error_naming_the_argument(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


def test_show_leaves_out_marked_input_checks():
    from toy import rl
    src = repr(show(rl.grpo_advantages))
    assert "# argcheck" not in src and "@checked(" not in src and "nonneg(" not in src
    assert src.rstrip().endswith("return _squeeze_like((r - mean) / (std + eps), rewards)")


# ==== Part II

def test_errorbars_draws_the_seed_mean_and_one_standard_error(ax):
    x = np.array([10, 30, 100])
    v = np.array([[0.1, 0.5, 0.9], [0.3, 0.7, 0.8], [0.2, 0.3, 1.0]])
    plots.errorbars(ax, x, {"a": v}, log_x=True, ylim=(0, 1))
    c = ax.containers[0]
    np.testing.assert_allclose(c.lines[0].get_ydata(), [np.mean(col) for col in v.T])
    segs = c.lines[2][0].get_segments()                               # one vertical bar per x
    se = [math.sqrt(sum((y - np.mean(col)) ** 2 for y in col) / 2) / math.sqrt(3) for col in v.T]
    np.testing.assert_allclose([s[1, 1] - s[0, 1] for s in segs], 2 * np.array(se))
    assert ax.get_xscale() == "log" and [t.get_text() for t in ax.get_xticklabels()] == ["10", "30", "100"]



BAD_INPUTS += [
    (plots.errorbars, (None, [1, 2], {"a": np.ones((3, 2))}), {}, "ax"),
    (plots.errorbars, (_AX, [1, 2], []), {}, "series"),
    (plots.errorbars, (_AX, [1, 2], {"a": np.ones((3, 3))}), {}, "series"),
    (plots.errorbars, (_AX, [1, 2], {"a": np.ones((1, 2))}), {}, "series"),
]


def test_a_table_never_prints_minus_zero():
    """A value that rounds to zero prints as 0.000 in both the HTML and the text (its sign is
    rounding noise that may differ between machines); a negative value that does not round to
    zero keeps its sign; NaN reads "—"."""
    import re
    import pandas as pd
    df = pd.DataFrame({"x": [-1e-12, -0.0004, -0.0006, np.nan, 0.25], "name": list("abcde")})
    t = plots.table(df, precision=3)
    cells = re.findall(r">([^<]*)</td>", t._repr_html_())
    assert cells[0::2] == ["0.000", "0.000", "-0.001", "—", "0.250"]
    assert "-0.000" not in repr(t) and "-0.001" in repr(t)
