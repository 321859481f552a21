r"""Number Search, exactly: every per-target success probability by dynamic programming over the
game's states (``exact_values``), so J(θ) and ∇J(θ) are exact (no sampling) and Monte Carlo
estimates can be checked against them; the state and action values, the optimal ones, and the
openings. ``game.py`` holds the environment and the policies; the package re-exports both
(``from toy import numsearch as ns``: ``ns.rollout``, ``ns.exact_J``, ...).
"""
import numpy as np

from .._check_args import as_array, checked, flag, integer
from ..prob import softmax
from .game import A, N, S, T, check_pi, check_theta, policy_probs, state_grid, state_index

__all__ = ["exact_values", "exact_J", "openings", "opening_ceilings", "state_visits", "exact_grad", "state_values",
           "action_values", "optimal_values", "optimal_action_values", "optimal_tables", "regret_by_guess"]


def _transitions():
    """For hidden x, interval [lo, hi] and guess g (axes x, lo, hi, g; each of size N):
    ``hit`` (N, 1, 1, N) = [g = x] and the next interval ``nlo``, ``nhi`` (N, N, N, N)."""
    x = np.arange(1, N + 1)[:, None, None, None]
    _, lo, hi, g = state_grid()
    nlo = np.broadcast_to(np.where(g < x, np.maximum(lo, g + 1), lo), (N, N, N, N))
    nhi = np.broadcast_to(np.where(g > x, np.minimum(hi, g - 1), hi), (N, N, N, N))
    return g == x, nlo, nhi


_X = np.arange(N)[:, None, None, None]          # target axis index for fancy indexing


_HIT, _NLO, _NHI = _transitions()
_DEST = ((_X * N + _NLO - 1) * N + _NHI - 1)                     # flat (x, lo', hi') per (x, lo, hi, g)


def _q_from_v(Vk_minus_1):
    """Q_x(lo, hi, g) = [g = x] + [g ≠ x] V_x(lo', hi', k−1), shape (..., N, N, N, N) for
    V of shape (..., N, N, N) (any leading batch axes)."""
    flat = Vk_minus_1.reshape(Vk_minus_1.shape[:-3] + (N ** 3,))
    return np.where(_HIT, 1.0, flat[..., _DEST])


def _triples():
    """The (x, lo, hi) a game can be in (lo ≤ x ≤ hi; 816 of the N³, 0-based), the flat state
    (lo, hi) of each, and for each guess g: ``hit`` (M, A) = [g = x] and the triple it leads to."""
    x, lo, hi = (a.ravel() for a in np.meshgrid(*3 * [np.arange(N)], indexing="ij"))
    keep = (lo <= x) & (x <= hi)
    x, lo, hi = x[keep], lo[keep], hi[keep]
    pos = np.zeros((N, N, N), int)
    pos[x, lo, hi] = np.arange(len(x))
    g = np.arange(N)[None, :]
    nlo = np.where(g < x[:, None], np.maximum(lo[:, None], g + 1), lo[:, None])
    nhi = np.where(g > x[:, None], np.minimum(hi[:, None], g - 1), hi[:, None])
    return x, lo, hi, lo * N + hi, g == x[:, None], pos[x[:, None], nlo, nhi]


_TX, _TLO, _THI, _TSTATE, _THIT, _TNEXT = _triples()


def win_probs(pi):
    """P(win | x) from the start for x = 1..N, of one table ``pi`` (S, A) or a stack (..., S, A):
    ``exact_J(pi, per_target=True)`` for each table, in one dynamic programme (unchecked: for the
    trainers, whose tables are checked at their door; not in ``__all__``)."""
    return exact_values.equation(pi)[..., T, 0, N - 1]


def _check_exact_values(pi):
    return {"pi": check_pi(pi)}


