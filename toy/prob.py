r"""Small probability helpers shared by every model in `toy`: sigmoid, softmax, sampling."""
import numpy as np

from ._check_args import as_array, has_methods, positive, probabilities

__all__ = ["sigmoid", "softmax", "log_softmax", "log_softmax_table_grad", "sample_categorical", "inverse_cdf"]


def sigmoid(x):
    r""":math:`\sigma(x) = 1 / (1 + e^{-x})`, numerically stable."""
    x = as_array(x, "x")
    out = np.exp(-np.logaddexp(0.0, -x))
    return float(out) if out.ndim == 0 else out


def log_softmax(logits, temperature=1.0):
    r""":math:`\log \mathrm{softmax}(z / T)` along the last axis (float32 logits stay float32)."""
    z = _logits(logits) / positive(temperature, "temperature")
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def log_softmax_table_grad(probs, rows, actions, dlogp):
    r"""The chain rule of a tabular softmax policy :math:`\pi(\cdot \mid s) = \mathrm{softmax}(\theta_s)`:
    from :math:`g_i = \partial L / \partial \log\pi(a_i \mid s_i)` on samples :math:`(s_i, a_i)` to

    .. math:: \frac{\partial L}{\partial \theta_s} = \sum_{i:\, s_i = s} g_i\,\big(e_{a_i} - \pi(\cdot \mid s)\big),

    since :math:`\nabla_{\theta_s} \log\pi(a \mid s) = e_a - \pi(\cdot \mid s)`. ``probs`` (S, A) is the
    table :math:`\pi`; ``rows`` (n,) the states, ``actions`` (n,) the actions, ``dlogp`` (n,) the
    :math:`g_i`. Returns (S, A). (A temperature T divides :math:`\theta` first: divide the result by T.)
    """
    p = as_array(probs, "probs", ndim=2)                     # (S, A)
    S, A = p.shape
    s, a, g = (np.asarray(x).ravel() for x in (rows, actions, dlogp))
    if s.dtype.kind not in "iu" or (s.size and (s.min() < 0 or s.max() >= S)):  # argcheck
        raise ValueError(f"rows must be integers in 0..{S - 1}")
    if a.dtype.kind not in "iu" or a.shape != s.shape or (a.size and (a.min() < 0 or a.max() >= A)):  # argcheck
        raise ValueError(f"actions must be integers in 0..{A - 1}, one per row")
    if g.shape != s.shape or not np.isfinite(g).all():  # argcheck
        raise ValueError(f"dlogp must be {s.shape[0]} finite numbers, one per row, got shape {np.shape(dlogp)}")
    onehot = np.bincount(s * A + a, weights=g, minlength=S * A).reshape(S, A)   # Σ g·e_a per state
    total = np.bincount(s, weights=g, minlength=S)                              # Σ g per state
    return onehot - total[:, None] * p


def _logits(x):
    """``x`` as an array of finite floats with a non-empty last axis; a float32 array stays float32
    (the Part III model's dtype), anything else becomes float64."""
    if isinstance(x, np.ndarray) and x.dtype == np.float32:
        if not np.isfinite(x).all():
            raise ValueError("logits must be finite, got non-finite values")
        z = x
    else:
        z = as_array(x, "logits", min_ndim=1)
    if z.ndim < 1 or z.shape[-1] < 1:
        raise ValueError(f"logits must have a non-empty last axis, got shape {z.shape}")
    return z


def softmax(logits, temperature=1.0):
    r""":math:`\pi_i = e^{z_i/T} / \sum_j e^{z_j/T}` along the last axis."""
    return np.exp(log_softmax(logits, temperature))


def sample_categorical(probs, rng):
    """One sample per row of ``probs`` (..., K) by inverse CDF; returns integer indices (...)."""
    p = probabilities(probs, "probs")
    return _sample_categorical(p, has_methods(rng, "rng", "random"))


def _sample_categorical(p, rng):
    """:func:`sample_categorical` without the input checks (for tables already checked)."""
    return inverse_cdf(p, rng.random(p.shape[:-1] + (1,)))


def inverse_cdf(p, u):
    """One draw per row of ``p`` (..., K) (probabilities, or weights to be normalised) given
    uniforms ``u`` (..., 1) in [0, 1): the first k with u · Σp < CDF(k)."""
    cdf = np.cumsum(p, axis=-1)
    return np.minimum((u * cdf[..., -1:] > cdf).sum(axis=-1), p.shape[-1] - 1)
