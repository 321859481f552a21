r"""The course's equations, one small numpy function each.

Every notebook and exercise calls these; their names are a stable API (the table in CONTRIBUTING.md).
Shapes are written as comments: ``(B, G)`` = groups × samples per group, ``(N, T)`` =
sequences × tokens.

Each public function is its equation alone; its argument checks are the ``_check_<name>`` function
above it (``@checked``: they run once, when a user calls it; a call from inside ``toy`` trusts its
caller). The sections: advantages; PPO's clipped surrogate; the loss aggregations; the KL
estimators; the policy loss; length rewards; LM-PPO (shaped rewards, GAE); a K-answer softmax
policy; the loss variants practitioners use now.
"""
import itertools
import math

import numpy as np

from .prob import log_softmax, softmax
from ._check_args import (MAX_ELEMENTS, MAX_LOOP, as_array, broadcast, checked, exponent, finite_result, flag,
                          group_rewards, integer, nonempty, nonneg, one_of, positive, real, same_shape, size)

__all__ = [
    "grpo_advantages", "dr_grpo_advantages", "rloo_advantages", "ADVANTAGES", "advantages", "mixed_groups",
    "degenerate_fraction", "reward_to_go",
    "clipped_surrogate", "clipped_surrogate_grad", "clip_fraction",
    "LOSS_TYPES", "aggregate_loss", "aggregate_weights",
    "kl_k1", "kl_k2", "kl_k3", "kl_k3_grad",
    "policy_loss",
    "overlong_penalty", "kimi_length_reward",
    "kl_shaped_rewards", "gae",
    "softmax_pg_exact", "score_function_estimate", "enumerate_groups",
    "RATIO_LEVELS", "LOSS_MODES", "sequence_log_ratio", "cispo_weight", "two_sided_surrogate",
    "two_sided_surrogate_grad", "bnpo_weights", "high_entropy_mask", "token_entropy",
]


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


# ============================================================================ PPO's clipped surrogate
def _check_eps(eps_low, eps_high):
    eps_low = real(eps_low, "eps_low", 0, 1, hi_open=True)
    return {"eps_low": eps_low, "eps_high": eps_low if eps_high is None else nonneg(eps_high, "eps_high")}


def _check_clipped_surrogate(ratio, adv, eps_low, eps_high):
    ratio, adv = as_array(ratio, "ratio"), as_array(adv, "adv")
    if np.any(ratio < 0):
        raise ValueError("ratio must be >= 0 (it is a ratio of probabilities)")
    try:
        np.broadcast_shapes(ratio.shape, adv.shape)
    except ValueError:
        raise ValueError(f"ratio and adv must broadcast, got shapes {ratio.shape} and {adv.shape}") from None
    finite_result(lambda: np.abs(ratio).max(initial=0) * np.abs(adv).max(initial=0), "ratio and adv", "ratio * adv")
    return {"ratio": ratio, "adv": adv, **_check_eps(eps_low, eps_high)}


@checked(_check_clipped_surrogate)
def clipped_surrogate(ratio, adv, eps_low=0.2, eps_high=None):
    r"""PPO's clipped surrogate, elementwise (to be *maximised*):

    .. math:: \min\big(\rho A,\ \mathrm{clip}(\rho, 1-\varepsilon_{low}, 1+\varepsilon_{high}) A\big)

    ``ratio`` ρ = π_θ/π_old and ``adv`` A broadcast against each other. ``eps_high`` defaults
    to ``eps_low`` (symmetric PPO); DAPO's clip-higher sets it larger (0.28).
    """
    eps_high = eps_low if eps_high is None else eps_high
    return np.minimum(ratio * adv, np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv)


def _unclipped(ratio, adv, eps_low, eps_high):
    """True where the min of the clipped surrogate picks ρA (the token keeps its gradient)."""
    eps_high = eps_low if eps_high is None else eps_high
    return ratio * adv <= np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv


@checked(_check_clipped_surrogate)
def clipped_surrogate_grad(ratio, adv, eps_low=0.2, eps_high=None):
    r"""The derivative of :func:`clipped_surrogate` with respect to the ratio ρ:

    .. math:: \frac{\partial}{\partial\rho}\min\big(\rho A,\ \mathrm{clip}(\rho, 1-\varepsilon_{low}, 1+\varepsilon_{high}) A\big)
              = \begin{cases} A & \text{where the min is } \rho A \\ 0 & \text{where it is the clipped term} \end{cases}

    The clipped term is the min only when ρ has left the range in the direction A pushes it
    (ρ > 1 + ε_high with A > 0, ρ < 1 − ε_low with A < 0): there the token has no gradient.
    """
    ratio, adv = np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float)
    return np.where(_unclipped(ratio, adv, eps_low, eps_high), adv, 0.0)