@checked(_check_exact_values)
def exact_values(pi):
    r"""Per-target success probabilities by dynamic programming, V of shape (N, T+1, N, N):

    .. math:: V_x(lo, hi, k) = \sum_g \pi(g \mid lo, hi, k)\,\big([g = x] + [g \ne x]\, V_x(lo', hi', k-1)\big),
              \qquad V_x(\cdot, 0) = 0

    ``V[x-1, k, lo-1, hi-1]`` for hidden number x (meaningful when lo ≤ x ≤ hi), computed on the
    triples (x, lo, hi) with lo ≤ x ≤ hi. From inside ``toy``, ``pi`` may also be a stack
    (..., S, A) (any leading batch axes) → V (..., N, T+1, N, N).
    """
    batch = pi.shape[:-2]
    pi3 = pi.reshape(batch + (T, N * N, A))                          # (..., k, (lo, hi), g)
    W = np.zeros(batch + (T + 1, len(_TX)))                          # (..., k, triple)
    for k in range(1, T + 1):
        Q = np.where(_THIT, 1.0, W[..., k - 1, :][..., _TNEXT])      # (..., triple, g)
        W[..., k, :] = np.sum(pi3[..., k - 1, _TSTATE, :] * Q, axis=-1)
    V = np.zeros(batch + (T + 1, N, N, N))                           # (..., k, x, lo, hi)
    V[..., _TX, _TLO, _THI] = W
    return np.moveaxis(V, -3, -4)                                    # (..., x, k, lo, hi)


def exact_J(pi, per_target=False, start=None):
    r"""J = E_x[ P(win | x) ] with x uniform on 1..16, exactly. ``per_target=True`` → (N,) array.

    ``start = (lo, hi, left)`` evaluates games that begin in that state (targets lo..hi).
    """
    V = exact_values(check_pi(pi))
    flag(per_target, "per_target")
    lo, hi, left = (1, N, T) if start is None else _check_state(start, "start", left_lo=0)
    per = V[lo - 1:hi, left, lo - 1, hi - 1]                         # targets lo..hi
    return per if per_target else float(per.mean())


def openings(thetas):
    """The first guess each policy prefers, and its probability: for logits ``thetas`` (S, A) or a
    stack (K, S, A) returns ``(g, π(g | start))``, ints 1..16 and floats (scalars or (K,))."""
    thetas = as_array(thetas, "thetas")
    if thetas.shape[-2:] != (S, A) or thetas.ndim not in (2, 3):
        raise ValueError(f"thetas must have shape ({S}, {A}) or (K, {S}, {A}), got {thetas.shape}")
    p = softmax(thetas[..., state_index(1, N, T), :])                   # (..., A) the first guess
    return p.argmax(axis=-1) + 1, p.max(axis=-1)


def opening_ceilings():
    r"""The best success rate a policy can reach after each first guess g, shape (A,):
    :math:`Q^*(\text{start}, g) = \frac{1}{N}\big(1 + (g-1)\,V^*(1, g-1, 3) + (N-g)\,V^*(g+1, N, 3)\big)`
    with optimal play afterwards (:func:`optimal_values`). 15/16 after 8 or 9, 11/16 after 4."""
    V3 = optimal_values()[T - 1]                                     # (lo, hi), T - 1 guesses left
    g = np.arange(1, N + 1)
    below = np.where(g > 1, (g - 1) * V3[0, np.clip(g - 2, 0, N - 1)], 0.0)     # numbers 1..g-1
    above = np.where(g < N, (N - g) * V3[np.clip(g, 0, N - 1), N - 1], 0.0)     # numbers g+1..N
    return (1 + below + above) / N


def _check_state(state, name, left_lo=1):
    """``(lo, hi, left)`` as ints with 1 <= lo <= hi <= N and left_lo <= left <= T."""
    if not isinstance(state, (tuple, list, np.ndarray)) or len(state) != 3:
        raise ValueError(f"{name} must be a tuple (lo, hi, left), got {state!r}")
    lo, hi = integer(state[0], "lo", 1, N), integer(state[1], "hi", 1, N)
    left = integer(state[2], "left", left_lo, T)
    if lo > hi:
        raise ValueError(f"{name} needs lo <= hi, got lo={lo}, hi={hi}")
    return lo, hi, left


def _q_values(V):
    """Per-target Q_x(s, g) for every state, shape (N, T, N, N, N) = (x, k-1, lo, hi, g)."""
    return np.stack([_q_from_v(V[:, k - 1]) for k in range(1, T + 1)], axis=1)


