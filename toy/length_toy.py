r"""The length toy of Part III §4: a policy whose answer length never changes whether it is right.

Each answer first takes a *path*: the right one with probability ``p_correct`` (fixed, not
learned), else the wrong one. On its path it then writes thinking tokens: before each one it
continues with probability :math:`q = \sigma(\theta_{path})`, else it stops and answers; after
``max_len`` thinking tokens the answer is forced. So an answer of length :math:`L` has
:math:`|o| = L + 1` tokens (L thinking tokens, then the answer token) and

.. math:: \log\pi(L) = L \log q + [L < L_{max}] \log(1 - q),
          \qquad \frac{d}{d\theta}\log\pi(\text{think}) = 1 - q,\quad
          \frac{d}{d\theta}\log\pi(\text{answer}) = -q \ \ (0 \text{ if forced}).

The reward is 1 on the right path and 0 on the wrong one, *whatever the length*: the true
gradient of the expected reward with respect to either θ is exactly 0, and a correct learning
rule leaves both lengths where they start. The two parameters are the two paths' continue
logits, so the mean lengths of right and wrong answers move separately.

:func:`train` runs many independent runs at once (one array axis), with the advantages of
``toy.rl`` and the token weights of ``toy.rl.aggregate_weights``. The advantage (÷σ or not)
and the loss aggregation (÷|o| or ÷L_max) are set separately, so each of GRPO's two changes
can be switched on alone.
"""
from dataclasses import dataclass

import numpy as np

from . import rl
from ._check_args import MAX_ELEMENTS, as_array, broadcast, checked, instance, int_array, integer, one_of, real
from ._check_args import seed as _seed
from ._check_args import size
from .prob import sigmoid

__all__ = ["LengthToyConfig", "expected_length", "theta_for_length", "score", "train",
           "expected_length_gradient"]

RIGHT, WRONG = 0, 1                       # index of each path's θ
BISECTION_STEPS = 100                     # theta_for_length: each one sums max_len terms


@dataclass
class LengthToyConfig:
    p_correct: float = 0.3     # P(the right path); the length never changes it
    max_len: int = 32          # at most this many thinking tokens, then the answer is forced
    init_len: float = 8.0      # mean thinking length on both paths at the start
    algo: str = "grpo"         # "grpo": (R − mean)/σ; "dr_grpo": R − mean
    loss_type: str = "grpo"    # "grpo": each answer ÷ its length |o|; "dr_grpo": ÷ L_max (toy.rl)
    G: int = 8                 # answers per group
    n_prompts: int = 16        # groups per update
    steps: int = 300           # updates
    lr: float = 2.0            # step size on the two continue logits (descent on the loss)
    runs: int = 20             # independent runs, trained side by side
    kimi_from: int = -1        # add Kimi k1.5's length reward from this step on (-1: never)

    def __post_init__(self):
        self.check()

    def check(self):
        """Check every field (again: :func:`train` calls it, so a field changed after construction
        is checked too); integral fields become ints. A ValueError names the field."""
        self.p_correct = real(self.p_correct, "p_correct", 0, 1, lo_open=True, hi_open=True)
        for name in ("max_len", "G", "n_prompts", "steps", "runs"):
            setattr(self, name, integer(getattr(self, name), name, lo=2 if name == "G" else 1))
        self.kimi_from = integer(self.kimi_from, "kimi_from", lo=-1)
        self.lr = real(self.lr, "lr", lo=0, lo_open=True)
        self.init_len = real(self.init_len, "init_len", lo=0, lo_open=True)
        if not self.init_len < self.max_len:
            raise ValueError(f"init_len must be in (0, max_len = {self.max_len}), got {self.init_len}")
        for name in ("algo", "loss_type"):
            one_of(getattr(self, name), name, ("grpo", "dr_grpo"))
        per_step = self.runs * self.n_prompts * self.G * (self.max_len + 1)   # the token table of one update
        size(per_step, "runs, n_prompts, G and max_len", MAX_ELEMENTS, "token entries per update")
        size(self.steps * per_step, "steps, runs, n_prompts, G and max_len", 100 * MAX_ELEMENTS,
             "token entries over the run")
        size((self.max_len + 1) ** 2 * self.n_prompts * self.G, "max_len, n_prompts and G", MAX_ELEMENTS,
             "entries in expected_length_gradient's table of every length")
        size(BISECTION_STEPS * (self.max_len + 1), "max_len", MAX_ELEMENTS, "terms in theta_for_length's bisection")
        return self


