"""Part III's own figures (the section each serves in brackets): the clipped objective and its
slope (§III.2), the proxy reward against the verifier's accuracy (§III.1), the KL estimators'
scale and variance (§III.2), the loudness of GRPO's σ normalisation and the answer lengths of the
length toy (§III.4). Each slider figure is built once and returns ``draw(value)`` for
``widgets.slider``. The book's style and generic helpers: ``toy.plots``."""
import numpy as np
import pandas as pd

from .. import rl
from .._check_args import as_array, instance, integer, nonempty, real
from ..plots import COLORS, check_axes, frame_figure, mean_se_band

__all__ = ["clip_objective", "proxy_vs_accuracy", "estimator_bars", "sigma_loudness", "length_curves",
           "paired_differences"]


def clip_objective(advantages=(1.0, -1.0)):
    """PPO's clipped objective min(ρA, clip(ρ, 1−ε, 1+ε)A) against the ratio ρ (left) and its
    slope in ρ (right, ``toy.rl.clipped_surrogate_grad``) for each advantage, with the band
    [1−ε, 1+ε] shaded. Returns ``draw(ε)`` for a slider
    (``widgets.slider(plots.clip_objective(), [0.05, 0.2, 0.28, 0.5], name="ε")``): the figure is
    built once, and each call moves its lines and band."""

    advantages = nonempty(as_array(advantages, "advantages", ndim=1), "advantages")
    rho = np.linspace(0.0, 2.0, 401)
    fig, (ax1, ax2) = frame_figure(2, width=8.4, height=3.2)
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


def proxy_vs_accuracy(curves, window=5):
    """§III.1's slider: each seed's proxy reward against its true accuracy, averaged over the
    ``window`` steps up to the slider's step. ``curves`` maps a run to ``{"proxy": (seeds, steps),
    "accuracy": (seeds, steps)}``. Returns ``draw(step)``; the figure is built once."""
    instance(curves, dict, "curves"), integer(window, "window", lo=1)
    for run, c in curves.items():
        if not isinstance(c, dict) or np.ndim(c.get("proxy")) != 2 or np.shape(c["proxy"]) != np.shape(c.get("accuracy")):
            raise ValueError(f"curves must map each run to {{'proxy', 'accuracy'}} arrays (seeds, steps), not so for {run!r}")
    fig, ax = frame_figure(width=5.2, height=3.6)
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


def estimator_bars(names, scale, variance):
    """§III.2's slider: per estimator, the scale c of its expected gradient along the true one
    (left, with 1 and (G − 1)/G marked) and its variance ÷ c² (right). ``scale`` and
    ``variance`` map each group size G to one value per name. Returns ``draw(G)``; the figure is
    built once."""
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
        raise ValueError(f"names must be a non-empty list of estimator names, got {names!r}")
    for d, name in ((scale, "scale"), (variance, "variance")):
        if not isinstance(d, dict) or not d or set(d) != set(scale) or any(np.shape(v) != (len(names),) for v in d.values()):
            raise ValueError(f"{name} must map each G (the same for scale and variance) to {len(names)} values, one per name")
    fig, (ax1, ax2) = frame_figure(2, width=9.5, height=3.0)
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
    fig, (ax1, ax2) = frame_figure(2, width=9.5, height=3.3)
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
    if not all(isinstance(h, dict) and {"len_right", "len_wrong"} <= set(h) for h in runs.values()):
        raise ValueError("runs must map each name to length_toy.train's dict (with len_right and len_wrong)")
    if start is not None and (isinstance(start, bool) or not isinstance(start, (int, float, np.number))
                              or not np.isfinite(start)):
        raise ValueError(f"start must be a finite update number (or None), got {start!r}")
    for j, (name, h) in enumerate(runs.items()):
        for key, ls, what in (("len_right", "-", "right answers"), ("len_wrong", "--", "wrong answers")):
            mean_se_band(ax, x, h[key], n_se=2, axis=-1, ls=ls, color=COLORS[j], label=f"{name}: {what}")
    if start is not None:
        ax.axvline(start, color="k", ls=":", lw=1)
    ax.set(xlabel="update", ylabel="mean thinking tokens (exact, given θ)", ylim=(0, 33), title=title)
    ax.legend(fontsize=7.5)
    return ax


# ==== Part III §8

def paired_differences(ax, names, pairs, xlabel=None, title=None):
    """§III.8's race: per arm (``names``, top to bottom), a paired difference to the comparator as a
    point with two intervals, ± 2 s.e. over the seeds (thick) and ± 2 s.e. over the warm-ups (thin,
    capped). ``pairs``: one ``(mean, s.e. over the seeds, s.e. over the warm-ups)`` per name."""
    check_axes(ax)
    if isinstance(names, str) or not isinstance(names, (list, tuple)) or not names:
        raise ValueError(f"names must be a non-empty list of arm names, got {names!r}")
    p = as_array(pairs, "pairs")
    if p.shape != (len(names), 3) or not np.all(np.isfinite(p)) or np.any(p[:, 1:] < 0):
        raise ValueError(f"pairs must be {len(names)} finite (mean, s.e., s.e. over the warm-ups) triples "
                         f"with s.e. >= 0, one per name, got shape {p.shape}")
    y = np.arange(len(names))
    ax.errorbar(p[:, 0], y, xerr=2 * p[:, 2], fmt="none", ecolor="0.45", elinewidth=1, capsize=3,
                label="± 2 s.e. over the warm-ups")
    ax.errorbar(p[:, 0], y, xerr=2 * p[:, 1], fmt="o", color=COLORS[0], elinewidth=3.5, markersize=5,
                label="± 2 s.e. over the seeds")
    ax.axvline(0, color="0.3", lw=0.8)
    ax.set_yticks(y, names)
    ax.invert_yaxis()
    ax.set(**{k: v for k, v in (("xlabel", xlabel), ("title", title)) if v is not None})
    ax.legend(fontsize=7.5, loc="lower left")
    return ax


# ==== Part II
