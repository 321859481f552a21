"""Number Search's figures (Part I): the plots of one section each, built from the book's style
(:mod:`toy.plots`: ``figure``, ``curves``, ``COLORS``). A slider's figure is built once and its
``draw(value)`` only moves artists (a frame stays < 0.1 s)."""
import matplotlib
import numpy as np

from .._check_args import as_array, instance, real
from ..plots import COLORS, curves, figure

__all__ = ["best_possible", "sft_temperature", "degenerate_groups", "step_sizes", "race"]


def best_possible(ax, J=15 / 16, text="best possible 15/16"):
    """The best success rate any Number Search policy reaches (15/16, §I.2): a dashed line, labelled."""
    instance(ax, matplotlib.axes.Axes, "ax"), real(J, "J", 0, 1)
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    ax.axhline(J, color="k", ls="--", lw=1)
    ax.text(0, J + 0.015, text, fontsize=8)
    return ax


def _curves_of(curves_by_key, name, n):
    """A dict of 1-D arrays of length n (one curve per key), else a ValueError naming it."""
    if not isinstance(curves_by_key, dict) or not curves_by_key:
        raise ValueError(f"{name} must be a non-empty dict of curves, got {type(curves_by_key).__name__}")
    for k, v in curves_by_key.items():
        if np.shape(as_array(v, name, ndim=1)) != (n,):
            raise ValueError(f"{name}[{k!r}] must have {n} values, got shape {np.shape(v)}")


def sft_temperature(temps, J_by_policy, win_by_T):
    """§I.3's temperature slider. Left: each policy's exact success rate J against the
    temperature (``J_by_policy``: name → J at each of ``temps``), a dot at the slider's T; right:
    P(win | x) of the SFT policy at T (``win_by_T``: T → (16,)). The figure is built once;
    returns ``draw(T)``, which only moves the dots and the bars (a frame stays < 0.1 s)."""
    temps = as_array(temps, "temps", ndim=1)
    _curves_of(J_by_policy, "J_by_policy", len(temps))
    _curves_of(win_by_T, "win_by_T", 16)
    fig, (a1, a2) = figure(2, width=8.4, height=3.0, layout=None)
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.17, top=0.88, wspace=0.3)
    dots = []
    for i, (name, J) in enumerate(J_by_policy.items()):
        a1.plot(temps, J, color=COLORS[i], label=name)
        dots.append((a1.plot([], [], "o", color=COLORS[i])[0], J))
    a1.set(xlabel="temperature T", ylabel="exact success rate J", ylim=(0, 1))
    a1.legend(loc="lower left")
    bars = a2.stairs(np.zeros(16), np.arange(0.5, 17), fill=True, color=COLORS[0])   # one artist
    a2.set(xlabel="hidden number x", ylabel="P(win | x)", ylim=(0, 1), xticks=[1, 4, 8, 12, 16],
           title="Which numbers does the SFT policy find?")

    def draw(T):
        for dot, J in dots:
            dot.set_data([T], [np.interp(T, temps, J)])
        bars.set_data(win_by_T[T])
        a1.set_title(f"How well does each policy play at T = {T:g}?")
        return fig
    return draw


def degenerate_groups(deg_by_G, noise_by_G):
    """§I.9's G slider: per hidden number, the probability p^G + (1 − p)^G that a group of G
    games is degenerate (``deg_by_G``: G → (16,); the slider's G in colour, the others in grey,
    the batch average dashed), and the std √(p(1 − p)/G) of the group's mean reward
    (``noise_by_G``: G → (16,)). The figure is built once; returns ``draw(G)``, which only moves
    the G-dependent lines and relabels them (a frame stays < 0.1 s)."""
    _curves_of(deg_by_G, "deg_by_G", 16), _curves_of(noise_by_G, "noise_by_G", 16)
    Gs = list(deg_by_G)
    if len(Gs) < 2 or list(noise_by_G) != Gs:
        raise ValueError(f"deg_by_G and noise_by_G must have the same keys, at least two G, got {Gs} and {list(noise_by_G)}")
    xs = np.arange(1, 17)
    fig, ax = figure(width=6.4, height=3.3, layout=None)
    greys = [ax.plot(xs, deg_by_G[g], color="0.85", lw=1)[0] for g in Gs[1:]]
    grey_key, = ax.plot([], [], color="0.85", lw=1)
    line, = ax.plot(xs, deg_by_G[Gs[0]], "o-", color=COLORS[0])
    mean = ax.axhline(0.0, color=COLORS[1], ls="--", lw=1.2)
    noise, = ax.plot(xs, noise_by_G[Gs[0]], "s:", ms=3, color=COLORS[2])
    ax.set_xticks([1, 4, 8, 12, 16])
    ax.set(ylim=(0, 1), xlabel="hidden number x (the weak prior's success rate falls →)", ylabel="probability / std")
    labels = ax.legend([grey_key, line, mean, noise], ["", "", "", ""], loc="upper center", fontsize=7.5).get_texts()
    fig.subplots_adjust(left=0.11, right=0.98, bottom=0.15, top=0.9)

    def draw(G):
        others = [g for g in Gs if g != G]
        for grey, g in zip(greys, others):
            grey.set_ydata(deg_by_G[g])
        line.set_ydata(deg_by_G[G])
        mean.set_ydata([deg_by_G[G].mean()] * 2)
        noise.set_ydata(noise_by_G[G])
        for text, label in zip(labels, ["P(degenerate), G = " + ", ".join(map(str, others)),
                                        f"P(degenerate), G = {G}", f"batch average {deg_by_G[G].mean():.3f}",
                                        f"std of the group mean R̄, G = {G}"]):
            text.set_text(label)
        ax.set_title(f"G = {G}: how often is a group useless, how noisy its mean?")
        return fig
    return draw


