"""Part II's section-specific figures (the generic ones, style and helpers, are in :mod:`toy.plots`)."""
import numpy as np

from .._check_args import instance
from ..plots import COLORS, figure

__all__ = ["clip_paths"]


def clip_paths(paths):
    """§II.4: a token's probability over many updates on the same batch, for each (π_old, ε) of
    ``paths`` (a dict (p_old, eps) → (updates,) array of π_θ): the ratio π_θ/π_old (left) and the
    probability gained (right); one colour per π_old, solid for the smallest ε, dashed otherwise."""
    instance(paths, dict, "paths")
    if not paths or not all(isinstance(k, tuple) and len(k) == 2 for k in paths):
        raise ValueError("paths must map (p_old, eps) pairs to paths, at least one")
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