def state_visits(pi):
    r"""μ_x(s): probability that an episode with hidden x reaches state s, shape (N, S).

    Each state is visited at most once (guesses left decreases), so μ is a probability.
    """
    pi4 = check_pi(pi).reshape(T, N, N, N)
    hit, dest = _HIT, _DEST.ravel()
    mu = np.zeros((N, T, N, N))                                      # (x, k-1, lo, hi)
    mu[:, T - 1, 0, N - 1] = 1.0                                     # start: [1, 16], T left
    for k in range(T, 1, -1):
        flow = mu[:, k - 1][..., None] * pi4[k - 1][None] * ~hit     # (x, lo, hi, g): prob. of moving on
        mu[:, k - 2] = np.bincount(dest, weights=flow.ravel(), minlength=N ** 3).reshape(N, N, N)
    return mu.reshape(N, S)


def _check_exact_grad(theta, per_target, weights):
    flag(per_target, "per_target")
    if weights is None:
        return {"theta": check_theta(theta)}
    w = as_array(weights, "weights")
    if w.ndim not in (1, 2) or w.shape[-1] != N:
        raise ValueError(f"weights must have shape ({N},) or (W, {N}): one weight per hidden number, got {w.shape}")
    if per_target:
        raise ValueError("weights must be None when per_target=True (weights combine the per-target gradients)")
    return {"theta": check_theta(theta), "weights": w}


@checked(_check_exact_grad)
def exact_grad(theta, per_target=False, weights=None):
    r"""∇_θ J exactly (policy-gradient theorem, each state visited at most once):

    .. math:: \frac{\partial J}{\partial \theta_{s,a}} = \frac{1}{N}\sum_x \mu_x(s)\, \pi(a \mid s)\,
              \big(Q_x(s, a) - V_x(s)\big)

    Returns an (S, A) array (at temperature 1). ``per_target=True``: the (N, S, A) gradients
    ∇_θ P(win | x) of each hidden number x, whose mean over x is ∇J. ``weights`` (N,): the weighted
    mean :math:`\frac1N\sum_x w_x \nabla_\theta P(\text{win} \mid x)` instead (all ones: ∇J); (W, N):
    W such means from one dynamic programme, (W, S, A).
    """
    pi = policy_probs(theta)
    P, Q, V, mu = _triple_tables(pi)             # per (guesses left, triple (x, lo, hi)): π, Q_x, V_x, μ_x
    terms = mu[..., None] * P * (Q - V[..., None])                  # (T, M, A)
    rows = (np.arange(T)[:, None] * N * N + _TSTATE).ravel()         # the state s of each term
    if per_target:
        grad = np.zeros((N, S, A))
        np.add.at(grad, (np.broadcast_to(_TX, (T, len(_TX))).ravel(), rows), terms.reshape(-1, A))
        return grad
    if weights is not None:
        w = np.atleast_2d(weights)                                   # (W, N)
        grad = np.zeros((len(w), S, A))
        for g, wx in zip(grad, w):
            np.add.at(g, rows, (wx[_TX][:, None] * terms).reshape(-1, A))    # each term weighted by its x
        return (grad if np.ndim(weights) == 2 else grad[0]) / N
    grad = np.zeros((S, A))
    np.add.at(grad, rows, terms.reshape(-1, A))
    return grad / N


def _triple_tables(pi):
    """π(·|s), Q_x(s, ·), V_x(s) and the visit probability μ_x(s) on the reachable triples
    (x, lo, hi) for k = 1..T guesses left: arrays (T, M, A), (T, M, A), (T, M), (T, M)."""
    P = pi.reshape(T, N * N, A)[:, _TSTATE, :]                        # (T, M, A)
    W = np.zeros((T + 1, len(_TX)))
    Q = np.zeros(P.shape)
    for k in range(1, T + 1):
        Q[k - 1] = np.where(_THIT, 1.0, W[k - 1][_TNEXT])
        W[k] = np.sum(P[k - 1] * Q[k - 1], axis=-1)
    mu = np.zeros((T, len(_TX)))
    mu[T - 1] = (_TLO == 0) & (_THI == N - 1)                        # start: [1, 16], T left
    for k in range(T, 1, -1):
        flow = mu[k - 1][:, None] * P[k - 1] * ~_THIT                 # (M, A) prob. of moving on
        mu[k - 2] = np.bincount(_TNEXT.ravel(), weights=flow.ravel(), minlength=len(_TX))
    return P, Q, W[1:], mu


