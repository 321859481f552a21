r"""Small probability helpers shared by every model in `toy`: sigmoid, softmax, sampling."""
import numpy as np

from ._check_args import as_array, has_methods, positive, probabilities

__all__ = ["sigmoid", "softmax", "log_softmax", "sample_categorical"]


def sigmoid(x):
    r""":math:`\sigma(x) = 1 / (1 + e^{-x})`, numerically stable."""
    x = as_array(x, "x")
    out = np.exp(-np.logaddexp(0.0, -x))
    return float(out) if out.ndim == 0 else out


def log_softmax(logits, temperature=1.0):
    r""":math:`\log \mathrm{softmax}(z / T)` along the last axis."""
    z = as_array(logits, "logits", min_ndim=1) / positive(temperature, "temperature")
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def softmax(logits, temperature=1.0):
    r""":math:`\pi_i = e^{z_i/T} / \sum_j e^{z_j/T}` along the last axis."""
    return np.exp(log_softmax(logits, temperature))


def sample_categorical(probs, rng):
    """One sample per row of ``probs`` (..., K) by inverse CDF; returns integer indices (...)."""
    p = probabilities(probs, "probs")
    return _sample_categorical(p, has_methods(rng, "rng", "random"))


def _sample_categorical(p, rng):
    """:func:`sample_categorical` without the input checks (for tables already checked)."""
    cdf = np.cumsum(p, axis=-1)
    u = rng.random(p.shape[:-1] + (1,)) * cdf[..., -1:]
    return np.minimum((u > cdf).sum(axis=-1), p.shape[-1] - 1)
