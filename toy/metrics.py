r"""Evaluation metrics and the book's statistics: pass@k (estimated from samples, or exact from a
solve probability), maj@k, entropy; the mean and standard error over seeds (``mean_se``, ``se``) and
the paired difference of two arms run on the same seeds (``paired_diff``)."""
import numpy as np
from ._check_args import MAX_ELEMENTS, MAX_LOOP, as_array, int_array, integer, seed as _seed, size

MAX_PROBLEMS = 10**5      # pass_at_k loops over the entries of n and c in Python

__all__ = ["pass_at_k", "pass_at_k_exact", "maj_at_k", "entropy", "mean_se", "se", "paired_diff"]


def pass_at_k(n, c, k):
    r"""Unbiased pass@k estimator (Chen et al., 2021) from n samples of which c are correct:

    .. math:: \text{pass@}k = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}
              = 1 - \prod_{i=0}^{k-1} \frac{n-c-i}{n-i}

    ``n``, ``c`` may be arrays (one entry per problem); ``k`` is an int with 1 ≤ k ≤ n.
    Computed as a product, exact and stable for large n, in O(k) per entry: over the k draws
    as above, or, when c ≤ 4096, as :math:`\prod_{i=n-c+1}^{n} (1 - k/i)` over the c correct
    samples (the same value; the form the book's outputs were computed with).
    """
    n_arr = int_array(n, "n", lo=1)
    c_arr = int_array(c, "c", lo=0)
    k = integer(k, "k", lo=1)
    try:
        n_arr, c_arr = np.broadcast_arrays(n_arr, c_arr)
    except ValueError:
        raise ValueError(f"n and c must broadcast, got shapes {n_arr.shape} and {c_arr.shape}") from None
    if np.any(c_arr > n_arr):
        raise ValueError("c must satisfy 0 <= c <= n")
    if n_arr.size and k > n_arr.min():
        raise ValueError(f"k must be <= n, got k={k} and n={int(n_arr.min())}")
    size(n_arr.size, "n and c", MAX_PROBLEMS, "problems")
    work = np.where(n_arr - c_arr < k, 0, np.where(c_arr <= 4096, c_arr, np.minimum(c_arr, k)))
    size(int(work.sum(dtype=object)), "n, c and k", MAX_LOOP, "factors (min(c, k) per problem)")
    out = np.empty(n_arr.shape, dtype=float)
    for idx in np.ndindex(n_arr.shape):
        ni, ci = int(n_arr[idx]), int(c_arr[idx])
        if ni - ci < k:
            out[idx] = 1.0
        elif ci <= 4096:
            out[idx] = 1.0 - np.prod(1.0 - k / np.arange(ni - ci + 1, ni + 1))
        elif k > ci:                                                   # fewer factors over the c correct
            fail = 1.0
            for i0 in range(ni - ci + 1, ni + 1, 4096):
                fail *= np.prod(1.0 - k / np.arange(i0, min(ni + 1, i0 + 4096)))
            out[idx] = 1.0 - fail
        else:
            fail = 1.0                                                 # P(all k draws wrong)
            for i0 in range(0, k, 4096):                               # 4096 factors at a time
                i = np.arange(i0, min(k, i0 + 4096))
                fail *= np.prod((ni - ci - i) / (ni - i))              # (n−c−i)/(n−i)
            out[idx] = 1.0 - fail
    return float(out) if out.ndim == 0 else out


def pass_at_k_exact(p, k):
    r"""Exact pass@k of a problem the model solves with probability ``p`` per sample: at least
    one of k independent samples is right,

    .. math:: \text{pass@}k = 1 - (1 - p)^k .

    ``p``: solve probabilities (any shape, e.g. one per problem); ``k``: an integer ≥ 1, or a
    1-D array of them (then the result gets a last axis, one entry per k). Average over the
    problems yourself: ``pass_at_k_exact(p, ks).mean(axis=0)`` is the pass@k curve of a test set.
    """
    p = as_array(p, "p")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"p must be probabilities in [0, 1], got min {p.min()}, max {p.max()}")
    if np.ndim(k) != 0:
        size(p.size * np.size(k), "p and k", MAX_ELEMENTS, "entries (one per p and k)")
    if np.ndim(k) == 0:
        out = 1 - (1 - p) ** integer(k, "k", lo=1)
    else:
        out = 1 - (1 - p[..., None]) ** int_array(k, "k", lo=1, ndim=1)
    return float(out) if out.ndim == 0 else out


