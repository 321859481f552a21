"""The book's one plotting style, and figure/table helpers.

Importing this module applies the style (small PNGs, labelled axes, a colour cycle shared by
every part) and, in a notebook, shows figures at 2x pixel density. Every helper draws on an
``ax`` you pass, so figures compose. A section's own figures live beside its world
(``toy.numsearch.figures``, ``toy.arith.figures``, ``toy.tinylm.figures``); a slider's figure is
built once and returns ``draw(value)`` for ``widgets.slider``: each call only moves the artists
that change, since building a figure costs more than a slider frame may (0.1 s).
"""
import numpy as np
import matplotlib
import matplotlib.pyplot as plt

from ._check_args import as_array, instance, integer, nonempty, real, size

__all__ = ["STYLE", "COLORS", "figure", "curves", "prob_bars", "entropy_curves", "running_average",
           "Table", "table", "advantage_table", "frame_figure", "check_axes", "mean_se_band",
           "stacked_barh"]

#: the palette: one colour per method, reused across the book
COLORS = ["#1f5fa8", "#d1603d", "#3a9a5b", "#8a5cb8", "#c9a227", "#5f6b73", "#d64f8a", "#2aa9b8"]

STYLE = {
    "figure.dpi": 80,
    "savefig.dpi": 80,
    "figure.figsize": (6.0, 3.4),
    "font.size": 10,
    "axes.titlesize": 10.5,
    "axes.labelsize": 10,
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "axes.grid": True,
    "grid.alpha": 0.25,
    "axes.prop_cycle": matplotlib.cycler(color=COLORS),
    "lines.linewidth": 1.8,
    "svg.hashsalt": "rl-by-hand",
}
matplotlib.rcParams.update(STYLE)


def _retina_inline_figures():
    """In a notebook, show figures as PNGs at twice the pixels, displayed at the same size, so
    they stay crisp on high-density screens (the PNG holds its display size as metadata)."""
    try:
        from IPython import get_ipython
        from matplotlib_inline.backend_inline import set_matplotlib_formats
    except ImportError:  # pragma: no cover - IPython comes with ipykernel
        return
    if get_ipython() is not None:
        set_matplotlib_formats("retina")


_retina_inline_figures()


def figure(ncols=1, nrows=1, width=None, height=None, layout="constrained", **kw):
    """A new figure in the book's size: ``fig, ax = plots.figure()``; ``fig, (a, b) = plots.figure(2)``.

    For slider frames pass ``layout=None`` and set margins with ``fig.subplots_adjust``: the
    constrained layout doubles the time to render a frame.
    """
    integer(ncols, "ncols", lo=1), integer(nrows, "nrows", lo=1)
    size(ncols * nrows, "ncols and nrows", 64, "axes")
    for v, name in ((width, "width"), (height, "height")):
        if v is not None:
            real(v, name, lo=0, lo_open=True)
    w = width if width is not None else (6.0 if ncols == 1 else 4.2 * ncols)
    h = height if height is not None else 3.3 * nrows
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), layout=layout, **kw)
    return fig, axes


def frame_figure(ncols=1, width=None, height=None):
    """A slider's figure: no layout engine (it doubles a frame's render time; set the margins
    with ``fig.subplots_adjust``) and titles fixed at the top of their axes (matplotlib would
    otherwise re-measure every tick label on each frame to see whether a title must move up)."""
    with matplotlib.rc_context({"axes.titley": 1.0}):
        return figure(ncols, width=width, height=height, layout=None)


def check_axes(ax):
    return instance(ax, matplotlib.axes.Axes, "ax")


def _band(values):
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        return v, None, None
    if v.ndim != 2:
        raise ValueError(f"series values must have shape (steps,) or (seeds, steps), got {v.shape}")
    mean, std = v.mean(axis=0), v.std(axis=0)
    return mean, mean - std, mean + std


def _steps(x):
    """``x`` as a 1-d numeric array (the steps), else a ValueError naming it."""
    a = np.asarray(x) if isinstance(x, (list, tuple, range, np.ndarray)) else None
    if a is None or a.ndim != 1 or a.dtype.kind not in "iuf":
        raise ValueError(f"x must be a 1-d array of numbers (the steps), got {type(x).__name__}")
    return a


