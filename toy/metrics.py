r"""Evaluation metrics and the book's statistics: pass@k (estimated from samples, or exact from a
solve probability), maj@k, entropy; the mean and standard error over seeds (``mean_se``, ``se``) and
the paired difference of two arms run on the same seeds (``paired_diff``).

Each public function is its formula alone; its argument checks are the ``_check_<name>`` function
above it (``@checked``: they run on every call, whoever calls)."""
import numpy as np
from ._check_args import MAX_ELEMENTS, MAX_LOOP, as_array, checked, int_array, integer, seed as _seed, size

MAX_PROBLEMS = 10**5      # pass_at_k loops over the entries of n and c in Python

__all__ = ["pass_at_k", "pass_at_k_exact", "maj_at_k", "entropy", "mean_se", "se", "paired_diff", "warmup_se"]


def _check_pass_at_k(n, c, k):
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
    work = np.where(n_arr - c_arr < k, 0, k)
    size(int(work.sum(dtype=object)), "n, c and k", MAX_LOOP, "factors (k per problem)")
    return {"n": n_arr, "c": c_arr, "k": k}


@checked(_check_pass_at_k)
def pass_at_k(n, c, k):
    r"""Unbiased pass@k estimator (Chen et al., 2021) from n samples of which c are correct:

    .. math:: \text{pass@}k = 1 - \binom{n-c}{k} \Big/ \binom{n}{k}
              = 1 - \prod_{i=0}^{k-1} \frac{n-c-i}{n-i}

    ``n``, ``c`` may be arrays (one entry per problem); ``k`` is an int with 1 ≤ k ≤ n.
    Computed as the product over the k draws, exact and stable for large n, in O(k) per entry.
    """
    n, c = np.broadcast_arrays(np.asarray(n), np.asarray(c))
    out = np.empty(n.shape, dtype=float)
    for idx in np.ndindex(n.shape):
        ni, ci = int(n[idx]), int(c[idx])
        if ni - ci < k:                      # fewer than k wrong samples: every draw of k has a right one
            out[idx] = 1.0
            continue
        fail = 1.0                           # P(all k draws wrong)
        for i0 in range(0, k, 4096):         # 4096 factors at a time
            i = np.arange(i0, min(k, i0 + 4096))
            fail *= np.prod((ni - ci - i) / (ni - i))      # (n−c−i)/(n−i)
        out[idx] = 1.0 - fail
    return float(out) if out.ndim == 0 else out


def _check_pass_at_k_exact(p, k):
    p = as_array(p, "p")
    if np.any((p < 0) | (p > 1)):
        raise ValueError(f"p must be probabilities in [0, 1], got min {p.min()}, max {p.max()}")
    if np.ndim(k) == 0:
        return {"p": p, "k": integer(k, "k", lo=1)}
    size(p.size * np.size(k), "p and k", MAX_ELEMENTS, "entries (one per p and k)")
    return {"p": p, "k": int_array(k, "k", lo=1, ndim=1)}


@checked(_check_pass_at_k_exact)
def pass_at_k_exact(p, k):
    r"""Exact pass@k of a problem the model solves with probability ``p`` per sample: at least
    one of k independent samples is right,

    .. math:: \text{pass@}k = 1 - (1 - p)^k .

    ``p``: solve probabilities (any shape, e.g. one per problem); ``k``: an integer ≥ 1, or a
    1-D array of them (then the result gets a last axis, one entry per k). Average over the
    problems yourself: ``pass_at_k_exact(p, ks).mean(axis=0)`` is the pass@k curve of a test set.
    """
    p = np.asarray(p, dtype=float)
    out = 1 - (1 - p) ** k if np.ndim(k) == 0 else 1 - (1 - p[..., None]) ** np.asarray(k)
    return float(out) if out.ndim == 0 else out


def _answers(x, name):
    """Answers as an array: integers as they are (exact), anything else as finite floats."""
    a = np.asarray(x) if not isinstance(x, (str, bytes, bool, np.bool_)) or x is None else None
    if a is not None and a.dtype.kind in "iu":
        return a
    return as_array(x, name)


