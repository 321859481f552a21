"""The book's one plotting style, and figure/table helpers.

Importing this module applies the style (small PNGs, labelled axes, a colour cycle shared by
every part) and, in a notebook, shows figures at 2x pixel density. Every helper draws on an
``ax`` you pass, so figures compose.
"""
import numpy as np
import matplotlib
import matplotlib.pyplot as plt

from ._check_args import as_array, instance, integer, nonempty, real

__all__ = ["STYLE", "COLORS", "figure", "curves", "prob_bars", "entropy_curves",
           "running_average", "Table", "table", "advantage_table", "clip_objective"]

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
    for v, name in ((width, "width"), (height, "height")):
        if v is not None:
            real(v, name, lo=0, lo_open=True)
    w = width if width is not None else (6.0 if ncols == 1 else 4.2 * ncols)
    h = height if height is not None else 3.3 * nrows
    fig, axes = plt.subplots(nrows, ncols, figsize=(w, h), layout=layout, **kw)
    return fig, axes


def _axes(ax):
    return instance(ax, matplotlib.axes.Axes, "ax")


def _band(values):
    v = np.asarray(values, dtype=float)
    if v.ndim == 1:
        return v, None, None
    if v.ndim != 2:
        raise ValueError(f"series values must have shape (steps,) or (seeds, steps), got {v.shape}")
    mean, std = v.mean(axis=0), v.std(axis=0)
    return mean, mean - std, mean + std


def curves(ax, x, series, xlabel="step", ylabel=None, title=None, ylim=None, styles=None):
    """Training curves: ``series`` maps a label to an array of shape (steps,) or (seeds, steps).

    With several seeds the line is the mean and the shaded band is mean ± one std over seeds.
    ``styles`` optionally maps a label to extra ``ax.plot`` keyword arguments.
    """
    _axes(ax), instance(series, dict, "series")
    if ylim is not None and np.shape(ylim) != (2,):
        raise ValueError(f"ylim must be a pair (bottom, top), got {ylim!r}")
    x = np.asarray(x)
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
    _axes(ax)
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
    _axes(ax)
    p = np.atleast_2d(as_array(probs, "probs"))
    if p.ndim != 2:
        raise ValueError(f"probs must have shape (contexts,) or (series, contexts), got {p.shape}")
    n_series, n_ctx = p.shape
    if series_labels is not None and len(series_labels) != n_series:
        raise ValueError(f"series_labels must have {n_series} entries, got {len(series_labels)}")
    if len(labels) != n_ctx:
        raise ValueError(f"labels must have {n_ctx} entries, got {len(labels)}")
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
        return self.df.to_string(float_format=lambda x: f"{x:.{self.precision}f}", na_rep="—")


def _check_df(df, precision):
    import pandas as pd
    instance(df, pd.DataFrame, "df"), integer(precision, "precision", lo=0)


def _styled(df, precision, caption, uuid):
    sty = df.style.format(precision=precision, na_rep="—").set_uuid(uuid)   # a missing value reads "—"
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
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"columns must be columns of df, got {missing}")
    vmax = float(np.nanmax(np.abs(df[columns].to_numpy(dtype=float)))) or 1.0
    sty = _styled(df, precision, caption, uuid).background_gradient(
        cmap="RdBu", vmin=-vmax, vmax=vmax, subset=columns)
    return Table(df, sty, precision)


def clip_objective(eps, advantages=(1.0, -1.0), h=1e-5):
    """PPO's clipped objective min(ρA, clip(ρ, 1−ε, 1+ε)A) against the ratio ρ (left) and its
    slope in ρ (right) for each advantage, with the band [1−ε, 1+ε] shaded: a slider frame
    (``widgets.slider(plots.clip_objective, [0.05, 0.2, 0.28, 0.5], name="ε")``). The slope is a
    forward difference of ``toy.rl.clipped_surrogate``, so it does not assume the rule."""
    from . import rl
    rho = np.linspace(0.0, 2.0, 401)
    fig, (ax1, ax2) = figure(2, width=8.4, height=3.2, layout=None)
    fig.subplots_adjust(left=0.06, right=0.985, top=0.86, bottom=0.15, wspace=0.15)
    lim = 1.05 * max(abs(a) for a in advantages)
    for i, A in enumerate(advantages):
        J = rl.clipped_surrogate(rho, A, eps)
        dJ = (rl.clipped_surrogate(rho + h, A, eps) - J) / h              # forward difference
        ax1.plot(rho, rho * A, color="0.65", ls="--", lw=1)
        ax1.plot(rho, J, color=COLORS[i], label=f"A = {A:+g}")
        ax2.plot(rho, dJ, color=COLORS[i])
    for ax in (ax1, ax2):
        ax.axvspan(1 - eps, 1 + eps, color=COLORS[2], alpha=0.12, lw=0)
        ax.set_xticks([0, 0.5, 1, 1.5, 2])
        ax.grid(False)
    ax1.set(ylim=(-2 * lim, 2 * lim), title=f"Objective vs ratio ρ = π_θ/π_old, ε = {eps:g} (dashed: ρA)")
    ax2.set(ylim=(-1.3 * lim / 1.05, 1.3 * lim / 1.05), title="Its slope in ρ: 0 where the clip is active")
    ax1.legend(loc="upper left")
    return fig


# ==== Part II

def errorbars(ax, x, series, styles=None, xlabel=None, ylabel=None, title=None, ylim=None, log_x=False):
    """Mean ± one standard error over seeds at a few x values (a sweep): ``series`` maps a label
    to an array (seeds, len(x)); ``styles`` maps a label to extra ``ax.errorbar`` keyword
    arguments (default: ``fmt="o-"``, the next colour). With ``log_x`` the x axis is
    logarithmic and its ticks are the x values."""
    _axes(ax), instance(series, dict, "series")
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


def clip_paths(paths):
    """§II.4: a token's probability over many updates on the same batch, for each (π_old, ε) of
    ``paths`` (a dict (p_old, eps) → (updates,) array of π_θ): the ratio π_θ/π_old (left) and the
    probability gained (right); one colour per π_old, solid for the smallest ε, dashed otherwise."""
    instance(paths, dict, "paths")
    if not paths:
        raise ValueError("paths must hold at least one (p_old, eps) path")
    fig, (ax1, ax2) = figure(2, width=8.4, layout=None)
    fig.subplots_adjust(left=0.08, right=0.985, top=0.9, bottom=0.15, wspace=0.25)
    p_olds, eps_min = sorted({p for p, _ in paths}), min(e for _, e in paths)
    for (p, e), path in paths.items():
        kw = dict(color=COLORS[p_olds.index(p)], ls="-" if e == eps_min else "--", label=f"π_old = {p:g}, ε = {e:g}")
        updates = np.arange(1, len(path) + 1)
        ax1.plot(updates, np.asarray(path) / p, **kw)
        ax2.plot(updates, np.asarray(path) - p, **kw)
    ax1.set(xlabel="update on the same batch", ylabel="ratio π_θ / π_old",
            title="The ratio stops at 1 + ε for every token ...")
    ax2.set(xlabel="update on the same batch", ylabel="probability gained",
            title="... so the unlikely token gains ~40× less")
    ax1.legend()
    return fig
