r"""From rewards to advantages: each algorithm's advantage of a group's G rewards
(``advantages``: RFT, REINFORCE, a baseline, RLOO, GRPO, Dr. GRPO), the groups with no signal,
the reward-to-go, and the length rewards (DAPO's overlong penalty, Kimi's length reward).
Shapes: ``(B, G)`` = groups × samples per group."""
import numpy as np

from .._check_args import as_array, checked, finite_result, group_rewards, integer, nonempty, nonneg, one_of, positive


# ============================================================================ advantages
def _groups(rewards):
    """``rewards`` as a float array (groups, G); a 1-D input is one group."""
    r = np.asarray(rewards, dtype=float)
    return r[None, :] if r.ndim == 1 else r


def _squeeze_like(out, rewards):
    return out[0] if np.ndim(rewards) == 1 else out


def _spread_finite(r, squared=False):
    """Refuse rewards whose group sums and deviations from the mean (or, with ``squared``, their
    squares: the std) overflow, |R| near 1e308 (1e154 for the std)."""
    with np.errstate(all="ignore"):
        top = np.abs(r).max() if r.size else 0.0
        if squared:
            finite_result(lambda: r.shape[-1] * (2 * top) ** 2, "rewards", "each group's std (a sum of squared deviations)")
        finite_result(lambda: r.shape[-1] * 2 * top, "rewards", "each group's sum and deviations from its mean")


def _check_groups(rewards):
    """Rewards (groups, G) or (G,) with G >= 2, whose group sums cannot overflow."""
    _spread_finite(group_rewards(rewards))


def _check_grpo_advantages(rewards, eps, ddof):
    eps = nonneg(eps, "eps")
    ddof = integer(ddof, "ddof (0: population std, 1: sample std)", 0, 1)
    r = group_rewards(rewards)
    _spread_finite(r, squared=True)
    if eps == 0 and np.any(r.std(axis=1, keepdims=True, ddof=ddof) == 0):
        raise ValueError("eps must be > 0 when a group's rewards are all equal (its std is 0)")
    return {"eps": eps, "ddof": ddof}


@checked(_check_grpo_advantages)
def grpo_advantages(rewards, eps=1e-4, ddof=0):
    r"""GRPO group-relative advantage, per group:

    .. math:: \hat A_j = \frac{R_j - \bar R}{\sigma_R + \varepsilon},
              \quad \bar R = \tfrac1G\sum_j R_j,\ \sigma_R = \sqrt{\tfrac{1}{G - \text{ddof}}\sum_j (R_j-\bar R)^2}

    ``rewards``: (groups, G) or (G,). ``ddof=0`` (the default) is the *population* std, as the
    lecture's worked example uses: [1, 0, 0, 0] → [+1.73, −0.58, −0.58, −0.58]. ``ddof=1`` is
    the *sample* std (÷ (G − 1)) that TRL and verl compute with ``torch.std``:
    [1, 0, 0, 0] → [+1.50, −0.50, −0.50, −0.50]. An all-equal (degenerate) group gets
    advantages 0.
    """
    r = _groups(rewards)                                    # (B, G)
    mean = r.mean(axis=1, keepdims=True)                    # (B, 1)
    std = r.std(axis=1, keepdims=True, ddof=ddof)           # (B, 1), population (0) or sample (1) std
    return _squeeze_like((r - mean) / (std + eps), rewards)


@checked(_check_groups)
def dr_grpo_advantages(rewards):
    r"""Dr. GRPO advantage: :math:`\hat A_j = R_j - \bar R` (no division by σ)."""
    r = _groups(rewards)                                    # (B, G)
    return _squeeze_like(r - r.mean(axis=1, keepdims=True), rewards)


@checked(_check_groups)
def rloo_advantages(rewards):
    r"""REINFORCE leave-one-out: :math:`\hat A_j = R_j - \frac{1}{G-1}\sum_{k\ne j} R_k`.

    Equal to :math:`\frac{G}{G-1}(R_j - \bar R)`.
    """
    r = _groups(rewards)                                    # (B, G)
    G = r.shape[1]
    others = (r.sum(axis=1, keepdims=True) - r) / (G - 1)   # mean of the other G-1
    return _squeeze_like(r - others, rewards)


ADVANTAGES = ("rft", "reinforce", "baseline", "rloo", "grpo", "dr_grpo")


def _check_advantages(rewards, algo, b):
    one_of(algo, "algo", ADVANTAGES)
    r = as_array(rewards, "rewards", min_ndim=1)
    if algo == "baseline":
        b = as_array(b, "b")
        try:
            np.broadcast_shapes(r.shape, b.shape)
        except ValueError:
            raise ValueError(f"b must broadcast against rewards, got shapes {b.shape} and {r.shape}") from None
        finite_result(lambda: np.abs(r).max(initial=0) + np.abs(b).max(initial=0), "b", "R - b")
        return {"b": b}
    if algo == "grpo":
        _check_grpo_advantages(r, 1e-4, 0)
    elif algo in ("rloo", "dr_grpo"):
        _check_groups(r)