def _check_clip_fraction(ratio, adv, mask, eps_low, eps_high):
    m = as_array(mask, "mask")
    if not np.all((m == 0) | (m == 1)) or m.sum() == 0:
        raise ValueError("mask must contain only 0 and 1, and at least one 1")
    broadcast([np.shape(ratio), np.shape(adv), m.shape], ["ratio", "adv", "mask"])
    return {"ratio": as_array(ratio, "ratio"), "adv": as_array(adv, "adv"), "mask": m, **_check_eps(eps_low, eps_high)}


@checked(_check_clip_fraction)
def clip_fraction(ratio, adv, mask, eps_low=0.2, eps_high=None):
    r"""The share of the tokens in ``mask`` whose gradient the clip removes
    (:func:`clipped_surrogate_grad` is 0 while A ≠ 0), as TRL and verl log it (``clip_ratio``):
    the denominator is every token of the mask. ``ratio``, ``adv`` broadcast to ``mask``'s shape."""
    m = np.asarray(mask, dtype=float)
    ratio, adv = np.broadcast_arrays(np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float), m)[:2]
    clipped = ~_unclipped(ratio, adv, eps_low, eps_high)
    return float((clipped * m).sum() / m.sum())


# ============================================================================ the loss aggregations
LOSS_TYPES = ("grpo", "dapo", "dr_grpo", "sum")


def _check_mask_weights(m, loss_type, max_len):
    """The checks :func:`aggregate_loss` and :func:`aggregate_weights` share: a 0/1 ``mask``
    (..., N, T) with a token where ``loss_type`` divides by a count, a known ``loss_type`` and
    ``max_len`` >= every sequence's length."""
    if not np.all((m == 0) | (m == 1)):
        raise ValueError("mask must contain only 0 and 1")
    one_of(loss_type, "loss_type", LOSS_TYPES)
    if max_len is not None:
        max_len = positive(max_len, "max_len")
    if loss_type == "grpo" and np.any(m.sum(axis=-1) == 0):
        raise ValueError("mask has a sequence with no generated tokens; 'grpo' divides by its length")
    if loss_type == "dapo" and np.any(m.sum(axis=(-2, -1)) == 0):
        raise ValueError("mask has no generated tokens")
    if loss_type == "dr_grpo" and m.size and m.sum(axis=-1).max() > (m.shape[-1] if max_len is None else max_len):
        raise ValueError(f"max_len must be >= every sequence's number of generated tokens, "
                         f"got max_len={max_len} and a sequence of {int(m.sum(axis=-1).max())}")
    return {"mask": m, "max_len": max_len}


def _check_aggregate_loss(per_token, mask, loss_type, max_len):
    x = nonempty(as_array(per_token, "per_token", ndim=2), "per_token")   # (N, T)
    m = as_array(mask, "mask", ndim=2)                      # (N, T)
    same_shape(x, m, "per_token", "mask")
    finite_result(lambda: np.abs(x * m).sum(), "per_token", "the sum of the masked losses")
    return {"per_token": x, **_check_mask_weights(m, loss_type, max_len)}


@checked(_check_aggregate_loss)
def aggregate_loss(per_token, mask, loss_type, max_len=None):
    r"""Reduce a per-token loss (N, T) to a scalar, with the aggregations of TRL's ``GRPOTrainer``
    (``loss_type``; for ``"dr_grpo"`` only when ``max_len`` is TRL's ``max_completion_length``,
    and TRL's ``"dapo"`` takes its token mean over the whole generation batch).

    - ``"grpo"``:    :math:`\frac1N\sum_i \frac{\sum_t m_{it}\ell_{it}}{\sum_t m_{it}}` (mean of per-sequence means)
    - ``"dapo"``:    :math:`\frac{\sum_{i,t} m_{it}\ell_{it}}{\sum_{i,t} m_{it}}` (token level)
    - ``"dr_grpo"``: :math:`\frac{\sum_{i,t} m_{it}\ell_{it}}{N \cdot L_{max}}` (a constant normaliser)
    - ``"sum"``:     :math:`\frac1N\sum_{i,t} m_{it}\ell_{it}` (REINFORCE's: sum over each sequence, mean over sequences)

    ``mask`` is 1 on tokens the policy generated (the loss's :math:`m_t`), 0 elsewhere.
    ``max_len`` defaults to T (the padded width) for ``"dr_grpo"``; no sequence may have more
    generated tokens than ``max_len``.
    """
    x, m = np.asarray(per_token, dtype=float), np.asarray(mask, dtype=float)   # (N, T)
    N, T = x.shape
    if loss_type == "grpo":
        return float(np.mean((x * m).sum(axis=1) / m.sum(axis=1)))
    if loss_type == "dapo":
        return float((x * m).sum() / m.sum())
    if loss_type == "sum":
        return float((x * m).sum() / N)
    L = T if max_len is None else max_len
    return float((x * m).sum() / (N * L))


def _check_aggregate_weights(mask, loss_type, max_len):
    m = nonempty(as_array(mask, "mask", min_ndim=2), "mask")  # (..., N, T)
    return _check_mask_weights(m, loss_type, max_len)


