r"""The course's equations, one small numpy function each.

Every notebook and exercise calls these; their names are a stable API (the table in CONTRIBUTING.md).
Shapes are written as comments: ``(B, G)`` = groups × samples per group, ``(N, T)`` =
sequences × tokens.
"""
import numpy as np

from ._check_args import as_array, group_rewards, nonempty, nonneg, one_of, positive, real, same_shape

__all__ = [
    "grpo_advantages", "dr_grpo_advantages", "rloo_advantages", "clipped_surrogate",
    "aggregate_loss", "kl_k1", "kl_k2", "kl_k3", "overlong_penalty", "kimi_length_reward",
    "degenerate_fraction", "reward_to_go", "aggregate_weights",
]


def _squeeze_like(out, rewards):
    return out[0] if np.ndim(rewards) == 1 else out


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
    eps = nonneg(eps, "eps")
    if isinstance(ddof, bool) or ddof not in (0, 1):  # argcheck
        raise ValueError(f"ddof must be 0 (population std) or 1 (sample std), got {ddof!r}")
    r = group_rewards(rewards)                              # (B, G)
    mean = r.mean(axis=1, keepdims=True)                    # (B, 1)
    std = r.std(axis=1, keepdims=True, ddof=ddof)           # (B, 1), population (0) or sample (1) std
    if eps == 0 and np.any(std == 0):  # argcheck
        raise ValueError("eps must be > 0 when a group's rewards are all equal (its std is 0)")
    return _squeeze_like((r - mean) / (std + eps), rewards)


def dr_grpo_advantages(rewards):
    r"""Dr. GRPO advantage: :math:`\hat A_j = R_j - \bar R` (no division by σ)."""
    r = group_rewards(rewards)                              # (B, G)
    return _squeeze_like(r - r.mean(axis=1, keepdims=True), rewards)


def rloo_advantages(rewards):
    r"""REINFORCE leave-one-out: :math:`\hat A_j = R_j - \frac{1}{G-1}\sum_{k\ne j} R_k`.

    Equal to :math:`\frac{G}{G-1}(R_j - \bar R)`.
    """
    r = group_rewards(rewards)                              # (B, G)
    G = r.shape[1]
    others = (r.sum(axis=1, keepdims=True) - r) / (G - 1)   # mean of the other G-1
    return _squeeze_like(r - others, rewards)


def degenerate_fraction(rewards):
    """Fraction of groups whose rewards are all equal (all advantages 0)."""
    r = nonempty(group_rewards(rewards), "rewards")
    return float(np.mean(np.all(r == r[:, :1], axis=1)))


def reward_to_go(rewards):
    r"""Reward-to-go weights: the weight of action :math:`a_t` is the sum of the rewards that
    come after it, :math:`R_t = \sum_{t'=t+1}^{T} r_{t'}`.

    ``rewards``: (N, T) or (T,), where ``rewards[:, t]`` is :math:`r_{t+1}`, the reward received
    right after action :math:`a_t`. Returns the same shape.
    """
    r = as_array(rewards, "rewards", min_ndim=1)
    return np.flip(np.cumsum(np.flip(r, axis=-1), axis=-1), axis=-1)


def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=None):
    r"""PPO's clipped surrogate, elementwise (to be *maximised*):

    .. math:: \min\big(\rho A,\ \mathrm{clip}(\rho, 1-\varepsilon_{low}, 1+\varepsilon_{high}) A\big)

    ``ratio`` ρ = π_θ/π_old and ``adv`` A broadcast against each other. ``eps_high`` defaults
    to ``eps_low`` (symmetric PPO); DAPO's clip-higher sets it larger (0.28).
    """
    real(eps_low, "eps_low", 0, 1, hi_open=True)  # argcheck
    eps_low = nonneg(eps_low, "eps_low")
    eps_high = eps_low if eps_high is None else nonneg(eps_high, "eps_high")
    ratio = as_array(ratio, "ratio")
    adv = as_array(adv, "adv")
    if np.any(ratio < 0):
        raise ValueError("ratio must be >= 0 (it is a ratio of probabilities)")
    try:
        np.broadcast_shapes(ratio.shape, adv.shape)
    except ValueError:
        raise ValueError(f"ratio and adv must broadcast, got shapes {ratio.shape} and {adv.shape}") from None
    return np.minimum(ratio * adv, np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv)


LOSS_TYPES = ("grpo", "dapo", "dr_grpo")


def aggregate_loss(per_token, mask, loss_type, max_len=None):
    r"""Reduce a per-token loss (N, T) to a scalar, with the aggregations of TRL's ``GRPOTrainer``
    (``loss_type``; for ``"dr_grpo"`` only when ``max_len`` is TRL's ``max_completion_length``,
    and TRL's ``"dapo"`` takes its token mean over the whole generation batch).

    - ``"grpo"``:    :math:`\frac1N\sum_i \frac{\sum_t m_{it}\ell_{it}}{\sum_t m_{it}}` (mean of per-sequence means)
    - ``"dapo"``:    :math:`\frac{\sum_{i,t} m_{it}\ell_{it}}{\sum_{i,t} m_{it}}` (token level)
    - ``"dr_grpo"``: :math:`\frac{\sum_{i,t} m_{it}\ell_{it}}{N \cdot L_{max}}` (a constant normaliser)

    ``mask`` is 1 on tokens the policy generated (the loss's :math:`m_t`), 0 elsewhere.
    ``max_len`` defaults to T (the padded width) for ``"dr_grpo"``; no sequence may have more
    generated tokens than ``max_len``.
    """
    x = nonempty(as_array(per_token, "per_token", ndim=2), "per_token")   # (N, T)
    m = as_array(mask, "mask", ndim=2)                      # (N, T)
    same_shape(x, m, "per_token", "mask")
    if not np.all((m == 0) | (m == 1)):
        raise ValueError("mask must contain only 0 and 1")
    one_of(loss_type, "loss_type", LOSS_TYPES)
    if max_len is not None:
        max_len = positive(max_len, "max_len")
        if loss_type == "dr_grpo" and m.sum(axis=1).max() > max_len:
            raise ValueError(f"max_len must be >= every sequence's number of generated tokens, "
                             f"got max_len={max_len} and a sequence of {int(m.sum(axis=1).max())}")
    N, T = x.shape
    if loss_type == "grpo":
        lengths = m.sum(axis=1)
        if np.any(lengths == 0):
            raise ValueError("mask has a sequence with no generated tokens; 'grpo' divides by its length")
        return float(np.mean((x * m).sum(axis=1) / lengths))
    if loss_type == "dapo":
        if m.sum() == 0:
            raise ValueError("mask has no generated tokens")
        return float((x * m).sum() / m.sum())
    L = T if max_len is None else max_len
    return float((x * m).sum() / (N * L))


