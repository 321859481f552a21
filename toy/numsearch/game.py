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

**Exact answers** are in ``exact.py``: ``exact_values`` computes every per-target success
probability by dynamic programming over states, so J(θ) and ∇J(θ) are exact (no sampling) and
Monte Carlo estimates can be checked against them.

On the lecture's "2^4 = 16": k guesses with higher/lower/*correct* feedback find at most
2^k − 1 numbers, so no policy wins all 16 targets: the best is 15/16 (``exact.optimal_values``),
which binary search reaches.
"""
from dataclasses import dataclass

import numpy as np

from .._check_args import as_array, broadcast, checked, generator, instance, int_array, integer, real, size
from ..prob import inverse_cdf, log_softmax, softmax

__all__ = [
    "N", "T", "S", "A", "HIGHER", "LOWER", "FOUND", "NONE", "FEEDBACK_NAMES", "state_index", "state_of",
    "feedback_for", "narrow", "Trajectories", "play", "rollout", "replay", "state_after", "policy_probs",
    "greedy_policy", "binary_search_policy", "linear_scan_policy", "uniform_policy", "uniform_feasible_policy",
    "weak_prior", "cold_prior", "action_logprobs", "off_path", "check_pi", "check_theta", "state_grid"]

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


def state_grid():
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
    left, lo, hi, g = state_grid()
    return _table(g == (lo + hi) // 2)


def linear_scan_policy():
    """Guess the smallest feasible number ``lo`` (1, 2, 3, 4 — τ4)."""
    left, lo, hi, g = state_grid()
    return _table(g == lo)


def uniform_policy():
    """Any of the 16 numbers with probability 1/16, ignoring the feedback."""
    return np.full((S, A), 1.0 / A)


def uniform_feasible_policy():
    """Uniform over the feasible interval [lo, hi] (uses the feedback, no strategy)."""
    left, lo, hi, g = state_grid()
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
    left, lo, hi, g = state_grid()
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