def _config(cfg):
    return instance(cfg, LengthToyConfig, "cfg").check()


def _max_len(max_len, n=1):
    """``max_len`` as an int >= 1, refused if ``n`` values times it would pass the size limit."""
    max_len = integer(max_len, "max_len", lo=1)
    size(n * (max_len + 1), "max_len", MAX_ELEMENTS, "entries")
    return max_len


def _check_expected_length(theta, max_len):
    theta = as_array(theta, "theta")
    return {"theta": theta, "max_len": _max_len(max_len, theta.size)}


@checked(_check_expected_length)
def expected_length(theta, max_len):
    r"""Exact mean thinking length :math:`E[L] = \sum_{l=1}^{L_{max}} q^l` for continue logit θ."""
    q = sigmoid(theta)
    ls = np.arange(1, max_len + 1)
    return (q[..., None] ** ls).sum(axis=-1) if np.ndim(q) else float((q ** ls).sum())


def _check_theta_for_length(mean_len, max_len):
    max_len = _max_len(max_len, BISECTION_STEPS)
    return {"max_len": max_len, "mean_len": real(mean_len, "mean_len", 0, max_len, lo_open=True, hi_open=True)}


@checked(_check_theta_for_length)
def theta_for_length(mean_len, max_len):
    """The continue logit whose expected length is ``mean_len`` (bisection on the monotone map)."""
    lo, hi = -20.0, 20.0
    for _ in range(BISECTION_STEPS):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if expected_length(mid, max_len) < mean_len else (lo, mid)
    return 0.5 * (lo + hi)


def _token_scores(L, q, max_len):
    """d log π(token_t) / dθ for every token position t of answers of lengths L: (..., T)."""
    t = np.arange(max_len + 1)                                     # T = max_len + 1 positions
    think = t < L[..., None]
    answer = (t == L[..., None]) & (L[..., None] < max_len)        # a stop decision, not forced
    return np.where(think, 1.0 - q[..., None], 0.0) - np.where(answer, q[..., None], 0.0)


def _check_score(L, theta, max_len):
    theta = as_array(theta, "theta")
    max_len = integer(max_len, "max_len", lo=1)
    L = int_array(L, "L", lo=0, hi=max_len)
    broadcast([theta.shape, L.shape], ["theta", "L"])
    size(max(L.size, theta.size) * (max_len + 1), "L and max_len", MAX_ELEMENTS, "entries")
    return {"L": L, "theta": theta, "max_len": max_len}


@checked(_check_score)
def score(L, theta, max_len):
    r""":math:`\frac{d}{d\theta}\log\pi(L) = L(1-q) - [L < L_{max}]\,q`, summed over the tokens."""
    L = np.asarray(L)
    q = np.asarray(sigmoid(np.broadcast_to(theta, L.shape)))
    return _token_scores(L, q, max_len).sum(axis=-1)


def _advantages(rewards, algo):
    flat = rewards.reshape(-1, rewards.shape[-1])                  # (runs · groups, G)
    return rl.advantages(flat, algo).reshape(rewards.shape)


def _check_train(cfg, seed):
    return {"cfg": _config(LengthToyConfig() if cfg is None else cfg), "seed": _seed(seed)}


