r"""Number Search (Part I's running example): the environment, tabular policies, exact J(θ).

A hidden integer ``target`` in 1..16; the agent has at most ``T = 4`` guesses; after each
wrong guess the environment answers *higher* or *lower*; a hit ends the episode with
reward 1, running out of guesses gives reward 0.

**State.** Every feedback narrows the feasible interval ``[lo, hi]``. With a uniform prior
over targets the posterior after any history is uniform on ``[lo, hi]``, and nothing else
in the history changes what can happen next. So ``(lo, hi, left)`` — interval and guesses
left — is a *sufficient statistic* of the history: a policy π(g | lo, hi, left) loses
nothing against one that reads the whole history. Our policy is a table of logits
``theta`` of shape ``(S, A) = (1024, 16)``: one softmax over the 16 guesses per state
``s = state_index(lo, hi, left)`` (states with ``lo > hi`` are never visited).

**Trajectories** are arrays (:class:`Trajectories`); as a token sequence a trajectory is
``g1 f1 g2 f2 ...`` where guess tokens are written by the policy (mask ``m_t = 1``) and
feedback tokens by the environment (``m_t = 0``) — the lecture's §6 mask.

**Exact answers.** :func:`exact_values` computes every per-target success probability by
dynamic programming over states, so J(θ) and ∇J(θ) are exact (no sampling) and Monte Carlo
estimates can be checked against them.

On the lecture's "2^4 = 16": k guesses with higher/lower/*correct* feedback find at most
2^k − 1 numbers, so no policy wins all 16 targets: the best is 15/16 (:func:`optimal_values`),
which binary search reaches.
"""
from dataclasses import dataclass

import numpy as np

from .._check_args import as_array, broadcast, checked, flag, generator, instance, int_array, integer, real, size
from ..prob import inverse_cdf, log_softmax, softmax

__all__ = [
    "N", "T", "S", "A", "HIGHER", "LOWER", "FOUND", "NONE", "FEEDBACK_NAMES", "state_index", "state_of", "feedback_for",
    "narrow", "Trajectories", "play", "rollout", "replay", "state_after", "policy_probs", "greedy_policy",
    "binary_search_policy", "linear_scan_policy", "uniform_policy", "uniform_feasible_policy", "weak_prior",
    "cold_prior", "action_logprobs", "off_path", "exact_values", "exact_J", "openings", "opening_ceilings",
    "exact_grad", "state_visits", "state_values", "action_values", "optimal_values", "optimal_action_values",
    "optimal_tables", "regret_by_guess", "check_pi", "check_theta"]

N = 16          # numbers 1..N
T = 4           # at most T guesses
S = T * N * N   # tabular states (left, lo, hi); lo > hi never occurs
A = N           # actions: guess 1..N (action index = guess - 1)

NONE, HIGHER, LOWER, FOUND = 0, 1, 2, 3       # feedback codes ("correct" = found); NONE = step not taken
FEEDBACK_NAMES = {NONE: "", HIGHER: "higher", LOWER: "lower", FOUND: "correct"}


# ---------------------------------------------------------------------------- environment
def state_index(lo, hi, left):
    """Flat index of the state (lo, hi, guesses left): ``((left-1)·N + lo-1)·N + hi-1``."""
    lo, hi, left = int_array(lo, "lo", 1, N), int_array(hi, "hi", 1, N), int_array(left, "left", 1, T)
    broadcast([lo.shape, hi.shape, left.shape], ["lo", "hi", "left"])
    return _state_index(lo, hi, left)


def _state_index(lo, hi, left):
    """:func:`state_index` without the input checks (the environment loop's)."""
    return ((np.asarray(left) - 1) * N + np.asarray(lo) - 1) * N + np.asarray(hi) - 1


def state_of(s):
    """Inverse of :func:`state_index`: ``s`` → ``(lo, hi, left)``."""
    s = int_array(s, "s", 0, S - 1)
    return s // N % N + 1, s % N + 1, s // (N * N) + 1


def _check_feedback_for(guess, target):
    guess, target = int_array(guess, "guess"), int_array(target, "target", 1, N)
    broadcast([guess.shape, target.shape], ["guess", "target"])
    return {"guess": guess, "target": target}


@checked(_check_feedback_for)
def feedback_for(guess, target):
    """Environment answer: FOUND ("correct") if guess == target, HIGHER if the target is larger, else LOWER."""
    return np.where(guess == target, FOUND, np.where(guess < target, HIGHER, LOWER))


def _check_narrow(lo, hi, guess, fb):
    args = {k: int_array(x, k) for k, x in (("lo", lo), ("hi", hi), ("guess", guess))}
    args["fb"] = int_array(fb, "fb", NONE, FOUND)
    broadcast([a.shape for a in args.values()], list(args))
    return args