@checked(_check_aggregate_weights)
def aggregate_weights(mask, loss_type, max_len=None):
    r"""The weights :math:`c_{it}` of each per-token loss in :func:`aggregate_loss`:
    ``(c * per_token).sum() == aggregate_loss(per_token, mask, loss_type, max_len)``, i.e. the
    gradient of the aggregated loss with respect to each token's loss.

    - ``"grpo"``:    :math:`c_{it} = m_{it} / (N\,|o_i|)` — a token of a short answer weighs more
    - ``"dapo"``:    :math:`c_{it} = m_{it} / \sum_{j,s} m_{js}` — every token weighs the same
    - ``"dr_grpo"``: :math:`c_{it} = m_{it} / (N\,L_{max})` — every token weighs the same
    - ``"sum"``:     :math:`c_{it} = m_{it} / N` — every token weighs the same, a long sequence more in total

    ``mask`` is (N, T), or (..., N, T) for several independent batches (e.g. runs) at once,
    each normalised on its own.
    """
    m = np.asarray(mask, dtype=float)                       # (..., N, T)
    N, T = m.shape[-2:]
    if loss_type == "grpo":
        return m / (N * m.sum(axis=-1, keepdims=True))      # |o_i| = Σ_t m_it
    if loss_type == "dapo":
        return m / m.sum(axis=(-2, -1), keepdims=True)
    if loss_type == "sum":
        return m / N
    L = T if max_len is None else max_len
    return m / (N * L)


# ============================================================================ the KL estimators
def _check_logr(logr):
    return {"logr": as_array(logr, "logr")}


def _check_kl_k2(logr):
    lr = as_array(logr, "logr")
    finite_result(lambda: 0.5 * np.abs(lr).max(initial=0) ** 2, "logr", "(log r)² / 2")
    return {"logr": lr}


def _check_exp_logr(logr):
    return {"logr": exponent(as_array(logr, "logr"), "logr", "r = e^logr")}


@checked(_check_logr)
def kl_k1(logr):
    r"""k1 = −log r with log r = log π_ref − log π on samples from π: unbiased, can be negative."""
    return -logr


@checked(_check_kl_k2)
def kl_k2(logr):
    r"""k2 = (log r)² / 2: always ≥ 0, biased, low variance."""
    return 0.5 * logr ** 2


@checked(_check_exp_logr)
def kl_k3(logr):
    r"""k3 = (r − 1) − log r: unbiased and always ≥ 0 (Schulman's estimator, used by GRPO)."""
    return np.expm1(logr) - logr


@checked(_check_exp_logr)
def kl_k3_grad(logr):
    r"""d k3 / d log r = r − 1 (with log r = log π_ref − log π, so d k3 / d log π = 1 − r)."""
    return np.exp(logr) - 1.0


# ============================================================================ the policy loss
def _is_variant(loss_type, ratio_level, loss_mode, delta, micro_batch, pg_mask, kl_bias_correction):
    """True when one of :func:`policy_loss`'s variant keywords is not at its default."""
    return (loss_type == "bnpo" or ratio_level != "token" or loss_mode != "clip" or delta is not None
            or micro_batch is not None or pg_mask is not None or kl_bias_correction is not False)


def _check_policy_loss(logp, old_logp, adv, mask, loss_type, eps_low, eps_high, beta, ref_logp, max_len,
                       ratio_level, loss_mode, delta, micro_batch, pg_mask, kl_bias_correction):
    variant = _is_variant(loss_type, ratio_level, loss_mode, delta, micro_batch, pg_mask, kl_bias_correction)
    lp = as_array(logp, "logp", ndim=2)                     # (N, T)
    old = as_array(old_logp, "old_logp", ndim=2)            # (N, T)
    m = _mask01(mask) if variant else as_array(mask, "mask", ndim=2)   # (N, T)
    same_shape(old, lp, "old_logp", "logp"), same_shape(m, lp, "mask", "logp")
    a = as_array(adv, "adv")
    if a.shape not in (lp.shape, lp.shape[:1]):
        raise ValueError(f"adv must have shape {lp.shape[:1]} or {lp.shape}, got {a.shape}")
    new = {"logp": lp, "old_logp": old, "mask": m, "adv": a}
    if variant:
        one_of(ratio_level, "ratio_level", RATIO_LEVELS)
        one_of(loss_mode, "loss_mode", LOSS_MODES)
        one_of(loss_type, "loss_type", LOSS_TYPES + ("bnpo",))
        if micro_batch is not None and loss_type != "bnpo":
            raise ValueError(f"micro_batch is only used by loss_type='bnpo', got loss_type={loss_type!r}")
        if loss_mode == "cispo":
            if delta is not None:
                raise ValueError("delta caps the clipped surrogate; loss_mode='cispo' has none (give delta=None)")
            if eps_low is None and eps_high is None:
                raise ValueError("eps_high must be given when eps_low is None (CISPO's weight needs a cap)")
            _check_cispo_weight(1.0, eps_low, eps_low if eps_high is None else eps_high)
        else:
            new.update(_check_eps(eps_low, eps_high))
        new["delta"] = _check_delta(delta)
    else:
        new.update(_check_eps(eps_low, eps_high))
    new["beta"] = beta = nonneg(beta, "beta")
    if beta > 0 and (ref_logp is None or np.shape(ref_logp) != lp.shape):
        raise ValueError(f"ref_logp must be given with shape {lp.shape} when beta > 0")
    if variant:
        if pg_mask is not None:
            same_shape(_mask01(pg_mask, "pg_mask"), m, "pg_mask", "mask")
        if kl_bias_correction not in (True, False):
            raise ValueError(f"kl_bias_correction must be True or False, got {kl_bias_correction!r}")
        if loss_type == "bnpo":
            new["micro_batch"] = _check_bnpo_weights(m, micro_batch)["micro_batch"]
        else:
            new.update(_check_aggregate_loss(np.zeros_like(lp), m, loss_type, max_len))
    else:
        new.update(_check_aggregate_loss(np.zeros_like(lp), m, loss_type, max_len))
        _policy_loss_finite(lp, old, a, new["mask"], beta, ref_logp)
    new.pop("per_token", None)
    return new