def state_values(pi):
    r"""V^π(s) for every state s = (lo, hi, left), shape (S,): the success probability from s with
    the target uniform on [lo, hi] (the posterior after any history that reached s); 0 for
    the never-visited states with lo > hi. The exact per-state baseline b(h_t) of §8."""
    V = exact_values(check_pi(pi))                                   # (x, k, lo, hi)
    x = np.arange(1, N + 1)[:, None, None]
    lo, hi = np.arange(1, N + 1)[None, :, None], np.arange(1, N + 1)[None, None, :]
    inside = (lo <= x) & (x <= hi)                                   # (x, lo, hi)
    size = np.maximum(hi - lo + 1, 1)[0]                             # (lo, hi)
    Vs = np.stack([(V[:, k] * inside).sum(axis=0) / size for k in range(1, T + 1)])   # (left, lo, hi)
    return Vs.reshape(S)


def action_values(pi, lo, hi, left):
    r"""Q^π(h, g), V^π(h) and A^π(h, g) = Q − V for a history that left the interval
    [lo, hi] with ``left`` guesses (posterior: target uniform on [lo, hi]).
    Returns ``(Q, V, A)``: arrays (A,) indexed by guess − 1, and a float."""
    lo, hi, left = _check_state((lo, hi, left), "(lo, hi, left)")
    V = exact_values(check_pi(pi))
    Q = _q_values(V)[lo - 1:hi, left - 1, lo - 1, hi - 1].mean(axis=0)   # (A,)
    v = float(V[lo - 1:hi, left, lo - 1, hi - 1].mean())
    return Q, v, Q - v


def optimal_values():
    r"""V*(lo, hi, k): the best success probability from each state (max over guesses), by
    dynamic programming with the target uniform on [lo, hi]; shape (T+1, N, N).
    V*(1, 16, 4) = 15/16: no policy wins every target."""
    return optimal_tables()[0]


def optimal_action_values():
    r"""Q*(s, g) for every state s = (lo, hi, left) and guess g, shape (S, A): the success
    probability of guessing g in s (target uniform on [lo, hi]) and playing optimally after.
    A guess outside [lo, hi] wastes a guess: Q* = V*(lo, hi, left − 1). Rows of states with
    lo > hi are 0."""
    return optimal_tables()[1]


def optimal_tables():
    """(V*, Q*) of :func:`optimal_values` and :func:`optimal_action_values`."""
    lo = np.arange(1, N + 1)[:, None, None]
    hi = np.arange(1, N + 1)[None, :, None]
    g = np.arange(1, N + 1)[None, None, :]
    n = np.maximum(hi - lo + 1, 1)
    inside = (g >= lo) & (g <= hi)
    V = np.zeros((T + 1, N, N))
    Q = np.zeros((T, N, N, A))                                       # (left − 1, lo, hi, g)
    for k in range(1, T + 1):
        P = V[k - 1]
        below = np.where(inside & (g > lo), (g - lo) * P[lo - 1, np.clip(g - 2, 0, N - 1)], 0.0)
        above = np.where(inside & (g < hi), (hi - g) * P[np.clip(g, 0, N - 1), hi - 1], 0.0)
        Q[k - 1] = np.where(inside, (1 + below + above) / n, P[lo - 1, hi - 1])
        V[k] = Q[k - 1].max(axis=-1)
    Q = Q * (lo <= hi)                                               # no posterior where lo > hi
    return V, Q.reshape(S, A)


def regret_by_guess(pi):
    r"""Where a policy loses against the best possible play, split by the guess number t = 1..T:

    .. math:: \text{regret}_t = \sum_{s:\ T - t + 1 \text{ left}} P_\pi(\text{reach } s)
              \sum_g \pi(g \mid s)\,\big(V^*(s) - Q^*(s, g)\big)

    (the performance-difference lemma; every hidden number in [lo, hi] reaches s with the same
    probability, so the posterior there is uniform). Returns an (T,) array whose sum is
    V*(start) − J = 15/16 − J: how much of the gap each guess of the game causes.
    """
    pi = check_pi(pi)
    reach = state_visits(pi).mean(axis=0)                            # (S,) P(reach s), x uniform
    Q = optimal_action_values()                                      # (S, A)
    loss = reach * np.sum(pi * (Q.max(axis=-1, keepdims=True) - Q), axis=-1)   # (S,)
    return loss.reshape(T, N * N).sum(axis=1)[::-1]                  # guess 1 = T guesses left