def step_sizes(p, rel_steps, G, model_p, model_ratio, p_x, measured):
    """§I.10: left, the expected step of one group against the success rate ``p`` relative to
    the step at p = 0.5, for GRPO and Dr. GRPO (``rel_steps``: {"grpo": …, "dr_grpo": …}, each
    (len(p),)), with their large-G shapes √(p(1−p)) and p(1−p) dotted; right, GRPO's step over
    Dr. GRPO's: the bandit model's (``model_ratio`` at ``model_p``, a line) and the ratio measured
    on Number Search per hidden number (``measured`` at success rates ``p_x``, dots)."""
    p, model_p, p_x = (as_array(x, name, ndim=1) for x, name in [(p, "p"), (model_p, "model_p"), (p_x, "p_x")])
    if isinstance(G, bool) or not isinstance(G, (int, np.integer)) or G < 2:
        raise ValueError(f"G must be the group size (an integer >= 2), got {G!r}")
    _curves_of({k: rel_steps.get(k) for k in ("grpo", "dr_grpo")} if isinstance(rel_steps, dict) else rel_steps,
               "rel_steps", len(p))
    _curves_of({"": model_ratio}, "model_ratio", len(model_p)), _curves_of({"": measured}, "measured", len(p_x))
    fig, (ax1, ax2) = figure(2, width=9.5, height=3.4)
    ax1.plot(p, rel_steps["grpo"], label="GRPO (÷σ)")
    ax1.plot(p, rel_steps["dr_grpo"], label="Dr. GRPO (no ÷σ)")
    ax1.plot(p, np.sqrt(p * (1 - p)) / 0.5, ":", color=COLORS[0], lw=1, label="√(p(1−p)), scaled")
    ax1.plot(p, p * (1 - p) / 0.25, ":", color=COLORS[1], lw=1, label="p(1−p), scaled")
    ax1.set(xlabel="success rate p of the instance", ylabel="expected step / step at p = 0.5",
            title=f"Which instances move the policy most? (G = {G})", ylim=(0, 1.35))
    ax1.legend(fontsize=7.5, loc="lower center")
    ax2.plot(model_p, model_ratio, color="k", lw=1, label="bandit model (exact)")
    ax2.plot(p_x, measured, "o", color=COLORS[0], label="Number Search, per hidden number")
    ax2.set(xlabel="exact success rate of the hidden number at the weak prior",
            ylabel="GRPO step / Dr. GRPO step", title="Does the model predict Number Search?")
    ax2.legend()
    return fig


def race(games, J_by_method, games_rest, J_rest, J_exact, styles=None):
    """§I.11's race: the exact J of each policy-gradient method against the games played
    (``J_by_method``: name → (seeds, evals) at ``games``; mean and spread by :func:`curves`),
    batch ReST (``J_rest`` (seeds, evals) at ``games_rest``), exact gradient ascent (``J_exact``
    at ``games``) and the best possible 15/16."""
    games, games_rest = as_array(games, "games", ndim=1), as_array(games_rest, "games_rest", ndim=1)
    if not isinstance(J_by_method, dict) or not J_by_method:
        raise ValueError(f"J_by_method must be a non-empty dict of curves (name → (seeds, evals)), got {type(J_by_method).__name__}")
    if styles is not None:
        instance(styles, dict, "styles")
    J_rest = as_array(J_rest, "J_rest", ndim=2)
    if J_rest.shape[1] != len(games_rest):
        raise ValueError(f"J_rest must have one column per entry of games_rest ({len(games_rest)}), got {J_rest.shape}")
    _curves_of({"": J_exact}, "J_exact", len(games))
    fig, ax = figure(width=8.0, height=3.8)
    curves(ax, games / 1000, J_by_method, xlabel="games played (thousands)", ylabel="exact success rate J",
           ylim=(0.35, 1), title="Which weight learns Number Search fastest from the same games?", styles=styles)
    mean, sd = J_rest.mean(axis=0), J_rest.std(axis=0)
    ax.plot(games_rest / 1000, mean, color=COLORS[5], marker=".", label=f"ReST, batch (mean of {len(J_rest)})")
    ax.fill_between(games_rest / 1000, mean - sd, mean + sd, color=COLORS[5], alpha=0.18, linewidth=0)
    ax.plot(games / 1000, J_exact, "k-", lw=1.3, label="exact gradient ascent (no sampling)")
    best_possible(ax)
    ax.legend(loc="lower right", ncol=2, fontsize=7.5)
    return fig