@checked(_check_advantages)
def advantages(rewards, algo, b=0.0):
    r"""The weight :math:`\hat A_j` of each sample's log-probability, one switch for every world:

    - ``"rft"``:       :math:`\mathbb 1[R_j > 0]` — keep the accepted samples (rejection-sampling
      fine-tuning, ReST, STaR: SFT on what the verifier accepted)
    - ``"reinforce"``: :math:`R_j`
    - ``"baseline"``:  :math:`R_j - b` with a given baseline ``b`` (a number, or an array that
      broadcasts against ``rewards``)
    - ``"rloo"``:      :func:`rloo_advantages` (leave-one-out mean of the group)
    - ``"grpo"``:      :func:`grpo_advantages` (÷ σ, population std, ε = 1e-4)
    - ``"dr_grpo"``:   :func:`dr_grpo_advantages` (group mean only)

    ``rewards``: (groups, G) or (G,) for the group algorithms; any shape for the others.
    """
    r = np.asarray(rewards, dtype=float)
    if algo == "rft":
        return (r > 0).astype(float)
    if algo == "reinforce":
        return r.copy()
    if algo == "baseline":
        return r - b
    return {"rloo": rloo_advantages, "grpo": grpo_advantages, "dr_grpo": dr_grpo_advantages}[algo](r)


def _check_mixed_groups(rewards):
    nonempty(group_rewards(rewards), "rewards")


@checked(_check_mixed_groups)
def mixed_groups(rewards):
    """(groups,) True for the groups whose rewards are not all equal: the groups with a nonzero
    advantage, which DAPO's dynamic sampling keeps (:func:`degenerate_fraction` is the share of
    the others). ``rewards``: (groups, G) or (G,)."""
    r = _groups(rewards)                                    # (B, G)
    return ~np.all(r == r[:, :1], axis=1)


@checked(_check_mixed_groups)
def degenerate_fraction(rewards):
    """Fraction of groups whose rewards are all equal (all advantages 0): the groups
    :func:`mixed_groups` does not keep."""
    return float(np.mean(~mixed_groups(rewards)))


def _check_reward_to_go(rewards):
    r = as_array(rewards, "rewards", min_ndim=1)
    finite_result(lambda: np.abs(r).sum(axis=-1), "rewards", "the sum of a row")
    return {"rewards": r}


@checked(_check_reward_to_go)
def reward_to_go(rewards):
    r"""Reward-to-go weights: the weight of action :math:`a_t` is the sum of the rewards that
    come after it, :math:`R_t = \sum_{t'=t+1}^{T} r_{t'}`.

    ``rewards``: (N, T) or (T,), where ``rewards[:, t]`` is :math:`r_{t+1}`, the reward received
    right after action :math:`a_t`. Returns the same shape.
    """
    return np.flip(np.cumsum(np.flip(rewards, axis=-1), axis=-1), axis=-1)



# ============================================================================ length rewards
def _check_overlong_penalty(length, max_len, buffer):
    n = as_array(length, "length")
    if np.any(n < 0):
        raise ValueError("length must be >= 0")
    max_len = positive(max_len, "max_len")
    buffer = positive(buffer, "buffer")
    if buffer > max_len:
        raise ValueError(f"buffer must be <= max_len, got buffer={buffer}, max_len={max_len}")
    return {"length": n, "max_len": max_len, "buffer": buffer}


@checked(_check_overlong_penalty)
def overlong_penalty(length, max_len, buffer):
    r"""DAPO's soft overlong punishment:

    .. math:: R(y) = \begin{cases} 0 & |y| \le L_{max} - L_{buf} \\
              \frac{(L_{max}-L_{buf}) - |y|}{L_{buf}} & L_{max}-L_{buf} < |y| \le L_{max} \\
              -1 & |y| > L_{max} \end{cases}
    """
    start = max_len - buffer
    out = np.clip((start - np.asarray(length, dtype=float)) / buffer, -1.0, 0.0)
    return out if out.ndim else float(out)


def _check_kimi_length_reward(lengths, correct):
    n = nonempty(as_array(lengths, "lengths", min_ndim=1), "lengths")
    if np.any(n < 0):
        raise ValueError(f"lengths must be >= 0, got {n.min()}")
    c = np.asarray(correct)
    if c.shape != n.shape:
        raise ValueError(f"correct must have the same shape as lengths, got {c.shape} and {n.shape}")
    if not (c.dtype == bool or (np.issubdtype(c.dtype, np.number) and np.all((c == 0) | (c == 1)))):
        raise ValueError(f"correct must hold booleans or 0/1, got {correct!r}")
    return {"lengths": n}


@checked(_check_kimi_length_reward)
def kimi_length_reward(lengths, correct):
    r"""Kimi k1.5's length reward within one group of answers to the same prompt:

    .. math:: \lambda = 0.5 - \frac{len - min\_len}{max\_len - min\_len},\quad
              r = \lambda \text{ if correct else } \min(0, \lambda)

    All zeros when every length is equal. ``lengths`` and ``correct``: (G,), or (..., G) for
    several groups at once (each group is the last axis).
    """
    n, c = np.asarray(lengths, dtype=float), np.asarray(correct).astype(bool)
    lo, hi = n.min(axis=-1, keepdims=True), n.max(axis=-1, keepdims=True)
    span = np.where(hi > lo, hi - lo, 1.0)
    lam = np.where(hi > lo, 0.5 - (n - lo) / span, 0.0)
    return np.where(c, lam, np.minimum(0.0, lam))