def _policy_loss_finite(lp, old, a, m, beta, ref_logp):
    """Refuse, naming the argument, inputs whose ratio, surrogate, KL or sums overflow."""
    with np.errstate(all="ignore"):
        exponent(lp - old, "logp - old_logp", "the ratio e^(logp - old_logp)")
        top = np.exp(np.max(lp - old, initial=0)) * np.abs(a).max(initial=0)      # the largest |ρA|
        if beta > 0:
            logr = exponent(as_array(ref_logp, "ref_logp") - lp, "ref_logp - logp", "e^(ref_logp - logp)")
            k3 = np.expm1(logr) - logr
            finite_result(lambda: k3, "ref_logp - logp", "k3")
            top = top + beta * k3.max(initial=0)
        finite_result(lambda: top * max(m.sum(), 1), "adv" if beta == 0 else "adv and beta",
                      "the sum over the tokens of ratio * adv (+ beta * k3)")


@checked(_check_policy_loss)
def policy_loss(logp, old_logp, adv, mask, loss_type="grpo", eps_low=0.2, eps_high=None,
                beta=0.0, ref_logp=None, max_len=None, *, ratio_level="token", loss_mode="clip",
                delta=None, micro_batch=None, pg_mask=None, kl_bias_correction=False):
    r"""The policy loss of PPO, GRPO, Dr. GRPO and DAPO, and its gradient with respect to ``logp``:

    .. math:: \ell_t = -\min\big(\rho_t A_t,\ \mathrm{clip}(\rho_t, 1-\varepsilon_{low}, 1+\varepsilon_{high}) A_t\big)
              + \beta\, k_3(\log\pi_{ref} - \log\pi_\theta),
              \qquad \rho_t = e^{\log\pi_\theta - \log\pi_{old}},

    reduced by :func:`aggregate_loss` (``loss_type``, ``max_len``). By the chain rule, with
    :math:`\partial\rho/\partial\log\pi_\theta = \rho` and :math:`\partial\log r/\partial\log\pi_\theta = -1`,

    .. math:: \frac{\partial L}{\partial \log\pi_\theta(t)} = c_t\Big(-\rho_t\, \frac{\partial\,\mathrm{surr}}{\partial\rho}
              - \beta\, \frac{\partial k_3}{\partial \log r}\Big),

    with :math:`c_t` from :func:`aggregate_weights`. ``logp``, ``old_logp``, ``mask``: (N, T);
    ``adv``: (N,) (one advantage per sequence) or (N, T) (per token); ``ref_logp`` (N, T) is
    needed when β > 0. Returns ``(loss, dlogp)``, ``dlogp`` (N, T), 0 outside the mask. A world
    then applies its own chain rule from ``dlogp`` to its parameters and *descends* the loss.
    The keyword-only variants (GSPO, CISPO, ``"bnpo"``, δ, ``pg_mask``): :func:`_policy_loss_variant`.
    """
    if _is_variant(loss_type, ratio_level, loss_mode, delta, micro_batch, pg_mask, kl_bias_correction):
        return _policy_loss_variant(logp, old_logp, adv, mask, loss_type, eps_low, eps_high, beta, ref_logp,
                                    max_len, ratio_level, loss_mode, delta, micro_batch, pg_mask,
                                    kl_bias_correction)
    lp, old, m = (np.asarray(x, dtype=float) for x in (logp, old_logp, mask))   # (N, T)
    a = np.asarray(adv, dtype=float)
    a = np.broadcast_to(a[:, None] if a.ndim == 1 else a, lp.shape)   # (N, T)
    ratio = np.exp(lp - old)                                           # ρ
    per_token = -clipped_surrogate(ratio, a, eps_low, eps_high)        # (N, T)
    d_per_token = -ratio * clipped_surrogate_grad(ratio, a, eps_low, eps_high)   # dℓ/dlogp
    if beta > 0:
        logr = np.asarray(ref_logp, dtype=float) - lp                  # log π_ref/π
        per_token = per_token + beta * kl_k3(logr)
        d_per_token = d_per_token - beta * kl_k3_grad(logr)            # d log r / d logp = −1
    loss = aggregate_loss(per_token, m, loss_type, max_len)
    return loss, aggregate_weights(m, loss_type, max_len) * d_per_token


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


