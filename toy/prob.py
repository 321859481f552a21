r"""Small probability helpers shared by every model in `toy`: sigmoid, softmax, sampling.

Each public function is its formula alone; its argument checks are the ``_check_<name>`` function
above it (``@checked``: they run on every call, whoever calls)."""
import numpy as np

from ._check_args import as_array, checked, int_array, positive, probabilities, random_source

__all__ = ["sigmoid", "softmax", "log_softmax", "log_softmax_table_grad", "sample_categorical", "inverse_cdf"]


def _check_sigmoid(x):
    return {"x": as_array(x, "x")}


@checked(_check_sigmoid)
def sigmoid(x):
    r""":math:`\sigma(x) = 1 / (1 + e^{-x})`, numerically stable."""
    out = np.exp(-np.logaddexp(0.0, -np.asarray(x, dtype=float)))
    return float(out) if out.ndim == 0 else out


def _finite(z):
    return bool(np.isfinite(z.sum())) or bool(np.isfinite(z).all())


def _float_logits(x):
    """``x`` as a float array: a float32 array stays float32 (the Part III model's dtype), anything
    else becomes float64."""
    return x if isinstance(x, np.ndarray) and x.dtype == np.float32 else np.asarray(x, dtype=float)


def _check_logits(logits):
    """``logits`` as an array of finite floats with a non-empty last axis (see :func:`_float_logits`)."""
    if isinstance(logits, np.ndarray) and logits.dtype == np.float32:
        if not np.isfinite(logits).all():
            raise ValueError("logits must be finite, got non-finite values")
        z = logits
    else:
        z = as_array(logits, "logits", min_ndim=1)
    if z.ndim < 1 or z.shape[-1] < 1:
        raise ValueError(f"logits must have a non-empty last axis, got shape {z.shape}")
    return z


def _shifted(z, T):
    """(z − max z) / T for a tiny T, in float64 (T may underflow in float32), back in z's dtype:
    0 at the max, elsewhere finite or −∞."""
    with np.errstate(all="ignore"):
        z64 = z.astype(np.float64)
        return ((z64 - z64.max(axis=-1, keepdims=True)) / T).astype(z.dtype)


def _check_softmax(logits, temperature):
    return {"logits": _check_logits(logits), "temperature": positive(temperature, "temperature")}


def _check_log_softmax(logits, temperature):
    new = _check_softmax(logits, temperature)
    z, T = new["logits"], new["temperature"]
    with np.errstate(all="ignore"):
        zt = z / T
        zt = zt - zt.max(axis=-1, keepdims=True)
    if not _finite(zt) and np.isneginf(_shifted(z, T)).any():    # the log of a probability 0
        with np.errstate(over="ignore"):
            spread = float(np.max(np.ptp(z.astype(float), axis=-1)))
        if not np.isfinite(spread):
            raise ValueError("logits must have a finite spread (max - min) along the last axis, got an overflow")
        raise ValueError(f"temperature must be large enough that the logits' spread divided by it is a "
                         f"finite number, got {T!r} for a spread of {spread:.4g} "
                         f"(softmax gives the limit, the argmax, for T -> 0)")
    return new


@checked(_check_log_softmax)
def log_softmax(logits, temperature=1.0):
    r""":math:`\log \mathrm{softmax}(z / T)` along the last axis (float32 logits stay float32)."""
    logits = _float_logits(logits)
    with np.errstate(all="ignore"):
        z = logits / temperature
        z = z - z.max(axis=-1, keepdims=True)
    if not _finite(z):                       # z/T overflowed: shift first, then divide
        z = _shifted(logits, temperature)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


