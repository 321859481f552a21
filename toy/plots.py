"""The book's one plotting style, and figure/table helpers.

Importing this module applies the style (small PNGs, labelled axes, a colour cycle shared by
every part) and, in a notebook, shows figures at 2x pixel density. Every helper draws on an
``ax`` you pass, so figures compose; except a slider's helper (``clip_objective``,
``proxy_vs_accuracy``, ``estimator_bars``, ``sigma_loudness``), which builds its figure once and
returns ``draw(value)`` for ``widgets.slider``: each call only moves the artists that change,
since building a figure costs more than a slider frame may (0.1 s).
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


def _frame_figure(ncols=1, width=None, height=None):
    """A slider's figure: no layout engine (it doubles a frame's render time; set the margins
    with ``fig.subplots_adjust``) and titles fixed at the top of their axes (matplotlib would
    otherwise re-measure every tick label on each frame to see whether a title must move up)."""
    with matplotlib.rc_context({"axes.titley": 1.0}):
        return figure(ncols, width=width, height=height, layout=None)


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
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise ValueError(f"columns must be columns of df, got {missing}")
    vmax = float(np.nanmax(np.abs(df[columns].to_numpy(dtype=float)))) or 1.0
    sty = _styled(df, precision, caption, uuid).background_gradient(
        cmap="RdBu", vmin=-vmax, vmax=vmax, subset=columns)
    return Table(df, sty, precision)


def clip_objective(advantages=(1.0, -1.0)):
    """PPO's clipped objective min(ρA, clip(ρ, 1−ε, 1+ε)A) against the ratio ρ (left) and its
    slope in ρ (right, ``toy.rl.clipped_surrogate_grad``) for each advantage, with the band
    [1−ε, 1+ε] shaded. Returns ``draw(ε)`` for a slider
    (``widgets.slider(plots.clip_objective(), [0.05, 0.2, 0.28, 0.5], name="ε")``): the figure is
    built once, and each call moves its lines and band."""
    from . import rl
    advantages = nonempty(as_array(advantages, "advantages", ndim=1), "advantages")
    rho = np.linspace(0.0, 2.0, 401)
    fig, (ax1, ax2) = _frame_figure(2, width=8.4, height=3.2)
    fig.subplots_adjust(left=0.06, right=0.985, top=0.86, bottom=0.15, wspace=0.15)
    lim = 1.05 * max(abs(a) for a in advantages)
    lines = []
    for i, A in enumerate(advantages):
        ax1.plot(rho, rho * A, color="0.65", ls="--", lw=1)
        objective, = ax1.plot(rho, rho * A, color=COLORS[i], label=f"A = {A:+g}")
        slope, = ax2.plot(rho, rho * A, color=COLORS[i])
        lines.append((A, objective, slope))
    bands = [ax.axvspan(0.8, 1.2, color=COLORS[2], alpha=0.12, lw=0) for ax in (ax1, ax2)]
    for ax in (ax1, ax2):
        ax.set_xticks([0, 0.5, 1, 1.5, 2])
        ax.grid(False)
    ax1.set_ylim(-2 * lim, 2 * lim)
    ax2.set(ylim=(-1.3 * lim / 1.05, 1.3 * lim / 1.05), title="Its slope in ρ: 0 where the clip is active")
    ax1.legend(loc="upper left")

    def draw(eps):
        for A, objective, slope in lines:
            objective.set_ydata(rl.clipped_surrogate(rho, A, eps))
            slope.set_ydata(rl.clipped_surrogate_grad(rho, A, eps))
        for band in bands:
            band.set_x(1 - eps)
            band.set_width((1 + eps) - (1 - eps))
        ax1.set_title(f"Objective vs ratio ρ = π_θ/π_old, ε = {eps:g} (dashed: ρA)")
        return fig
    return draw


# ==== Part III §1
__all__ += ["mean_se_band", "proxy_vs_accuracy"]


def mean_se_band(ax, x, values, n_se=1, axis=0, **line_kw):
    """The mean of ``values`` over ``axis`` (seeds or runs; NaN left out) against ``x``, with a
    band of ± ``n_se`` standard errors in the line's colour. ``line_kw`` goes to ``ax.plot``."""
    _axes(ax)
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