# ============================================================================ LM-PPO: shaped rewards, GAE
MAX_TOKENS = 10**5          # gae's backward loop runs once per token position, in Python


def _mask01(mask, name="mask"):
    m = as_array(mask, name, ndim=2)
    if not np.all((m == 0) | (m == 1)):
        raise ValueError(f"{name} must contain only 0 and 1")
    return m


def _check_kl_shaped_rewards(kl, score, mask, beta, clamp):
    k = as_array(kl, "kl", ndim=2)                          # (N, T)
    m = _mask01(mask)                                       # (N, T)
    same_shape(k, m, "kl", "mask")
    s = as_array(score, "score", ndim=1)                    # (N,)
    if len(s) != len(m):
        raise ValueError(f"score must have one entry per row of mask, got {len(s)} and {len(m)}")
    beta = nonneg(beta, "beta")
    clamp = flag(clamp, "clamp")
    finite_result(lambda: beta * np.abs(k).max(initial=0) + np.abs(s).max(initial=0), "beta, kl and score",
                  "-beta * KL + score")
    if np.any(m.sum(axis=1) == 0):
        raise ValueError("mask has a row with no real token: its score has nowhere to go")
    return {"kl": k, "score": s, "mask": m, "beta": beta, "clamp": clamp}


@checked(_check_kl_shaped_rewards)
def kl_shaped_rewards(kl, score, mask, beta, clamp=True):
    r"""The per-token reward of language-model PPO (AlpacaFarm style):

    .. math:: r_t = -\beta\,\max(\mathrm{KL}_t, 0) + [t = \text{last real token}]\;\text{score}

    ``kl`` (N, T) is the per-token KL estimate :math:`\log\pi_{old}(a_t) - \log\pi_{ref}(a_t)`
    on the sampled tokens, ``score`` (N,) the reward model's (or verifier's) score of each
    answer, ``mask`` (N, T) 1 on the answer's tokens. ``clamp=False`` keeps negative KL_t, which
    a policy can farm by making tokens *less* likely than the reference does. Returns (N, T),
    0 outside the mask.
    """
    k, s, m = (np.asarray(x, dtype=float) for x in (kl, score, mask))   # (N, T), (N,), (N, T)
    r = (0.0 - beta * (np.maximum(k, 0.0) if clamp else k)) * m   # (N, T); 0.0 − keeps +0, not −0
    last = m.shape[1] - 1 - np.argmax(m[:, ::-1], axis=1)   # (N,) index of the last real token
    r[np.arange(len(m)), last] += s
    return r


def _check_gae(rewards, values, mask, gamma, lam):
    r = as_array(rewards, "rewards", ndim=2)                # (N, T)
    v = as_array(values, "values", ndim=2)                  # (N, T)
    m = _mask01(mask)                                       # (N, T)
    same_shape(r, m, "rewards", "mask")
    same_shape(v, m, "values", "mask")
    new = {"rewards": r, "values": v, "mask": m}
    for x, name in ((gamma, "gamma"), (lam, "lam")):
        new[name] = nonneg(x, name)
        if not new[name] <= 1:
            raise ValueError(f"{name} must be in [0, 1], got {x}")
    finite_result(lambda: np.abs(r * m).sum(axis=1) + 3 * np.abs(v).sum(axis=1), "rewards and values",
                  "the sum of the rewards and values of a row")
    size(r.shape[1], "rewards", MAX_TOKENS, "tokens (gae loops over them in Python)")
    return new


@checked(_check_gae)
def gae(rewards, values, mask, gamma=1.0, lam=1.0):
    r"""Generalised advantage estimation, per row, backwards over the real tokens:

    .. math:: \delta_t = r_t + \gamma V(s_{t+1}) - V(s_t),\qquad
              \hat A_t = \delta_t + \gamma\lambda \hat A_{t+1},\qquad \hat R_t = \hat A_t + V(s_t)

    A position with mask 0 counts as :math:`V = 0,\ \hat A = 0`, so the values after the last real
    token count as 0. With :math:`\gamma = \lambda = 1`, :math:`\hat A_t = \sum_{t' \ge t} r_{t'}
    - V(s_t)`: the return to the end minus the value. ``rewards``, ``values``, ``mask``: (N, T);
    rewards outside the mask are ignored. Returns ``(advantages, returns)``, (N, T), 0 outside
    the mask.
    """
    r, v, m = (np.asarray(x, dtype=float) for x in (rewards, values, mask))   # (N, T)
    adv = np.zeros_like(r)
    next_v, next_a = np.zeros(len(r)), np.zeros(len(r))     # (N,) V and A at t + 1 (0 past the end)
    for t in range(r.shape[1] - 1, -1, -1):
        delta = r[:, t] * m[:, t] + gamma * next_v - v[:, t]
        adv[:, t] = (delta + gamma * lam * next_a) * m[:, t]
        next_v, next_a = v[:, t] * m[:, t], adv[:, t]
    return adv, (adv + v) * m


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


