"""Argument checks shared by the equation modules.

Every public function of `toy` validates its input with these helpers so that bad input
raises a ``ValueError`` naming the argument and what was expected, never a numpy
broadcasting error three frames deep.
"""
import numpy as np


def as_array(x, name, ndim=None, min_ndim=None):
    """Return ``x`` as a float array, checking its number of dimensions."""
    try:
        a = np.asarray(x, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric array-like, got {type(x).__name__}") from None
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {a.shape}")
    if min_ndim is not None and a.ndim < min_ndim:
        raise ValueError(f"{name} must have at least {min_ndim} dimension(s), got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite, got non-finite values")
    return a


def same_shape(a, b, name_a, name_b):
    if a.shape != b.shape:
        raise ValueError(f"{name_a} and {name_b} must have the same shape, got {a.shape} and {b.shape}")


def nonneg(x, name):
    if not np.isscalar(x) and np.ndim(x) != 0:
        raise ValueError(f"{name} must be a scalar, got shape {np.shape(x)}")
    if not np.isfinite(x) or x < 0:
        raise ValueError(f"{name} must be a finite number >= 0, got {x}")
    return float(x)


def positive(x, name):
    if not np.isscalar(x) and np.ndim(x) != 0:
        raise ValueError(f"{name} must be a scalar, got shape {np.shape(x)}")
    if not np.isfinite(x) or x <= 0:
        raise ValueError(f"{name} must be a finite number > 0, got {x}")
    return float(x)


def group_rewards(rewards, name="rewards"):
    """Rewards of shape (groups, G) with G >= 2; a 1-D input is one group."""
    r = as_array(rewards, name)
    if r.ndim == 1:
        r = r[None, :]
    if r.ndim != 2:
        raise ValueError(f"{name} must have shape (groups, G) or (G,), got shape {r.shape}")
    if r.shape[1] < 2:
        raise ValueError(f"{name} needs a group size G >= 2, got G = {r.shape[1]}")
    return r