@checked(_check_narrow)
def narrow(lo, hi, guess, fb):
    """New feasible interval after feedback: higher → lo = max(lo, g+1); lower → hi = min(hi, g−1)."""
    lo = np.where(fb == HIGHER, np.maximum(lo, guess + 1), lo)
    hi = np.where(fb == LOWER, np.minimum(hi, guess - 1), hi)
    return lo, hi


@dataclass
class Trajectories:
    """A batch of n episodes as arrays (T = 4 steps; steps after the end are padding)."""
    target: np.ndarray    # (n,)   hidden numbers
    guesses: np.ndarray   # (n, T) guesses 1..N, 0 on padding
    feedback: np.ndarray  # (n, T) HIGHER / LOWER / FOUND, NONE on padding
    states: np.ndarray    # (n, T) state index the guess was made in, -1 on padding
    mask: np.ndarray      # (n, T) bool: step taken = action written by the policy (m_t)
    reward: np.ndarray    # (n,)   1.0 on a hit, else 0.0

    def __len__(self):
        return len(self.target)

    @property
    def length(self):
        """Number of guesses made, (n,)."""
        return self.mask.sum(axis=1)

    @property
    def tokens(self):
        """(n, 2T) token ids ``g1 f1 g2 f2 ...``: guess g → g−1 (0..15); feedback → 15 + code
        (16 higher, 17 lower, 18 correct); padding → 19."""
        tok = np.full((len(self), 2 * T), 19)
        tok[:, 0::2] = np.where(self.mask, self.guesses - 1, 19)
        tok[:, 1::2] = np.where(self.mask, N - 1 + self.feedback, 19)
        return tok

    @property
    def token_mask(self):
        """(n, 2T) the loss mask m_t: 1 on guess tokens (policy), 0 on feedback and padding."""
        m = np.zeros((len(self), 2 * T), dtype=int)
        m[:, 0::2] = self.mask
        return m

    FIELDS = ("target", "guesses", "feedback", "states", "mask", "reward")

    def select(self, keep):
        """The episodes where ``keep`` (n,) is True (or at the given indices)."""
        k = np.asarray(keep)
        if not (k.dtype == bool and k.shape == (len(self),)):
            int_array(k, "keep", -len(self), len(self) - 1, ndim=1)
        return Trajectories(*(getattr(self, f)[keep] for f in self.FIELDS))

    @staticmethod
    def concat(trajs):
        """One batch from a list of batches."""
        trajs = list(trajs)
        if not trajs or not all(isinstance(t, Trajectories) for t in trajs):
            raise ValueError("trajs must be a non-empty list of Trajectories")
        return Trajectories(*(np.concatenate([getattr(t, f) for t in trajs]) for f in Trajectories.FIELDS))

    def text(self, i):
        """Episode i as text, e.g. ``'8 → higher, 12 → lower, 10 → higher, 11 → correct'``."""
        i = integer(i, "i", 0, len(self) - 1)
        return ", ".join(f"{g} → {FEEDBACK_NAMES[f]}"
                         for g, f, m in zip(self.guesses[i], self.feedback[i], self.mask[i]) if m)


def play(choose, target, start=None, limit=None):
    """The one environment loop. ``choose(t, s)`` returns guesses (n,) for step t in states s;
    ``limit`` (n,) optionally stops episodes after that many guesses (a history prefix)."""
    target = int_array(target, "target", 1, N, ndim=1)
    n = len(target)
    if start is None:
        lo, hi, left0 = np.ones(n, int), np.full(n, N), np.full(n, T)
    else:
        if not isinstance(start, (tuple, list, np.ndarray)) or len(start) != 3:
            raise ValueError(f"start must be a tuple (lo, hi, left), got {start!r}")
        for x, name, top in zip(start, ("lo", "hi", "left"), (N, N, T)):
            broadcast([int_array(x, f"start {name}", 1, top).shape, (n,)], [f"start {name}", "target"])
        lo, hi, left0 = (np.broadcast_to(np.asarray(x, dtype=int), (n,)).copy() for x in start)
        if np.any((lo > target) | (hi < target) | (left0 < 1) | (left0 > T)):
            raise ValueError("start must be (lo, hi, left) with lo <= target <= hi and 1 <= left <= T")
    guesses, feedback = np.zeros((n, T), int), np.zeros((n, T), int)
    states, mask, done = np.full((n, T), -1), np.zeros((n, T), bool), np.zeros(n, bool)
    for t in range(T):
        live = ~done & (t < left0)                          # (n,) episodes still playing
        if limit is not None:
            live &= t < limit
        s = _state_index(lo, hi, np.maximum(left0 - t, 1))  # (n,)
        g = np.asarray(choose(t, s), dtype=int)             # (n,)
        fb = np.where(live, feedback_for(g, target), NONE)
        guesses[:, t] = np.where(live, g, 0)
        feedback[:, t] = fb
        states[:, t] = np.where(live, s, -1)
        mask[:, t] = live
        lo, hi = narrow(lo, hi, g, fb)
        done |= fb == FOUND
    return Trajectories(target, guesses, feedback, states, mask, done.astype(float))