def _check_maj_at_k(answers, correct_answer, seed):
    a = _answers(answers, "answers")
    t = _answers(correct_answer, "correct_answer")
    if a.ndim < 1 or a.shape[-1] < 1:
        raise ValueError(f"answers must have a last axis of k >= 1 samples, got shape {a.shape}")
    if t.shape != a.shape[:-1]:
        raise ValueError(f"correct_answer must have shape {a.shape[:-1]}, got {t.shape}")
    size(a.size * a.shape[-1], "answers", MAX_ELEMENTS, "vote comparisons (k² per problem)")
    return {"answers": a, "correct_answer": t, "seed": _seed(seed)}


@checked(_check_maj_at_k)
def maj_at_k(answers, correct_answer, seed=0):
    r"""Majority vote accuracy: 1 if the most frequent of the k sampled answers equals the
    correct one, else 0. A tie between several most frequent answers is broken uniformly at
    random (``seed``), so a tie between the correct answer and one other scores 1 half of
    the time, whatever the answers' values.

    ``answers``: (..., k) integer answers; ``correct_answer``: (...) integers.
    """
    a, t = np.asarray(answers), np.asarray(correct_answer)
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


def _check_entropy(probs):
    p = as_array(probs, "probs", min_ndim=1)
    if np.any(p < 0):
        raise ValueError("probs must be >= 0")
    if not np.allclose(p.sum(axis=-1), 1.0, atol=1e-6):
        raise ValueError("probs must sum to 1 along the last axis")
    return {"probs": p}


@checked(_check_entropy)
def entropy(probs):
    r"""Shannon entropy in nats along the last axis: :math:`H(p) = -\sum_i p_i \log p_i`
    (with 0 log 0 = 0). Rows must be probability vectors."""
    p = np.asarray(probs, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p > 0, -p * np.log(np.where(p > 0, p, 1.0)), 0.0)
    out = terms.sum(axis=-1)
    return float(out) if out.ndim == 0 else out


# ----------------------------------------------------------------------------- statistics over seeds
def _check_seeds(x, axis):
    x = as_array(x, "x", min_ndim=1)
    axis = integer(axis, "axis", -x.ndim, x.ndim - 1)
    if x.shape[axis] < 2:
        raise ValueError(f"x needs at least 2 seeds along axis {axis}, got shape {x.shape}")
    return {"x": x, "axis": axis}


@checked(_check_seeds)
def mean_se(x, axis=0):
    r"""Mean and standard error :math:`s/\sqrt{K}` (s the sample std, ddof = 1) over ``axis``
    (the K seeds): the ± every race in the book reports."""
    x = np.asarray(x, dtype=float)
    return x.mean(axis=axis), x.std(axis=axis, ddof=1) / np.sqrt(x.shape[axis])


@checked(_check_seeds)
def se(x, axis=0):
    r"""The standard error :math:`s/\sqrt{K}` over ``axis`` (the K seeds) alone."""
    return mean_se(x, axis)[1]


def _check_paired_diff(a, b, axis):
    new = _check_seeds(a, axis)
    b = as_array(b, "b")
    if b.shape != new["x"].shape:
        raise ValueError(f"b must have the shape of a {new['x'].shape}, got {b.shape}")
    return {"a": new["x"], "b": b, "axis": new["axis"]}


@checked(_check_paired_diff)
def paired_diff(a, b, axis=0):
    r"""Mean and standard error of the paired difference a − b over ``axis``: two arms run on the
    same K seeds (or warm-ups), so that what the seeds share cancels out of the difference."""
    return mean_se(np.asarray(a, dtype=float) - np.asarray(b, dtype=float), axis)


def _check_warmup_se(x, warmups):
    x = as_array(x, "x", min_ndim=1)
    if x.ndim != 1:
        raise ValueError(f"x must be one value per seed (1-D), got shape {x.shape}")
    warmups = integer(warmups, "warmups", 2)
    if len(x) < warmups:
        raise ValueError(f"x needs at least warmups = {warmups} seeds, got {len(x)}")
    return {"x": x, "warmups": warmups}


@checked(_check_warmup_se)
def warmup_se(x, warmups):
    r"""The standard error of a per-seed quantity over its warm-ups: seed i starts from warm-up
    i mod W, so the seeds of one warm-up share it and are not independent; this is the s.e. of the
    W warm-ups' means (W − 1 degrees of freedom), the clustered s.e. ``toy.ledger.effect`` asks
    an effect to clear besides the seeds' own."""
    x = np.asarray(x, dtype=float)
    return se(np.array([x[w::warmups].mean() for w in range(warmups)]))