def maj_at_k(answers, correct_answer, seed=0):
    r"""Majority vote accuracy: 1 if the most frequent of the k sampled answers equals the
    correct one, else 0. A tie between several most frequent answers is broken uniformly at
    random (``seed``), so a tie between the correct answer and one other scores 1 half of
    the time, whatever the answers' values.

    ``answers``: (..., k) integer answers; ``correct_answer``: (...) integers.
    """
    a = _answers(answers, "answers")
    t = _answers(correct_answer, "correct_answer")
    if a.ndim < 1 or a.shape[-1] < 1:
        raise ValueError(f"answers must have a last axis of k >= 1 samples, got shape {a.shape}")
    if t.shape != a.shape[:-1]:
        raise ValueError(f"correct_answer must have shape {a.shape[:-1]}, got {t.shape}")
    seed = _seed(seed)
    size(a.size * a.shape[-1], "answers", MAX_ELEMENTS, "vote comparisons (k² per problem)")
    flat = np.sort(a.reshape(-1, a.shape[-1]), axis=1)                 # (R, k), each row sorted
    count = (flat[:, :, None] == flat[:, None, :]).sum(axis=2)          # (R, k) votes of each entry's value
    first = np.ones(flat.shape, bool)
    first[:, 1:] = flat[:, 1:] != flat[:, :-1]                          # first entry of each distinct value
    top = first & (count == count.max(axis=1, keepdims=True))           # (R, k) the tied winners
    u = np.random.default_rng(seed).random(len(flat))                   # one draw per vote
    pick = np.floor(u * top.sum(axis=1)).astype(int)                    # which winner, 0-based
    col = np.argmax(top & (np.cumsum(top, axis=1) == pick[:, None] + 1), axis=1)
    votes = flat[np.arange(len(flat)), col]
    return (votes.reshape(t.shape) == t).astype(float)


def _answers(x, name):
    """Answers as an array: integers as they are (exact), anything else as finite floats."""
    a = np.asarray(x) if not isinstance(x, (str, bytes, bool, np.bool_)) or x is None else None
    if a is not None and a.dtype.kind in "iu":
        return a
    return as_array(x, name)


def entropy(probs):
    r"""Shannon entropy in nats along the last axis: :math:`H(p) = -\sum_i p_i \log p_i`
    (with 0 log 0 = 0). Rows must be probability vectors."""
    p = as_array(probs, "probs", min_ndim=1)
    if np.any(p < 0):
        raise ValueError("probs must be >= 0")
    if not np.allclose(p.sum(axis=-1), 1.0, atol=1e-6):
        raise ValueError("probs must sum to 1 along the last axis")
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    out = terms.sum(axis=-1)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------- statistics over seeds
def _seeds(x, axis):
    x = as_array(x, "x", min_ndim=1)
    axis = integer(axis, "axis", -x.ndim, x.ndim - 1)
    if x.shape[axis] < 2:
        raise ValueError(f"x needs at least 2 seeds along axis {axis}, got shape {x.shape}")
    return x, axis


def _mean_se(x, axis=0):
    return x.mean(axis=axis), x.std(axis=axis, ddof=1) / np.sqrt(x.shape[axis])


def mean_se(x, axis=0):
    r"""Mean and standard error :math:`s/\sqrt{K}` (s the sample std, ddof = 1) over ``axis``
    (the K seeds): the ± every race in the book reports."""
    return _mean_se(*_seeds(x, axis))


def se(x, axis=0):
    r"""The standard error :math:`s/\sqrt{K}` over ``axis`` (the K seeds) alone."""
    return _mean_se(*_seeds(x, axis))[1]


def paired_diff(a, b, axis=0):
    r"""Mean and standard error of the paired difference a − b over ``axis``: two arms run on the
    same K seeds (or warm-ups), so that what the seeds share cancels out of the difference."""
    a, axis = _seeds(a, axis)
    b = as_array(b, "b")
    if b.shape != a.shape:
        raise ValueError(f"b must have the shape of a {a.shape}, got {b.shape}")
    return _mean_se(a - b, axis)