def proxy_vs_accuracy(curves, window=5):
    """§III.1's slider: each seed's proxy reward against its true accuracy, averaged over the
    ``window`` steps up to the slider's step. ``curves`` maps a run to ``{"proxy": (seeds, steps),
    "accuracy": (seeds, steps)}``. Returns ``draw(step)``; the figure is built once."""
    instance(curves, dict, "curves"), integer(window, "window", lo=1)
    for run, c in curves.items():
        if not isinstance(c, dict) or np.ndim(c.get("proxy")) != 2 or np.shape(c["proxy"]) != np.shape(c.get("accuracy")):
            raise ValueError(f"curves must map each run to {{'proxy', 'accuracy'}} arrays (seeds, steps), not so for {run!r}")
    fig, ax = _frame_figure(width=5.2, height=3.6)
    fig.subplots_adjust(left=0.13, right=0.97, top=0.9, bottom=0.14)
    dots = {run: ax.scatter(c["proxy"][:, 0], c["accuracy"][:, 0], color=COLORS[i], s=22, label=run)
            for i, (run, c) in enumerate(curves.items())}
    ax.plot([0, 1], [0, 1], color="0.7", lw=0.8, ls="--")
    ax.set(xlim=(0, 1), ylim=(0, 1), xlabel="proxy reward", ylabel="true accuracy")
    ax.legend(loc="upper left")

    def draw(step):
        steps = slice(max(0, step - window + 1), step + 1)
        for run, c in curves.items():
            dots[run].set_offsets(np.column_stack([c["proxy"][:, steps].mean(axis=1),
                                                   c["accuracy"][:, steps].mean(axis=1)]))
        ax.set_title(f"Steps {steps.start}–{step}: proxy reward vs accuracy")
        return fig
    return draw


# ==== Part III §2
__all__ += ["estimator_bars", "stacked_barh"]


def estimator_bars(names, scale, variance):
    """§III.2's slider: per estimator, the scale c of its expected gradient along the true one
    (left, with 1 and (G − 1)/G marked) and its variance ÷ c² (right). ``scale`` and
    ``variance`` map each group size G to one value per name. Returns ``draw(G)``; the figure is
    built once."""
    for d, name in ((scale, "scale"), (variance, "variance")):
        if not isinstance(d, dict) or not d or set(d) != set(scale) or any(np.shape(v) != (len(names),) for v in d.values()):
            raise ValueError(f"{name} must map each G (the same for scale and variance) to {len(names)} values, one per name")
    fig, (ax1, ax2) = _frame_figure(2, width=9.5, height=3.0)
    fig.subplots_adjust(left=0.19, right=0.98, top=0.88, bottom=0.16, wspace=0.12)
    y = np.arange(len(names))
    spread = {G: np.asarray(variance[G]) / np.asarray(scale[G]) ** 2 for G in scale}
    bars_c = ax1.barh(y, np.ones(len(names)), color=COLORS[:len(names)])
    ax1.axvline(1, color="0.3", lw=0.8)
    shrink = ax1.axvline(1, color="0.3", lw=0.8, ls=":")
    ax1.set(xlim=(0, 3), xlabel="scale c of E[ĝ] along ∇J")
    bars_v = ax2.barh(y, np.ones(len(names)), color=COLORS[:len(names)])
    ax2.set(xlim=(0, 1.05 * max(s.max() for s in spread.values())), xlabel="variance ÷ c²",
            title="Variance, at the gradient's scale")
    ax1.set_yticks(y, names, fontsize=8)
    ax2.set_yticks(y, [])
    for ax in (ax1, ax2):
        ax.invert_yaxis()
        ax.grid(False)

    def draw(G):
        for bar, c in zip(bars_c, scale[G]):
            bar.set_width(c)
        for bar, v in zip(bars_v, spread[G]):
            bar.set_width(v)
        shrink.set_xdata([(G - 1) / G] * 2)
        ax1.set_title(f"G = {G}: bias (dotted: (G − 1)/G = {(G - 1) / G:.3f})")
        return fig
    return draw