# ============================================================================ loss variants practitioners use now
# GSPO's sequence-level ratio, CISPO, TRL's "bnpo" aggregation, TRL's two-sided clip δ (= verl's dual
# clip), the high-entropy-token selection of "Beyond the 80/20 rule", and TRL's importance-weighted
# KL. policy_loss(...) dispatches here when one of its variant keywords is not at its default, so the
# default path above stays what it was, bit for bit. Each variant's library formula is cited in
# tests/test_rl_variants.py (file:line of the released wheels) and book/toy_to_real.md.
RATIO_LEVELS = ("token", "sequence")
LOSS_MODES = ("clip", "cispo")


def _check_sequence_log_ratio(logp, old_logp, mask):
    lp = as_array(logp, "logp", ndim=2)                     # (N, T)
    old = as_array(old_logp, "old_logp", ndim=2)            # (N, T)
    m = _mask01(mask)                                       # (N, T)
    same_shape(old, lp, "old_logp", "logp"), same_shape(m, lp, "mask", "logp")
    if np.any(m.sum(axis=1) == 0):
        raise ValueError("mask has a sequence with no generated tokens; its sequence ratio is undefined")
    return {"logp": lp, "old_logp": old, "mask": m}


@checked(_check_sequence_log_ratio)
def sequence_log_ratio(logp, old_logp, mask):
    r"""GSPO's sequence-level log importance ratio, the mean log-ratio over each answer's tokens:

    .. math:: \log s_i = \frac{1}{|o_i|}\sum_t m_{it}\,(\log\pi_\theta(o_{it}) - \log\pi_{old}(o_{it})),
              \qquad s_i = \Big(\frac{\pi_\theta(o_i)}{\pi_{old}(o_i)}\Big)^{1/|o_i|}

    ``logp``, ``old_logp``, ``mask``: (N, T). Returns (N,). Every answer needs a generated token.
    """
    lp, old, m = (np.asarray(x, dtype=float) for x in (logp, old_logp, mask))   # (N, T)
    return ((lp - old) * m).sum(axis=1) / m.sum(axis=1)    # ÷ |o_i|


def _check_cispo_weight(ratio, eps_low, eps_high):
    r = as_array(ratio, "ratio")
    if np.any(r < 0):
        raise ValueError("ratio must be >= 0 (it is a ratio of probabilities)")
    return {"ratio": r, "eps_high": nonneg(eps_high, "eps_high"),
            "eps_low": None if eps_low is None else real(eps_low, "eps_low", 0, 1)}


@checked(_check_cispo_weight)
def cispo_weight(ratio, eps_low=None, eps_high=0.28):
    r"""CISPO's clipped importance weight, used as a constant (stop-gradient) factor:

    .. math:: \hat r = \mathrm{clip}(\rho,\ 1-\varepsilon_{low},\ 1+\varepsilon_{high}),
              \qquad \ell_t = -\,\mathrm{sg}(\hat r_t)\,A_t\,\log\pi_\theta(o_t)

    so that :math:`\partial\ell_t/\partial\log\pi_\theta(o_t) = -\hat r_t A_t`: every token keeps a
    gradient, only its weight is capped (PPO's clip instead zeroes the gradient of a clipped token).
    ``eps_low=None`` is no lower bound (TRL clamps only from above, at ``epsilon_high`` = 1 + ε_high).
    """
    lo = 0.0 if eps_low is None else 1 - eps_low
    return np.clip(np.asarray(ratio, dtype=float), lo, 1 + eps_high)


def _check_delta(delta):
    return None if delta is None else real(delta, "delta", lo=1, lo_open=True)


def _check_two_sided_surrogate(ratio, adv, eps_low, eps_high, delta):
    return {**_check_clipped_surrogate(ratio, adv, eps_low, eps_high), "delta": _check_delta(delta)}