def curves(ax, x, series, xlabel="step", ylabel=None, title=None, ylim=None, styles=None):
    """Training curves: ``series`` maps a label to an array of shape (steps,) or (seeds, steps).

    With several seeds the line is the mean and the shaded band is mean ± one std over seeds.
    ``styles`` optionally maps a label to extra ``ax.plot`` keyword arguments.
    """
    check_axes(ax), instance(series, dict, "series")
    if ylim is not None and np.shape(ylim) != (2,):
        raise ValueError(f"ylim must be a pair (bottom, top), got {ylim!r}")
    if styles is not None:
        instance(styles, dict, "styles")
    x = _steps(x)
    for i, (label, values) in enumerate(series.items()):
        mean, lo, hi = _band(values)
        if mean.shape != x.shape:
            raise ValueError(f"series {label!r} has {mean.shape[0]} steps but x has {x.shape[0]}")
        kw = {"color": COLORS[i % len(COLORS)]}
        kw.update((styles or {}).get(label, {}))
        n = np.asarray(values).shape[0] if np.ndim(values) == 2 else 1
        ax.plot(x, mean, label=label + (f" (mean of {n})" if n > 1 else ""), **kw)
        if lo is not None:
            ax.fill_between(x, lo, hi, color=kw["color"], alpha=0.18, linewidth=0)
    ax.set_xlabel(xlabel)
    if ylabel:
        ax.set_ylabel(ylabel)
    if title:
        ax.set_title(title)
    if ylim is not None:
        ax.set_ylim(*ylim)
    if series:
        ax.legend()
    return ax


def entropy_curves(ax, x, series, xlabel="step", title="Policy entropy"):
    """Entropy over training (nats), same conventions as :func:`curves`."""
    curves(ax, x, series, xlabel=xlabel, ylabel="entropy (nats)", title=title)
    ax.set_ylim(bottom=0)
    return ax


def running_average(ax, samples, label, truth=None, color=None):
    """Running average of a sequence of per-sample estimates, with the true value dashed."""
    check_axes(ax)
    s = nonempty(as_array(samples, "samples", ndim=1), "samples")
    if truth is not None:
        real(truth, "truth")
    n = np.arange(1, len(s) + 1)
    ax.plot(n, np.cumsum(s) / n, marker="o", ms=3, label=label, color=color)
    if truth is not None:
        ax.axhline(truth, color="k", ls="--", lw=1)
    ax.set_xlabel("number of samples")
    return ax


def prob_bars(ax, probs, labels, series_labels=None, ylabel="probability", title=None):
    """Grouped bars: ``probs`` is (contexts,) or (series, contexts); one group per label."""
    check_axes(ax)
    p = np.atleast_2d(as_array(probs, "probs"))
    if p.ndim != 2:
        raise ValueError(f"probs must have shape (contexts,) or (series, contexts), got {p.shape}")
    n_series, n_ctx = p.shape
    if series_labels is not None and (isinstance(series_labels, str) or len(series_labels) != n_series):
        raise ValueError(f"series_labels must be a list of {n_series} labels, got {series_labels!r}")
    if isinstance(labels, str) or not hasattr(labels, "__len__") or len(labels) != n_ctx:
        raise ValueError(f"labels must be a list of {n_ctx} labels, got {labels!r}")
    width = 0.8 / n_series
    x = np.arange(n_ctx)
    for i in range(n_series):
        lab = series_labels[i] if series_labels else None
        bars = ax.bar(x + (i - (n_series - 1) / 2) * width, p[i], width, label=lab,
                      color=COLORS[i % len(COLORS)])
        ax.bar_label(bars, fmt="%.2f", fontsize=7.5, padding=1)
    ax.set_xticks(x, labels)
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, max(1.0, float(p.max()) * 1.12))
    if title:
        ax.set_title(title)
    if series_labels:
        ax.legend()
    return ax


class Table:
    """A styled DataFrame for notebooks: HTML for the book, the plain numbers as text; a
    missing value (NaN, e.g. the accuracy of a format that never occurs) shows as "—".

    (A bare pandas ``Styler`` shows ``<Styler at 0x7f…>`` as text, an address that changes on
    every run; this shows the table itself, which nbval then compares.)
    """

    def __init__(self, df, styler, precision):
        self.df, self.styler, self.precision = df, styler, precision

    def _repr_html_(self):
        return self.styler.to_html()

    def __repr__(self):
        return self.df.to_string(float_format=_fixed(self.precision), na_rep="—")


def _fixed(precision):
    """A float at ``precision`` decimals, never "-0.000": a value that rounds to zero is zero
    (its sign is rounding noise, and may differ between machines)."""
    def fmt(x):
        text = f"{x:.{precision}f}"
        return text[1:] if text.startswith("-") and not any(c in "123456789" for c in text) else text
    return fmt


def _check_df(df, precision):
    import pandas as pd
    instance(df, pd.DataFrame, "df"), integer(precision, "precision", lo=0)


def _styled(df, precision, caption, uuid):
    fixed = _fixed(precision)
    sty = df.style.format(lambda v: fixed(v) if isinstance(v, (float, np.floating)) else v,
                          na_rep="—").set_uuid(uuid)                  # a missing value reads "—"
    if caption:
        sty = sty.set_caption(caption)
    return sty.set_table_styles([
        {"selector": "th", "props": "text-align: center; padding: 2px 8px;"},
        {"selector": "td", "props": "text-align: right; padding: 2px 8px;"},
        {"selector": "caption", "props": "caption-side: top; font-size: 0.9em; color: #555;"},
    ])