@checked(_check_softmax)
def softmax(logits, temperature=1.0):
    r""":math:`\pi_i = e^{z_i/T} / \sum_j e^{z_j/T}` along the last axis (for a tiny T, where
    :math:`(z_i - \max z)/T` underflows to −∞, the limit: the argmax, ties shared)."""
    z = _float_logits(logits)
    with np.errstate(all="ignore"):
        if _finite(z / temperature):
            return np.exp(log_softmax(z, temperature))
    z = _shifted(z, temperature)
    e = np.exp(z - z.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def _check_log_softmax_table_grad(probs, rows, actions, dlogp):
    """Integer rows in 0..S−1 and actions in 0..A−1 (an integer dtype that ``np.bincount`` takes),
    one finite dlogp per row."""
    p = as_array(probs, "probs", ndim=2)                     # (S, A)
    S, A = p.shape
    if S == 0 or A == 0:
        raise ValueError(f"probs must hold at least one state and one action, got shape {p.shape}")
    for x, name, hi in ((rows, "rows", S - 1), (actions, "actions", A - 1)):
        n = int_array(x, name, lo=0, hi=hi).size
        if not np.can_cast(np.asarray(x).dtype, np.intp) or np.asarray(x).dtype == bool:
            raise ValueError(f"{name} must be an integer array (int8 to int64), got dtype {np.asarray(x).dtype}")
    if np.size(actions) != np.size(rows):
        raise ValueError(f"actions must be integers in 0..{A - 1}, one per row, got {np.size(actions)} for "
                         f"{np.size(rows)} rows")
    if as_array(dlogp, "dlogp").size != n:
        raise ValueError(f"dlogp must be {np.size(rows)} finite numbers, one per row, got shape {np.shape(dlogp)}")
    return {"probs": p}


@checked(_check_log_softmax_table_grad)
def log_softmax_table_grad(probs, rows, actions, dlogp):
    r"""The chain rule of a tabular softmax policy :math:`\pi(\cdot \mid s) = \mathrm{softmax}(\theta_s)`:
    from :math:`g_i = \partial L / \partial \log\pi(a_i \mid s_i)` on samples :math:`(s_i, a_i)` to

    .. math:: \frac{\partial L}{\partial \theta_s} = \sum_{i:\, s_i = s} g_i\,\big(e_{a_i} - \pi(\cdot \mid s)\big),

    since :math:`\nabla_{\theta_s} \log\pi(a \mid s) = e_a - \pi(\cdot \mid s)`. ``probs`` (S, A) is the
    table :math:`\pi`; ``rows`` (n,) the states, ``actions`` (n,) the actions, ``dlogp`` (n,) the
    :math:`g_i`. Returns (S, A). (A temperature T divides :math:`\theta` first: divide the result by T.)
    """
    p = np.asarray(probs, dtype=float)                       # (S, A)
    S, A = p.shape
    s, a, g = (np.asarray(x).ravel() for x in (rows, actions, dlogp))
    onehot = np.bincount(s * A + a, weights=g, minlength=S * A).reshape(S, A)   # Σ g·e_a per state
    total = np.bincount(s, weights=g, minlength=S)                              # Σ g per state
    return onehot - total[:, None] * p


def _check_sample_categorical(probs, rng):
    return {"probs": probabilities(probs, "probs"), "rng": random_source(rng, "rng")}


@checked(_check_sample_categorical)
def sample_categorical(probs, rng):
    """One sample per row of ``probs`` (..., K) by inverse CDF; returns integer indices (...)."""
    p = np.asarray(probs, dtype=float)
    return inverse_cdf(p, rng.random(p.shape[:-1] + (1,)))


def _sample_categorical(p, rng):
    """:func:`sample_categorical` of a float table ``p`` (kept for ``toy.numsearch``, which imports
    it: a call of :func:`sample_categorical` from inside ``toy`` skips the checks as well)."""
    return inverse_cdf(p, rng.random(p.shape[:-1] + (1,)))


def _check_inverse_cdf(p, u):
    if not (isinstance(p, np.ndarray) and p.dtype.kind == "f" and p.ndim >= 1 and _finite(p)):
        p = as_array(p, "p", min_ndim=1)
    if p.shape[-1] < 1 or (p < 0).any() or (p.sum(axis=-1) <= 0).any():
        raise ValueError(f"p must be weights >= 0 along a non-empty last axis, each row summing to > 0, "
                         f"got shape {p.shape}")
    u = np.asarray(u) if not isinstance(u, (str, bytes)) else np.asarray(None)
    if u.dtype.kind != "f" or u.shape != p.shape[:-1] + (1,) or not ((u >= 0) & (u < 1)).all():
        raise ValueError(f"u must be uniforms in [0, 1) of shape {p.shape[:-1] + (1,)}, got {u.dtype} {u.shape}")
    return {"p": p}


@checked(_check_inverse_cdf)
def inverse_cdf(p, u):
    """One draw per row of ``p`` (..., K) (probabilities, or weights to be normalised) given
    uniforms ``u`` (..., 1) in [0, 1): the first k with u · Σp < CDF(k)."""
    cdf = np.cumsum(p, axis=-1)
    return np.minimum((u * cdf[..., -1:] > cdf).sum(axis=-1), p.shape[-1] - 1)