@checked(_check_two_sided_surrogate)
def two_sided_surrogate(ratio, adv, eps_low=0.2, eps_high=None, delta=None):
    r"""PPO's clipped surrogate with the ratio of the unclipped term capped at δ (TRL's ``delta``,
    from INTELLECT-2), to be maximised:

    .. math:: \min\big(\min(\rho, \delta)\,A,\ \mathrm{clip}(\rho, 1-\varepsilon_{low}, 1+\varepsilon_{high})\,A\big)

    For A < 0 and ρ > δ the surrogate is the constant δA: a token whose ratio ran far off in the
    direction the advantage punishes stops pushing. For δ ≥ 1 + ε_high this equals verl's dual clip
    with ``clip_ratio_c`` = δ, :math:`\max(\delta A, \min(\rho A, \mathrm{clip}(\rho)A))` for A < 0.
    ``delta=None`` is :func:`clipped_surrogate`.
    """
    if delta is None:
        return clipped_surrogate(ratio, adv, eps_low, eps_high)
    eps_high = eps_low if eps_high is None else eps_high
    ratio, adv = np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float)
    return np.minimum(np.minimum(ratio, delta) * adv, np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv)


@checked(_check_two_sided_surrogate)
def two_sided_surrogate_grad(ratio, adv, eps_low=0.2, eps_high=None, delta=None):
    r"""d :func:`two_sided_surrogate` / dρ: A where the min is the term min(ρ, δ)A with ρ < δ, or the
    clipped term with ρ inside the clip range; 0 elsewhere."""
    if delta is None:
        return clipped_surrogate_grad(ratio, adv, eps_low, eps_high)
    eps_high = eps_low if eps_high is None else eps_high
    ratio, adv = np.broadcast_arrays(np.asarray(ratio, dtype=float), np.asarray(adv, dtype=float))
    capped = np.minimum(ratio, delta) * adv <= np.clip(ratio, 1 - eps_low, 1 + eps_high) * adv
    inside = (ratio > 1 - eps_low) & (ratio < 1 + eps_high)
    return np.where(np.where(capped, ratio < delta, inside), adv, 0.0)