def table(df, precision=3, caption=None, uuid="t"):
    """The book's table style for a DataFrame: fixed precision, no random HTML ids."""
    _check_df(df, precision)
    return Table(df, _styled(df, precision, caption, uuid), precision)


def advantage_table(df, columns, precision=2, caption=None, uuid="adv"):
    """A table with ``columns`` coloured blue (positive) / red (negative), centred at 0."""
    _check_df(df, precision)
    if isinstance(columns, str) or not isinstance(columns, (list, tuple)):
        raise ValueError(f"columns must be a list of columns of df, got {columns!r}")
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"columns must be columns of df, got {missing}")
    vmax = float(np.nanmax(np.abs(df[columns].to_numpy(dtype=float)))) or 1.0
    sty = _styled(df, precision, caption, uuid).background_gradient(
        cmap="RdBu", vmin=-vmax, vmax=vmax, subset=columns)
    return Table(df, sty, precision)


def mean_se_band(ax, x, values, n_se=1, axis=0, **line_kw):
    """The mean of ``values`` over ``axis`` (seeds or runs; NaN left out) against ``x``, with a
    band of ± ``n_se`` standard errors in the line's colour. ``line_kw`` goes to ``ax.plot``."""
    check_axes(ax)
    try:
        v = np.asarray(values, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"values must be numeric array-like (NaN allowed), got {type(values).__name__}") from None
    if v.ndim < 1 or np.isinf(v).any():
        raise ValueError(f"values must be an array of finite numbers or NaN, got shape {v.shape}")
    integer(axis, "axis", lo=-v.ndim, hi=v.ndim - 1), real(n_se, "n_se", lo=0)
    mean = np.nanmean(v, axis=axis)
    if mean.shape != np.shape(x):
        raise ValueError(f"x must have the shape of values without axis {axis}, got {np.shape(x)} and {v.shape}")
    se = np.nanstd(v, axis=axis, ddof=1) / np.sqrt(v.shape[axis])
    line, = ax.plot(x, mean, **line_kw)
    ax.fill_between(x, mean - n_se * se, mean + n_se * se, color=line.get_color(), alpha=0.2, lw=0)
    return line


def stacked_barh(ax, df, xlim, fmt="{:.0f}", xlabel=None, title=None):
    """One horizontal bar per row of ``df``, its columns stacked left to right in the book's
    colours, each bar's total written after it (``fmt``), on the x range ``xlim``."""
    import pandas as pd
    check_axes(ax), instance(df, pd.DataFrame, "df")
    if np.shape(xlim) != (2,) or not all(isinstance(v, (int, float, np.number)) for v in xlim):
        raise ValueError(f"xlim must be a pair of numbers (left, right), got {xlim!r}")
    if not isinstance(fmt, str):
        raise ValueError(f"fmt must be a format string such as '{{:.0f}}', got {fmt!r}")
    left = np.zeros(len(df))
    for i, col in enumerate(df.columns):
        ax.barh(df.index, df[col], left=left, color=COLORS[i % len(COLORS)], label=col)
        left += df[col].to_numpy()
    for y, total in enumerate(left):
        ax.text(total + 0.01 * xlim[1], y, fmt.format(total), va="center")
    ax.set(xlabel=xlabel, xlim=xlim, title=title)
    ax.invert_yaxis()
    return ax


# ==== Part III §4


def errorbars(ax, x, series, styles=None, xlabel=None, ylabel=None, title=None, ylim=None, log_x=False):
    """Mean ± one standard error over seeds at a few x values (a sweep): ``series`` maps a label
    to an array (seeds, len(x)); ``styles`` maps a label to extra ``ax.errorbar`` keyword
    arguments (default: ``fmt="o-"``, the next colour). With ``log_x`` the x axis is
    logarithmic and its ticks are the x values."""
    check_axes(ax), instance(series, dict, "series")
    x = np.asarray(x)
    for i, (label, values) in enumerate(series.items()):
        v = np.asarray(values, dtype=float)
        if v.ndim != 2 or v.shape[1] != len(x) or v.shape[0] < 2:
            raise ValueError(f"series {label!r} must have shape (seeds >= 2, {len(x)}), got {v.shape}")
        kw = {"fmt": "o-", "capsize": 3, "color": COLORS[i % len(COLORS)], "label": label}
        kw.update((styles or {}).get(label, {}))
        ax.errorbar(x, v.mean(0), yerr=v.std(0, ddof=1) / np.sqrt(len(v)), **kw)
    if log_x:
        ax.set_xscale("log")
        ax.set_xticks(x, [f"{t:g}" for t in x])
    ax.set(**{k: v for k, v in (("xlabel", xlabel), ("ylabel", ylabel), ("title", title), ("ylim", ylim)) if v is not None})
    return ax
