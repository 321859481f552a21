"""toy.numsearch.figures: the data each Part I figure draws, read back from the figure and compared
with an independent computation; bad input raises a ValueError naming the argument."""
import re

import matplotlib
import numpy as np
import pytest

from toy import plots
from toy.numsearch import figures


@pytest.fixture
def ax():
    fig, ax = plots.figure()
    yield ax
    matplotlib.pyplot.close(fig)


# ==== Part I: the slider figures built once (each frame only moves artists) and §I.10–§I.11's figures
def test_sft_temperature_frames_draw_each_value():
    temps = np.linspace(0.1, 2.0, 5)
    J = {"a": np.linspace(0.9, 0.5, 5), "b": np.linspace(0.2, 0.4, 5)}
    win = {0.5: np.linspace(0, 1, 16), 1.5: np.full(16, 0.25)}
    draw = figures.sft_temperature(temps, J, win)
    for T in (0.5, 1.5, 0.5):                                # back and forth: nothing left over
        fig = draw(T)
        a1, a2 = fig.axes
        dots = [ln for ln in a1.get_lines() if ln.get_marker() == "o"]
        for dot, curve in zip(dots, J.values()):
            i = max(j for j in range(5) if temps[j] <= T)     # linear interpolation by hand
            want = curve[i] + (curve[i + 1] - curve[i]) * (T - temps[i]) / (temps[i + 1] - temps[i])
            assert list(dot.get_xdata()) == [T] and dot.get_ydata()[0] == pytest.approx(want)
        bars = [p for p in a2.patches]
        assert len(bars) == 1 and np.array_equal(bars[0].get_data().values, win[T])
        assert f"T = {T:g}" in a1.get_title()
    matplotlib.pyplot.close(fig)


def test_degenerate_groups_frames_draw_each_group_size():
    p = np.linspace(0.05, 0.95, 16)
    Gs = [2, 4, 8]
    deg = {G: np.array([q ** G + (1 - q) ** G for q in p]) for G in Gs}
    noise = {G: np.sqrt(p * (1 - p) / G) for G in Gs}
    draw = figures.degenerate_groups(deg, noise)
    for G in (8, 2, 4):
        ax = draw(G).axes[0]
        lines = ax.get_lines()
        drawn = [tuple(np.round(ln.get_ydata(), 12)) for ln in lines if len(ln.get_ydata()) == 16]
        assert tuple(np.round(deg[G], 12)) in drawn and tuple(np.round(noise[G], 12)) in drawn
        for other in Gs:
            assert tuple(np.round(deg[other], 12)) in drawn          # the others in grey
        mean = sum(deg[G]) / 16
        assert [ln for ln in lines if ln.get_linestyle() == "--"][0].get_ydata()[0] == pytest.approx(mean)
        texts = [t.get_text() for t in ax.get_legend().get_texts()]
        assert texts[1] == f"P(degenerate), G = {G}" and texts[2] == f"batch average {mean:.3f}"
        assert texts[0] == "P(degenerate), G = " + ", ".join(str(g) for g in Gs if g != G)
    matplotlib.pyplot.close("all")


def test_step_sizes_and_race_draw_their_data():
    p = np.linspace(0, 1, 11)
    rel = {"grpo": p * 2, "dr_grpo": p * 3}
    fig = figures.step_sizes(p, rel, 8, p[2:5], np.array([1.0, 2.0, 3.0]), p[:4], np.arange(4.0))
    a1, a2 = fig.axes
    assert np.array_equal(a1.get_lines()[0].get_ydata(), rel["grpo"]) and np.array_equal(a1.get_lines()[1].get_ydata(), rel["dr_grpo"])
    np.testing.assert_allclose(a1.get_lines()[2].get_ydata(), np.sqrt(p * (1 - p)) / 0.5)
    assert np.array_equal(a2.get_lines()[1].get_ydata(), np.arange(4.0)) and "G = 8" in a1.get_title()
    games = np.array([0, 1000, 2000])
    J = {"m": np.array([[0.4, 0.5, 0.6], [0.4, 0.7, 0.8]])}
    rest = np.array([[0.4, 0.9], [0.4, 0.5]])
    ax = figures.race(games, J, np.array([0, 2000]), rest, np.array([0.4, 0.6, 0.9])).axes[0]
    ys = [tuple(ln.get_ydata()) for ln in ax.get_lines()]
    assert (0.4, 0.6, 0.7) in ys and (0.4, 0.7) in ys and (0.4, 0.6, 0.9) in ys    # seed mean, ReST mean, exact
    assert any(t.get_text() == "best possible 15/16" for t in ax.texts)
    matplotlib.pyplot.close("all")


PART1_BAD_INPUTS = [
    (figures.sft_temperature, ([0.1, 1.0], {"a": [1.0]}, {1.0: np.ones(16)}), {}, "J_by_policy"),
    (figures.sft_temperature, ([0.1, 1.0], {"a": [1.0, 0.5]}, {1.0: np.ones(15)}), {}, "win_by_T"),
    (figures.sft_temperature, ("x", {"a": [1.0]}, {1.0: np.ones(16)}), {}, "temps"),
    (figures.degenerate_groups, ({2: np.ones(16)}, {2: np.ones(16)}), {}, "deg_by_G"),
    (figures.degenerate_groups, ({2: np.ones(16), 4: np.ones(16)}, {2: np.ones(16), 4: np.ones(3)}), {}, "noise_by_G"),
    (figures.step_sizes, (np.ones(3), {"grpo": np.ones(3)}, 8, np.ones(2), np.ones(2), np.ones(2), np.ones(2)), {}, "rel_steps"),
    (figures.step_sizes, (np.ones(3), {"grpo": np.ones(3), "dr_grpo": np.ones(3)}, 8, np.ones(2), np.ones(3),
                        np.ones(2), np.ones(2)), {}, "model_ratio"),
    (figures.race, (np.ones(3), {"m": np.ones((2, 3))}, np.ones(2), np.ones((2, 3)), np.ones(3)), {}, "J_rest"),
    (figures.race, (np.ones(3), {"m": np.ones((2, 3))}, np.ones(2), np.ones((2, 2)), np.ones(2)), {}, "J_exact"),
]


@pytest.mark.parametrize("fn, args, kwargs, name", PART1_BAD_INPUTS)
def test_part1_figures_bad_input(fn, args, kwargs, name):
    with pytest.raises(ValueError, match=rf"^{re.escape(name)}(?!\w)"):
        fn(*args, **kwargs)


def test_best_possible_draws_15_of_16(ax):
    figures.best_possible(ax)
    assert [tuple(ln.get_ydata()) for ln in ax.get_lines()] == [(15 / 16, 15 / 16)]
    assert [t.get_text() for t in ax.texts] == ["best possible 15/16"] and ax.texts[0].get_position()[1] > 15 / 16
    with pytest.raises(ValueError, match="^ax"):
        figures.best_possible("ax")