def rollout(pi, target, rng, start=None):
    """Sample one episode per entry of ``target`` (n,) from the policy table ``pi`` (S, A).

    ``start`` = optional ``(lo, hi, left)`` (scalars or (n,) arrays) to begin mid-game.
    Vectorised over episodes: one numpy step per guess."""
    pi = check_pi(pi)
    generator(rng)
    return play(lambda t, s: inverse_cdf(pi[s], rng.random((len(s), 1))) + 1, target, start)


def replay(guess_seqs, target):
    """Trajectories from explicit guess sequences (list of n lists) against ``target`` (int or (n,)).

    A sequence may stop before the episode ends (a history prefix h_t), but may not go on
    after a hit or beyond T guesses."""
    if isinstance(guess_seqs, str) or not np.iterable(guess_seqs):
        raise ValueError("guess_seqs must be a list of guess sequences (lists of integers)")
    seqs = [list(int_array(q, "guess_seqs", 1, N, ndim=1)) for q in guess_seqs]
    if any(len(q) > T for q in seqs):
        raise ValueError(f"guess_seqs: each sequence has at most T={T} guesses in 1..{N}")
    target = int_array(target, "target", 1, N)
    if target.ndim > 1:
        raise ValueError(f"target must be one hidden number or one per sequence (n,), got shape {target.shape}")
    broadcast([target.shape, (len(seqs),)], ["target", "guess_seqs"])
    g = np.zeros((len(seqs), T), int)
    for i, q in enumerate(seqs):
        g[i, :len(q)] = q
    target = np.broadcast_to(np.asarray(target, dtype=int), (len(seqs),))
    lengths = np.array([len(q) for q in seqs])
    traj = play(lambda t, s: g[:, t], target, limit=lengths)
    if np.any(traj.length != lengths):
        raise ValueError("guess_seqs must not continue after the hidden number was hit")
    return traj


def state_after(guesses, target):
    """The state ``(lo, hi, left)`` reached after playing the history ``guesses`` against ``target``."""
    guesses = int_array(guesses, "guesses", 1, N, ndim=1)
    target = integer(target, "target", 1, N)
    if len(guesses) > T:
        raise ValueError(f"guesses must hold at most T = {T} guesses, got {len(guesses)}")
    lo, hi = 1, N
    for g in guesses:
        lo, hi = narrow(lo, hi, g, feedback_for(g, target))
    return int(lo), int(hi), T - len(guesses)


# ------------------------------------------------------------------------------ policies
def check_pi(pi, name="pi"):
    """``pi`` as a float table of probabilities of shape (S, A), else a ValueError naming it."""
    pi = as_array(pi, name, ndim=2)
    if pi.shape != (S, A) or pi.min() < 0 or np.abs(pi.sum(axis=1) - 1).max() > 1e-6:
        raise ValueError(f"{name} must be a table of probabilities of shape ({S}, {A}), got shape {pi.shape}")
    return pi


def check_theta(theta, name="theta"):
    """``theta`` as float logits of shape (S, A), else a ValueError naming it (as ``name``)."""
    theta = as_array(theta, name, ndim=2)
    if theta.shape != (S, A):
        raise ValueError(f"{name} must be logits of shape ({S}, {A}), got shape {theta.shape}")
    return theta


def _grid():
    """Broadcastable (left, lo, hi, g) grids, each of shape (T, N, N, N) after broadcasting."""
    left = np.arange(1, T + 1)[:, None, None, None]
    lo = np.arange(1, N + 1)[None, :, None, None]
    hi = np.arange(1, N + 1)[None, None, :, None]
    g = np.arange(1, N + 1)[None, None, None, :]
    return left, lo, hi, g


def _table(x):
    """(T, N, N, N) array → (S, A) table (the flat state order of :func:`state_index`)."""
    return np.broadcast_to(x, (T, N, N, N)).reshape(S, A).astype(float)


def policy_probs(theta, temperature=1.0):
    r"""π_θ(g | s) = softmax(θ_s / temperature), a table (S, A)."""
    return softmax(check_theta(theta), real(temperature, "temperature", lo=0, lo_open=True))