@checked(_check_train)
def train(cfg=None, seed=0):
    """Train ``cfg.runs`` independent runs side by side. Returns a dict of arrays over steps
    (steps, runs): ``len_right`` and ``len_wrong``, the exact mean thinking lengths of right and
    wrong answers given the current θ (before each update, plus the final one: steps + 1 rows)."""
    cfg = LengthToyConfig() if cfg is None else cfg
    rng = np.random.default_rng(seed)
    S, B, G, Lmax = cfg.runs, cfg.n_prompts, cfg.G, cfg.max_len
    theta = np.full((S, 2), theta_for_length(cfg.init_len, Lmax))           # (runs, path)
    lens = np.empty((cfg.steps + 1, S, 2))
    positions = np.arange(Lmax + 1)
    for step in range(cfg.steps + 1):
        lens[step] = expected_length(theta, Lmax)
        if step == cfg.steps:
            break
        right = rng.random((S, B, G)) < cfg.p_correct                      # (runs, groups, G)
        path = np.where(right, RIGHT, WRONG)
        q = sigmoid(np.take_along_axis(theta, path.reshape(S, -1), axis=1)).reshape(S, B, G)
        # L ~ truncated geometric: continue with probability q, at most Lmax thinking tokens
        L = np.minimum(rng.geometric(1.0 - q) - 1, Lmax)
        reward = right.astype(float)
        if 0 <= cfg.kimi_from <= step:
            reward = reward + rl.kimi_length_reward(L, right)               # per group (last axis)
        adv = _advantages(reward, cfg.algo)                            # (runs, groups, G)
        mask = (positions < (L + 1)[..., None]).astype(float)               # |o| = L + 1 tokens
        w = rl.aggregate_weights(mask.reshape(S, B * G, Lmax + 1), cfg.loss_type, max_len=Lmax + 1)
        # the loss is −Σ_t c_t A log π(token_t); its gradient on each answer's path θ:
        dtheta = -(w.reshape(S, B, G, -1) * _token_scores(L, q, Lmax)).sum(axis=-1) * adv
        grad = np.stack([np.where(path == k, dtheta, 0.0).sum(axis=(1, 2)) for k in (RIGHT, WRONG)], axis=1)
        theta -= cfg.lr * grad
    return {"len_right": lens[:, :, RIGHT], "len_wrong": lens[:, :, WRONG]}


def _check_expected_length_gradient(cfg, theta):
    cfg = _config(cfg)
    if theta is not None and as_array(theta, "theta").shape != (2,):
        raise ValueError(f"theta must be the two continue logits (theta_right, theta_wrong), got shape {np.shape(theta)}")
    return {"cfg": cfg, "theta": None if theta is None else as_array(theta, "theta")}


@checked(_check_expected_length_gradient)
def expected_length_gradient(cfg, theta=None):
    r"""The *exact* expected gradient of the loss with respect to (θ_right, θ_wrong) at ``theta``
    (default: the start), by enumerating the number of right answers in a group and every
    length: :math:`E[\sum_i c_i A_i\, \frac{d}{d\theta}\log\pi(L_i)]` (Kimi's reward off).

    Given its path, an answer's length is independent of its advantage, so each path's term is
    :math:`E[A \mid path] \cdot E[w(L)\, s(L)]` with :math:`w = 1/|o|` (GRPO) or :math:`1/L_{max}`
    (``loss_type="dr_grpo"``): 0 with the constant weight because :math:`E[s(L)] = 0`, whatever
    the advantage; not 0 with 1/|o|.
    """
    Lmax, G, N = cfg.max_len, cfg.G, cfg.n_prompts * cfg.G
    theta = np.full(2, theta_for_length(cfg.init_len, Lmax)) if theta is None else np.asarray(theta, dtype=float)
    groups, pk = rl.enumerate_groups([1 - cfg.p_correct, cfg.p_correct], G)   # every group, exactly
    rewards = groups.astype(float)                                  # (G + 1, G): 1 = right
    adv = _advantages(rewards, cfg.algo)
    e_adv_right = (pk[:, None] * adv * rewards).sum() / (G * cfg.p_correct)       # E[A | right]
    e_adv_wrong = (pk[:, None] * adv * (1 - rewards)).sum() / (G * (1 - cfg.p_correct))
    L = np.arange(Lmax + 1)
    every_len = np.broadcast_to(L[:, None, None] >= L, (Lmax + 1, N, Lmax + 1))   # batch l: N answers of l + 1 tokens
    w = rl.aggregate_weights(every_len.astype(float), cfg.loss_type, max_len=Lmax + 1)[:, 0, 0]   # w(L)
    out = []
    for th, e_adv, share in zip(theta, (e_adv_right, e_adv_wrong), (cfg.p_correct, 1 - cfg.p_correct)):
        q = sigmoid(th)
        pL = np.where(L < Lmax, q ** L * (1 - q), q ** Lmax)                      # P(L)
        out.append(-N * share * e_adv * (pL * w * score(L, th, Lmax)).sum())
    return np.array(out)