def stacked_barh(ax, df, xlim, fmt="{:.0f}", xlabel=None, title=None):
    """One horizontal bar per row of ``df``, its columns stacked left to right in the book's
    colours, each bar's total written after it (``fmt``), on the x range ``xlim``."""
    import pandas as pd
    _axes(ax), instance(df, pd.DataFrame, "df")
    if np.shape(xlim) != (2,):
        raise ValueError(f"xlim must be a pair (left, right), got {xlim!r}")
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
__all__ += ["sigma_loudness", "length_curves"]


def sigma_loudness(p, relative, large_G):
    """§III.4's slider: the expected step on a problem of success rate ``p``, relative to
    p = 0.5, under GRPO (÷σ) and Dr. GRPO (left), and their ratio (right). ``relative`` maps
    each group size G to ``{"grpo": (len(p),), "dr_grpo": (len(p),)}``; ``large_G`` holds the
    same two curves in the large-G limit (dotted). Returns ``draw(G)``; the figure is built once."""
    p = as_array(p, "p", ndim=1)

    def two_curves(d):
        return isinstance(d, dict) and all(np.shape(d.get(m)) == p.shape for m in ("grpo", "dr_grpo"))
    if not two_curves(large_G):
        raise ValueError(f"large_G must hold 'grpo' and 'dr_grpo' curves of shape {p.shape}")
    if not isinstance(relative, dict) or not all(map(two_curves, relative.values())):
        raise ValueError(f"relative must map each G to 'grpo' and 'dr_grpo' curves of shape {p.shape}")
    fig, (ax1, ax2) = _frame_figure(2, width=9.5, height=3.3)
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.16, top=0.88, wspace=0.25)
    line_grpo, = ax1.plot(p, p, label="GRPO (÷σ)")
    line_dr, = ax1.plot(p, p, label="Dr. GRPO (no ÷σ)")
    ax1.plot(p, large_G["grpo"], ":", color=COLORS[0], lw=1, label="√(p(1−p)), large G")
    ax1.plot(p, large_G["dr_grpo"], ":", color=COLORS[1], lw=1, label="p(1−p), large G")
    ax1.set(xlabel="success rate p of the problem", ylabel="expected step / step at p = 0.5", ylim=(0, 1.1))
    ax1.legend(fontsize=7, loc="lower center")
    line_amp, = ax2.plot(p, p, color="k", label="the G of the slider")
    ax2.plot(p, large_G["grpo"] / large_G["dr_grpo"], ":", color="k", lw=1, label="large-G limit")
    ax2.set(xlabel="success rate p of the problem", ylabel="GRPO / Dr. GRPO, relative to p = 0.5",
            ylim=(0.9, 5.5), title="How much louder does ÷σ make it?")
    ax2.legend(fontsize=7)

    def draw(G):
        r = relative[G]
        line_grpo.set_ydata(r["grpo"])
        line_dr.set_ydata(r["dr_grpo"])
        line_amp.set_ydata(r["grpo"] / r["dr_grpo"])
        ax1.set_title(f"Which problems move the policy most? (G = {G})")
        return fig
    return draw


def length_curves(ax, x, runs, title, start=None):
    """§III.4's length toy: per run set (``runs`` maps a name to ``length_toy.train``'s dict),
    the mean thinking length of right (solid) and wrong (dashed) answers over updates, ± 2
    standard errors over runs; a dotted line at update ``start``."""
    instance(runs, dict, "runs")
    for j, (name, h) in enumerate(runs.items()):
        for key, ls, what in (("len_right", "-", "right answers"), ("len_wrong", "--", "wrong answers")):
            mean_se_band(ax, x, h[key], n_se=2, axis=-1, ls=ls, color=COLORS[j], label=f"{name}: {what}")
    if start is not None:
        ax.axvline(start, color="k", ls=":", lw=1)
    ax.set(xlabel="update", ylabel="mean thinking tokens (exact, given θ)", ylim=(0, 33), title=title)
    ax.legend(fontsize=7.5)
    return ax


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