def greedy_policy(theta):
    """The argmax policy of ``theta`` as a one-hot table (S, A) (ties → smallest guess)."""
    theta = check_theta(theta)
    return np.eye(A)[theta.argmax(axis=1)]


def binary_search_policy():
    """Guess the midpoint ⌊(lo + hi)/2⌋ (first guess 8, as τ1 = 8, 12, 10, 11)."""
    left, lo, hi, g = _grid()
    return _table(g == (lo + hi) // 2)


def linear_scan_policy():
    """Guess the smallest feasible number ``lo`` (1, 2, 3, 4 — τ4)."""
    left, lo, hi, g = _grid()
    return _table(g == lo)


def uniform_policy():
    """Any of the 16 numbers with probability 1/16, ignoring the feedback."""
    return np.full((S, A), 1.0 / A)


def uniform_feasible_policy():
    """Uniform over the feasible interval [lo, hi] (uses the feedback, no strategy)."""
    left, lo, hi, g = _grid()
    p = _table((g >= lo) & (g <= hi))
    p[p.sum(axis=1) == 0] = 1.0                 # unreachable states (lo > hi): any table row
    return p / p.sum(axis=1, keepdims=True)


def _check_weak_prior(in_range, scan):
    return {"in_range": real(in_range, "in_range"), "scan": real(scan, "scan")}


@checked(_check_weak_prior)
def weak_prior(in_range=2.0, scan=0.3):
    r"""The "pretrained" starting point: logits (S, A)

    .. math:: \theta_0(g \mid lo, hi) = \text{in\_range}\cdot[lo \le g \le hi] - \text{scan}\cdot|g - lo|

    — it mostly respects the feedback but prefers small feasible numbers, like a model that
    has seen linear scans. Its exact success rate is printed by ``exact_J(policy_probs(weak_prior()))``
    (≈ 0.44 with the defaults; binary search: 15/16, linear scan: 4/16)."""
    left, lo, hi, g = _grid()
    logits = in_range * ((g >= lo) & (g <= hi)) - scan * np.abs(g - lo)
    return _table(logits)


def cold_prior():
    r"""A "cold" starting point that counts up from 1 and hardly ever wins a high target:

    .. math:: \theta_0(g \mid lo, hi) = -4\,|g - lo|

    i.e. a sharp linear scan (π(lo) ≈ 0.98): it wins targets 1..4 and, against targets
    9..16, has success rate ≈ 1e-8 — ReST sampling from it never sees a success.
    """
    return weak_prior(in_range=0.0, scan=4.0)


def action_logprobs(theta, traj):
    """log π_θ(a_t | h_t) of the guesses in ``traj``, (n, T), 0 on padding."""
    instance(traj, Trajectories, "traj")
    logp = log_softmax(check_theta(theta))                        # (S, A)
    s = np.where(traj.mask, traj.states, 0)
    a = np.where(traj.mask, traj.guesses - 1, 0)
    return np.where(traj.mask, logp[s, a], 0.0)


def off_path(theta, path_states, n=20_000, seed=0):
    """Exposure bias, measured (§I.3): play ``n`` games with the sampled policy π_θ on hidden
    numbers drawn uniformly from 1..N and split them by whether they ever reach a state outside
    ``path_states`` (e.g. the states of the demonstrations). Returns (the share of games that
    leave the path, the win rate of the games that stay on it, the win rate of those that leave;
    a win rate is NaN when no game falls in its group)."""
    path = int_array(path_states, "path_states", 0, S - 1, ndim=1)
    n, seed = integer(n, "n", lo=1), integer(seed, "seed", lo=0)
    size(n * T, "n", what="guesses")
    rng = np.random.default_rng(seed)
    games = rollout(policy_probs(theta), rng.integers(1, N + 1, size=n), rng)
    left = (games.mask & ~np.isin(games.states, path)).any(axis=1)             # (n,)
    win = lambda games_in: games.reward[games_in].mean() if games_in.any() else np.nan  # noqa: E731
    return left.mean(), win(~left), win(left)


# ------------------------------------------------------------------- exact computations
def _transitions():
    """For hidden x, interval [lo, hi] and guess g (axes x, lo, hi, g; each of size N):
    ``hit`` (N, 1, 1, N) = [g = x] and the next interval ``nlo``, ``nhi`` (N, N, N, N)."""
    x = np.arange(1, N + 1)[:, None, None, None]
    _, lo, hi, g = _grid()
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


def _start_J(pi):
    """P(win | x) from the start for x = 1..N, of one table ``pi`` (S, A) or a stack (..., S, A):
    ``exact_J(pi, per_target=True)`` for each table, in one dynamic programme (checked by the caller)."""
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