def _check_bnpo_weights(mask, micro_batch):
    m = _mask01(mask)                                       # (N, T)
    N = len(m)
    b = N if micro_batch is None else int(real(micro_batch, "micro_batch", 1, N))
    if micro_batch is not None and (b != micro_batch or N % b):
        raise ValueError(f"micro_batch must be an integer that divides the number of answers N = {N}, "
                         f"got {micro_batch!r}")
    if np.any(m.reshape(N // b, b * m.shape[1]).sum(axis=1) == 0):
        raise ValueError("mask has a micro-batch with no generated tokens")
    return {"mask": m, "micro_batch": None if micro_batch is None else b}


@checked(_check_bnpo_weights)
def bnpo_weights(mask, micro_batch=None):
    r"""The weights :math:`c_{it}` of TRL's ``loss_type="bnpo"``: the N answers are split into
    consecutive micro-batches of ``micro_batch`` answers (TRL's ``per_device_train_batch_size``),
    each micro-batch's loss is its own token mean, and the K micro-batches are averaged (TRL divides
    each by the gradient-accumulation steps):

    .. math:: L = \frac1K\sum_k \frac{\sum_{i\in k,t} m_{it}\ell_{it}}{\sum_{i\in k,t} m_{it}},
              \qquad c_{it} = \frac{m_{it}}{K\sum_{j\in k(i),s} m_{js}}

    ``micro_batch=None`` (= N) is one token mean over the batch, the toy's ``"dapo"``; ``micro_batch=1``
    is a mean of per-answer means, ``"grpo"``. ``mask``: (N, T); N must be a multiple of ``micro_batch``.
    """
    m = np.asarray(mask, dtype=float)                       # (N, T)
    N = len(m)
    b = N if micro_batch is None else micro_batch
    tokens = m.reshape(N // b, b * m.shape[1]).sum(axis=1)  # (K,) tokens per micro-batch
    return m / (N // b * np.repeat(tokens, b)[:, None])


def _check_token_entropy(logits):
    return {"logits": as_array(logits, "logits", min_ndim=1)}


@checked(_check_token_entropy)
def token_entropy(logits):
    r"""The entropy of the next-token distribution at each position, :math:`H = -\sum_v \pi_v \log\pi_v`,
    from logits (..., V) (TRL computes it from the training logits). Returns (...)."""
    logp = log_softmax(np.asarray(logits, dtype=float))
    return -(np.exp(logp) * logp).sum(axis=-1)


def _check_high_entropy_mask(entropy, mask, top_quantile):
    h = as_array(entropy, "entropy", ndim=2)                # (N, T)
    m = _mask01(mask)                                       # (N, T)
    same_shape(h, m, "entropy", "mask")
    q = real(top_quantile, "top_quantile", 0, 1)
    if m.sum() == 0:
        raise ValueError("mask has no generated tokens")
    return {"entropy": h, "mask": m, "top_quantile": q}


@checked(_check_high_entropy_mask)
def high_entropy_mask(entropy, mask, top_quantile=0.2):
    r"""The tokens whose entropy is in the top ``top_quantile`` of the generated tokens' entropies
    ("Beyond the 80/20 rule": the forking tokens; TRL's ``top_entropy_quantile``, 0.2 in the paper):

    .. math:: k_{it} = m_{it}\,\mathbb 1\big[H_{it} \ge Q_{1-\rho}(\{H_{js} : m_{js}=1\})\big]

    with :math:`Q` the linearly interpolated quantile (``torch.quantile``'s and ``np.quantile``'s
    default). ``top_quantile=1`` keeps every token; 0 keeps only the highest. ``entropy``, ``mask``:
    (N, T). Returns a 0/1 float array (N, T), to pass to :func:`policy_loss` as ``pg_mask``.
    """
    h, m = np.asarray(entropy, dtype=float), np.asarray(mask, dtype=float)   # (N, T)
    threshold = np.quantile(h[m == 1], 1 - top_quantile)
    return ((h >= threshold) & (m == 1)).astype(float)


def _policy_loss_variant(logp, old_logp, adv, mask, loss_type, eps_low, eps_high, beta, ref_logp, max_len,
                         ratio_level, loss_mode, delta, micro_batch, pg_mask, kl_bias_correction):
    r""":func:`policy_loss` with the variants (its arguments checked there). With per-token loss
    :math:`\ell_{it}` and aggregation weights :math:`c_{it}` (:func:`aggregate_weights`, or
    :func:`bnpo_weights` for ``"bnpo"``), :math:`L = \sum c_{it}\,\ell_{it}` and

    - ``loss_mode="clip"``: :math:`\ell_{it} = -k_{it}\,\mathrm{surr}(\rho_{it}, A_{it})` with
      :func:`two_sided_surrogate` (δ = ``delta``); ``"cispo"``: :math:`\ell_{it} = -k_{it}\,
      \mathrm{sg}(\hat r_{it}) A_{it} \log\pi_\theta(o_{it})` with :func:`cispo_weight`;
      :math:`k` = ``pg_mask`` (1 everywhere when None), which leaves the normaliser alone (as TRL)
    - ``ratio_level="token"``: :math:`\rho_{it} = e^{\log\pi_\theta - \log\pi_{old}}`; ``"sequence"``
      (GSPO): :math:`\rho_{it} = s_i` (:func:`sequence_log_ratio`), so
      :math:`\partial\rho_{it}/\partial\log\pi_\theta(o_{iu}) = s_i\,m_{iu}/|o_i|` for every token u of answer i
    - β > 0 adds :math:`\beta\,k_3` per token, times :math:`\rho_{it}` (which carries a gradient)
      when ``kl_bias_correction`` (TRL's ``use_bias_correction_kl``).
    """
    lp, old, m = (np.asarray(x, dtype=float) for x in (logp, old_logp, mask))   # (N, T)
    a = np.asarray(adv, dtype=float)
    keep = np.ones_like(m) if pg_mask is None else np.asarray(pg_mask, dtype=float)
    c = (bnpo_weights(m, micro_batch) if loss_type == "bnpo"
         else aggregate_weights(m, loss_type, max_len))     # (N, T) dL/dℓ
    a = np.broadcast_to(a[:, None] if a.ndim == 1 else a, lp.shape)   # (N, T)
    if ratio_level == "token":
        ratio = np.exp(lp - old)                            # (N, T)
    else:
        seq = sequence_log_ratio(lp, old, m)                # (N,)
        ratio = np.broadcast_to(np.exp(seq)[:, None], lp.shape)
    dl_dratio = np.zeros_like(lp)                           # ∂ℓ_it/∂ρ_it through the ratio path
    if loss_mode == "clip":
        per_token = -keep * two_sided_surrogate(ratio, a, eps_low, eps_high, delta)
        dl_dratio -= keep * two_sided_surrogate_grad(ratio, a, eps_low, eps_high, delta)
        dl_dlogp = np.zeros_like(lp)                        # direct ∂ℓ_it/∂logp_it
    else:
        w = cispo_weight(ratio, eps_low, eps_low if eps_high is None else eps_high)   # sg: no gradient
        per_token = -keep * w * a * lp
        dl_dlogp = -keep * w * a
    if beta > 0:
        logr = np.asarray(ref_logp, dtype=float) - lp      # log π_ref/π
        k3 = kl_k3(logr)
        if kl_bias_correction:
            per_token = per_token + beta * ratio * k3
            dl_dratio = dl_dratio + beta * k3
            dl_dlogp = dl_dlogp - beta * ratio * kl_k3_grad(logr)
        else:
            per_token = per_token + beta * k3
            dl_dlogp = dl_dlogp - beta * kl_k3_grad(logr)
    loss = float((c * per_token).sum())
    grad = c * dl_dlogp
    if ratio_level == "token":
        grad = grad + c * dl_dratio * ratio                 # dρ_it/dlogp_it = ρ_it
    else:                                                   # dρ_it/dlogp_iu = s_i m_iu / |o_i|
        through = (c * dl_dratio).sum(axis=1, keepdims=True) * ratio[:, :1] / m.sum(axis=1, keepdims=True)
        grad = grad + through * m
    return loss, grad * m
