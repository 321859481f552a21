r"""Exact expectations for a policy over K answers (a softmax over logits): the exact policy
gradient, one sample's score-function estimate, and every group of G answers with its
probability. The tests and the notebooks check sampled estimates against these."""
import itertools
import math

import numpy as np

from ..prob import softmax
from .._check_args import MAX_ELEMENTS, MAX_LOOP, as_array, checked, finite_result, integer, size


# ============================================================================ a K-answer softmax policy
def _check_softmax_pg_exact(logits, rewards):
    z = as_array(logits, "logits", min_ndim=1)
    R = as_array(rewards, "rewards", min_ndim=1)
    if R.shape[-1] != z.shape[-1]:
        raise ValueError(f"rewards must have one entry per answer (K = {z.shape[-1]}), got shape {R.shape}")
    finite_result(lambda: 2 * np.abs(R).max(initial=0), "rewards", "R - pi^T R")
    return {"logits": z, "rewards": R}


@checked(_check_softmax_pg_exact)
def softmax_pg_exact(logits, rewards):
    r"""The exact policy gradient of a softmax policy over K answers,

    .. math:: \nabla_\theta\, \mathbb{E}_{z\sim\pi_\theta}[R(z)] = \pi \odot (R - \pi^\top R),
              \qquad \pi = \mathrm{softmax}(\theta).

    ``logits`` θ: (..., K), many policies at once; ``rewards`` R: (K,) or (..., K). Returns (..., K).
    """
    p, R = softmax(np.asarray(logits, dtype=float)), np.asarray(rewards, dtype=float)
    return p * (R - (p * R).sum(axis=-1, keepdims=True))


def _check_score_function_estimate(logits, samples, weights):
    z = as_array(logits, "logits", min_ndim=1)
    K = z.shape[-1]
    if K == 0:
        raise ValueError(f"logits must have at least one answer on its last axis, got shape {z.shape}")
    s = np.asarray(samples)
    if not np.issubdtype(s.dtype, np.integer) or s.ndim < 1 or np.any((s < 0) | (s >= K)):
        raise ValueError(f"samples must be integer answers in [0, {K}) with shape (..., G), "
                         f"got dtype {s.dtype} and shape {s.shape}")
    if z.ndim > 1 and z.shape[:-1] != s.shape[:-1]:
        raise ValueError(f"logits (..., K) must have one policy per group, got shapes {z.shape} and {s.shape}")
    w = as_array(weights, "weights")
    if w.shape != s.shape:
        raise ValueError(f"weights must have the shape of samples, got {w.shape} and {s.shape}")
    finite_result(lambda: 2 * np.abs(w).sum(axis=-1), "weights", "twice the sum of a group's |weights|")
    return {"logits": z, "samples": s, "weights": w}


@checked(_check_score_function_estimate)
def score_function_estimate(logits, samples, weights):
    r"""The score-function (REINFORCE) estimate of the gradient from a group of G samples,

    .. math:: \hat g = \frac1G \sum_{i=1}^G w_i\, \nabla_\theta \log \pi_\theta(z_i),
              \qquad \nabla_\theta \log \pi_\theta(z) = e_z - \pi,

    for a softmax policy over K answers. ``w_i`` is the reward (REINFORCE) or an advantage
    (``rloo_advantages``, ``dr_grpo_advantages``, ``grpo_advantages``). ``samples`` (..., G)
    integer answers and ``weights`` (..., G): many groups at once; ``logits`` (K,) for one
    policy, or (..., K) with one policy per group. Returns (..., K).
    """
    z, s, w = np.asarray(logits, dtype=float), np.asarray(samples), np.asarray(weights, dtype=float)
    K, G, n = z.shape[-1], s.shape[-1], s.size // s.shape[-1]
    rows = np.arange(n).repeat(G) * K + s.ravel()                    # (n·G,) flat (group, answer)
    sum_w_onehot = np.bincount(rows, weights=w.ravel(), minlength=n * K).reshape(s.shape[:-1] + (K,))
    return (sum_w_onehot - w.sum(axis=-1, keepdims=True) * softmax(z)) / G   # (Σ w_i e_{z_i} − Σ w_i π) / G


def _check_enumerate_groups(probs, G):
    p = as_array(probs, "probs", ndim=1)
    if np.any(p < 0) or not np.isclose(p.sum(), 1.0):
        raise ValueError(f"probs must be >= 0 and sum to 1, got sum {p.sum()}")
    G, K = integer(G, "G", lo=1), len(p)
    C = math.comb(G + K - 1, K - 1)                                  # the number of groups
    size(C, "probs and G", MAX_LOOP, "groups")
    size(C * (G + K), "probs and G", MAX_ELEMENTS, "entries")
    return {"probs": p, "G": G}


@checked(_check_enumerate_groups)
def enumerate_groups(probs, G):
    r"""Every distinct group of G i.i.d. draws from a categorical over K answers, for exact
    expectations over groups: ``samples`` (C, G), each group's answers in sorted order (one row per
    multiset, :math:`C = \binom{G+K-1}{K-1}`), and ``prob`` (C,), its multinomial probability
    :math:`\frac{G!}{\prod_k n_k!}\prod_k \pi_k^{n_k}`. For an estimator that is symmetric in the
    group (all of the above), :math:`\mathbb{E}[f] = \sum_c \text{prob}_c\, f(\text{samples}_c)`.
    """
    p = np.asarray(probs, dtype=float)
    K = len(p)
    bars = np.array(list(itertools.combinations(range(G + K - 1), K - 1)), dtype=np.int64).reshape(-1, K - 1)
    edges = np.concatenate([np.full((len(bars), 1), -1), bars, np.full((len(bars), 1), G + K - 1)], axis=1)
    counts = np.diff(edges, axis=1) - 1                               # (C, K) stars between bars
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, G + 1)))])
    with np.errstate(divide="ignore"):
        log_p = np.log(p)
    log_prob = log_fact[G] - log_fact[counts].sum(axis=1) + np.where(counts > 0, counts * log_p, 0.0).sum(axis=1)
    samples = np.repeat(np.tile(np.arange(K), len(counts)), counts.ravel()).reshape(len(counts), G)
    return samples, np.exp(log_prob)


