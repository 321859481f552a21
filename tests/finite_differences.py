"""The one finite-difference reference the unit tests share (not a test module)."""
import numpy as np


def central(f, x, h=1e-6):
    """Central finite differences of the scalar ``f`` at every entry of the array ``x``."""
    g = np.zeros_like(x, dtype=float)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x, dtype=float)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g