def aggregate_weights(mask, loss_type, max_len=None):
    r"""The weights :math:`c_{it}` of each per-token loss in :func:`aggregate_loss`:
    ``(c * per_token).sum() == aggregate_loss(per_token, mask, loss_type, max_len)``, i.e. the
    gradient of the aggregated loss with respect to each token's loss.

    - ``"grpo"``:    :math:`c_{it} = m_{it} / (N\,|o_i|)` — a token of a short answer weighs more
    - ``"dapo"``:    :math:`c_{it} = m_{it} / \sum_{j,s} m_{js}` — every token weighs the same
    - ``"dr_grpo"``: :math:`c_{it} = m_{it} / (N\,L_{max})` — every token weighs the same

    ``mask`` is (N, T), or (..., N, T) for several independent batches (e.g. runs) at once,
    each normalised on its own.
    """
    m = as_array(mask, "mask", min_ndim=2)                   # (..., N, T)
    if not np.all((m == 0) | (m == 1)):
        raise ValueError("mask must contain only 0 and 1")
    if loss_type not in LOSS_TYPES:
        raise ValueError(f"loss_type must be one of {LOSS_TYPES}, got {loss_type!r}")
    N, T = m.shape[-2:]
    if loss_type == "grpo":
        lengths = m.sum(axis=-1, keepdims=True)              # (..., N, 1)
        if np.any(lengths == 0):
            raise ValueError("mask has a sequence with no generated tokens; 'grpo' divides by its length")
        return m / (N * lengths)
    if loss_type == "dapo":
        tokens = m.sum(axis=(-2, -1), keepdims=True)
        if np.any(tokens == 0):
            raise ValueError("mask has no generated tokens")
        return m / tokens
    L = T if max_len is None else positive(max_len, "max_len")
    if np.any(m.sum(axis=-1) > L):
        raise ValueError(f"max_len must be >= the longest sequence, got {L:g}")
    return m / (N * L)


def _logr(logr):
    return as_array(logr, "logr")


def kl_k1(logr):
    r"""k1 = −log r with log r = log π_ref − log π on samples from π: unbiased, can be negative."""
    return -_logr(logr)


def kl_k2(logr):
    r"""k2 = (log r)² / 2: always ≥ 0, biased, low variance."""
    return 0.5 * _logr(logr) ** 2


def kl_k3(logr):
    r"""k3 = (r − 1) − log r: unbiased and always ≥ 0 (Schulman's estimator, used by GRPO)."""
    lr = _logr(logr)
    return np.expm1(lr) - lr


def overlong_penalty(length, max_len, buffer):
    r"""DAPO's soft overlong punishment:

    .. math:: R(y) = \begin{cases} 0 & |y| \le L_{max} - L_{buf} \\
              \frac{(L_{max}-L_{buf}) - |y|}{L_{buf}} & L_{max}-L_{buf} < |y| \le L_{max} \\
              -1 & |y| > L_{max} \end{cases}
    """
    n = as_array(length, "length")
    if np.any(n < 0):
        raise ValueError("length must be >= 0")
    max_len = positive(max_len, "max_len")
    buffer = positive(buffer, "buffer")
    if buffer > max_len:
        raise ValueError(f"buffer must be <= max_len, got buffer={buffer}, max_len={max_len}")
    start = max_len - buffer
    out = np.clip((start - n) / buffer, -1.0, 0.0)
    return out if out.ndim else float(out)


def kimi_length_reward(lengths, correct):
    r"""Kimi k1.5's length reward within one group of answers to the same prompt:

    .. math:: \lambda = 0.5 - \frac{len - min\_len}{max\_len - min\_len},\quad
              r = \lambda \text{ if correct else } \min(0, \lambda)

    All zeros when every length is equal. ``lengths`` and ``correct``: (G,), or (..., G) for
    several groups at once (each group is the last axis).
    """
    n = as_array(lengths, "lengths", min_ndim=1)
    nonempty(n, "lengths")  # argcheck
    c = np.asarray(correct)
    if c.shape != n.shape:
        raise ValueError(f"correct must have the same shape as lengths, got {c.shape} and {n.shape}")
    if not (c.dtype == bool or (np.issubdtype(c.dtype, np.number) and np.all((c == 0) | (c == 1)))):  # argcheck
        raise ValueError(f"correct must hold booleans or 0/1, got {correct!r}")
    c = c.astype(bool)
    lo, hi = n.min(axis=-1, keepdims=True), n.max(axis=-1, keepdims=True)
    span = np.where(hi > lo, hi - lo, 1.0)
    lam = np.where(hi > lo, 0.5 - (n - lo) / span, 0.0)
    return np.where(c, lam, np.minimum(0.0, lam))
